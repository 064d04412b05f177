"""Rule download: fetch a data set's archive (md5-checked, atomic)."""

import sys

from sampled_metrics.data import DataError, download
from sampled_metrics.pipeline.runs import start_job

log = start_job(snakemake)
entry = snakemake.params.entry
log.info("downloading %s to %s", entry["url"], snakemake.output[0])
try:
    download(
        entry["url"],
        snakemake.output[0],
        entry["md5"],
        progress=True,
        deadline=snakemake.config["limits"]["download_seconds"],  # not a param: no rerun
    )
except DataError as error:
    # the log holds the traceback; the console gets one line naming URL, file and cause
    log.exception("%s", error)
    print(
        f"download of {snakemake.output[0]} failed: {error} (url and md5: datasets in "
        f"config.yaml; without internet, put the archive at {snakemake.output[0]} or use a data "
        "set with a local path, e.g. --config dataset=ml-1m-offline)",
        file=sys.__stderr__,
    )
    sys.exit(1)
log.info("done")
