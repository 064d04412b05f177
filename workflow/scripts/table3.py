"""Rule table3: exact, sampled and corrected metrics (mean ± std) beside the paper."""

import pandas as pd

from sampled_metrics.atomic import write_csv, write_text
from sampled_metrics.evaluation import summary_table
from sampled_metrics.paper import published
from sampled_metrics.report import latex_table, markdown_table, paper_comparison, wide_mean_std
from sampled_metrics.runs import start_log

log = start_log(snakemake.log[0])
exact = pd.read_csv(snakemake.input.exact)
table = summary_table(exact, pd.read_csv(snakemake.input.sampling))
paper = published("table3", snakemake.input.paper).set_index(["recommender", "metric", "method"])
keys = list(zip(table["recommender"], table["metric"], table["method"]))
table["paper_mean"] = [paper["mean"].get(k) for k in keys]
table["paper_std"] = [paper["std"].get(k) for k in keys]
write_csv(table, snakemake.output.csv)
wide = wide_mean_std(table)
write_text(markdown_table(wide), snakemake.output.md)
write_text(
    latex_table(
        wide,
        caption="Table 3: exact, sampled and corrected metrics (percent), "
        "mean ± std over repetitions.",
    ),
    snakemake.output.tex,
)
write_text(
    paper_comparison(table, value="mean", paper="paper_mean", digits=2), snakemake.output.versus
)
log.info("\n%s", wide)
