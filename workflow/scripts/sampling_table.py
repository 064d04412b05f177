"""Rule sampling_table: every metric and correction on every repetition, and the
cross-check of the repetitions' mean against the law's expectation."""

import numpy as np
import pandas as pd

from sampled_metrics.data import split_users
from sampled_metrics.estimation.corrections import correction_vectors_by_n
from sampled_metrics.estimation.estimators import paper_methods
from sampled_metrics.estimation.population import (
    expected_sampled_values,
    learned_estimates_of,
    sampled_metric_table,
)
from sampled_metrics.io.atomic import write_csv
from sampled_metrics.pipeline.intermediates import SAMPLING_COLUMNS, read_ranks, read_sampled_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.reproduction.tables import sampling_crosscheck

log = start_job(snakemake)
p = snakemake.params
e = p.estimation
users = split_users(snakemake.input.split)
n_items = users.n_items
per_user = e["n"] == "per_user"
exact = {
    recommender: read_ranks(path, users)
    for recommender, path in zip(p.recommenders, snakemake.input.ranks)
}
# One build per distinct n, shared by all recommenders, in the rule's threads.
n_values = (
    np.concatenate([frame["n_candidates"].to_numpy() for frame in exact.values()])
    if per_user
    else [n_items]
)
# The paper's corrections are vectors over r~ (built once, applied to every repetition);
# the learned estimators (sampled_metrics.estimation.estimators) learn from each repetition.
fixed = paper_methods(p.estimators)
learned = [name for name in p.estimators if name not in fixed]
by_n = correction_vectors_by_n(
    n_values,
    p.metrics,
    fixed,
    p.m,
    e["law"],
    None,
    e["rank_estimate_rounding"],
    e["cls_constraint"],
    workers=snakemake.threads,
    progress=True,
)
log.info("corrections built for %d distinct n in %d processes", len(by_n), snakemake.threads)
vectors = by_n.__getitem__ if per_user else by_n[n_items]
# The law the sampling really followed (sampling.law), over the user's own pool.
true_law = p.law
tables, expected, sampled_of = [], {}, {}
for recommender, sampled_path in zip(p.recommenders, snakemake.input.sampled):
    sampled = read_sampled_ranks(sampled_path, len(users.user_ids), p.repetitions, p.m)
    n_candidates = exact[recommender]["n_candidates"].to_numpy()
    table = sampled_metric_table(sampled, vectors, n_candidates if per_user else None)
    tables.append(table.assign(recommender=recommender))
    values = expected_sampled_values(
        vectors, exact[recommender]["rank"].to_numpy(), n_candidates, p.m, true_law, per_user
    )
    expected.update({(recommender, *key): 100 * value for key, value in values.items()})
    sampled_of[recommender] = (sampled, n_candidates if per_user else n_items)
    log.info("%s: %d repetitions corrected", recommender, sampled.shape[0])
if learned:  # every recommender's repetitions in one pool of the rule's threads
    estimates = learned_estimates_of(
        list(sampled_of.values()),
        p.m,
        e["law"],
        p.metrics,
        learned,
        workers=snakemake.threads,
        progress=True,
    )
    tables += [table.assign(recommender=r) for r, table in zip(sampled_of, estimates)]
    log.info("learned estimators done for %d recommenders", len(estimates))

table = pd.concat(tables, ignore_index=True)
# rows by recommender, then metric, method and repetition in the configured orders
order = [
    table["recommender"].map({r: i for i, r in enumerate(p.recommenders)}),
    table["metric"].map({m: i for i, m in enumerate(p.metrics)}),
    table["method"].map({m: i for i, m in enumerate(p.estimators)}),
    table["rep"],
]
table = table.iloc[np.lexsort(order[::-1])].reset_index(drop=True)
table["value"] *= 100
table.insert(0, "dataset", snakemake.wildcards.dataset)
table = table[list(SAMPLING_COLUMNS)]
write_csv(table, snakemake.output.table)
# The cross-check holds for the estimators whose expectation the law gives (the vectors).
check = sampling_crosscheck(table[table["method"].isin(fixed)], expected)
write_csv(check, snakemake.output.crosscheck)
log.info("largest |z| of the cross-check: %.2f", np.abs(check["z"]).max())
