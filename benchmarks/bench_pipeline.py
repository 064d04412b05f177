"""Time the whole pipeline, raw data to every figure and table, and its stages.

    python benchmarks/bench_pipeline.py [--data PATH] [--cores 2] [--part1 | --paper]

Runs `snakemake --cores N` on the offline copy of binarized MovieLens 1M in a
fresh temporary directory (nothing cached), then prints the total wall time
against the 60-second target and, from the rules' `benchmark:` files, the
stages: training and scoring, exact ranks, the sampling stage (100 repetitions
x 6 recommenders x 6040 users, then every correction, built with each user's
own n, on every repetition), the protocol-sensitivity table, Figure 6's
curves and the protocol study. Stage times are per job; jobs of a stage may run
in parallel. The 60-second target is the paper's pipeline (X, Y, Z, as when it
was set); the shipped run adds the baselines and the protocol study
(`bench_protocols.py` measures the study alone).
With --part1, only the targets of part 1 (split, models, exact ranks, Figure 5,
exact metrics); with --paper, the paper's pipeline against the target (the
baselines set to null, the protocol study omitted).
"""

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd
from offline_data import DATASET, DEFAULT_DATA
from workflow_run import run_workflow

PART1_TARGETS = [f"figures/{DATASET}/fig5.pdf", f"results/{DATASET}/exact_metrics.csv"]
TARGET_SECONDS = 60  # the paper's offline pipeline (X, Y, Z) on 2 cores, per-user corrections
PAPER_ONLY = {"recommenders": {"Pop": None, "EASE": None, "BPR": None}}
STAGES = {
    "fit (fit)": "fit_*.tsv",
    "draw the sampled items (draw_plan)": "draw_plan.tsv",
    "score, rank exactly and in every repetition (rank_shard)": "rank_*-of-*.tsv",
    "join the shards (merge_ranks)": "merge_ranks_*.tsv",
    "sampling: all corrections (sampling_table)": "sampling_table.tsv",
    "protocol sensitivity (protocol_sensitivity)": "protocol_sensitivity.tsv",
    "Figure 6 curves (fig6_curves)": "fig6_curves.tsv",
    "protocol study: simulate (protocol_ranks)": "protocol_ranks.tsv",
    "protocol study: estimators (protocols)": "protocols.tsv",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--part1", action="store_true", help="only split, models, exact ranks, Figure 5"
    )
    parser.add_argument(
        "--paper", action="store_true", help="X, Y, Z only, without the protocol study"
    )
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"{args.data}: offline MovieLens copy not found (--data PATH)")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        config = {"dataset": DATASET, "datasets": {DATASET: {"path": str(args.data.resolve())}}}
        targets = PART1_TARGETS if args.part1 else ()
        if args.paper:
            config.update(PAPER_ONLY)
            targets = ("--omit-from", "protocol_ranks")
        total = run_workflow(workdir, config, args.cores, targets)
        bench = workdir / "results" / DATASET / "benchmarks"
        print(f"{'stage':46s} {'jobs':>4s} {'sum s':>8s} {'max s':>7s} {'max RSS MB':>10s}")
        for label, pattern in STAGES.items():
            frames = [pd.read_csv(path, sep="\t") for path in sorted(bench.glob(pattern))]
            if not frames:
                continue
            table = pd.concat(frames)
            print(
                f"{label:46s} {len(frames):4d} {table['s'].sum():8.1f} {table['s'].max():7.1f} "
                f"{table['max_rss'].max():10.0f}"
            )
        if args.part1:
            print(
                f"\npart 1 (split, models, exact ranks, Figure 5), "
                f"--cores {args.cores}: {total:.1f} s"
            )
        elif args.paper:
            print(
                f"\nthe paper's pipeline (X, Y, Z), raw data to every figure and table, "
                f"--cores {args.cores}: {total:.1f} s; target {TARGET_SECONDS} s; "
                f"ratio {total / TARGET_SECONDS:.2f}"
            )
        else:
            print(
                f"\nwhole shipped pipeline (6 recommenders, the protocol study), raw data to "
                f"every figure and table, --cores {args.cores}: {total:.1f} s"
            )


if __name__ == "__main__":
    main()
