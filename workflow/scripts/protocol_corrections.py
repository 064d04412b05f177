"""Rule protocol_corrections: the paper's corrections every protocol of the study reads,
built once for each distinct (m, law) at the nodes of n the split calls for
(studies.protocols.estimates.protocol_corrections). They need no model, so they are
built beside the fits."""

from sampled_metrics.data import split_users
from sampled_metrics.estimation.nodes import interpolation_nodes
from sampled_metrics.estimation.registry import paper_methods
from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.studies.protocols.estimates import protocol_corrections
from sampled_metrics.studies.protocols.files import left_out_reason, save_corrections

log = start_job(snakemake)
p = snakemake.params
users = split_users(snakemake.input.split)
protocols = [
    FRAMEWORK_PROTOCOLS[name]
    for name in p.protocols
    if left_out_reason(FRAMEWORK_PROTOCOLS[name], users.smallest_pool) is None
]
corrections = protocol_corrections(
    users.n_candidates, protocols, p.metrics, p.estimators, nodes=p.nodes,
    workers=snakemake.threads,
)  # fmt: skip
nodes = interpolation_nodes(users.n_candidates, p.nodes)
save_corrections(corrections, p.metrics, paper_methods(p.estimators), nodes, snakemake.output[0])
log.info("corrections of %d laws (m, law) at n = %s", len(corrections), nodes.tolist())
