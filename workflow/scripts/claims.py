"""Rule claims: the paper's conclusions checked against the reproduced numbers."""

from itertools import combinations

import pandas as pd

from sampled_metrics.io.atomic import write_text
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.reproduction.claims import (
    check_claims,
    claims_markdown,
    claims_summary,
    crosscheck_claim,
    paper_trio,
    rank_distribution_claims,
)
from sampled_metrics.reproduction.paper import published

log = start_job(snakemake)
trio = paper_trio(snakemake.params.recommenders)
if trio is None:  # the claims of section 6 are about X, Y and Z; the cross-check holds for any
    log.info("recommenders X, Y, Z not all configured: only the sampling cross-check is checked")
    claims = []
else:
    table3, table4 = pd.read_csv(snakemake.input.table3), pd.read_csv(snakemake.input.table4)
    paper = published("figure6", snakemake.input.paper)
    claims = check_claims(
        table3[table3["recommender"].isin(trio)],
        table4[table4["pair"].isin([f"{a}<{b}" for a, b in combinations(trio, 2)])],
        pd.read_csv(snakemake.input.thresholds),
        dict(zip(paper["method"], paper["stays_right_from_m"])),
        trio,
        fig6_metric=snakemake.params.fig6_metric,
        fig6_pair=snakemake.params.fig6_pair,
    )
    figure5 = published("figure5", snakemake.input.paper).set_index("recommender")
    claims = (
        rank_distribution_claims(
            pd.read_csv(snakemake.input.rank_distribution),
            {statistic: figure5[statistic].dropna().iloc[0] for statistic in figure5.columns},
            trio,
        )
        + claims
    )
claims.append(crosscheck_claim(pd.read_csv(snakemake.input.crosscheck)))
write_text(
    claims_markdown(claims, f"Claims of the paper on {snakemake.wildcards.dataset}"),
    snakemake.output[0],
)
log.info(claims_summary(claims))
