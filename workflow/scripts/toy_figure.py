"""Rule toy_figure: Figures 1-4, their curves computed from the laws and saved beside them."""

import pandas as pd

from sampled_metrics.io.atomic import write_csv
from sampled_metrics.outputs.figures import (
    corrected_ap_figure,
    expected_vs_sample_size_figure,
    expected_vs_true_rank_figure,
    metric_curves_figure,
    save_figure,
)
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.reproduction import toy_example
from sampled_metrics.reproduction.toy_ranks import TOY_RANKS

start_job(snakemake)
toy, law, figure_name = snakemake.params.toy, snakemake.params.law, snakemake.wildcards.figure
n = toy["n"]
if figure_name == "fig1":
    data = toy_example.metric_curves(n)
    figure = metric_curves_figure(data)
elif figure_name == "fig2":
    data = toy_example.expected_vs_sample_size(TOY_RANKS, n, toy["fig2_m_values"], law)
    figure = expected_vs_sample_size_figure(data, n, law, marked_m=toy["m"])
elif figure_name == "fig3":
    data = toy_example.expected_vs_true_rank(n, toy["fig3_m_values"], toy["fig3_max_rank"], law)
    figure = expected_vs_true_rank_figure(data, n, law)
else:
    cls_constraint = snakemake.params.cls_constraint
    on_sample, expected = toy_example.corrected_ap_curves(
        n, toy["fig4_m"], toy["fig4_estimators"], law, n, cls_constraint
    )
    data = pd.concat(
        [
            on_sample.rename(columns={"sampled_rank": "rank"}).assign(panel="on_sample"),
            expected.assign(panel="expected"),
        ],
        ignore_index=True,
    )
    figure = corrected_ap_figure(on_sample, expected, n, toy["fig4_m"], law, cls_constraint)
write_csv(data, snakemake.output.data)
save_figure(figure, snakemake.output.pdf, snakemake.output.png)
