"""A workflow run: its jobs' logs and threads, who holds Snakemake's locks, and
what the run used.

:func:`start_job` (its log, and its inputs checked against the checksums recorded
when they were written) and :func:`pin_threads` set up one job (a rule's script).
A job that fails with an uncaught exception leaves its traceback in its log and
says the error in one line on the console (:func:`job_error_line`). A job sent
SIGTERM (Ctrl-C of a run, a cluster's time limit) exits through Python's
``finally`` blocks (:func:`exit_on_sigterm`), so its temporary files go with it; when the run
fails, the workflow's ``onerror`` handler repeats each failed job's line, read back
from its log (:func:`failed_jobs_text`), below Snakemake's own account.

Snakemake locks the files of a run in ``.snakemake/locks``; a run killed with
SIGKILL (or a power loss) cannot remove them, and the next run stops with a
LockException. :func:`record_lock_owner` notes the host and process id of the
run holding the locks (called from the workflow's ``onstart`` handler);
:func:`clear_stale_locks`, called when the workflow is parsed, removes the
locks and the "incomplete" markers only when every lock is accounted for by a
recorded owner and every owner is a dead process of this host. Anything else
(a live owner, another host, a lock without a recorded owner) is left alone,
so two live runs are still kept apart.

Removing the incomplete markers is safe because every output of the workflow
is written under a temporary name and renamed into place (``sampled_metrics.io.atomic``):
an output that exists is complete.

:func:`package_versions`, :func:`versions_text` and :func:`config_yaml` describe
the software and the effective configuration of a run.
"""

from __future__ import annotations

import atexit
import functools
import gc
import logging
import os
import platform
import re
import signal
import socket
import sys
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any

from ..io.optional import optional_import

__all__ = [
    "PACKAGES",
    "clear_stale_locks",
    "config_yaml",
    "error_in_log",
    "exit_on_sigterm",
    "failed_jobs_text",
    "job_error_line",
    "library_fingerprint",
    "package_versions",
    "pin_threads",
    "record_lock_owner",
    "start_job",
    "start_log",
    "versions_text",
]

_LOCK = re.compile(r"^(\d+)\.(input|output)\.lock$")
_OWNER = re.compile(r"^owner\.(.+)\.(\d+)$")

# The packages whose versions can change a result or a figure.
PACKAGES = (
    "sampled-metrics",
    "numpy",
    "scipy",
    "pandas",
    "implicit",
    "snakemake",
    "matplotlib",
    "threadpoolctl",
    "tqdm",
    "pyyaml",
)


_LOGGER = "sampled_metrics"  # the pipeline's logger


