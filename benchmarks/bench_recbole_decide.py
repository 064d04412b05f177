"""From two RecBole checkpoints to a verdict: ``sampled-metrics recbole A.pth B.pth
--decide`` against ranking both models fully, loads included.

On binarized MovieLens 1M (``--data``: its ``interactions.csv.gz``, converted to RecBole's
atomic format in a temporary folder, never kept) or, without ``--data``, a synthetic data
set of its size (6040 users, 3706 items, about 165 interactions each), RecBole's BPR
(``--epochs`` epochs on the CPU) and Pop are trained with a leave-one-out split by time,
each saved as a checkpoint. Then timed, each as a command a user runs (wall and CPU
seconds of the child process):

(a) ``sampled-metrics recbole BPR.pth Pop.pth --decide --seed S --json``: the data set
    loaded once, both models' sampled evaluation (recbole-uni100) on the same drawn items,
    the sequential design's waves ranked exactly;
(b) ``sampled-metrics recbole X.pth --protocol full`` for each model: full ranking of
    every user, each command loading its checkpoint and data set.

Prints both verdicts on Recall@10 (full ranking's: the paired t-test over users of the two
full files), the design's cost in users and scored items, and the wall-time ratio.
Runs only in RecBole's environment::

    .envs/recbole/bin/python benchmarks/bench_recbole_decide.py [--data PATH] [--epochs 2]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

USERS, ITEMS, PER_USER = 6040, 3706, 165
SEED = 2020
HEADER = "user_id:token\titem_id:token\ttimestamp:float"


def movielens_interactions(path: Path, folder: Path) -> None:
    """``ml.inter`` from the binarized MovieLens 1M file (user_id, item_id, position: the
    position is each user's order in time)."""
    with gzip.open(path, "rt") as handle:
        frame = pd.read_csv(handle)
    rows = frame[["user_id", "item_id", "position"]].itertuples(index=False)
    lines = [HEADER] + [f"{u}\t{i}\t{p}" for u, i, p in rows]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ml.inter").write_text("\n".join(lines) + "\n")


def synthetic_interactions(folder: Path, seed: int = SEED) -> None:
    """``ml.inter`` of MovieLens 1M's size: each user's distinct items drawn by taste (a
    rank-8 score plus popularity), 20 to 310 of them, in the order drawn."""
    rng = np.random.default_rng(seed)
    taste = rng.normal(size=(USERS, 8)) @ rng.normal(size=(8, ITEMS)) / 2
    popularity = np.linspace(2.0, 0.0, ITEMS)
    lines = [HEADER]
    for user in range(USERS):
        weight = np.exp(taste[user] + popularity)
        count = int(rng.integers(20, 2 * PER_USER - 19))
        items = rng.choice(ITEMS, size=count, replace=False, p=weight / weight.sum())
        lines += [f"u{user}\ti{item}\t{t}" for t, item in enumerate(items)]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ml.inter").write_text("\n".join(lines) + "\n")


def config_dict(work: Path, epochs: int) -> dict:
    return {
        "data_path": str(work / "data"),
        "checkpoint_dir": str(work / "saved"),
        "USER_ID_FIELD": "user_id",
        "ITEM_ID_FIELD": "item_id",
        "TIME_FIELD": "timestamp",
        "load_col": {"inter": ["user_id", "item_id", "timestamp"]},
        "eval_args": {
            "split": {"LS": "valid_and_test"},
            "order": "TO",
            "group_by": "user",
            "mode": {"valid": "uni100", "test": "uni100"},
        },  # fmt: skip
        "metrics": ["Hit", "NDCG", "MRR"],
        "topk": [10],
        "valid_metric": "MRR@10",
        "epochs": epochs,
        "train_batch_size": 4096,
        "eval_batch_size": 4096,
        "embedding_size": 64,
        "learning_rate": 0.005,
        "seed": SEED,
        "reproducibility": True,
        "device": "cpu",
        "use_gpu": False,
        "show_progress": False,
        "log_wandb": False,
        "state": "WARNING",
    }


def train(work: Path, model: str, epochs: int) -> tuple[Path, float]:
    """``model`` trained on the data, saved as WORK/saved/<model>.pth; its seconds."""
    from recbole.config import Config
    from recbole.data import create_dataset, data_preparation
    from recbole.utils import get_model, get_trainer, init_seed

    start = time.perf_counter()
    config = Config(model=model, dataset="ml", config_dict=config_dict(work, epochs))
    init_seed(config["seed"], config["reproducibility"])
    train_data, _, _ = data_preparation(config, create_dataset(config))
    init_seed(config["seed"], config["reproducibility"])
    built = get_model(model)(config, train_data._dataset).to(config["device"])
    trainer = get_trainer(config["MODEL_TYPE"], model)(config, built)
    trainer.saved_model_file = str(work / "saved" / f"{model}.pth")
    trainer.fit(train_data, None, saved=True, show_progress=False)  # no validation
    return Path(trainer.saved_model_file), time.perf_counter() - start


def timed(command: list[str], work: Path) -> tuple[str, float, float]:
    """A command's standard output, wall seconds and CPU seconds (its children's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=work, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done.stdout, wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="binarized MovieLens 1M's interactions.csv.gz")
    parser.add_argument("--epochs", type=int, default=2, help="BPR's epochs (2)")
    parser.add_argument("--seed", type=int, default=1, help="the design's seed (1)")
    args = parser.parse_args(argv)
    os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    from sampled_metrics.estimation.decisions import paired_test

    command = str(Path(sys.executable).with_name("sampled-metrics"))
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        if args.data:
            movielens_interactions(args.data, work / "data" / "ml")
        else:
            synthetic_interactions(work / "data" / "ml")
        source = f"MovieLens 1M ({args.data})" if args.data else "synthetic, MovieLens 1M's size"
        checkpoints = {}
        for model in ("BPR", "Pop"):
            checkpoints[model], seconds = train(work, model, args.epochs)
            print(f"trained {model} on {source}: {seconds:.1f} s", flush=True)
        out, decide_wall, decide_cpu = timed(
            [command, "recbole", *map(str, checkpoints.values()), "--decide", "--seed",
             str(args.seed), "--json"], work)  # fmt: skip
        records = json.loads(out)
        (pair,) = [r for r in records if r["kind"] == "sequential_comparison"]
        (cost,) = [r for r in records if r["kind"] == "decision_cost"]
        full_wall = full_cpu = 0.0
        frames = []
        for model, path in checkpoints.items():
            _, wall, cpu = timed([command, "recbole", str(path), "--protocol", "full", "--out",
                                  "full"], work)  # fmt: skip
            full_wall, full_cpu = full_wall + wall, full_cpu + cpu
            frames.append(pd.read_csv(work / "full" / f"{model}-full.csv",
                                      dtype={"user": str}).set_index("user"))  # fmt: skip
        both = frames[0].join(frames[1][["Pop"]], how="inner")
        exact = paired_test(both[["BPR", "Pop"]].to_numpy().T, both["n"], "recall@10")
    print(f"(a) --decide: {pair['verdict']} (recall@10 difference {pair['difference']:.4f}, "
          f"interval {pair['low']:.4f} to {pair['high']:.4f}, wave {pair['wave']}); "
          f"{cost['users']} users ranked exactly ({100 * cost['share_of_users']:.1f}%, "
          f"{100 * cost['share_of_items']:.1f}% of full ranking's scored items); wall "
          f"{decide_wall:.1f} s, CPU {decide_cpu:.1f} s (inside: loading "
          f"{cost['load_seconds']:.1f} s, sampled evaluation {cost['sampled_seconds']:.1f} s, "
          f"exact waves {cost['exact_seconds']:.1f} s; its estimate of full ranking "
          f"{cost['full_ranking_estimate']:.1f} s beside the loads)")  # fmt: skip
    print(f"(b) full ranking of both: {exact.verdict.label('BPR', 'Pop')} (recall@10 "
          f"difference {exact.difference:.4f}, interval {exact.low:.4f} to {exact.high:.4f}); "
          f"wall {full_wall:.1f} s, CPU {full_cpu:.1f} s (two commands, each loading)")  # fmt: skip
    print(
        f"wall-time ratio (a)/(b): {decide_wall / full_wall:.2f}; CPU ratio: "
        f"{decide_cpu / full_cpu:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
