"""Rule sampled_ranks: rank each held-out item among m sampled items, every repetition."""
import numpy as np

from sampled_metrics.datasets import load_split
from sampled_metrics.io import start_log, write_npy
from sampled_metrics.sampling import excluded_items, sampled_ranks

log = start_log(snakemake.log[0])
p = snakemake.params
split = load_split(snakemake.input.split)
scores = np.load(snakemake.input.scores)
ranks = sampled_ranks(scores, split.test_items, excluded_items(split.train, split.test_items),
                      p.m, p.repetitions, p.seed, tie_policy=p.tie_policy,
                      replacement=p.replacement, progress=True)
log.info("%d repetitions x %d users, mean sampled rank %.2f", *ranks.shape, ranks.mean())
write_npy(ranks, snakemake.output[0])
