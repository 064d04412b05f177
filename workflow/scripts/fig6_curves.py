"""Rule fig6_curves: expected metric vs sample size on the real exact ranks. A sample
size above what the data set allows (reproduction.curves.largest_sample_size: n - 1, or
n_u - 1 under a law without replacement) is left out, named with why in
fig6_left_out.csv and the log."""

from sampled_metrics.data import split_users
from sampled_metrics.estimation.population import exact_metric
from sampled_metrics.io.atomic import write_csv
from sampled_metrics.pipeline.intermediates import read_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.reproduction.curves import (
    largest_sample_size,
    order_thresholds,
    sample_size_curves,
    sample_sizes_left_out,
)

log = start_job(snakemake)
f = snakemake.params.fig6
users = split_users(snakemake.input.split)
n_items = users.n_items
ranks, exact = {}, {}
for recommender, path in zip(snakemake.params.recommenders, snakemake.input.ranks):
    frame = read_ranks(path, users)
    ranks[recommender] = (frame["rank"].to_numpy(), frame["n_candidates"].to_numpy())
    exact[recommender] = exact_metric(f["metric"], *ranks[recommender])
e = snakemake.params.estimation
per_user = e["n"] == "per_user"
largest, why = largest_sample_size(n_items, users.smallest_pool, f["law"], e["law"], per_user)
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
curves = sample_size_curves(
    ranks,
    f["metric"],
    f["estimators"],
    m_values,
    None if per_user else n_items,
    f["law"],
    correction_law=e["law"],
    cls_constraint=e["cls_constraint"],
    nodes=f["per_user_nodes"],
    progress=True,
    workers=snakemake.threads,
)
write_csv(curves, snakemake.output.curves)
thresholds = order_thresholds(curves, exact, *f["pair"])
write_csv(thresholds, snakemake.output.thresholds)
log.info("\n%s", thresholds)
