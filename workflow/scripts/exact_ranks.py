"""Rule exact_ranks: rank each held-out item among the user's candidates."""

import numpy as np
import pandas as pd

from sampled_metrics.atomic import write_csv
from sampled_metrics.data import load_split
from sampled_metrics.ranking import exact_ranks
from sampled_metrics.recommenders import PrecomputedScores
from sampled_metrics.runs import start_log

log = start_log(snakemake.log[0])
split = load_split(snakemake.input.split)
model = PrecomputedScores(np.load(snakemake.input.scores), name=snakemake.wildcards.recommender)
ranks, n_candidates = exact_ranks(
    model,
    split.train,
    split.test_items,
    tie_policy=snakemake.params.tie_policy,
    block_size=snakemake.params.block_size,
    seed=snakemake.params.seed,
    progress=True,
)
log.info(
    "median rank %.0f, %d of %d in the top 10", np.median(ranks), np.sum(ranks <= 10), ranks.size
)
write_csv(
    pd.DataFrame({"user": split.user_ids, "rank": ranks, "n_candidates": n_candidates}),
    snakemake.output[0],
)
