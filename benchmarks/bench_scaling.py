"""How time and memory grow with users, items and interactions: the whole pipeline on
synthetic data sets of growing size, per rule.

    python benchmarks/bench_scaling.py [--cores 2] [--size USERS ITEMS INTERACTIONS ...]

For each size, writes a `format: synthetic` entry (docs/datasets.md, "Synthetic
data"; the presets' popularity and activity exponents, 20 to `items // 4` events per
user) into a fresh temporary directory, runs `snakemake --cores N` to every figure
and table with the shipped config otherwise (X, Y, Z, m = 100, 100 repetitions,
every correction), and prints, per rule, the wall time (summed over its jobs) and
the largest peak memory (max RSS) of its jobs, from the rules' `benchmark:` files,
then the whole run's wall time and the size of the score files on disk.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import pandas as pd
import yaml
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


def run(users: int, items: int, interactions: int, cores: int) -> tuple[pd.DataFrame, dict]:
    name = f"synthetic-{users}x{items}"
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        config = {"dataset": name, "datasets": {name: synthetic_entry(users, items, interactions)}}
        total = run_workflow(workdir, config, cores)
        rows = []
        for path in sorted((workdir / "results" / name / "benchmarks").glob("*.tsv")):
            bench = pd.read_csv(path, sep="\t")
            rule = path.stem.rsplit("_", 1)[0] if path.stem[-2] == "_" else path.stem
            rows.append({"rule": rule, "s": bench["s"].sum(), "max_rss_mb": bench["max_rss"].max()})
        per_rule = (
            pd.DataFrame(rows).groupby("rule").agg(s=("s", "sum"), max_rss_mb=("max_rss_mb", "max"))
        )
        scores = sum(
            p.stat().st_size for p in (workdir / "results" / name / "scores").glob("*.npy")
        )
        return per_rule, {"total_s": total, "score_files_mb": scores / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument(
        "--size", type=int, nargs=3, action="append", metavar=("USERS", "ITEMS", "EVENTS")
    )
    args = parser.parse_args()
    sizes = [tuple(size) for size in args.size] if args.size else DEFAULT_SIZES
    tables, totals = {}, {}
    for users, items, interactions in sizes:
        label = f"{users:,} x {items:,}, {interactions:,}"
        tables[label], totals[label] = run(users, items, interactions, args.cores)
        print(f"done: {label} in {totals[label]['total_s']:.0f} s", file=sys.stderr)
    seconds = pd.DataFrame({label: t["s"] for label, t in tables.items()}).round(1)
    memory = pd.DataFrame({label: t["max_rss_mb"] for label, t in tables.items()}).round(0)
    print(f"Wall time per rule (s, summed over its jobs), --cores {args.cores}\n")
    print(seconds.to_markdown())
    print("\nLargest peak memory of a job of the rule (MB)\n")
    print(memory.to_markdown())
    print("\nWhole run\n")
    print(pd.DataFrame(totals).round(1).to_markdown())


if __name__ == "__main__":
    main()
