"""The protocol study's rules (`protocol_corrections`, `protocol_model` of every
recommender, `protocol_ranks`, `protocols`) on a finished run, against their goal: at
most 10 CPU-s together on MovieLens 1M.

    python benchmarks/bench_protocol_rules.py [--workdir .] [--dataset ml-1m-offline]
        [--repetitions N] [--threads 2]

Reads the run's split, fitted models (a run that removes them once ranked must keep
them), draw plan and exact ranks (`<workdir>/results/<dataset>`,
`<workdir>/data/processed/<dataset>/split.npz`), writes the ranking pass's masks again
in a temporary folder (the pipeline deletes them once the study has read them), then
runs each rule's script in a fresh process on them, the config's settings as the
rules pass them (`--repetitions` overrides protocols.repetitions), its outputs in that
temporary folder. Prints each job's CPU seconds (the process and the forked workers
it waited for: snakemake's `benchmark:` files miss short-lived workers), wall seconds
and peak RSS, the disk the intermediate files take, and the sum against the goal. The
jobs run one after another here; in the pipeline the corrections are built beside the
fits and each model's share once that model is ranked.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

GOAL_CPU = 10.0  # CPU-s of both rules on MovieLens 1M


def write_masks(workdir: Path, dataset: str, folder: Path, config: dict) -> list:
    """Each recommender's masks of all users (one shard), as rule rank_shard writes them."""
    from sampled_metrics.data import load_split
    from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
    from sampled_metrics.passes.block_pass import rank_users
    from sampled_metrics.passes.draw_plan import load_draw_plan
    from sampled_metrics.recommenders import load_model
    from sampled_metrics.studies.protocols.beaten_files import BeatenWriter, study_layers

    results = workdir / "results" / dataset
    split = load_split(workdir / "data/processed" / dataset / "split.npz")
    plan = load_draw_plan(results / "draw_plan.npz")
    layers = study_layers([FRAMEWORK_PROTOCOLS[name] for name in config["protocols"]["run"]])
    missing = [
        name for name in config["recommenders"] if not (results / "models" / f"{name}.pkl").exists()
    ]
    if missing:
        sys.exit(
            f"{results / 'models'}: no fitted model of {', '.join(missing)} (rerun, keeping them)"
        )
    paths = []
    for name in config["recommenders"]:
        path = folder / f"{name}.beaten.npy"
        with BeatenWriter(
            path, layers, 0, split.n_users, split.test_items, split.train.shape[1]
        ) as beaten:
            rank_users(
                load_model(results / "models" / f"{name}.pkl"), split.train, split.test_items,
                plan, 0, split.n_users, tie_policy=config["ranking"]["tie_policy"],
                tie_seed=config["seed"], memory_mb=config["ranking"]["memory_mb"],
                user_ids=split.user_ids, beaten=beaten,
            )  # fmt: skip
        paths.append(str(path))
    return paths


# Runs one rule's script in this process (a fresh interpreter per rule) and prints
# "cpu wall rss" on its last line.
_RUNNER = r"""
import json, resource, runpy, sys, time, types
spec = json.loads(sys.argv[1])

class Files(list):
    def __init__(self, items, named):
        super().__init__(items)
        self.__dict__.update(named)

named = spec["input"]
items = [x for value in named.values() for x in (value if isinstance(value, list) else [value])]
job = types.SimpleNamespace(
    input=Files(items, named), output=Files(spec["output_list"], spec["output"]),
    params=types.SimpleNamespace(**spec["params"]), threads=spec["threads"],
    log=[spec["log"]],
    wildcards=types.SimpleNamespace(dataset=spec["dataset"], recommender=spec.get("recommender")),
)
start, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
runpy.run_path(spec["script"], init_globals={"snakemake": job})
end = resource.getrusage(resource.RUSAGE_SELF)
children = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = end.ru_utime + end.ru_stime - start.ru_utime - start.ru_stime
cpu += children.ru_utime + children.ru_stime
print(cpu, time.perf_counter() - wall, max(end.ru_maxrss, children.ru_maxrss) / 1024)
"""


