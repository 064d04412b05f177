"""Rule rank_shard: exact, pessimistic and sampled ranks of one shard of users,
in one pass over their scores, which also stores the protocol study's masks
(pipeline.rank_jobs.rank_shard)."""

from sampled_metrics.data import load_split
from sampled_metrics.passes.user_ranks import save_user_ranks
from sampled_metrics.pipeline.rank_jobs import rank_shard
from sampled_metrics.pipeline.runs import start_job

log = start_job(snakemake)
p = snakemake.params
index, shards = (int(part) for part in snakemake.wildcards.shard.split("-of-"))
ranks = rank_shard(
    load_split(snakemake.input.split),
    snakemake.input.model,
    snakemake.input.plan,
    (index, shards),
    snakemake.output.beaten,
    layers=p.layers,
    tie_policy=p.tie_policy,
    tie_seed=p.seed,
    memory_mb=p.memory_mb,
    log=log,
)
save_user_ranks(ranks, snakemake.output.ranks)
