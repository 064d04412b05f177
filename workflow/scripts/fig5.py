"""Rule fig5: distribution of the exact ranks of each recommender (Figure 5)."""

import pandas as pd

from sampled_metrics.atomic import write_csv
from sampled_metrics.plotting import rank_distribution_facts, rank_distribution_figure, save_figure
from sampled_metrics.runs import start_log

log = start_log(snakemake.log[0])
ranks = {
    name: pd.read_csv(path) for name, path in zip(snakemake.params.recommenders, snakemake.input)
}
figure = rank_distribution_figure(ranks)
save_figure(figure, snakemake.output.pdf, snakemake.output.png)
facts = rank_distribution_facts(ranks)
write_csv(facts, snakemake.output.facts)
log.info("\n%s", facts)
