"""Rule sampling_recommender: one recommender's share of sampling.csv: every metric and
estimator on every repetition of its sampled ranks (the paper's corrections read from
rule sampling_corrections, the learned estimators learned from each repetition), and the
law's expectation of each correction for the cross-check."""

from sampled_metrics.data import split_users
from sampled_metrics.estimation.estimators import paper_methods
from sampled_metrics.estimation.population import (
    expected_sampled_values,
    learned_estimates_of,
    sampled_metric_table,
)
from sampled_metrics.pipeline.intermediates import read_ranks, read_sampled_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.pipeline.shares import write_sampling_share
from sampled_metrics.pipeline.vector_builds import read_vector_builds

log = start_job(snakemake)
p = snakemake.params
e = p.estimation
users = split_users(snakemake.input.split)
per_user = e["n"] == "per_user"
exact = read_ranks(snakemake.input.ranks, users)
n_candidates = exact["n_candidates"].to_numpy()
by_n = read_vector_builds(snakemake.input.vectors)
vectors = (lambda n: by_n[n,]) if per_user else by_n[users.n_items,]
sampled = read_sampled_ranks(snakemake.input.sampled, len(users.user_ids), p.repetitions, p.m)
tables = [sampled_metric_table(sampled, vectors, n_candidates if per_user else None)]
# The law the sampling really followed (sampling.law), over the user's own pool.
expected = expected_sampled_values(
    vectors, exact["rank"].to_numpy(), n_candidates, p.m, p.law, per_user
)
learned = [name for name in p.estimators if name not in paper_methods(p.estimators)]
if learned:  # each repetition's distribution learned from that repetition alone
    (table,) = learned_estimates_of(
        [(sampled, n_candidates if per_user else users.n_items)],
        p.m,
        e["law"],
        p.metrics,
        learned,
        workers=snakemake.threads,
        progress=True,
    )
    tables.append(table)
write_sampling_share(
    tables, expected, p.metrics, p.estimators, p.repetitions, snakemake.output.share
)
log.info("%s: %d repetitions estimated", snakemake.wildcards.recommender, sampled.shape[0])
