"""Rule protocols_figure: draw the protocol study from its tables; its note names the
protocols left out (protocols_left_out.csv) and why."""

import pandas as pd

from sampled_metrics.outputs.figures import protocols_figure, save_figure
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.studies.protocols.report import left_out_lines

start_job(snakemake)
left_out = left_out_lines(pd.read_csv(snakemake.input.left_out))
figure = protocols_figure(
    pd.read_csv(snakemake.input.csv),
    pd.read_csv(snakemake.input.pairs),
    dataset=snakemake.wildcards.dataset,
    note="\n".join(
        [f"Left out, as {snakemake.wildcards.dataset} cannot support them:", *left_out]
        if left_out
        else []
    ),
)
save_figure(figure, snakemake.output.pdf, snakemake.output.png)
