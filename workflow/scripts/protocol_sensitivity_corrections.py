"""Rule protocol_sensitivity_corrections: the corrections of every reading of the
correction protocol (reproduction.sensitivity), built from the split alone (its values of
n) beside the fits."""

from sampled_metrics.data import split_users
from sampled_metrics.estimation.corrections import CLS_CONSTRAINTS
from sampled_metrics.estimation.estimators import paper_methods
from sampled_metrics.estimation.laws import LAWS
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.pipeline.vector_builds import write_vector_builds
from sampled_metrics.reproduction.sensitivity import sensitivity_corrections, sensitivity_variants

log = start_job(snakemake)
p = snakemake.params
e = p.estimation
users = split_users(snakemake.input.split)
methods = ["sampled", *paper_methods(e["estimators"])]  # the learned ones have no fixed vector
# every recommender's n_candidates is the split's (pipeline.intermediates.read_ranks)
variants = sensitivity_variants(
    users.n_candidates, users.n_items, methods, e["cls_constraint"], p.nodes
)
built = sensitivity_corrections(
    variants, p.metrics, methods, p.m, e["cls_constraint"], workers=snakemake.threads
)
# a build named by integers: n, the law's and the constraint's places in their lists
write_vector_builds(
    {(n, LAWS.index(law), CLS_CONSTRAINTS.index(c)): v for (n, law, c), v in built.items()},
    snakemake.output.vectors,
)
log.info("%d corrections built", len(built))
