"""Rule fig5: distribution of the exact ranks of each recommender (Figure 5), with ties
as the pipeline breaks them and pessimistic (every tied item above the held-out one)."""

import numpy as np
import pandas as pd

from sampled_metrics.atomic import write_csv
from sampled_metrics.data import load_split
from sampled_metrics.plotting import rank_distribution_facts, rank_distribution_figure, save_figure
from sampled_metrics.ranking import exact_ranks
from sampled_metrics.recommenders import PrecomputedScores
from sampled_metrics.runs import start_log

log = start_log(snakemake.log[0])
p = snakemake.params
split = load_split(snakemake.input.split)
ranks = {name: pd.read_csv(path) for name, path in zip(p.recommenders, snakemake.input.ranks)}
pessimistic = {}
for name, path in zip(p.recommenders, snakemake.input.scores):
    model = PrecomputedScores(np.load(path, mmap_mode="r"), name=name)
    rank, n_candidates = exact_ranks(
        model, split.train, split.test_items, tie_policy="pessimistic", block_size=p.block_size
    )
    if not np.array_equal(n_candidates, ranks[name]["n_candidates"].to_numpy()):
        raise ValueError(f"{name}: the scores and the exact ranks rank different item sets")
    pessimistic[name] = pd.DataFrame({"rank": rank, "n_candidates": n_candidates})
figure = rank_distribution_figure(
    ranks, pessimistic=pessimistic, tie_policy=p.tie_policy, dataset=snakemake.wildcards.dataset
)
save_figure(figure, snakemake.output.pdf, snakemake.output.png)
facts = rank_distribution_facts(ranks, pessimistic=pessimistic)
write_csv(facts, snakemake.output.facts)
log.info("\n%s", facts.to_string(index=False))
