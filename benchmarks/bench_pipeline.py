"""Time the whole pipeline, raw data to every figure and table, and its stages.

    python benchmarks/bench_pipeline.py [--data PATH] [--cores 2] [--part1 | --paper]
                                        [--keep DIR]

Runs `snakemake --cores N` on the offline copy of binarized MovieLens 1M in a
fresh temporary directory (nothing cached), then prints the total wall time against
its goal on 2 cores (20 s for --paper, 60 s for the shipped run) and, where it is known,
the time it starts from, measured on another machine (bench_against.py measures both
here), and, from the rules' `benchmark:` files, the stages: training and scoring, exact
ranks, the sampling stage (100 repetitions x 6 recommenders x 6040 users, then every
correction, built with each user's own n, on every repetition), the
protocol-sensitivity table, Figure 6's curves, the protocol study and the design study.
Stage times are per job (wall and CPU: the CPU time each job's log records at its end,
its forked workers included); jobs of a stage may run in parallel. The run's CPU time
(every job, worker and Snakemake itself) divided by the cores is the shortest wall time
any schedule could reach; it is printed beside the goal, and split into the jobs' own
CPU time (the start-up each pays before its work, from its log) and Snakemake's.
`--keep DIR` runs in DIR (which must not hold a run yet) and leaves the outputs there.
With --part1, only the targets of part 1 (split, models, exact ranks, Figure 5,
exact metrics); with --paper, the paper's pipeline against its goal: X, Y and Z (the
baselines set to null), every table, figure and claim of the paper, neither the
protocol study nor the design study.
"""

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd
from offline_data import DATASET, DEFAULT_DATA
from workflow_run import timed_run

from sampled_metrics.pipeline.runs import logged_cpu_seconds

PART1_TARGETS = [f"figures/{DATASET}/fig5.pdf", f"results/{DATASET}/exact_metrics.csv"]
# Goals on 2 cores: the paper's offline pipeline (X, Y, Z, no study) and the shipped run
# (six models, the protocol study and the design study); and the shipped run's time at
# BEFORE_COMMIT on the machine that set the goals (the paper's pipeline was not timed
# there without the design study).
TARGET_SECONDS = {"paper": 20, "shipped": 60}
BEFORE_SECONDS = {"shipped": 237.0}
BEFORE_COMMIT = "5a60a3c"  # bench_against.py runs it here beside the working tree
PAPER_ONLY = {"recommenders": {"Pop": None, "EASE": None, "BPR": None}}
# The first rules of each study beyond the paper: the paper's run omits them and their
# outputs (the protocol study's corrections come first, its simulations after the ranks).
STUDY_RULES = ("protocol_corrections", "protocol_model", "protocol_ranks", "decisions_model")
STAGES = {
    "fit (fit)": "fit_*.tsv",
    "draw the sampled items (draw_plan)": "draw_plan.tsv",
    "score, rank exactly and in every repetition (rank_shard)": "rank_*-of-*.tsv",
    "rank, or join the shards (merge_ranks)": "merge_ranks_*.tsv",
    "sampling: corrections of each n (sampling_corrections)": "sampling_corrections.tsv",
    "sampling: a model's estimates (sampling_recommender)": "sampling_of_*.tsv",
    "sampling: the join (sampling_table)": "sampling_table.tsv",
    "sensitivity: corrections (protocol_sensitivity_corrections)": (
        "protocol_sensitivity_corrections.tsv"
    ),
    "protocol sensitivity (protocol_sensitivity)": "protocol_sensitivity.tsv",
    "Figure 6: corrections (fig6_corrections)": "fig6_corrections.tsv",
    "Figure 6: a model's curves (fig6_recommender)": "fig6_of_*.tsv",
    "Figure 6: the join (fig6_curves)": "fig6_curves.tsv",
    "protocol study: corrections (protocol_corrections)": "protocol_corrections.tsv",
    "protocol study: each model's unpaired protocols (protocol_model)": "protocol_model_*.tsv",
    "protocol study: simulate the paired protocols (protocol_ranks)": "protocol_ranks.tsv",
    "protocol study: estimators of the paired protocols, join (protocols)": "protocols.tsv",
    "design study: each model (decisions_model)": "decisions_model_*.tsv",
    "design study: join, the pairs (decisions)": "decisions.tsv",
}


