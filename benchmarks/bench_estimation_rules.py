"""Time the estimation rules on a finished run: sampling_table, fig6_curves and
protocol_sensitivity, each against its CPU goal, their outputs checked against the run's.

    python benchmarks/bench_estimation_rules.py [--run DIR] [--dataset ml-1m-offline]
                                                [--threads 2] [--rules sampling_table ...]

DIR is a directory where the shipped pipeline has run (its config.yaml, results/<dataset>/
and data/processed/<dataset>/split.npz; default: this checkout). Each rule's script runs
in a fresh process on the run's inputs, as Snakemake would run it (the rule's params from
the run's config), writing into a temporary directory; the CPU time is the one the job's
log records at its end (its forked workers included). Every output is then compared by
sha256 with the run's own: a change of arithmetic that moves a printed digit shows here.
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from sampled_metrics.pipeline.config import fig6_m_values
from sampled_metrics.pipeline.runs import logged_cpu_seconds
from sampled_metrics.pipeline.validation import validate_config

ROOT = Path(__file__).resolve().parent.parent
# CPU-s goals at MovieLens 1M (issue 50) and the CPU-s measured before (2 processes).
GOAL_CPU = {"sampling_table": 10.0, "fig6_curves": 3.0, "protocol_sensitivity": 3.0}
BEFORE_CPU = {"sampling_table": 36.6, "fig6_curves": 13.6, "protocol_sensitivity": 7.8}
# What each rule writes (the file names of its outputs in results/<dataset>/).
OUTPUTS = {
    "sampling_table": {"table": "sampling.csv", "crosscheck": "crosscheck.csv"},
    "fig6_curves": {
        "curves": "fig6.csv",
        "thresholds": "fig6_thresholds.csv",
        "left_out": "fig6_left_out.csv",
    },
    "protocol_sensitivity": {
        "csv": "protocol_sensitivity.csv",
        "md": "protocol_sensitivity.md",
    },
}

# The job, as Snakemake's script directive hands it over: a namespace per field.
JOB = """
import runpy, sys, types

class Files(types.SimpleNamespace):
    def __getitem__(self, key):
        return getattr(self, key)

    def __iter__(self):
        for value in vars(self).values():
            yield from (value if isinstance(value, list) else [value])

job = {job!r}
snakemake = types.SimpleNamespace(
    input=Files(**job["input"]), output=Files(**job["output"]), params=Files(**job["params"]),
    threads=job["threads"], wildcards=Files(dataset=job["dataset"]), log=[job["log"]],
    rule=job["rule"],
)
runpy.run_path(job["script"], init_globals={{"snakemake": snakemake}}, run_name="__main__")
"""


def rule_job(rule: str, run: Path, dataset: str, config: dict, out: Path, threads: int) -> dict:
    """The rule's input, output and params (those of workflow/rules/*.smk) on the run."""
    results = run / "results" / dataset
    recommenders = list(config["recommenders"])
    ranks = [str(results / "ranks" / f"{r}.csv") for r in recommenders]
    split = str(run / "data" / "processed" / dataset / "split.npz")
    common = {"library": "", "recommenders": recommenders, "estimation": config["estimation"]}
    sampling = config["sampling"]
    if rule == "sampling_table":
        sampled = [str(results / "sampled_ranks" / f"{r}.npy") for r in recommenders]
        files = {"sampled": sampled, "ranks": ranks, "split": split}
        params = {
            "metrics": config["metrics"],
            "estimators": ["sampled", *config["estimation"]["estimators"]],
            "m": sampling["m"],
            "repetitions": sampling["repetitions"],
            "law": sampling["law"],
        }
    elif rule == "fig6_curves":
        files = {"ranks": ranks, "split": split}
        key, m_values = fig6_m_values(config, dataset)
        params = {"fig6": config["fig6"], "m_values": m_values, "m_key": key}
    else:
        from sampled_metrics.reproduction.paper import PUBLISHED_FILE

        files = {"ranks": ranks, "split": split, "paper": str(PUBLISHED_FILE)}
        params = {
            "metrics": config["metrics"],
            "m": sampling["m"],
            "law": sampling["law"],
            "nodes": config["protocol_sensitivity"]["per_user_nodes"],
        }
    return {
        "rule": rule,
        "dataset": dataset,
        "input": files,
        "output": {key: str(out / name) for key, name in OUTPUTS[rule].items()},
        "params": {**common, **params},
        "threads": threads,
        "log": str(out / f"{rule}.log"),
        "script": str(ROOT / "workflow" / "scripts" / f"{rule}.py"),
    }


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, default=ROOT)
    parser.add_argument("--dataset", default="ml-1m-offline")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rules", nargs="+", choices=list(OUTPUTS), default=list(OUTPUTS))
    args = parser.parse_args()
    config = validate_config(yaml.safe_load((args.run / "config.yaml").read_text()))
    print(f"{'rule':<22}{'wall s':>8}{'CPU-s':>8}{'before':>8}{'goal':>6}  outputs")
    for rule in args.rules:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder)
            job = rule_job(rule, args.run, args.dataset, config, out, args.threads)
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", JOB.format(job=job)], check=True)
            wall = time.perf_counter() - start
            cpu = logged_cpu_seconds(out / f"{rule}.log")
            reference = args.run / "results" / args.dataset
            differ = [
                name
                for name in OUTPUTS[rule].values()
                if sha256(out / name) != sha256(reference / name)
            ]
        same = "byte-identical" if not differ else "DIFFER: " + ", ".join(differ)
        print(
            f"{rule:<22}{wall:>8.1f}{cpu or float('nan'):>8.1f}"
            f"{BEFORE_CPU[rule]:>8.1f}{GOAL_CPU[rule]:>6.1f}  {same}"
        )


if __name__ == "__main__":
    main()
