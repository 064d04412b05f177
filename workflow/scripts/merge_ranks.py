"""Rule merge_ranks: join the shards of one recommender into its exact ranks (with
their sidecar, so that ``sampled-metrics correct`` reads them as a full ranking),
pessimistic ranks and sampled ranks."""

import numpy as np
import pandas as pd

from sampled_metrics.data import load_split
from sampled_metrics.frameworks.rank_meta import rank_meta, write_rank_meta
from sampled_metrics.io.atomic import write_csv, write_npy
from sampled_metrics.passes.user_ranks import concatenate_user_ranks, load_user_ranks
from sampled_metrics.pipeline.runs import start_job

log = start_job(snakemake)
split = load_split(snakemake.input.split)
parts = [load_user_ranks(path) for path in snakemake.input.shards]
try:
    ranks = concatenate_user_ranks(parts, split.n_users)
except ValueError as error:
    raise ValueError(f"{', '.join(snakemake.input.shards)}: {error}") from None
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
    ties=snakemake.params.tie_policy,
    tie_seed=snakemake.params.seed,
    writer="sampled-metrics pipeline, rule merge_ranks",
)
write_rank_meta(out.ranks, meta)
write_csv(pd.DataFrame({"user": users, "rank": ranks.pessimistic}), out.pessimistic)
write_npy(ranks.sampled, out.sampled)
