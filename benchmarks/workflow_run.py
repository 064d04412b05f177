"""Run the pipeline in a fresh directory, as the benchmarks do: one home for the command."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def run_workflow(workdir: Path, config: dict, cores: int, targets=(), repo: Path = REPO) -> float:
    """Write ``config`` to ``workdir``/config.yaml (merged over the project's),
    run `snakemake --cores N` there to ``targets`` (all by default), and return
    its wall time in seconds; exit with Snakemake's error output if it fails.
    ``repo``: the checkout whose Snakefile and library run (another commit's worktree:
    its ``workflow/`` goes first on the jobs' PYTHONPATH)."""
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(repo / "workflow"), os.environ.get("PYTHONPATH")])
    )
    start = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--snakefile",
            str(repo / "Snakefile"),
            "--directory",
            str(workdir),
            "--configfile",
            str(workdir / "config.yaml"),
            "--cores",
            str(cores),
            *targets,
            "--quiet",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(result.stderr[-3000:])
    return seconds


def children_cpu_seconds() -> float:
    """User + system CPU seconds of this process's finished children so far (Snakemake
    and every job and worker it waited for): the difference around
    :func:`run_workflow` is the run's CPU time."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(workdir: Path, config: dict, cores: int, targets=(), repo: Path = REPO) -> tuple:
    """(wall s, CPU s) of :func:`run_workflow`: its CPU time that of every process it
    waited for (Snakemake, its jobs and their workers)."""
    before = children_cpu_seconds()
    wall = run_workflow(workdir, config, cores, targets, repo=repo)
    return wall, children_cpu_seconds() - before
