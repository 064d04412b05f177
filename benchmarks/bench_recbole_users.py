"""RecBole's full-sort evaluation of the users a design chose, against every user.

A synthetic data set in RecBole's atomic format (``--users`` users, default 4000,
``--items`` items, 20 to 80 interactions each, drawn by taste as in
tests/recbole_case.py), BPR trained for one epoch on the CPU, leave-one-out by time.
Timed (best of ``--repeats``): the adapter's recorded full-sort evaluation
(``eval_loader(..., "full")`` and ``record_ranks``, what ``sampled-metrics recbole
--protocol full`` runs after loading the checkpoint) of every user, and of 25 % and
10 % of them (``eval_loader(..., users=)``, what ``--users chosen.csv`` runs), with
the ratios; the chosen users' ranks are checked to be their rows of the all-users
file. The users are drawn uniformly: a design's probabilities change which users, not
how many, and each user costs one row of scores. Runs only in RecBole's environment::

    .envs/recbole/bin/python benchmarks/bench_recbole_users.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402
from timing import best_time  # noqa: E402

SHARES = (0.25, 0.1)
SEED = 2020


def write_interactions(folder: Path, users: int, items: int, seed: int = SEED) -> None:
    """``bench.inter``: each user's 20 to 80 distinct items drawn by taste (a rank-8
    score plus popularity), with increasing timestamps."""
    rng = np.random.default_rng(seed)
    taste = rng.normal(size=(users, 8)) @ rng.normal(size=(8, items)) / 2
    popularity = np.linspace(2.0, 0.0, items)
    lines = ["user_id:token\titem_id:token\ttimestamp:float"]
    for user in range(users):
        weight = np.exp(taste[user] + popularity)
        count = int(rng.integers(20, 81))
        chosen = rng.choice(items, size=count, replace=False, p=weight / weight.sum())
        lines += [f"u{user}\ti{item}\t{1_000_000 + 1000 * user + t}" for t, item in
                  enumerate(chosen)]  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bench.inter").write_text("\n".join(lines) + "\n")


def config_dict(work: Path) -> dict:
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
            "mode": {"valid": "full", "test": "full"},
        },
        "metrics": ["Hit", "NDCG", "MRR"],
        "topk": [10],
        "valid_metric": "MRR@10",
        "epochs": 1,
        "train_batch_size": 2048,
        "eval_batch_size": 4096 * 256,
        "embedding_size": 64,
        "seed": SEED,
        "reproducibility": True,
        "device": "cpu",
        "use_gpu": False,
        "show_progress": False,
        "log_wandb": False,
        "state": "WARNING",
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=4000)
    parser.add_argument("--items", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    sys.argv = sys.argv[:1]  # RecBole's Config reads the command line too
    try:
        import recbole  # noqa: F401
        import torch
    except ModuleNotFoundError:
        print(
            "bench_recbole_users.py runs in RecBole's environment: "
            ".envs/recbole/bin/python benchmarks/bench_recbole_users.py (.ci/envs/recbole.sh)"
        )
        return 2
    torch.set_num_threads(1)
    work = Path(tempfile.mkdtemp(prefix="bench-recbole-users-"))
    os.chdir(work)  # RecBole writes log/ where it runs
    try:
        return _run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(args, work: Path) -> int:
    """Write the data, train, time and compare (the module's docstring)."""
    from recbole.config import Config
    from recbole.data import create_dataset, data_preparation
    from recbole.utils import get_model, get_trainer, init_logger, init_seed

    from sampled_metrics.frameworks.adapters.quiet import quiet
    from sampled_metrics.frameworks.adapters.recbole import eval_loader, record_ranks

    write_interactions(work / "data" / "bench", args.users, args.items)
    config = Config(model="BPR", dataset="bench", config_dict=config_dict(work))
    with quiet():
        init_seed(config["seed"], config["reproducibility"])
        init_logger(config)
        dataset = create_dataset(config)
        loaders = data_preparation(config, dataset)
        model = get_model("BPR")(config, loaders[0]._dataset)
        trainer = get_trainer(config["MODEL_TYPE"], "BPR")(config, model)
        start = time.perf_counter()
        trainer.fit(loaders[0], None, saved=False, show_progress=False)
    print(
        f"{dataset.user_num - 1} users, {dataset.item_num - 1} items, "
        f"{len(dataset)} interactions; BPR, 1 epoch: {time.perf_counter() - start:.1f} s"
    )

    def evaluate(users=None):
        loader = eval_loader(config, dataset, *loaders, "full", users)
        return record_ranks(trainer, loader, load_best_model=False)[1]

    every_time, every = best_time(evaluate, args.repeats)
    print(f"every user ({len(every)}): {every_time:.3f} s (loader + recorded full sort)")
    ids = np.unique(loaders[2]._dataset.inter_feat["user_id"].numpy())
    rng = np.random.default_rng(1)
    for share in SHARES:
        chosen = np.sort(rng.choice(ids, size=round(share * ids.size), replace=False))
        took, some = best_time(lambda chosen=chosen: evaluate(chosen), args.repeats)
        expected = every[every["user"].isin(set(some["user"]))].reset_index(drop=True)
        same = len(some) == chosen.size and some.equals(expected)
        print(
            f"chosen {share:.0%} ({chosen.size}): {took:.3f} s, "
            f"{took / every_time:.2f} of every user's; ranks as among all: {same}"
        )
        if not same:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
