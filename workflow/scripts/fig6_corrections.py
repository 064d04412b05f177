"""Rule fig6_corrections: Figure 6's corrections at every sample size, built from the split
alone (its values of n) beside the fits. A sample size above what the data set allows
(reproduction.curves.largest_sample_size: n - 1, or n_u - 1 under a law without
replacement) is left out, named with why in fig6_left_out.csv and the log."""

from sampled_metrics.data import split_users
from sampled_metrics.io.atomic import write_csv
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.pipeline.vector_builds import write_vector_builds
from sampled_metrics.reproduction.curves import (
    curve_corrections,
    curve_nodes,
    largest_sample_size,
    sample_sizes_left_out,
)

log = start_job(snakemake)
f = snakemake.params.fig6
e = snakemake.params.estimation
users = split_users(snakemake.input.split)
per_user = e["n"] == "per_user"
largest, why = largest_sample_size(users.n_items, users.smallest_pool, f["law"], e["law"], per_user)
m_values = [m for m in snakemake.params.m_values if m <= largest]
left_out = sample_sizes_left_out(snakemake.params.m_values, largest, why, snakemake.params.m_key)
write_csv(left_out, snakemake.output.left_out)
if len(left_out):
    log.warning(
        "%s: m = %s left out of Figure 6 on %s: above the largest sample size, %s",
        snakemake.params.m_key,
        ", ".join(map(str, left_out["m"])),
        snakemake.wildcards.dataset,
        why,
    )
# every recommender's n_candidates is the split's (pipeline.intermediates.read_ranks)
node_n = curve_nodes(None if per_user else users.n_items, users.n_candidates, f["per_user_nodes"])
at_by_m = curve_corrections(
    f["metric"],
    f["estimators"],
    sorted(set(m_values), reverse=True),  # the largest first: they take longest
    node_n,
    e["law"],
    e["cls_constraint"],
    workers=snakemake.threads,
    progress=True,
)
builds = {(m, int(v)): at_nodes for m in sorted(at_by_m) for v, at_nodes in zip(node_n, at_by_m[m])}
write_vector_builds(builds, snakemake.output.vectors)
log.info("corrections of %d sample sizes at %d values of n", len(at_by_m), len(node_n))
