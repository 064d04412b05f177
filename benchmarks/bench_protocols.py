"""What the protocol study adds to the MovieLens 1M pipeline (goal: at most 3 minutes
on 2 cores).

    python benchmarks/bench_protocols.py [--data PATH] [--cores 2]

In a fresh temporary directory, runs the shipped pipeline on the offline copy without
the study (`--omit-from` its first rules: every other figure and table), then the rest
(the study's rules only), and prints the wall time of each, the added time
against the 3-minute goal, and the study rules' time and peak memory from their
`benchmark:` files.
"""

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd
from offline_data import DATASET, DEFAULT_DATA
from workflow_run import run_workflow

GOAL_SECONDS = 180
STUDY_RULES = ("protocol_corrections", "protocol_model", "protocol_ranks", "protocols",
               "protocols_figure")  # fmt: skip
# the study's first rules: nothing of it runs without them
FIRST_RULES = STUDY_RULES[:3]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"{args.data}: offline MovieLens copy not found (--data PATH)")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        config = {"dataset": DATASET, "datasets": {DATASET: {"path": str(args.data.resolve())}}}
        without = run_workflow(workdir, config, args.cores, ("--omit-from", *FIRST_RULES))
        added = run_workflow(workdir, config, args.cores)
        bench = workdir / "results" / DATASET / "benchmarks"
        print(f"{'job':26s} {'s':>7s} {'max RSS MB':>10s}")
        for rule in STUDY_RULES:  # protocol_model: a job per model
            for path in sorted(bench.glob(f"{rule}.tsv")) + sorted(bench.glob(f"{rule}_*.tsv")):
                if rule == "protocols" and path.stem != rule:
                    continue  # protocols_figure's own
                row = pd.read_csv(path, sep="\t").iloc[-1]
                print(f"{path.stem:26s} {row['s']:7.1f} {row['max_rss']:10.0f}")
        print(
            f"\npipeline without the study: {without:.1f} s; the study after it: {added:.1f} s "
            f"(goal {GOAL_SECONDS} s, ratio {added / GOAL_SECONDS:.2f}); whole: "
            f"{without + added:.1f} s, --cores {args.cores}"
        )


if __name__ == "__main__":
    main()
