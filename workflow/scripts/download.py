"""Rule download: fetch a data set's archive (md5-checked, atomic)."""
from sampled_metrics.datasets import download
from sampled_metrics.io import start_log

log = start_log(snakemake.log[0])
entry = snakemake.params.entry
log.info("downloading %s to %s", entry["url"], snakemake.output[0])
download(entry["url"], snakemake.output[0], entry["md5"], progress=True)
log.info("done")
