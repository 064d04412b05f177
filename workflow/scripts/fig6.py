"""Rule fig6: draw Figure 6 from its curves."""

import pandas as pd

from sampled_metrics.plotting import sample_size_figure, save_figure
from sampled_metrics.runs import start_log

start_log(snakemake.log[0])
curves = pd.read_csv(snakemake.input.curves)
exact = pd.read_csv(snakemake.input.exact).query("metric == @snakemake.params.metric")
exact = dict(zip(exact["recommender"], exact["value"] / 100))
figure = sample_size_figure(
    curves, exact, snakemake.params.metric, pd.read_csv(snakemake.input.thresholds)
)
save_figure(figure, snakemake.output.pdf, snakemake.output.png)
