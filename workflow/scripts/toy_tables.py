"""Rule toy_tables: Tables 1 and 2 (the toy example of sections 3.2 and 4.2)."""

from sampled_metrics.io.atomic import write_csv, write_text
from sampled_metrics.outputs.tables import (
    comparison,
    format_mean_std,
    latex_table,
    markdown_table,
    mean_std_comparison,
    paper_layout,
)
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.reproduction.paper import PAPER_REPETITIONS, published
from sampled_metrics.reproduction.toy_example import exact_table, sampled_table
from sampled_metrics.reproduction.toy_ranks import TOY_RANKS

log = start_job(snakemake)
toy, out = snakemake.params.toy, snakemake.output
METRICS = ("auc", "ap", "ndcg", "recall@10")


def document(title: str, layout, note: str, versus, digits) -> str:
    """Our table in the paper's layout, then every cell beside the paper's."""
    return "\n".join(
        [
            f"# {title}",
            "",
            markdown_table(layout, digits=3),
            "## Beside the paper's",
            "",
            note,
            "",
            markdown_table(versus, digits=digits),
        ]
    )


table1 = exact_table(TOY_RANKS, toy["n"])
paper1 = published("table1", snakemake.input.paper).set_index(["metric", "recommender"])["value"]
for metric in METRICS:
    table1[f"paper_{metric}"] = table1["recommender"].map(paper1[metric])
write_csv(table1, out.table1_csv)
caption1 = (
    "Toy example of evaluating three recommenders A, B and C on five instances "
    f"(n = {toy['n']:,} items): exact metrics."
)
layout1 = paper_layout(
    table1.melt(["recommender", "ranks"], list(METRICS), var_name="metric"),
    ["recommender", "ranks"],
    "metric",
    "value",
)
long1 = table1.melt(["recommender"], list(METRICS), var_name="metric", value_name="ours")
long1["paper"] = [paper1[(m, r)] for m, r in zip(long1["metric"], long1["recommender"])]
write_text(
    document(
        "Table 1: " + caption1,
        layout1,
        "Difference = ours - paper.",
        comparison(long1, value="ours", paper="paper"),
        digits=3,
    ),
    out.table1_md,
)
write_text(latex_table(layout1, digits=3, caption=caption1, label="tab:table1"), out.table1_tex)

table2 = sampled_table(TOY_RANKS, toy["n"], toy["m"], toy["repetitions"], snakemake.params.seed)
paper2 = published("table2", snakemake.input.paper).set_index(["recommender", "metric"])
keys = list(zip(table2["recommender"], table2["metric"]))
table2["paper_mean"] = [paper2.loc[k, "mean"] for k in keys]
table2["paper_std"] = [paper2.loc[k, "std"] for k in keys]
write_csv(table2, out.table2_csv)
caption2 = (
    f"Sampled evaluation (m = {toy['m']} sampled items) of the recommenders of Table 1: "
    f"mean ± std over {toy['repetitions']} repetitions."
)
ranks = table1.set_index("recommender")["ranks"]
cells = table2.assign(
    ranks=table2["recommender"].map(ranks),
    cell=[format_mean_std(m, s, 3) for m, s in zip(table2["mean"], table2["std"])],
)
layout2 = paper_layout(cells, ["recommender", "ranks"], "metric", "cell")
paper_repetitions = PAPER_REPETITIONS["table2"]
write_text(
    document(
        "Table 2: " + caption2,
        layout2,
        "Mean ± std over repetitions. Difference = ours - paper. z = (ours - paper) / "
        "sqrt(std_ours²/R + std_paper²/R_paper), the difference in standard errors of the "
        f"difference of two means, with R = {toy['repetitions']} repetitions for ours and "
        f"R_paper = {paper_repetitions} for the paper (empty where undefined: both stds 0).",
        mean_std_comparison(table2, toy["repetitions"], paper_repetitions, digits=3),
        digits={"Difference": 3, "z": 1},
    ),
    out.table2_md,
)
write_text(latex_table(layout2, digits=3, caption=caption2, label="tab:table2"), out.table2_tex)
log.info("\n%s\n%s", table1, table2)
