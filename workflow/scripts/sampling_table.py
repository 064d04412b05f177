"""Rule sampling_table: every metric and correction on every repetition, and the
cross-check of the repetitions' mean against the law's expectation."""

from functools import cache

import numpy as np
import pandas as pd

from sampled_metrics.atomic import write_csv
from sampled_metrics.data import load_split
from sampled_metrics.evaluation import (
    correction_vectors,
    expected_sampled_value,
    sampled_metric_table,
    sampling_crosscheck,
)
from sampled_metrics.laws import WITH_REPLACEMENT, WITHOUT_REPLACEMENT
from sampled_metrics.runs import start_log

log = start_log(snakemake.log[0])
p = snakemake.params
c = p.corrections
methods = ["sampled", *c["methods"]]
n_items = load_split(snakemake.input.split).n_items


@cache  # per_user: one build per distinct n, shared by all recommenders
def vectors_for(n):
    return correction_vectors(
        p.metrics, methods, n, p.m, c["law"], None, c["rank_estimate_rounding"]
    )


per_user = c["n"] == "per_user"
shared = None if per_user else vectors_for(n_items)
# The law the sampling really followed: the user's own pool, with or without replacement.
true_law = WITH_REPLACEMENT if p.replacement else WITHOUT_REPLACEMENT
tables, expected = [], {}
for recommender, sampled_path, ranks_path in zip(
    p.recommenders, snakemake.input.sampled, snakemake.input.ranks
):
    sampled = np.load(sampled_path)
    exact = pd.read_csv(ranks_path)
    n_candidates = exact["n_candidates"].to_numpy()
    table = sampled_metric_table(
        sampled, vectors_for if per_user else shared, n_candidates if per_user else None
    )
    tables.append(table.assign(recommender=recommender))
    groups = (
        [(n, n_candidates == n) for n in np.unique(n_candidates)]
        if per_user
        else [(n_items, np.ones(n_candidates.size, bool))]
    )
    for n, users in groups:
        vectors = vectors_for(int(n)) if per_user else shared
        for (metric, method), vector in vectors.items():
            value = expected_sampled_value(
                vector, exact["rank"][users], n_candidates[users], true_law
            )
            key = (recommender, metric, method)
            expected[key] = expected.get(key, 0.0) + 100 * value * users.sum() / users.size
    log.info("%s: %d repetitions done", recommender, sampled.shape[0])

table = pd.concat(tables, ignore_index=True)
table["value"] *= 100
table.insert(0, "dataset", snakemake.wildcards.dataset)
table = table[["dataset", "recommender", "metric", "method", "rep", "value"]]
write_csv(table, snakemake.output.table)
check = sampling_crosscheck(table, expected)
write_csv(check, snakemake.output.crosscheck)
log.info("largest |z| of the cross-check: %.2f", np.abs(check["z"]).max())
