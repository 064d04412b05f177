"""Rule sampled_ranks: rank each held-out item among m sampled items, every repetition."""

import numpy as np

from sampled_metrics.atomic import write_npy
from sampled_metrics.config import ConfigError
from sampled_metrics.data import load_split
from sampled_metrics.runs import start_log
from sampled_metrics.sampling import excluded_items, pool_sizes, sampled_ranks

log = start_log(snakemake.log[0])
p = snakemake.params
split = load_split(snakemake.input.split)
scores = np.load(snakemake.input.scores)
excluded = excluded_items(split.train, split.test_items)
pool = pool_sizes(excluded)
if not p.replacement and pool.min() < p.m:
    user = int(np.argmin(pool))
    raise ConfigError(
        f"sampling.m: {p.m} is larger than the candidate pool of user "
        f"{split.user_ids[user]!r} ({int(pool[user])} items not in their history, "
        f"{snakemake.input.split}); lower sampling.m or set sampling.replacement: true"
    )
try:
    ranks = sampled_ranks(
        scores,
        split.test_items,
        excluded,
        p.m,
        p.repetitions,
        p.seed,
        tie_policy=p.tie_policy,
        tie_seed=p.tie_seed,
        replacement=p.replacement,
        progress=True,
    )
except ValueError as error:
    raise ValueError(f"{snakemake.input.scores}: {error}") from None
log.info("%d repetitions x %d users, mean sampled rank %.2f", *ranks.shape, ranks.mean())
write_npy(ranks, snakemake.output[0])
