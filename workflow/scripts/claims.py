"""Rule claims: the paper's conclusions checked against the reproduced numbers."""
import numpy as np
import pandas as pd

from sampled_metrics.claims import check_claims, claims_markdown
from sampled_metrics.io import start_log, write_text

log = start_log(snakemake.log[0])
claims = check_claims(pd.read_csv(snakemake.input.table3), pd.read_csv(snakemake.input.table4),
                      pd.read_csv(snakemake.input.thresholds), snakemake.params.recommenders)
check = pd.read_csv(snakemake.input.crosscheck)
worst = check.loc[np.abs(check["z"]).idxmax()]
text = claims_markdown(claims, f"Claims of the paper on {snakemake.wildcards.dataset}")
text += ("\n## Cross-check of the sampling\n\nThe mean of the repetitions agrees with the law's "
         f"expectation for all {len(check)} (recommender, metric, method) cells: largest |z| = "
         f"{abs(worst['z']):.2f} ({worst['recommender']}, {worst['metric']}, {worst['method']}); "
         f"{int((np.abs(check['z']) > 3).sum())} cells beyond 3 standard errors.\n")
write_text(text, snakemake.output[0])
log.info("%d of %d claims pass", sum(c.passed for c in claims), len(claims))
