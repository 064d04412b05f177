"""Rule protocol_sensitivity: every Table 3 cell in expectation under each reading of
the correction protocol (catalogue or per-user n, binomial or hypergeometric law, the
CLS constraint), beside the paper, with each reading's gap to the paper."""

import numpy as np

from sampled_metrics.data import split_users
from sampled_metrics.estimation.corrections import CLS_CONSTRAINTS
from sampled_metrics.estimation.estimators import paper_methods
from sampled_metrics.estimation.laws import LAWS
from sampled_metrics.io.atomic import write_csv, write_text
from sampled_metrics.outputs.labels import label_keys
from sampled_metrics.outputs.tables import markdown_table
from sampled_metrics.pipeline.intermediates import read_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.pipeline.vector_builds import read_vector_builds
from sampled_metrics.reproduction.claims import TOP_HEAVY
from sampled_metrics.reproduction.paper import published
from sampled_metrics.reproduction.sensitivity import sensitivity_table, sensitivity_variants

log = start_job(snakemake)
p = snakemake.params
e = p.estimation
users = split_users(snakemake.input.split)
ranks = {}
for recommender, path in zip(p.recommenders, snakemake.input.ranks):
    frame = read_ranks(path, users)
    ranks[recommender] = (frame["rank"].to_numpy(), frame["n_candidates"].to_numpy())
methods = ["sampled", *paper_methods(e["estimators"])]  # the learned ones have no fixed vector
variants = sensitivity_variants(
    users.n_candidates, users.n_items, methods, e["cls_constraint"], p.nodes
)
# the builds of rule protocol_sensitivity_corrections, named back by law and constraint
built = {
    (n, LAWS[law], CLS_CONSTRAINTS[c]): vectors
    for (n, law, c), vectors in read_vector_builds(snakemake.input.vectors).items()
}
frame = sensitivity_table(ranks, variants, built, p.m, p.law, workers=snakemake.threads)
frame = frame.assign(
    expected=100 * frame["expected"],
    variant=[
        f"{n.replace('_', '-')} n, {law}"
        + ("" if constraint == e["cls_constraint"] else f", CLS {constraint}")
        + (" (run)" if (n, law, constraint) == (e["n"], e["law"], e["cls_constraint"]) else "")
        for n, law, constraint in zip(frame["n"], frame["law"], frame["cls_constraint"])
    ],
)
paper = published("table3", snakemake.input.paper).set_index(["recommender", "metric", "method"])
keys = list(zip(frame["recommender"], frame["metric"], frame["method"]))
frame["paper"] = [paper["mean"].get(k, np.nan) for k in keys]
frame["relative_gap"] = frame["expected"] / frame["paper"] - 1
write_csv(frame, snakemake.output.csv)

variants = list(dict.fromkeys(frame["variant"]))
wide = frame.pivot_table(
    index=["recommender", "metric", "method"], columns="variant", values="expected", sort=False
)[variants]
wide.insert(0, "paper", [paper["mean"].get(k, np.nan) for k in wide.index])
corrected = frame[
    frame["method"].str.match(r"^(cls|bv_)")
    & frame["metric"].isin(TOP_HEAVY)
    & frame["paper"].notna()
]
gaps = (
    corrected.assign(gap=100 * corrected["relative_gap"].abs())
    .groupby("variant", sort=False)["gap"]
    .agg(cells="size", mean_gap_percent="mean", worst_gap_percent="max")
    .reindex(variants)
)
text = "\n".join(
    [
        "# Protocol sensitivity: Table 3 in expectation under each reading of the protocol",
        "",
        "Expected value (percent) of every cell under the sampling that was run; the readings",
        "differ only in how the corrections are built. `(run)` marks the configured protocol.",
        "",
        "## Gap to the paper over the CLS and BV cells of " + ", ".join(TOP_HEAVY),
        "",
        markdown_table(gaps.reset_index()),
        "## Every cell",
        "",
        markdown_table(label_keys(wide.reset_index())),
    ]
)
write_text(text, snakemake.output.md)
log.info("\n%s", gaps)
