"""Rule fig6_curves: expected metric vs sample size on the real exact ranks."""

import pandas as pd

from sampled_metrics.atomic import write_csv
from sampled_metrics.data import load_split
from sampled_metrics.evaluation import exact_metric, order_thresholds, sample_size_curves
from sampled_metrics.runs import start_log

log = start_log(snakemake.log[0])
f = snakemake.params.fig6
n_items = load_split(snakemake.input.split).n_items
ranks, exact = {}, {}
for recommender, path in zip(snakemake.params.recommenders, snakemake.input.ranks):
    frame = pd.read_csv(path)
    ranks[recommender] = (frame["rank"].to_numpy(), frame["n_candidates"].to_numpy())
    exact[recommender] = exact_metric(f["metric"], *ranks[recommender])
m_values = [m for m in f["m_values"] if m <= n_items - 1]
curves = sample_size_curves(
    ranks, f["metric"], f["methods"], m_values, n_items, f["law"], progress=True
)
write_csv(curves, snakemake.output.curves)
thresholds = order_thresholds(curves, exact, *f["pair"])
write_csv(thresholds, snakemake.output.thresholds)
log.info("\n%s", thresholds)
