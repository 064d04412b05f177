"""Rule scores: fit one recommender and store its full score matrix."""

import numpy as np

from sampled_metrics.atomic import write_npy
from sampled_metrics.data import load_split
from sampled_metrics.recommenders import all_scores, fit_recommender
from sampled_metrics.runs import pin_threads, start_log

log = start_log(snakemake.log[0])
pin_threads(snakemake.threads)
log.info("threads: %d", snakemake.threads)
split = load_split(snakemake.input[0])
spec = snakemake.params.spec
log.info("fitting %s: %s", snakemake.wildcards.recommender, spec)
model = fit_recommender(spec, split.train, seed=snakemake.params.seed)
scores = all_scores(model, split.n_users, progress=True)
bad = ~np.isfinite(scores)
if bad.any():
    user, item = np.argwhere(bad)[0]
    raise ValueError(
        f"recommender {snakemake.wildcards.recommender}: {int(bad.sum())} scores are NaN "
        f"or inf (first: user {split.user_ids[user]!r}, item {split.item_ids[item]!r}); "
        f"{snakemake.output[0]} not written"
    )
log.info("scores: %s, range %.4g..%.4g", scores.shape, scores.min(), scores.max())
write_npy(scores.astype(np.float32), snakemake.output[0])
