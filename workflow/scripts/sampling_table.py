"""Rule sampling_table: the recommenders' shares (rule sampling_recommender) joined into
every metric and estimator on every repetition, and the cross-check of the repetitions'
mean against the law's expectation."""

import numpy as np

from sampled_metrics.estimation.estimators import paper_methods
from sampled_metrics.io.atomic import write_csv
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.pipeline.shares import joined_sampling_table, read_sampling_share
from sampled_metrics.reproduction.tables import sampling_crosscheck

log = start_job(snakemake)
p = snakemake.params
shares, expected = {}, {}
for recommender, path in zip(p.recommenders, snakemake.input.shares):
    shares[recommender], means = read_sampling_share(path, p.metrics, p.estimators)
    expected.update({(recommender, *key): 100 * value for key, value in means.items()})
table = joined_sampling_table(snakemake.wildcards.dataset, shares, p.metrics, p.estimators)
write_csv(table, snakemake.output.table)
# The cross-check holds for the estimators whose expectation the law gives (the vectors).
check = sampling_crosscheck(table[table["method"].isin(paper_methods(p.estimators))], expected)
write_csv(check, snakemake.output.crosscheck)
log.info("largest |z| of the cross-check: %.2f", np.abs(check["z"]).max())
