"""Rule exact_metrics: exact Recall@10, NDCG@10, AP, AUC beside the paper's Table 3."""

import pandas as pd

from sampled_metrics.data import split_users
from sampled_metrics.estimation.population import exact_metric
from sampled_metrics.io.atomic import write_csv, write_text
from sampled_metrics.outputs.tables import comparison, markdown_table
from sampled_metrics.pipeline.intermediates import EXACT_COLUMNS, read_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.reproduction.paper import published

log = start_job(snakemake)
paper = published("table3", snakemake.input.paper).query("method == 'exact'")
paper = paper.set_index(["recommender", "metric"])["mean"]
users = split_users(snakemake.input.split)
rows = []
for recommender, path in zip(snakemake.params.recommenders, snakemake.input.ranks):
    ranks = read_ranks(path, users)
    for metric in snakemake.params.metrics:
        rows.append(
            {
                "recommender": recommender,
                "metric": metric,
                "value": 100 * exact_metric(metric, ranks["rank"], ranks["n_candidates"]),
                "paper": paper.get((recommender, metric)),
            }
        )
table = pd.DataFrame(rows, columns=list(EXACT_COLUMNS))
write_csv(table, snakemake.output.csv)
write_text(
    "\n".join(
        [
            f"# Exact metrics on {snakemake.wildcards.dataset} beside the paper's (MovieLens 1M)",
            "",
            "Percent; difference = ours - paper.",
            "",
            markdown_table(comparison(table, value="value", paper="paper")),
        ]
    ),
    snakemake.output.md,
)
log.info("\n%s", table)