def start_log(path: str | Path) -> logging.Logger:
    """Send this process's log records, warnings and stderr (progress bars,
    tracebacks) to ``path``, and return the pipeline's logger."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    stream = open(path, "w", buffering=1)
    sys.stderr = stream
    logging.basicConfig(
        stream=stream,
        level=logging.INFO,
        force=True,
        format="%(asctime)s %(levelname)s %(message)s",
    )
    logging.captureWarnings(True)
    return logging.getLogger(_LOGGER)


def start_job(snakemake: Any) -> logging.Logger:
    """Set up a rule's script: :func:`start_log` on its log (an uncaught exception
    then leaves its traceback there and its one line, :func:`job_error_line`, on the
    console, the job's own stderr), :func:`exit_on_sigterm`, the garbage collector
    kept off the objects made so far and, at exit, off all (``gc.freeze``), the
    allocator set to reuse freed memory (``sampled_metrics.io.allocator``), then every input file
    checked against the checksum recorded when the pipeline wrote it
    (``sampled_metrics.io.atomic.verify_checksum``), so that a file cut, overwritten
    or edited since stops the job with one line naming it, before any work.

    Parameters
    ----------
    snakemake : object
        The ``snakemake`` object of a rule's script (``log``, ``input``).

    Returns
    -------
    logging.Logger
        The pipeline's logger.

    Examples
    --------
    >>> import tempfile, types
    >>> folder = Path(tempfile.mkdtemp())
    >>> job = types.SimpleNamespace(log=[str(folder / "job.log")], input=[])
    >>> start_job(job).name
    'sampled_metrics'
    >>> sys.stderr, sys.excepthook = sys.__stderr__, sys.__excepthook__
    >>> gc.unfreeze()
    """
    times = os.times()  # before the imports below: the script's own start-up
    from ..io.allocator import reuse_freed_memory
    from ..io.atomic import verify_checksum

    log = start_log(snakemake.log[0])
    log.info(STARTUP_LINE, times.user + times.system)
    sys.excepthook = _console_excepthook(getattr(snakemake, "rule", None), snakemake.log[0])
    exit_on_sigterm()
    # The objects the imports made live as long as the process, and at exit the OS takes
    # every object's memory back: out of the cyclic collector's walks, its full
    # collections during the job and the interpreter's at exit walk only the job's own.
    gc.freeze()
    atexit.register(gc.freeze)  # runs after log_cpu_at_exit's line (atexit: last in, first out)
    log_cpu_at_exit()
    reuse_freed_memory()
    verified = [path for path in snakemake.input if Path(path).is_file() and verify_checksum(path)]
    if verified:
        log.info("%d input file(s) match their recorded checksums", len(verified))
    return log


# The last line of a job's log: its CPU time, read back by benchmarks/bench_pipeline.py;
# and its first: the CPU time spent before the script's work (the interpreter,
# Snakemake's preamble, the script's imports), the cost every job pays.
CPU_LINE = "CPU time %.2f s (this process %.2f s, its finished workers %.2f s)"
_CPU_PATTERN = re.compile(r"CPU time ([0-9.]+) s \(this process")
STARTUP_LINE = "start-up CPU time %.2f s (interpreter, Snakemake's preamble, imports)"
_STARTUP_PATTERN = re.compile(r"start-up CPU time ([0-9.]+) s")
# atexit's handler is registered once per process; a failed job disarms it.
_CPU_AT_EXIT = {"registered": False, "armed": False}


def log_cpu_at_exit() -> None:
    """Log :data:`CPU_LINE` when this process exits: its own user and system time and
    that of the child processes it has waited for (the forked workers of
    ``sampled_metrics.io.forked``, joined when their map ends). Snakemake's benchmark
    file samples the job's process tree and misses workers that ended between two
    samples; this line does not. Forked workers leave through ``os._exit`` and log
    nothing; a job that fails with an uncaught exception neither (its log ends with
    the traceback). Logged by the pipeline's logger (:func:`start_log`)."""
    if not _CPU_AT_EXIT["registered"]:
        atexit.register(_log_cpu)
        _CPU_AT_EXIT["registered"] = True
    _CPU_AT_EXIT["armed"] = True


def _log_cpu() -> None:
    if not _CPU_AT_EXIT["armed"]:  # the job failed: its log ends with the traceback
        return
    times = os.times()
    own, workers = times.user + times.system, times.children_user + times.children_system
    logging.getLogger(_LOGGER).info(CPU_LINE, own + workers, own, workers)


def logged_cpu_seconds(path: str | Path, line: str = "end") -> float | None:
    """The CPU time a job's log records: at its end (:func:`log_cpu_at_exit`) or, with
    ``line="start-up"``, before the script's work (:func:`start_job`); None when the
    log has no such line (the job has not ended, or ended by a signal).

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "job.log"
    >>> lines = ["... INFO " + STARTUP_LINE % 0.5, "... INFO " + CPU_LINE % (3.5, 1.25, 2.25)]
    >>> _ = path.write_text("\\n".join(lines) + "\\n")
    >>> logged_cpu_seconds(path), logged_cpu_seconds(path, "start-up")
    (3.5, 0.5)
    >>> logged_cpu_seconds(path.with_name("none.log")) is None
    True
    """
    pattern = {"end": _CPU_PATTERN, "start-up": _STARTUP_PATTERN}[line]
    try:
        found = pattern.findall(Path(path).read_text(errors="replace"))
    except FileNotFoundError:
        return None
    return float(found[-1]) if found else None


