"""Rule fig5: distribution of the exact ranks of each recommender (Figure 5), with ties
as the pipeline breaks them and pessimistic (every tied item above the held-out one)."""

from sampled_metrics.data import split_users
from sampled_metrics.io.atomic import write_csv
from sampled_metrics.outputs.figures import (
    rank_distribution_facts,
    rank_distribution_figure,
    save_figure,
)
from sampled_metrics.pipeline.intermediates import read_pessimistic_ranks, read_ranks
from sampled_metrics.pipeline.runs import start_job

log = start_job(snakemake)
p = snakemake.params
users = split_users(snakemake.input.split)
ranks = {name: read_ranks(path, users) for name, path in zip(p.recommenders, snakemake.input.ranks)}
pessimistic = {
    name: read_pessimistic_ranks(path, users).assign(n_candidates=users.n_candidates)
    for name, path in zip(p.recommenders, snakemake.input.pessimistic)
}
figure = rank_distribution_figure(
    ranks, pessimistic=pessimistic, tie_policy=p.tie_policy, dataset=snakemake.wildcards.dataset
)
save_figure(figure, snakemake.output.pdf, snakemake.output.png)
facts = rank_distribution_facts(ranks, pessimistic=pessimistic)
write_csv(facts, snakemake.output.facts)
log.info("\n%s", facts.to_string(index=False))