def cpu_parts(workdir: Path, run_cpu: float) -> list:
    """(what, CPU-s, note) of where a run's CPU time went: its jobs' (every log of the
    run, the toy example's included), their start-up within it (interpreter, Snakemake's
    preamble, imports: what a job pays before its work) and Snakemake's own (the run's
    less its jobs')."""
    logs = sorted((workdir / "logs").glob("*/*.log"))
    ended = [(logged_cpu_seconds(log), logged_cpu_seconds(log, "start-up")) for log in logs]
    ended = [(cpu, start or 0.0) for cpu, start in ended if cpu is not None]
    jobs_cpu, start_up = sum(cpu for cpu, _ in ended), sum(start for _, start in ended)
    return [
        (f"its {len(ended)} jobs", jobs_cpu, ""),
        ("the jobs' start-up (interpreter, imports)", start_up,
         f"{start_up / max(len(ended), 1):.2f} CPU-s a job"),
        ("Snakemake itself", run_cpu - jobs_cpu, "the run's CPU less its jobs'"),
    ]  # fmt: skip


def pipeline_run(data: Path, paper: bool, part1: bool = False) -> tuple:
    """(config, targets) of the run on the offline copy at ``data``: the shipped run,
    the paper's pipeline (``paper``) or part 1's targets (``part1``)."""
    config = {"dataset": DATASET, "datasets": {DATASET: {"path": str(data.resolve())}}}
    if paper:
        config.update(PAPER_ONLY)
        return config, ("--omit-from", *STUDY_RULES)
    return config, (PART1_TARGETS if part1 else ())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--part1", action="store_true", help="only split, models, exact ranks, Figure 5"
    )
    parser.add_argument(
        "--paper", action="store_true", help="X, Y, Z only, without the protocol and design studies"
    )
    parser.add_argument("--keep", type=Path, help="run in this directory and keep it")
    args = parser.parse_args()
    if not args.data.is_file():
        sys.exit(f"{args.data}: offline MovieLens copy not found (--data PATH)")
    if args.keep is not None and (args.keep / "results").exists():
        sys.exit(f"{args.keep}: holds a run already; give a new directory")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp) if args.keep is None else args.keep
        workdir.mkdir(parents=True, exist_ok=True)
        config, targets = pipeline_run(args.data, args.paper, args.part1)
        total, cpu = timed_run(workdir, config, args.cores, targets)
        bench = workdir / "results" / DATASET / "benchmarks"
        logs = workdir / "logs" / DATASET
        print(
            f"{'stage':62s} {'jobs':>4s} {'sum s':>8s} {'max s':>7s} {'cpu s':>7s} "
            f"{'max PSS MB':>10s}"
        )
        for label, pattern in STAGES.items():
            paths = sorted(bench.glob(pattern))
            if not paths:
                continue
            table = pd.concat([pd.read_csv(path, sep="\t") for path in paths])
            # each job's own count, its forked workers included (the benchmark file's
            # cpu_time samples the process tree and misses workers that ended between samples)
            jobs_cpu = sum(logged_cpu_seconds(logs / f"{path.stem}.log") or 0.0 for path in paths)
            print(
                f"{label:62s} {len(paths):4d} {table['s'].sum():8.1f} {table['s'].max():7.1f} "
                f"{jobs_cpu:7.1f} {table['max_pss'].max():10.0f}"
            )
        if args.part1:
            print(
                f"\npart 1 (split, models, exact ranks, Figure 5), "
                f"--cores {args.cores}: {total:.1f} s"
            )
        else:
            run = "paper" if args.paper else "shipped"
            what = {
                "paper": "the paper's pipeline (X, Y, Z)",
                "shipped": "the shipped pipeline (6 recommenders, both studies)",
            }[run]
            print(
                f"\n{what}, raw data to every figure and table, --cores {args.cores}: "
                f"{total:.1f} s; goal {TARGET_SECONDS[run]} s, ratio "
                f"{total / TARGET_SECONDS[run]:.2f}"
            )
            if run in BEFORE_SECONDS:
                print(
                    f"{BEFORE_SECONDS[run]} s at {BEFORE_COMMIT} on the machine that set the "
                    f"goal (bench_against.py times {BEFORE_COMMIT} on this one)"
                )
            allowed = TARGET_SECONDS[run] * args.cores
            print(
                f"CPU time of the run: {cpu:.1f} s, so no schedule on {args.cores} cores ends "
                f"before {cpu / args.cores:.1f} s; the goal leaves {allowed} CPU-s "
                f"(ratio {cpu / allowed:.2f})"
            )
            for what, seconds, note in cpu_parts(workdir, cpu):
                print(f"  {what}: {seconds:.1f} CPU-s" + (f" ({note})" if note else ""))


if __name__ == "__main__":
    main()
