"""Rule decisions_figure: pairs decided right against cost, from decisions.csv."""

import pandas as pd

from sampled_metrics.outputs.figures import decisions_figure, save_figure
from sampled_metrics.pipeline.runs import start_job

start_job(snakemake)
figure = decisions_figure(pd.read_csv(snakemake.input.csv), dataset=snakemake.wildcards.dataset)
save_figure(figure, snakemake.output.pdf, snakemake.output.png)
