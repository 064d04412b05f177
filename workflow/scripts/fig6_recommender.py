"""Rule fig6_recommender: one recommender's share of Figure 6's curves: its expected metric
at every sample size under the corrections of rule fig6_corrections, and its exact metric."""

from sampled_metrics.data import split_users
from sampled_metrics.estimation.population import exact_metric
from sampled_metrics.pipeline.intermediates import read_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.pipeline.shares import write_curve_share
from sampled_metrics.pipeline.vector_builds import read_vector_builds
from sampled_metrics.reproduction.curves import curve_values

log = start_job(snakemake)
f = snakemake.params.fig6
users = split_users(snakemake.input.split)
frame = read_ranks(snakemake.input.ranks, users)
ranks, n_candidates = frame["rank"].to_numpy(), frame["n_candidates"].to_numpy()
builds = read_vector_builds(snakemake.input.vectors)  # {(m, node n): corrections}
node_n = sorted({v for _, v in builds})
at_by_m: dict = {}
for (m, _), vectors in sorted(builds.items()):
    at_by_m.setdefault(m, []).append(vectors)
values = curve_values(at_by_m, node_n, ranks, n_candidates, f["law"])
keys = [(f["metric"], method) for method in f["estimators"]]
write_curve_share(
    values, keys, exact_metric(f["metric"], ranks, n_candidates), snakemake.output.share
)
log.info("%s: %d sample sizes", snakemake.wildcards.recommender, len(values))
