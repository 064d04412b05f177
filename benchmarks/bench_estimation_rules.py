"""Time the estimation rules on a finished run: the sampled evaluation, Figure 6's curves
and the protocol-sensitivity table, each against its CPU goal, their outputs checked
against the run's.

    python benchmarks/bench_estimation_rules.py [--run DIR] [--dataset ml-1m-offline]
                                                [--threads 2] [--rules sampling ...]

DIR is a directory where the shipped pipeline has run (its config.yaml, results/<dataset>/
and data/processed/<dataset>/split.npz; default: this checkout). Each job of a rule group
(the corrections, one job per recommender where the rules have them, the join) runs its
script in a fresh process on the run's inputs, as Snakemake would run it (the rule's
params from the run's config), writing into a temporary directory; the CPU time is the
sum of the jobs' logs' (their forked workers included). Every output is then compared by
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
from sampled_metrics.reproduction.paper import PUBLISHED_FILE

ROOT = Path(__file__).resolve().parent.parent
# CPU-s goals at MovieLens 1M (issue 50) and the CPU-s measured before, each group's jobs
# summed (the groups were one job each, on 2 processes).
GOAL_CPU = {"sampling": 10.0, "fig6": 3.0, "protocol_sensitivity": 3.0}
BEFORE_CPU = {"sampling": 33.6, "fig6": 16.5, "protocol_sensitivity": 4.9}
# Each group's rules in order, the rules with one job per recommender marked True.
GROUPS = {
    "sampling": [
        ("sampling_corrections", False),
        ("sampling_recommender", True),
        ("sampling_table", False),
    ],
    "fig6": [("fig6_corrections", False), ("fig6_recommender", True), ("fig6_curves", False)],
    "protocol_sensitivity": [
        ("protocol_sensitivity_corrections", False),
        ("protocol_sensitivity", False),
    ],
}
# What each group writes that the run keeps (the file names in results/<dataset>/).
OUTPUTS = {
    "sampling": ["sampling.csv", "crosscheck.csv"],
    "fig6": ["fig6.csv", "fig6_thresholds.csv", "fig6_left_out.csv"],
    "protocol_sensitivity": ["protocol_sensitivity.csv", "protocol_sensitivity.md"],
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
    threads=job["threads"], log=[job["log"]],
    wildcards=Files(dataset=job["dataset"], recommender=job["recommender"]),
    rule=job["rule"],
)
runpy.run_path(job["script"], init_globals={{"snakemake": snakemake}}, run_name="__main__")
"""


