"""Rule table4: how often each method orders each pair of recommenders correctly."""

from itertools import combinations

import pandas as pd

from sampled_metrics.atomic import write_csv, write_text
from sampled_metrics.evaluation import pair_agreement
from sampled_metrics.paper import published
from sampled_metrics.report import latex_table, markdown_table, paper_comparison
from sampled_metrics.runs import start_log

log = start_log(snakemake.log[0])
pairs = list(combinations(snakemake.params.recommenders, 2))
table = pair_agreement(
    pd.read_csv(snakemake.input.exact), pd.read_csv(snakemake.input.sampling), pairs
)
paper = published("table4", snakemake.input.paper).set_index(["pair", "metric", "method"])[
    "correct"
]
table["paper"] = [paper.get(k) for k in zip(table["pair"], table["metric"], table["method"])]
write_csv(table, snakemake.output.csv)
wide = table.pivot_table(
    index=["pair", "metric"], columns="method", values="correct", sort=False
).reset_index()
wide.columns.name = None
write_text(markdown_table(wide, digits=0), snakemake.output.md)
write_text(
    latex_table(
        wide,
        digits=0,
        caption="Table 4: repetitions in which each method orders "
        "the pair as the exact metric does.",
    ),
    snakemake.output.tex,
)
write_text(
    paper_comparison(table, value="correct", paper="paper", digits=0), snakemake.output.versus
)
log.info("\n%s", wide)
