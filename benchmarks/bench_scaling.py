"""How time and memory grow with users, items and interactions: the whole pipeline on
synthetic data sets of growing size, per rule.

    python benchmarks/bench_scaling.py [--cores 2] [--size USERS ITEMS INTERACTIONS ...]
                                       [--preset NAME ...] [--keep DIR] [--shipped]

For each size, writes a `format: synthetic` entry (docs/datasets.md, "Synthetic
data"; the presets' popularity and activity exponents, 20 to `items // 4` events per
user) into a fresh temporary directory, or takes a preset of config.yaml
(`--preset ml-20m-like`), runs `snakemake --cores N` to every figure and table of the
paper with the shipped config otherwise (X, Y, Z, m = 100, 100 repetitions, every
correction; the baselines Pop, EASE and BPR set to null and both studies omitted,
as bench_pipeline.py --paper does: docs/popularity.md gives their cost;
`--shipped` keeps them, the run a user of config.yaml gets),
and prints, per rule, the wall time (summed over its jobs) and the largest peak
memory of its jobs (max PSS: pages a job's forked workers share counted once; max RSS
counts them in every process), from the rules' `benchmark:` files, then the whole
run's wall time and what it leaves on disk under results/<name>/ (no score is ever
written; the models are removed once ranked unless ranking.keep_models). `--keep DIR`
runs in DIR and leaves it there.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

import pandas as pd
import yaml
from bench_pipeline import STUDY_RULES
from workflow_run import REPO, run_workflow

DEFAULT_SIZES = ((2_000, 1_000, 100_000), (6_040, 3_706, 1_000_000), (20_000, 6_000, 2_000_000))


def synthetic_entry(users: int, items: int, interactions: int) -> dict:
    presets = yaml.safe_load((REPO / "config.yaml").read_text())["datasets"]["ml-20m-like"]
    return {
        "format": "synthetic",
        "users": users,
        "items": items,
        "interactions": interactions,
        "popularity_exponent": presets["popularity_exponent"],
        "activity_exponent": presets["activity_exponent"],
        "min_events_per_user": 20,
        "max_events_per_user": items // 4,
        "seed": 2020,
    }


def rule_of(benchmark_stem: str) -> str:
    """The rule of a benchmark file: fit_X -> fit, rank_X_0-of-2 -> rank_shard,
    sampling_of_X -> sampling_recommender.

    >>> [rule_of(stem) for stem in ("fit_X", "fig6_of_BPR", "fig6_curves")]
    ['fit', 'fig6_recommender', 'fig6_curves']
    """
    if re.fullmatch(r"rank_[^_]+_\d+-of-\d+", benchmark_stem):
        return "rank_shard"
    match = re.fullmatch(r"(fit|merge_ranks|sampling_of|fig6_of)_[^_]+", benchmark_stem)
    return PER_RECOMMENDER[match.group(1)] if match else benchmark_stem


# The rules with one job per recommender, by the start of their benchmark files' names.
PER_RECOMMENDER = {
    "fit": "fit",
    "merge_ranks": "merge_ranks",
    "sampling_of": "sampling_recommender",
    "fig6_of": "fig6_recommender",
}


# What is measured: the paper's pipeline (the baselines and both studies left out).
BEYOND_THE_PAPER = {"recommenders": {"Pop": None, "EASE": None, "BPR": None}}
OMIT = ("--omit-from", *STUDY_RULES)


def measure(
    workdir: Path, name: str, entry: dict, cores: int, shipped: bool
) -> tuple[pd.DataFrame, dict]:
    config = {"dataset": name, "datasets": {name: entry}}
    if not shipped:
        config.update(BEYOND_THE_PAPER)
    total = run_workflow(workdir, config, cores, () if shipped else OMIT)
    rows = []
    for path in sorted((workdir / "results" / name / "benchmarks").glob("*.tsv")):
        bench = pd.read_csv(path, sep="\t")
        rows.append(
            {
                "rule": rule_of(path.stem),
                "s": bench["s"].sum(),
                "max_pss_mb": bench["max_pss"].max(),
            }
        )
    per_rule = (
        pd.DataFrame(rows).groupby("rule").agg(s=("s", "sum"), max_pss_mb=("max_pss_mb", "max"))
    )
    left = sum(p.stat().st_size for p in (workdir / "results" / name).rglob("*") if p.is_file())
    return per_rule, {"total_s": total, "left_under_results_mb": left / 2**20}


def run(
    name: str, entry: dict, cores: int, keep: Path | None, shipped: bool
) -> tuple[pd.DataFrame, dict]:
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        return measure(keep, name, entry, cores, shipped)
    with tempfile.TemporaryDirectory() as tmp:
        return measure(Path(tmp), name, entry, cores, shipped)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--size", type=int, nargs=3, action="append", metavar=("USERS", "ITEMS", "EVENTS")
    )
    parser.add_argument("--preset", action="append", default=[], help="a synthetic preset")
    parser.add_argument("--keep", type=Path, help="run in this directory and keep it")
    parser.add_argument(
        "--shipped", action="store_true", help="the shipped config: baselines and study kept"
    )
    args = parser.parse_args()
    presets = yaml.safe_load((REPO / "config.yaml").read_text())["datasets"]
    runs = {name: presets[name] for name in args.preset}
    sizes = [tuple(size) for size in args.size] if args.size else ([] if runs else DEFAULT_SIZES)
    for users, items, interactions in sizes:
        runs[f"synthetic-{users}x{items}"] = synthetic_entry(users, items, interactions)
    tables, totals = {}, {}
    for name, entry in runs.items():
        label = f"{name}: {entry['users']:,} x {entry['items']:,}, {entry['interactions']:,}"
        tables[label], totals[label] = run(name, entry, args.cores, args.keep, args.shipped)
        print(f"done: {label} in {totals[label]['total_s']:.0f} s", file=sys.stderr)
    seconds = pd.DataFrame({label: t["s"] for label, t in tables.items()}).round(1)
    memory = pd.DataFrame({label: t["max_pss_mb"] for label, t in tables.items()}).round(0)
    print(f"Wall time per rule (s, summed over its jobs), --cores {args.cores}\n")
    print(seconds.to_markdown())
    print("\nLargest peak memory of a job of the rule (MB, PSS: shared pages once)\n")
    print(memory.to_markdown())
    print("\nWhole run\n")
    print(pd.DataFrame(totals).round(1).to_markdown())


if __name__ == "__main__":
    main()
