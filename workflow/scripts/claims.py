"""Rule claims: the paper's conclusions checked against the reproduced numbers."""
import pandas as pd

from sampled_metrics.claims import check_claims, claims_markdown, crosscheck_claim
from sampled_metrics.io import start_log, write_text

log = start_log(snakemake.log[0])
claims = check_claims(pd.read_csv(snakemake.input.table3), pd.read_csv(snakemake.input.table4),
                      pd.read_csv(snakemake.input.thresholds), snakemake.params.recommenders)
claims.append(crosscheck_claim(pd.read_csv(snakemake.input.crosscheck)))
write_text(claims_markdown(claims, f"Claims of the paper on {snakemake.wildcards.dataset}"),
           snakemake.output[0])
log.info("%d of %d claims pass", sum(c.passed for c in claims), len(claims))
