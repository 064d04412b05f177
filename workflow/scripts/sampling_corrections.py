"""Rule sampling_corrections: the paper's corrections (the fixed vectors over r~) for every
distinct ranked-set size n of the split, or for the catalogue's n, built once for all
recommenders from the split alone, so that the build runs beside the fits."""

import numpy as np

from sampled_metrics.data import split_users
from sampled_metrics.estimation.corrections import correction_vectors_by_n
from sampled_metrics.estimation.estimators import paper_methods
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.pipeline.vector_builds import write_vector_builds

log = start_job(snakemake)
p = snakemake.params
e = p.estimation
users = split_users(snakemake.input.split)
# every recommender's n_candidates is the split's (pipeline.intermediates.read_ranks)
n_values = users.n_candidates if e["n"] == "per_user" else np.array([users.n_items])
by_n = correction_vectors_by_n(
    n_values,
    p.metrics,
    paper_methods(p.estimators),
    p.m,
    e["law"],
    None,
    e["rank_estimate_rounding"],
    e["cls_constraint"],
    workers=snakemake.threads,
    progress=True,
)
write_vector_builds({(n,): vectors for n, vectors in by_n.items()}, snakemake.output.vectors)
log.info("corrections built for %d distinct n in %d processes", len(by_n), snakemake.threads)
