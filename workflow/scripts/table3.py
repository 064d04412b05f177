"""Rule table3: exact, sampled and corrected metrics (mean ± std) beside the paper."""

from sampled_metrics.io.atomic import write_csv, write_text
from sampled_metrics.outputs.labels import method_groups
from sampled_metrics.outputs.tables import (
    format_mean_std,
    latex_table,
    markdown_table,
    mean_std_comparison,
    paper_layout,
)
from sampled_metrics.pipeline.intermediates import (
    EXACT_COLUMNS,
    SAMPLING_COLUMNS,
    exact_keys,
    read_table,
)
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.reproduction.paper import PAPER_REPETITIONS, published
from sampled_metrics.reproduction.tables import paper_rows, summary_table

log = start_job(snakemake)
dataset = snakemake.wildcards.dataset
cells = snakemake.params.cells
exact = read_table(snakemake.input.exact, EXACT_COLUMNS, exact_keys(cells))
sampling = read_table(snakemake.input.sampling, SAMPLING_COLUMNS, {"dataset": [dataset], **cells})
table = summary_table(exact, paper_rows(sampling))
paper = published("table3", snakemake.input.paper).set_index(["recommender", "metric", "method"])
keys = list(zip(table["recommender"], table["metric"], table["method"]))
table["paper_mean"] = [paper["mean"].get(k) for k in keys]
table["paper_std"] = [paper["std"].get(k) for k in keys]
write_csv(table, snakemake.output.csv)

# The paper's layout: one block of rows per metric, one column per method.
cells = table.assign(cell=[format_mean_std(m, s) for m, s in zip(table["mean"], table["std"])])
wide = paper_layout(cells, ["metric", "recommender"], "method", "cell")
write_text(markdown_table(wide), snakemake.output.md)
repetitions = sampling["rep"].nunique()
names = list(dict.fromkeys(table["recommender"]))
names = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
write_text(
    latex_table(
        wide,
        caption=f"Evaluation of the recommenders {names} on the {dataset} data set (percent). "
        f"Exact metrics, and sampled metrics (m = {snakemake.params.m} sampled items), "
        f"uncorrected and corrected: mean ± std over {repetitions} repetitions.",
        label="tab:table3",
        groups=[("", 2), *method_groups(list(dict.fromkeys(table["method"])))],
        block="Metric",
        wide=True,
    ),
    snakemake.output.tex,
)

# Every cell beside the paper's, with the gap in standard errors of the difference.
paper_repetitions = PAPER_REPETITIONS["table3"]
versus = mean_std_comparison(
    table, repetitions, paper_repetitions, keys=["metric", "recommender", "method"]
)
write_text(
    "\n".join(
        [
            f"# Table 3 on {dataset} beside the paper's (MovieLens 1M)",
            "",
            "Percent. Ours and the paper's: mean ± std over repetitions (an exact value has",
            "no std). Difference = ours - paper. z = (ours - paper) / sqrt(std_ours²/R +",
            "std_paper²/R_paper): the difference in standard errors of the difference of two",
            f"means, with R = {repetitions} repetitions for ours (this run) and R_paper = "
            f"{paper_repetitions} for the paper;",
            "empty for exact values. Difference and z come from the unrounded numbers.",
            "",
            markdown_table(versus, digits={"z": 1}),
        ]
    ),
    snakemake.output.versus,
)
log.info("\n%s", wide)
