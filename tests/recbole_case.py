"""The worked example of docs/recbole.md, run by tests/test_recbole_adapter.py in
RecBole's environment (``.ci/envs/recbole.sh`` builds it at .envs/recbole).

``python tests/recbole_case.py WORK`` writes a tiny synthetic data set in RecBole's
atomic format (WORK/data/tiny/tiny.inter: 60 users, 80 items, 8 to 20 interactions
each, with timestamps), trains BPR on it for two epochs on the CPU with a leave-one-out
split by time (eval mode: full on the validation set, uni20 on the test set), saves the
checkpoint as WORK/saved/BPR.pth, then runs RecBole's own test evaluation (uni20) with
the ranks recorded (``RankRecorder``): WORK/ranks/inprocess-recbole-uni20.csv and its
sidecar, and one JSON line on stdout with RecBole's metrics of that evaluation; last,
RecBole's Pop on the same data, saved as WORK/saved/Pop.pth. Run it
in an empty folder: RecBole writes log/ and log_tensorboard/ where it runs.

recbole is imported inside ``main``: this module imports without it (pytest collects
its doctests in the project's environment).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

USERS, ITEMS = 60, 80
SEED = 2020


def write_interactions(folder: Path, seed: int = SEED) -> Path:
    """RecBole's atomic ``tiny.inter``: each user's items drawn by taste (a rank-4 score
    plus noise), distinct, with increasing timestamps; every user has 8 to 20 items.

    Examples
    --------
    >>> import tempfile
    >>> path = write_interactions(Path(tempfile.mkdtemp()))
    >>> lines = path.read_text().splitlines()
    >>> lines[0]
    'user_id:token\\titem_id:token\\ttimestamp:float'
    >>> 60 * 8 <= len(lines) - 1 <= 60 * 20
    True
    """
    rng = np.random.default_rng(seed)
    taste = rng.normal(size=(USERS, 4)) @ rng.normal(size=(4, ITEMS))
    popularity = np.linspace(1.5, 0.0, ITEMS)
    lines = ["user_id:token\titem_id:token\ttimestamp:float"]
    for user in range(USERS):
        weight = np.exp(taste[user] + popularity)
        count = int(rng.integers(8, 21))
        items = rng.choice(ITEMS, size=count, replace=False, p=weight / weight.sum())
        for t, item in enumerate(items):
            lines.append(f"u{user}\ti{item}\t{1_000_000 + 1000 * user + t}")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tiny.inter"
    path.write_text("\n".join(lines) + "\n")
    return path


def config_dict(work: Path) -> dict:
    """The run's RecBole settings: leave-one-out by time, uni20 on the test set."""
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
            "mode": {"valid": "full", "test": "uni20"},
        },
        "metrics": ["Hit", "NDCG", "MRR"],
        "topk": [1, 5, 10],
        "valid_metric": "MRR@10",
        "epochs": 30,
        "eval_step": 10,
        "learning_rate": 0.05,
        "train_batch_size": 256,
        "eval_batch_size": 1000,  # several batches in both modes
        "embedding_size": 16,
        "seed": SEED,
        "reproducibility": True,
        "device": "cpu",
        "use_gpu": False,
        "show_progress": False,
        "log_wandb": False,
        "state": "WARNING",
    }


def main(argv=None) -> int:
    work = Path((argv or sys.argv[1:] or ["."])[0]).resolve()
    # The checkpoint holds RecBole's pickled config: torch >= 2.6 loads it only so.
    os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    from recbole.config import Config
    from recbole.data import create_dataset, data_preparation
    from recbole.utils import get_model, get_trainer, init_logger, init_seed

    from sampled_metrics.frameworks.adapters.recbole import RankRecorder

    write_interactions(work / "data" / "tiny")
    config = Config(model="BPR", dataset="tiny", config_dict=config_dict(work))
    init_seed(config["seed"], config["reproducibility"])
    init_logger(config)
    dataset = create_dataset(config)
    train_data, valid_data, test_data = data_preparation(config, dataset)
    init_seed(config["seed"], config["reproducibility"])
    model = get_model(config["model"])(config, train_data._dataset).to(config["device"])
    trainer = get_trainer(config["MODEL_TYPE"], config["model"])(config, model)
    trainer.saved_model_file = str(work / "saved" / "BPR.pth")
    trainer.fit(train_data, valid_data, saved=True, show_progress=False)

    # RecBole's test evaluation, as run_recbole does it, with the ranks recorded.
    with RankRecorder(trainer, test_data) as recorder:
        result = trainer.evaluate(test_data, load_best_model=True)
    path = recorder.write(work / "ranks" / f"inprocess-{recorder.protocol}.csv")
    record = {"protocol": recorder.protocol, "file": os.path.relpath(path), "column": "BPR"}
    record["tie_order"] = recorder.tie_order
    print(json.dumps({**record, "recbole": {k: float(v) for k, v in result.items()}}))
    tied_model(config, dataset, trainer, (train_data, valid_data, test_data), work)
    second_model(work)
    return 0


