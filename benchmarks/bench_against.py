"""The MovieLens 1M goals as speed-ups measured on this machine: the pipeline at
BEFORE_COMMIT (the commit timed on the machine that set the goals), run beside the
working tree, alternated.

    python benchmarks/bench_against.py [--paper] [--rounds 2] [--commit 5a60a3c]
                                       [--data PATH] [--cores 2]

The shipped run took 237 s at BEFORE_COMMIT there, and the goal is 60 s on 2 cores
(20 s for the paper's pipeline, not timed there on its own). A machine's speed drifts
between days by more than a factor of 1.5, so a time alone says as much about the hour
as about the code. Each round runs both in fresh directories, in the order baseline,
working tree, then working tree, baseline in the next round, so a drift within the hour
falls on both alike. Prints every run's wall and CPU seconds, the median speed-up, and
for the shipped run the speed-up the goal asks, how many times slower than the goal's
machine this one ran the baseline, and the working tree's median time divided by that
factor against the goal in seconds. The baseline is checked out in a temporary git
worktree (the clone needs its history) and runs with its own Snakefile and library.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_pipeline import BEFORE_COMMIT, BEFORE_SECONDS, TARGET_SECONDS, pipeline_run
from offline_data import DEFAULT_DATA
from workflow_run import REPO, timed_run


def worktree(commit: str, where: Path) -> Path:
    """A detached checkout of ``commit`` at ``where``; exits naming the commit if the
    clone does not hold it."""
    result = subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(where), commit],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        sys.exit(f"commit {commit}: cannot check it out ({result.stderr.strip()})")
    return where


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--paper", action="store_true", help="X, Y, Z only, no study")
    parser.add_argument("--rounds", type=int, default=2, help="pairs of runs (default 2)")
    parser.add_argument("--commit", default=BEFORE_COMMIT, help="the baseline commit")
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"{args.data}: offline MovieLens copy not found (--data PATH)")
    if args.rounds < 1:
        sys.exit(f"--rounds: {args.rounds}; give 1 or more")
    run = "paper" if args.paper else "shipped"
    config, targets = pipeline_run(args.data, args.paper)
    times: dict = {args.commit: [], "working tree": []}
    with tempfile.TemporaryDirectory() as tmp:
        baseline = worktree(args.commit, Path(tmp) / "baseline")
        order = [(args.commit, baseline, "baseline"), ("working tree", REPO, "tree")]
        try:
            for i in range(args.rounds):
                for label, repo, name in order if i % 2 == 0 else order[::-1]:
                    workdir = Path(tmp) / f"round{i}-{name}"
                    workdir.mkdir()
                    wall, cpu = timed_run(workdir, config, args.cores, targets, repo=repo)
                    times[label].append(wall)
                    print(f"round {i + 1}: {label:14s} {wall:7.1f} s, {cpu:7.1f} CPU-s", flush=True)
        finally:
            remove = ["git", "-C", str(REPO), "worktree", "remove", "--force", str(baseline)]
            subprocess.run(remove, check=False)
    before, now = (statistics.median(times[label]) for label, _, _ in order)
    print(
        f"\n{run} run, --cores {args.cores}, medians: {args.commit} {before:.1f} s, the "
        f"working tree {now:.1f} s: {before / now:.2f} times faster"
    )
    if args.commit == BEFORE_COMMIT and run in BEFORE_SECONDS:
        goal, slower = BEFORE_SECONDS[run] / TARGET_SECONDS[run], before / BEFORE_SECONDS[run]
        print(
            f"goal {goal:.2f} times ({BEFORE_SECONDS[run]} s -> {TARGET_SECONDS[run]} s on "
            f"the goal's machine); this machine ran {args.commit} {slower:.2f} times slower "
            f"than that one, so the working tree's {now:.1f} s would be {now / slower:.1f} s "
            f"there (goal {TARGET_SECONDS[run]} s)"
        )


if __name__ == "__main__":
    main()