def exit_on_sigterm() -> None:
    """Make SIGTERM end this process with ``SystemExit(143)`` (128 + the signal's
    number), raised in the main thread, instead of Python's default of stopping at
    once: ``finally`` blocks and context managers then run, so a write cut short
    deletes its temporary file (``sampled_metrics.io.atomic.atomic_path``). SIGKILL
    cannot be caught; what it leaves, the next write of that file deletes. Processes
    forked from this one (``sampled_metrics.io.forked``) still stop at once.

    Examples
    --------
    >>> exit_on_sigterm()
    >>> try:
    ...     signal.raise_signal(signal.SIGTERM)
    ... except SystemExit as stop:
    ...     stop.code
    143
    >>> _ = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    """
    signal.signal(signal.SIGTERM, functools.partial(_stop, os.getpid()))


def _stop(owner: int, signum: int, frame) -> None:
    if os.getpid() != owner:  # a forked worker: Python's default, at once
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    logging.getLogger(_LOGGER).error("stopped by signal %d", signum)
    raise SystemExit(128 + signum)


def job_error_line(rule: str | None, error: str, log: str | Path) -> str:
    """The console's line for a failed job: its rule, its error (``Type: message``,
    one line) and the log that holds the traceback.

    Examples
    --------
    >>> job_error_line("split", "DataError: x.csv: empty file", "logs/d/split.log")
    'rule split failed: DataError: x.csv: empty file (log: logs/d/split.log)'
    """
    return f"rule {rule or '?'} failed: {error} (log: {log})"


def _one_line(error: BaseException) -> str:
    """``Type: message`` of ``error`` on one line (the type's own name, unqualified)."""
    message = " ".join(str(error).split("\n")).strip()
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def _console_excepthook(rule: str | None, log):
    """A ``sys.excepthook`` that writes the traceback where Python would (``sys.stderr``,
    the job's log after :func:`start_log`) and, for an ``Exception``, its one line
    (:func:`job_error_line`) on the process's own stderr: the console of a local run."""

    def hook(kind, error, tb):
        _CPU_AT_EXIT["armed"] = False  # the traceback stays the log's end (error_in_log)
        sys.__excepthook__(kind, error, tb)
        sys.stderr.flush()
        if isinstance(error, Exception):
            print(job_error_line(rule, _one_line(error), log), file=sys.__stderr__, flush=True)

    return hook


# The header of a Python traceback, and a qualified exception name at the start of a line.
_TRACEBACK = "Traceback (most recent call last):"
_QUALIFIED = re.compile(r"^(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_]\w*(?::|$))")


def error_in_log(path: str | Path, tail: int = 1 << 16) -> str | None:
    """The error a job's log ends with, as one line ``Type: message`` (the exception's
    own name, unqualified): the exception of its last Python traceback. None when the
    log is absent or its last ``tail`` bytes hold no traceback (a job killed from
    outside, or one that failed before its script ran).

    Examples
    --------
    >>> import tempfile
    >>> log = Path(tempfile.mkdtemp()) / "split.log"
    >>> _ = log.write_text("INFO reading\\n" + _TRACEBACK + "\\n  File 'x.py', line 3\\n"
    ...                    "    f()\\npkg.errors.DataError: x.csv: empty file\\n")
    >>> error_in_log(log)
    'DataError: x.csv: empty file'
    """
    try:
        with open(path, "rb") as f:
            f.seek(max(f.seek(0, os.SEEK_END) - tail, 0))
            lines = (
                f.read().decode("utf-8", errors="replace").splitlines()
            )  # \r of progress bars too
    except OSError:
        return None
    starts = [number for number, line in enumerate(lines) if line.strip() == _TRACEBACK]
    if not starts:
        return None
    after = lines[starts[-1] + 1 :]
    # frames are indented; the exception starts at the first line that is not
    first = next(
        (n for n, line in enumerate(after) if line.strip() and not line[0].isspace()), None
    )
    if first is None:
        return None
    text = " ".join(line.strip() for line in after[first:] if line.strip())
    return _QUALIFIED.sub("", text)


