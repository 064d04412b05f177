"""Rule fig6_curves: expected metric vs sample size on the real exact ranks."""

from sampled_metrics.data import split_users
from sampled_metrics.estimation.population import exact_metric
from sampled_metrics.io.atomic import write_csv
from sampled_metrics.pipeline.intermediates import read_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.reproduction.curves import order_thresholds, sample_size_curves

log = start_job(snakemake)
f = snakemake.params.fig6
users = split_users(snakemake.input.split)
n_items = users.n_items
ranks, exact = {}, {}
for recommender, path in zip(snakemake.params.recommenders, snakemake.input.ranks):
    frame = read_ranks(path, users)
    ranks[recommender] = (frame["rank"].to_numpy(), frame["n_candidates"].to_numpy())
    exact[recommender] = exact_metric(f["metric"], *ranks[recommender])
c = snakemake.params.corrections
per_user = c["n"] == "per_user"
# Every m is at most n - 1 (validation.check_data_sizes ran at start-up or after the split).
curves = sample_size_curves(
    ranks,
    f["metric"],
    f["methods"],
    snakemake.params.m_values,
    None if per_user else n_items,
    f["law"],
    correction_law=c["law"],
    cls_constraint=c["cls_constraint"],
    nodes=f["per_user_nodes"],
    progress=True,
)
write_csv(curves, snakemake.output.curves)
thresholds = order_thresholds(curves, exact, *f["pair"])
write_csv(thresholds, snakemake.output.thresholds)
log.info("\n%s", thresholds)
