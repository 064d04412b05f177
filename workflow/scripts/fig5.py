"""Rule fig5: distribution of the exact ranks of each recommender (Figure 5), with ties
as the pipeline breaks them and pessimistic (every tied item above the held-out one)."""

import pandas as pd

from sampled_metrics.atomic import write_csv
from sampled_metrics.plotting import rank_distribution_facts, rank_distribution_figure, save_figure
from sampled_metrics.runs import start_log

log = start_log(snakemake.log[0])
p = snakemake.params
ranks = {name: pd.read_csv(path) for name, path in zip(p.recommenders, snakemake.input.ranks)}
pessimistic = {}
for name, path in zip(p.recommenders, snakemake.input.pessimistic):
    frame = pd.read_csv(path)
    if not frame["user"].equals(ranks[name]["user"]):
        raise ValueError(f"{path}: its users are not those of {name}'s exact ranks")
    pessimistic[name] = frame.assign(n_candidates=ranks[name]["n_candidates"])
figure = rank_distribution_figure(
    ranks, pessimistic=pessimistic, tie_policy=p.tie_policy, dataset=snakemake.wildcards.dataset
)
save_figure(figure, snakemake.output.pdf, snakemake.output.png)
facts = rank_distribution_facts(ranks, pessimistic=pessimistic)
write_csv(facts, snakemake.output.facts)
log.info("\n%s", facts.to_string(index=False))
