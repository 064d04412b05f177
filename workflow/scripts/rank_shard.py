"""Rule rank_shard: exact, pessimistic and sampled ranks of one shard of users,
in one pass over their scores (block_pass.rank_users), which also stores the protocol
study's masks (studies.protocols.beaten_files.BeatenWriter)."""

import numpy as np

from sampled_metrics.data import load_split
from sampled_metrics.passes.block_pass import rank_users, shard_bounds
from sampled_metrics.passes.draw_plan import load_draw_plan
from sampled_metrics.passes.user_ranks import save_user_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.recommenders import load_model
from sampled_metrics.studies.protocols.beaten_files import BeatenWriter

log = start_job(snakemake)
p = snakemake.params
index, shards = (int(part) for part in snakemake.wildcards.shard.split("-of-"))
split = load_split(snakemake.input.split)
model = load_model(snakemake.input.model)
plan = load_draw_plan(snakemake.input.plan)
start, stop = shard_bounds(split.n_users, shards)[index]
log.info("shard %d of %d: users %d..%d", index + 1, shards, start, stop - 1)
n_items = split.train.shape[1]
with BeatenWriter(
    snakemake.output.beaten, p.layers, start, stop, split.test_items, n_items
) as beaten:
    ranks = rank_users(
        model,
        split.train,
        split.test_items,
        plan,
        start,
        stop,
        tie_policy=p.tie_policy,
        tie_seed=p.seed,
        memory_mb=p.memory_mb,
        user_ids=split.user_ids,
        beaten=beaten,
        progress=True,
    )
if ranks.rank.size:
    log.info(
        "median rank %.0f, mean sampled rank %.2f", np.median(ranks.rank), ranks.sampled.mean()
    )
save_user_ranks(ranks, snakemake.output.ranks)
