"""Reproduction of 'On Sampled Metrics for Item Recommendation' (Krichene & Rendle, KDD 2020).

snakemake --cores 8                                   # everything, MovieLens 1M from GroupLens
snakemake --cores 8 --config dataset=ml-1m-offline    # the same from a local copy
snakemake --cores 8 figures/ml-1m/fig5.pdf            # one figure
"""

import os
import sys

from snakemake.utils import min_version

from sampled_metrics.pipeline.config import (
    DATASET_NAME,
    RECOMMENDER_NAME,
    check_config_files,
)
from sampled_metrics.pipeline.runs import failed_jobs_text
from sampled_metrics.pipeline.validation import validate_config

min_version("9.0")


configfile: os.path.join(workflow.basedir, "config.yaml")


report: "workflow/report/workflow.rst"  # snakemake --report report.html


# The schema (sampled_metrics/pipeline/config.schema.yaml), its defaults filled in, and
# what a schema cannot check; a bad value (or a key given twice in a config file)
# stops here with one line naming the key.
check_config_files(workflow.configfiles)
validate_config(config)


wildcard_constraints:
    dataset=DATASET_NAME,
    recommender=RECOMMENDER_NAME,


include: "workflow/rules/common.smk"
include: "workflow/rules/recovery.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/ranks.smk"
include: "workflow/rules/sampling.smk"
include: "workflow/rules/analytic.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/protocols.smk"
include: "workflow/rules/decisions.smk"
include: "workflow/rules/provenance.smk"


check_known_sizes()


rule all:
    default_target: True
    input:
        all_targets(),


# A failed job leaves its traceback in its log; Snakemake names the log, and the
# job's one-line error is said on the console when it fails (runs.start_job) and
# again here, read back from each failed job's log, below Snakemake's account.
onerror:
    failed = getattr(workflow.scheduler, "failed", ())  # Snakemake's failed jobs
    said = failed_jobs_text((job.name, job.log) for job in failed)
    if said:
        print(said, file=sys.stderr)
