"""Rule toy_tables: Tables 1 and 2 (the toy example of sections 3.2 and 4.2)."""

from sampled_metrics.atomic import write_csv, write_text
from sampled_metrics.paper import published
from sampled_metrics.report import latex_table, markdown_table
from sampled_metrics.runs import start_log
from sampled_metrics.toy_example import TOY_RANKS, exact_table, sampled_table

log = start_log(snakemake.log[0])
toy, out = snakemake.params.toy, snakemake.output

table1 = exact_table(TOY_RANKS, toy["n"])
paper1 = published("table1", snakemake.input.paper).set_index(["metric", "recommender"])["value"]
for metric in ("auc", "ap", "ndcg", "recall@10"):
    table1[f"paper_{metric}"] = table1["recommender"].map(paper1[metric])
write_csv(table1, out.table1_csv)
write_text(markdown_table(table1, digits=3), out.table1_md)
write_text(
    latex_table(table1, digits=3, caption="Table 1: toy example, exact metrics (n = 10,000)."),
    out.table1_tex,
)

table2 = sampled_table(TOY_RANKS, toy["n"], toy["m"], toy["repetitions"], snakemake.params.seed)
paper2 = published("table2", snakemake.input.paper).set_index(["recommender", "metric"])
keys = list(zip(table2["recommender"], table2["metric"]))
table2["paper_mean"] = [paper2.loc[k, "mean"] for k in keys]
table2["paper_std"] = [paper2.loc[k, "std"] for k in keys]
write_csv(table2, out.table2_csv)
write_text(markdown_table(table2, digits=3), out.table2_md)
write_text(
    latex_table(
        table2,
        digits=3,
        caption=f"Table 2: toy example, sampled metrics "
        f"(m = {toy['m']}, {toy['repetitions']} repetitions).",
    ),
    out.table2_tex,
)
log.info("\n%s\n%s", table1, table2)
