"""Rule fig6_curves: expected metric vs sample size on the real exact ranks."""

import pandas as pd

from sampled_metrics.atomic import write_csv
from sampled_metrics.data import load_split
from sampled_metrics.evaluation import exact_metric, order_thresholds, sample_size_curves
from sampled_metrics.laws import WITHOUT_REPLACEMENT
from sampled_metrics.runs import start_log

log = start_log(snakemake.log[0])
f = snakemake.params.fig6
n_items = load_split(snakemake.input.split).n_items
ranks, exact = {}, {}
for recommender, path in zip(snakemake.params.recommenders, snakemake.input.ranks):
    frame = pd.read_csv(path)
    ranks[recommender] = (frame["rank"].to_numpy(), frame["n_candidates"].to_numpy())
    exact[recommender] = exact_metric(f["metric"], *ranks[recommender])
c = snakemake.params.corrections
per_user = c["n"] == "per_user"
# Without replacement, m must leave every user (and every correction) enough items.
smallest_n = min(int(n.min()) for _, n in ranks.values()) if per_user else n_items
largest_m = (
    min(smallest_n, n_items) - 1 if WITHOUT_REPLACEMENT in (f["law"], c["law"]) else n_items - 1
)
m_values = [m for m in f["m_values"] if m <= largest_m]
if len(m_values) < len(f["m_values"]):
    log.info("fig6.m_values above %d dropped (m <= n - 1)", largest_m)
curves = sample_size_curves(
    ranks,
    f["metric"],
    f["methods"],
    m_values,
    None if per_user else n_items,
    f["law"],
    correction_law=c["law"],
    cls_constraint=c["cls_constraint"],
    nodes=f["per_user_nodes"],
    progress=True,
)
write_csv(curves, snakemake.output.curves)
thresholds = order_thresholds(curves, exact, *f["pair"])
write_csv(thresholds, snakemake.output.thresholds)
log.info("\n%s", thresholds)