def rule_job(
    rule: str, run: Path, dataset: str, config: dict, out: Path, threads: int, recommender=None
) -> dict:
    """The job's input, output and params (those of workflow/rules/*.smk) on the run;
    the files that jobs pass to each other are in ``out``."""
    results = run / "results" / dataset
    recommenders = list(config["recommenders"])
    ranks = [str(results / "ranks" / f"{r}.csv") for r in recommenders]
    split = str(run / "data" / "processed" / dataset / "split.npz")
    sampling, estimation = config["sampling"], config["estimation"]
    key, m_values = fig6_m_values(config, dataset)
    estimators = ["sampled", *estimation["estimators"]]
    common = {"library": "", "estimation": estimation, "metrics": config["metrics"]}
    nodes = config["protocol_sensitivity"]["per_user_nodes"]
    jobs = {
        "sampling_corrections": (
            {"split": split},
            {"vectors": out / "sampling_corrections.npz"},
            {"estimators": estimators, "m": sampling["m"]},
        ),
        "sampling_recommender": (
            {
                "vectors": str(out / "sampling_corrections.npz"),
                "sampled": str(results / "sampled_ranks" / f"{recommender}.npy"),
                "ranks": str(results / "ranks" / f"{recommender}.csv"),
                "split": split,
            },
            {"share": out / f"sampling_{recommender}.npz"},
            {"estimators": estimators, **sampling},
        ),
        "sampling_table": (
            {"shares": [str(out / f"sampling_{r}.npz") for r in recommenders]},
            {"table": out / "sampling.csv", "crosscheck": out / "crosscheck.csv"},
            {"recommenders": recommenders, "estimators": estimators},
        ),
        "fig6_corrections": (
            {"split": split},
            {"vectors": out / "fig6_corrections.npz", "left_out": out / "fig6_left_out.csv"},
            {"fig6": config["fig6"], "m_values": m_values, "m_key": key},
        ),
        "fig6_recommender": (
            {
                "vectors": str(out / "fig6_corrections.npz"),
                "ranks": str(results / "ranks" / f"{recommender}.csv"),
                "split": split,
            },
            {"share": out / f"fig6_{recommender}.npz"},
            {"fig6": config["fig6"]},
        ),
        "fig6_curves": (
            {"shares": [str(out / f"fig6_{r}.npz") for r in recommenders]},
            {"curves": out / "fig6.csv", "thresholds": out / "fig6_thresholds.csv"},
            {"recommenders": recommenders, "fig6": config["fig6"], "m_values": m_values},
        ),
        "protocol_sensitivity_corrections": (
            {"split": split},
            {"vectors": out / "protocol_sensitivity_corrections.npz"},
            {"m": sampling["m"], "nodes": nodes},
        ),
        "protocol_sensitivity": (
            {
                "vectors": str(out / "protocol_sensitivity_corrections.npz"),
                "ranks": ranks,
                "split": split,
                "paper": str(PUBLISHED_FILE),
            },
            {"csv": out / "protocol_sensitivity.csv", "md": out / "protocol_sensitivity.md"},
            {
                "recommenders": recommenders,
                "m": sampling["m"],
                "law": sampling["law"],
                "nodes": nodes,
            },
        ),
    }
    files, outputs, params = jobs[rule]
    stem = rule if recommender is None else f"{rule}_{recommender}"
    return {
        "rule": rule,
        "dataset": dataset,
        "recommender": recommender,
        "input": files,
        "output": {name: str(path) for name, path in outputs.items()},
        "params": {**common, **params},
        "threads": threads,
        "log": str(out / f"{stem}.log"),
        "script": str(ROOT / "workflow" / "scripts" / f"{rule}.py"),
    }


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, default=ROOT)
    parser.add_argument("--dataset", default="ml-1m-offline")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rules", nargs="+", choices=list(GROUPS), default=list(GROUPS))
    args = parser.parse_args()
    config = validate_config(yaml.safe_load((args.run / "config.yaml").read_text()))
    print(f"{'rules':<22}{'wall s':>8}{'CPU-s':>8}{'before':>8}{'goal':>6}  outputs")
    for group in args.rules:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder)
            wall = cpu = 0.0
            for rule, per_recommender in GROUPS[group]:
                for recommender in config["recommenders"] if per_recommender else [None]:
                    # the corrections' rules run on --threads, the others on one (the rules')
                    threads = args.threads if rule.endswith("_corrections") else 1
                    job = rule_job(rule, args.run, args.dataset, config, out, threads, recommender)
                    start = time.perf_counter()
                    subprocess.run([sys.executable, "-c", JOB.format(job=job)], check=True)
                    wall += time.perf_counter() - start
                    cpu += logged_cpu_seconds(job["log"]) or float("nan")
            reference = args.run / "results" / args.dataset
            differ = [
                name for name in OUTPUTS[group] if sha256(out / name) != sha256(reference / name)
            ]
        same = "byte-identical" if not differ else "DIFFER: " + ", ".join(differ)
        print(
            f"{group:<22}{wall:>8.1f}{cpu:>8.1f}"
            f"{BEFORE_CPU[group]:>8.1f}{GOAL_CPU[group]:>6.1f}  {same}"
        )


if __name__ == "__main__":
    main()
