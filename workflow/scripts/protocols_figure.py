"""Rule protocols_figure: draw the protocol study from its tables."""

import pandas as pd

from sampled_metrics.outputs.figures import protocols_figure, save_figure
from sampled_metrics.pipeline.runs import start_job

start_job(snakemake)
figure = protocols_figure(
    pd.read_csv(snakemake.input.csv),
    pd.read_csv(snakemake.input.pairs),
    dataset=snakemake.wildcards.dataset,
)
save_figure(figure, snakemake.output.pdf, snakemake.output.png)