def run_rule(spec: dict) -> tuple:
    """(CPU-s, wall s, peak RSS MB) of one rule's script."""
    import json

    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, json.dumps(spec)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    cpu, wall, rss = (float(x) for x in done.stdout.split()[-3:])
    return cpu, wall, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workdir", type=Path, default=Path("."))
    parser.add_argument("--dataset", default="ml-1m-offline")
    parser.add_argument("--repetitions", type=int)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
    from sampled_metrics.pipeline.config import sampling_seed
    from sampled_metrics.pipeline.validation import load_config, validate_config
    from sampled_metrics.studies.protocols.beaten_files import study_layers

    workdir = args.workdir.resolve()
    config = validate_config(load_config(workdir / "config.yaml"))
    study = config["protocols"]
    reps = args.repetitions or study["repetitions"]
    recommenders, protocols = list(config["recommenders"]), study["run"]
    results = workdir / "results" / args.dataset
    split = str(workdir / "data/processed" / args.dataset / "split.npz")
    ranks = [str(results / "ranks" / f"{name}.csv") for name in recommenders]
    scripts = workdir / "workflow" / "scripts"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        start = resource.getrusage(resource.RUSAGE_SELF)
        masks = write_masks(workdir, args.dataset, folder, config)
        end = resource.getrusage(resource.RUSAGE_SELF)
        masks_mb = sum(Path(path).stat().st_size for path in masks) / 2**20
        paired = [name for name in protocols if FRAMEWORK_PROTOCOLS[name].paired]
        unpaired = [name for name in protocols if not FRAMEWORK_PROTOCOLS[name].paired]
        arrays = [str(folder / f"{name}.npz") for name in paired]
        parts = [str(folder / f"model_{name}.npz") for name in recommenders]
        corrections = str(folder / "corrections.npz")
        outputs = {name: str(folder / f"protocols{suffix}") for name, suffix in (
            ("csv", ".csv"), ("pairs", "_pairs.csv"), ("left_out", "_left_out.csv"),
            ("summary", "_summary.csv"), ("md", ".md"))}  # fmt: skip
        common = {"dataset": args.dataset}
        layers = study_layers([FRAMEWORK_PROTOCOLS[name] for name in protocols])
        estimation = {"metrics": config["metrics"], "estimators": study["estimators"],
                      "nodes": study["per_user_nodes"]}  # fmt: skip
        simulation = {"recommenders": recommenders, "shards": 1, "layers": layers,
                      "repetitions": reps, "seed": sampling_seed(config),
                      "tie_policy": config["ranking"]["tie_policy"], "tie_seed": config["seed"],
                      "memory_mb": config["ranking"]["memory_mb"]}  # fmt: skip
        jobs = {
            "protocol_corrections": {
                **common, "threads": 1, "script": str(scripts / "protocol_corrections.py"),
                "log": str(folder / "protocol_corrections.log"),
                "input": {"split": split}, "output": {}, "output_list": [corrections],
                "params": {"library": None, "protocols": protocols, **estimation},
            },
            **{
                f"protocol_model {name}": {
                    **common, "threads": 1, "recommender": name,
                    "script": str(scripts / "protocol_model.py"),
                    "log": str(folder / f"protocol_model_{name}.log"),
                    "input": {"split": split, "beaten": [mask], "ranks": rank,
                              "corrections": corrections},
                    "output": {}, "output_list": [part],
                    "params": {"library": None, "protocols": unpaired, **simulation,
                               **estimation},
                }
                for name, mask, rank, part in zip(recommenders, masks, ranks, parts)
            },
            "protocol_ranks": {
                **common, "threads": args.threads, "script": str(scripts / "protocol_ranks.py"),
                "log": str(folder / "protocol_ranks.log"),
                "input": {"split": split, "beaten": masks, "ranks": ranks},
                "output": {}, "output_list": arrays,
                "params": {"library": None, "protocols": paired, **simulation},
            },
            "protocols": {
                **common, "threads": args.threads, "script": str(scripts / "protocols.py"),
                "log": str(folder / "protocols.log"),
                "input": {"protocols": arrays, "parts": parts, "corrections": corrections,
                          "split": split},
                "output": outputs, "output_list": list(outputs.values()),
                "params": {"library": None, "recommenders": recommenders,
                           "protocols": protocols, "repetitions": reps, **estimation},
            },
        }  # fmt: skip
        print(f"{args.dataset}: {len(recommenders)} recommenders, {len(protocols)} protocols, "
              f"{reps} repetitions, --threads {args.threads} (the joint jobs)")  # fmt: skip
        print(f"masks written again: {end.ru_utime - start.ru_utime:.1f} CPU-s, "
              f"{masks_mb:.0f} MB (deleted by the pipeline once read)")  # fmt: skip
        print(f"{'job':22s} {'CPU-s':>7s} {'wall s':>7s} {'peak RSS MB':>12s}")
        total = 0.0
        for job, spec in jobs.items():
            cpu, wall, rss = run_rule(spec)
            total += cpu
            print(f"{job:22s} {cpu:7.1f} {wall:7.1f} {rss:12.0f}")
        disk = sum(Path(path).stat().st_size for path in [*arrays, *parts, corrections]) / 2**20
        print(f"intermediate files: {disk:.1f} MB (temporary: deleted once rule protocols ran)")
        print(f"every job: {total:.1f} CPU-s (goal {GOAL_CPU:.0f} on MovieLens 1M, "
              f"ratio {total / GOAL_CPU:.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
