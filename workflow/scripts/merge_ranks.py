"""Rule merge_ranks: join the shards of one recommender into its exact ranks (with
their sidecar, so that ``sampled-metrics correct`` reads them as a full ranking),
pessimistic ranks and sampled ranks; with one shard (no rule rank_shard), rank its
users here first (pipeline.rank_jobs.rank_shard)."""

import numpy as np
import pandas as pd

from sampled_metrics.data import load_split
from sampled_metrics.frameworks.rank_meta import rank_meta, write_rank_meta
from sampled_metrics.io.atomic import write_csv, write_npy
from sampled_metrics.passes.user_ranks import concatenate_user_ranks, load_user_ranks
from sampled_metrics.pipeline.rank_jobs import rank_shard
from sampled_metrics.pipeline.runs import start_job

log = start_job(snakemake)
p = snakemake.params
split = load_split(snakemake.input.split)
if "shards" in snakemake.input.keys():
    parts = [load_user_ranks(path) for path in snakemake.input.shards]
    try:
        ranks = concatenate_user_ranks(parts, split.n_users)
    except ValueError as error:
        raise ValueError(f"{', '.join(snakemake.input.shards)}: {error}") from None
else:  # joined as a shard file would be: the same arrays, the same bytes written
    only = rank_shard(
        split,
        snakemake.input.model,
        snakemake.input.plan,
        (0, 1),
        snakemake.output.beaten,
        layers=p.layers,
        tie_policy=p.tie_policy,
        tie_seed=p.seed,
        memory_mb=p.memory_mb,
        log=log,
    )
    ranks = concatenate_user_ranks([only], split.n_users)
log.info(
    "%d users, median rank %.0f, %d in the top 10; %d repetitions, mean sampled rank %.2f",
    ranks.rank.size,
    np.median(ranks.rank),
    np.sum(ranks.rank <= 10),
    *ranks.sampled.shape[:1],
    ranks.sampled.mean(),
)
out = snakemake.output
users = split.user_ids
write_csv(
    pd.DataFrame({"user": users, "rank": ranks.rank, "n_candidates": ranks.n_candidates}),
    out.ranks,
)
meta = rank_meta(
    "full",
    rank_columns={"rank": snakemake.wildcards.recommender},
    n_column="n_candidates",
    ties=p.tie_policy,
    tie_seed=p.seed,
    writer="sampled-metrics pipeline, rule merge_ranks",
)
write_rank_meta(out.ranks, meta)
write_csv(pd.DataFrame({"user": users, "rank": ranks.pessimistic}), out.pessimistic)
write_npy(ranks.sampled, out.sampled)
