"""Rule provenance: the package versions and the full effective config of a run."""

from sampled_metrics.io.atomic import write_text
from sampled_metrics.pipeline.runs import config_yaml, start_job, versions_text

log = start_job(snakemake)
versions = versions_text()
write_text(versions, snakemake.output.versions)
write_text(config_yaml(snakemake.params.config), snakemake.output.config)
log.info("\n%s", versions)