def failed_jobs_text(jobs: Iterable[tuple[str | None, Iterable[str | Path]]]) -> str:
    """What the ``onerror`` handler prints: one line per failed job, given as ``(rule,
    log paths)``: its error read back from its log (:func:`error_in_log`), in the
    line of :func:`job_error_line`; "" when there is no job.

    Examples
    --------
    >>> print(failed_jobs_text([("fit", ["logs/absent.log"])]))
    1 failed job, its error from its log:
      rule fit failed: no error in its log, see Snakemake's message above (log: logs/absent.log)
    """
    lines = []
    for rule, logs in jobs:
        said: list[tuple[str | Path, str | None]] = [
            (log, error) for log in logs if (error := error_in_log(log))
        ]
        log, error = (said or [(", ".join(map(str, logs)) or "none", None)])[0]
        error = error or "no error in its log, see Snakemake's message above"
        lines.append("  " + job_error_line(rule, error, log))
    if not lines:
        return ""
    head = (
        "1 failed job, its error from its log"
        if len(lines) == 1
        else (f"{len(lines)} failed jobs, their errors from their logs")
    )
    return "\n".join([f"{head}:", *lines])


def pin_threads(threads: int) -> None:
    """Limit BLAS/OpenMP threads to the rule's share of cores (results do not
    depend on it; oversubscribed BLAS threads slow everything down).

    The thread pools loaded already are limited now; an OpenMP runtime loaded later
    (implicit's, whose fits use every core unless told otherwise) reads
    OMP_NUM_THREADS when it starts."""
    from threadpoolctl import threadpool_limits

    os.environ["OMP_NUM_THREADS"] = str(int(threads))
    threadpool_limits(int(threads))


def record_lock_owner(
    snakemake_dir: str | Path = ".snakemake", pid: int | None = None, host: str | None = None
) -> Path:
    """Write ``<snakemake_dir>/locks/owner.<host>.<pid>`` for the running workflow."""
    locks = Path(snakemake_dir) / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    path = locks / f"owner.{host or socket.gethostname()}.{os.getpid() if pid is None else pid}"
    path.write_text("")
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def clear_stale_locks(
    snakemake_dir: str | Path = ".snakemake", host: str | None = None
) -> list[Path]:
    """Remove the locks and incomplete markers of a dead run; return what was removed.

    Nothing is removed unless every lock file has a recorded owner and every
    recorded owner is a process of this host that no longer exists.
    """
    locks = Path(snakemake_dir) / "locks"
    if not locks.is_dir():
        return []
    names = [p.name for p in locks.iterdir() if p.is_file()]
    lock_sets = {m.group(1) for m in map(_LOCK.match, names) if m}
    owners = [m for m in map(_OWNER.match, names) if m]
    if not lock_sets or len(owners) < len(lock_sets):
        return []
    host = host or socket.gethostname()
    if any(m.group(1) != host or _alive(int(m.group(2))) for m in owners):
        return []
    removed = [locks / name for name in names if _LOCK.match(name) or _OWNER.match(name)]
    incomplete = Path(snakemake_dir) / "incomplete"
    if incomplete.is_dir():
        removed += [
            p for p in incomplete.rglob("*") if p.is_file() and p.name != "migration_underway"
        ]
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


def library_fingerprint(package: Path = Path(__file__).parents[1]) -> str:
    """sha256 (first 16 hex digits) of the Python sources of ``package`` (default:
    this library), sub-packages included, each named by its relative path. The
    rules take it as a param, so that editing a metric, a correction or a loader
    reruns every job that depends on the library (Snakemake itself only tracks
    the rule scripts)."""
    import hashlib

    package = Path(package)
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def package_versions(packages: Iterable[str] = PACKAGES) -> dict[str, str]:
    """Installed version of each distribution (``"not installed"`` when absent)."""
    versions = {}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def versions_text(packages: Iterable[str] = PACKAGES) -> str:
    """``name==version`` lines: python and platform first, then each package."""
    lines = [
        f"python=={platform.python_version()}",
        f"implementation=={sys.implementation.name}",
        f"platform=={platform.system()}-{platform.machine()}",
    ]
    lines += [f"{name}=={version}" for name, version in package_versions(packages).items()]
    return "\n".join(lines) + "\n"


def _plain(value):
    """Mappings and sequences as plain dicts and lists (YAML-safe)."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def config_yaml(config: dict) -> str:
    """The effective configuration as YAML, keys in their configured order."""
    yaml = optional_import("yaml", "writing the configuration")
    return yaml.safe_dump(_plain(config), sort_keys=False, default_flow_style=False)