def second_model(work: Path) -> None:
    """RecBole's Pop on the same data and config (one epoch: it counts), saved as
    WORK/saved/Pop.pth: a second checkpoint to compare BPR with."""
    from recbole.config import Config
    from recbole.data import create_dataset, data_preparation
    from recbole.utils import get_model, get_trainer, init_seed

    config = Config(model="Pop", dataset="tiny", config_dict={**config_dict(work), "epochs": 1})
    init_seed(config["seed"], config["reproducibility"])
    train_data, valid_data, _ = data_preparation(config, create_dataset(config))
    model = get_model(config["model"])(config, train_data._dataset).to(config["device"])
    trainer = get_trainer(config["MODEL_TYPE"], config["model"])(config, model)
    trainer.saved_model_file = str(work / "saved" / "Pop.pth")
    trainer.fit(train_data, valid_data, saved=True, show_progress=False)


def tied_model(config, dataset, trainer, loaders, work: Path) -> None:
    """The same model with its scores rounded to halves, so that many items tie with
    the held-out one: the files must still give RecBole's metrics (its torch.topk
    orders the ties). One JSON line per mode, with the share of held-out items that tie
    with another ranked item in full sorting (``tied``). In full sorting also the ranks
    with the held-out item before (``ties-full-optimistic.csv``) and after
    (``ties-full-pessimistic.csv``) the items it ties with below the top k, the ranks of
    every third user ranked alone (``eval_loader``'s ``users``: ``ties-full-some.csv``),
    and, from the scores, each user's items scored above it and tied with it
    (``ties-full-counts.csv``)."""
    import torch
    from recbole.data.interaction import Interaction

    from sampled_metrics.frameworks.adapters.recbole import (
        eval_loader,
        protocol_of,
        rank_file_meta,
        record_ranks,
    )
    from sampled_metrics.frameworks.rank_meta import write_rank_file

    model = trainer.model
    predict, full_sort_predict = model.predict, model.full_sort_predict
    model.predict = lambda interaction: torch.round(predict(interaction) * 2) / 2
    model.full_sort_predict = lambda interaction: (
        torch.round(full_sort_predict(interaction) * 2) / 2
    )
    for mode in ("uni20", "full"):
        loader = eval_loader(config, dataset, *loaders, mode)
        result, ranks = record_ranks(trainer, loader, name="BPR_ties", load_best_model=False)
        protocol = protocol_of(loader)
        path = work / "ranks" / f"ties-{protocol}.csv"
        write_rank_file(ranks, path, rank_file_meta(protocol, "BPR_ties", ranks.attrs["tie_order"]))
        record = {"protocol": protocol, "file": os.path.relpath(path), "column": "BPR_ties"}
        record["tie_order"] = ranks.attrs["tie_order"]
        if mode == "full":
            for ties in ("optimistic", "pessimistic"):
                _, other = record_ranks(
                    trainer, loader, name="BPR_ties", ties=ties, load_best_model=False
                )
                other.to_csv(work / "ranks" / f"ties-full-{ties}.csv", index=False)
            # every third user alone (users=): each must rank as among all
            some = np.unique(loader.uid_list.numpy())[::3]
            alone = eval_loader(config, dataset, *loaders, "full", users=some)
            _, other = record_ranks(trainer, alone, name="BPR_ties", load_best_model=False)
            other.to_csv(work / "ranks" / "ties-full-some.csv", index=False)
            users = torch.as_tensor(loader.uid_list)
            uid = config["USER_ID_FIELD"]
            with torch.no_grad():
                scores = model.full_sort_predict(Interaction({uid: users})).view(len(users), -1)
            tied, counts = 0, ["user,above,tied"]
            for row, user in enumerate(users.tolist()):
                ranked = torch.ones(scores.shape[1], dtype=torch.bool)
                ranked[0] = False
                ranked[loader.uid2history_item[user]] = False
                (item,) = loader.uid2positive_item[user].tolist()
                ranked[item] = False
                target = scores[row, item]
                equal = int((scores[row, ranked] == target).sum())
                above = int((scores[row, ranked] > target).sum())
                tied += equal > 0
                token = dataset.id2token(config["USER_ID_FIELD"], user)
                counts.append(f"{token},{above},{equal}")
            record["tied"] = tied / len(users)
            (work / "ranks" / "ties-full-counts.csv").write_text("\n".join(counts) + "\n")
        print(json.dumps({**record, "recbole": {k: float(v) for k, v in result.items()}}))


if __name__ == "__main__":
    sys.exit(main())
