"""Rule decisions_figure: pairs decided right against cost, from decisions.csv, each
method's kind and label from the study's registry."""

import pandas as pd

from sampled_metrics.outputs.figures import decisions_figure, save_figure
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.studies.decisions.registry import KINDS, study_methods

start_job(snakemake)
p = snakemake.params
methods = {m.name: m for m in study_methods(p.run, p.budgets, p.uniform_budgets)}
summary = pd.read_csv(snakemake.input.csv)
summary = summary.assign(
    kind=[methods[name].kind.name for name in summary["method"]],
    label=[methods[name].label for name in summary["method"]],
)
figure = decisions_figure(
    summary,
    kinds=list(KINDS),
    hollow=[kind.name for kind in KINDS.values() if not kind.intervals],
    wrong_above=p.goals["wrong"]["at_most"],
    dataset=snakemake.wildcards.dataset,
)
save_figure(figure, snakemake.output.pdf, snakemake.output.png)
