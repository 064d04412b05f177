"""Rule table4: how often each method orders each pair of recommenders correctly."""

from itertools import combinations

from sampled_metrics.io.atomic import write_csv, write_text
from sampled_metrics.outputs.labels import method_groups
from sampled_metrics.outputs.tables import comparison, latex_table, markdown_table, paper_layout
from sampled_metrics.pipeline.intermediates import (
    EXACT_COLUMNS,
    SAMPLING_COLUMNS,
    exact_keys,
    read_table,
)
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.reproduction.paper import PAPER_REPETITIONS, published
from sampled_metrics.reproduction.tables import pair_agreement, paper_rows

log = start_job(snakemake)
dataset = snakemake.wildcards.dataset
pairs = list(combinations(snakemake.params.recommenders, 2))
cells = snakemake.params.cells
table = pair_agreement(
    read_table(snakemake.input.exact, EXACT_COLUMNS, exact_keys(cells)),
    paper_rows(
        read_table(snakemake.input.sampling, SAMPLING_COLUMNS, {"dataset": [dataset], **cells})
    ),
    pairs,
)
paper = published("table4", snakemake.input.paper).set_index(["pair", "metric", "method"])[
    "correct"
]
table["paper"] = [paper.get(k) for k in zip(table["pair"], table["metric"], table["method"])]
write_csv(table, snakemake.output.csv)

# The paper's layout: one block of rows per pair, one column per method.
wide = paper_layout(table, ["pair", "metric"], "method", "correct")
write_text(markdown_table(wide, digits=0), snakemake.output.md)
repetitions = ", ".join(map(str, sorted(set(table["repetitions"]))))
write_text(
    latex_table(
        wide,
        digits=0,
        caption=f"For the {repetitions} repetitions of the experiment in Table 3 "
        f"({dataset}), how many times the metric for a pair of recommenders shows the "
        "correct ordering, the order of the exact metric (the exact metric would always "
        f"score {repetitions}).",
        label="tab:table4",
        groups=[("", 2), *method_groups(list(dict.fromkeys(table["method"])))],
        block="Pair",
    ),
    snakemake.output.tex,
)

paper_repetitions = PAPER_REPETITIONS["table4"]
versus = comparison(table.drop(columns="repetitions"), value="correct", paper="paper")
write_text(
    "\n".join(
        [
            f"# Table 4 on {dataset} beside the paper's (MovieLens 1M)",
            "",
            "Repetitions in which the method orders the pair as the exact metric does: ours",
            f"out of {repetitions} repetitions, the paper's out of {paper_repetitions};"
            " difference = ours - paper.",
            "",
            markdown_table(versus, digits=0),
        ]
    ),
    snakemake.output.versus,
)
log.info("\n%s", wide)
