# Recovery after a killed run: a run killed with SIGKILL (or a power loss) leaves
# Snakemake's locks in .snakemake/locks. The run holding them records its host and
# process id when it starts (onstart); when the workflow is parsed again, locks
# whose every owner is a dead process of this host are removed, with the dead
# run's "incomplete" markers (every output is written atomically, so an existing
# output is complete). A live run or one on another host is never unlocked.
import sys

from sampled_metrics.pipeline.runs import clear_stale_locks, record_lock_owner

_stale = clear_stale_locks(os.path.join(os.getcwd(), ".snakemake"))
if _stale:
    print(
        f"Removed the locks and incomplete markers of a killed run ({len(_stale)} files "
        "in .snakemake/)",
        file=sys.stderr,
    )


onstart:
    record_lock_owner(os.path.join(os.getcwd(), ".snakemake"))
