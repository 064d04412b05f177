"""Rule fig6_curves: the recommenders' shares (rule fig6_recommender) joined into Figure 6's
curves, expected metric vs sample size on the real exact ranks, and the smallest sample
sizes that order the configured pair as the exact metric does."""

import pandas as pd

from sampled_metrics.io.atomic import write_csv
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.pipeline.shares import read_curve_share
from sampled_metrics.reproduction.curves import CURVE_COLUMNS, order_thresholds

log = start_job(snakemake)
f = snakemake.params.fig6
keys = [(f["metric"], method) for method in f["estimators"]]
values, exact = {}, {}
for recommender, path in zip(snakemake.params.recommenders, snakemake.input.shares):
    values[recommender], exact[recommender] = read_curve_share(path, keys)
m_values = [m for m in snakemake.params.m_values if m in values[snakemake.params.recommenders[0]]]
rows = [
    [m, method, recommender, found[m][f["metric"], method]]
    for m in m_values
    for recommender, found in values.items()
    for method in f["estimators"]
]
curves = pd.DataFrame(rows, columns=CURVE_COLUMNS)
write_csv(curves, snakemake.output.curves)
thresholds = order_thresholds(curves, exact, *f["pair"])
write_csv(thresholds, snakemake.output.thresholds)
log.info("\n%s", thresholds)
