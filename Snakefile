"""Reproduction of 'On Sampled Metrics for Item Recommendation' (Krichene & Rendle, KDD 2020).

snakemake --cores 8                                   # everything, MovieLens 1M from GroupLens
snakemake --cores 8 --config dataset=ml-1m-offline    # the same from a local copy
snakemake --cores 8 figures/ml-1m/fig5.pdf            # one figure
"""

import os

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: os.path.join(workflow.basedir, "config.yaml")


report: "workflow/report/workflow.rst"  # snakemake --report report.html


from sampled_metrics.config import check_schema

check_schema(
    config, os.path.join(workflow.basedir, "workflow/schemas/config.schema.yaml")
)  # one-line errors
validate(config, os.path.join(workflow.basedir, "workflow/schemas/config.schema.yaml"))


include: "workflow/rules/common.smk"
include: "workflow/rules/recovery.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/models.smk"
include: "workflow/rules/ranks.smk"
include: "workflow/rules/sampling.smk"
include: "workflow/rules/analytic.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/provenance.smk"


rule all:
    default_target: True
    input:
        all_outputs(),
