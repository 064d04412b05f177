"""Several RecBole checkpoints of one data set, each loaded once, for a sequential
decision between them (``sampled-metrics recbole A.pth B.pth --decide``, docs/recbole.md).

:func:`load_checkpoints` loads the data set and its split once, from the first
checkpoint (RecBole's ``load_data_and_model``), and every other checkpoint's model on it,
after checking that its config describes the same data and split (:data:`DATA_KEYS`).
:func:`sampled_frame` runs RecBole's sampled evaluation of every model on the batches
of one test loader, drawn once from the first checkpoint's seed (:class:`DrawnOnce`),
so that every model is ranked among the same drawn items: the draws are checked, each
row's items hashed by the recorder (:attr:`~.recbole.RankRecorder.draws_digest`), not
assumed. :func:`exact_frame`
ranks some users exactly by every model (full sorting of those users alone, each as in
the evaluation of every user: :func:`~.recbole_data.eval_loader`'s ``users``).

recbole and torch are imported inside the functions (the module imports without them).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..registry import FULL
from .quiet import quiet
from .recbole import checkpoint_name, recbole_mode, record_ranks
from .recbole_data import chosen_users, eval_loader, require_recbole, trusted_pickles, unpickled

if TYPE_CHECKING:  # recbole has no type information: to mypy these are Any
    from recbole.config import Config

__all__ = [
    "DATA_KEYS",
    "Checkpoints",
    "DrawnOnce",
    "exact_frame",
    "load_checkpoints",
    "sampled_frame",
]

# The config keys that make RecBole's data set and split (the data set's own settings,
# read in recbole/properties/dataset/*.yaml, and eval_args but its modes; whether the
# model is sequential): two checkpoints are of one data set when these agree.
DATA_KEYS = (
    "dataset", "data_path", "benchmark_filename", "USER_ID_FIELD",
    "ITEM_ID_FIELD", "RATING_FIELD", "TIME_FIELD", "LABEL_FIELD", "threshold", "load_col",
    "unload_col", "unused_col", "additional_feat_suffix", "rm_dup_inter", "val_interval",
    "filter_inter_by_user_or_item", "user_inter_num_interval", "item_inter_num_interval",
    "alias_of_user_id", "alias_of_item_id", "MAX_ITEM_LIST_LENGTH",
)  # fmt: skip


@dataclass
class Checkpoints:
    """Checkpoints loaded on one data set: their ``names``, the first one's ``config``,
    the data set and its three loaders (``data``), a trainer per checkpoint and the wall
    time of the loads (``seconds``)."""

    names: tuple[str, ...]
    config: Any
    data: tuple[Any, Any, Any, Any]
    trainers: list[Any]
    seconds: float


def _data_settings(config: Config) -> dict:
    """What the data set and its split are made of (:data:`DATA_KEYS`, eval_args but its
    modes; the seed where the split is random)."""
    settings = {key: config[key] for key in DATA_KEYS if key in config}
    settings["eval_args"] = {k: v for k, v in dict(config["eval_args"]).items() if k != "mode"}
    # a sequential model's loaders are other than a general or traditional model's
    settings["sequential"] = config["MODEL_TYPE"].name == "SEQUENTIAL"
    if settings["eval_args"].get("order") == "RO":
        settings["seed"] = config["seed"]
    return settings


def load_checkpoints(paths: Sequence[str | Path], names: Sequence[str] = ()) -> Checkpoints:
    """The data set once (from ``paths[0]``) and every checkpoint's model on it; the
    checkpoints' data settings are compared before the data set is loaded.

    Raises
    ------
    ValueError
        A checkpoint of another data set or split: the first setting that differs.
    """
    require_recbole()
    import torch
    from recbole.quick_start import load_data_and_model
    from recbole.utils import get_model, get_trainer, init_seed

    labels = tuple(checkpoint_name(p, n) for p, n in zip(paths, [*names, *[None] * len(paths)]))
    start = time.perf_counter()
    with quiet(), trusted_pickles():
        checkpoints = [torch.load(str(path)) for path in paths]
    first = _data_settings(checkpoints[0]["config"])
    for path, checkpoint in zip(paths[1:], checkpoints[1:]):  # before the data set loads
        settings = _data_settings(checkpoint["config"])
        differs = next((key for key in {**first, **settings}
                        if first.get(key) != settings.get(key)), None)  # fmt: skip
        if differs is not None:
            raise ValueError(f"{path} is a checkpoint of another data set or split than "
                             f"{paths[0]}: {differs} is {settings.get(differs)!r}, not "
                             f"{first.get(differs)!r}")  # fmt: skip
    with quiet(), trusted_pickles():
        config, model, *data = load_data_and_model(str(paths[0]))
    unpickled(config)
    trainers = [get_trainer(config["MODEL_TYPE"], config["model"])(config, model)]
    for checkpoint in checkpoints[1:]:
        other = checkpoint["config"]
        unpickled(other)
        with quiet():
            init_seed(other["seed"], other["reproducibility"])
            built = get_model(other["model"])(other, data[1]._dataset).to(other["device"])
            built.load_state_dict(checkpoint["state_dict"])
            built.load_other_parameter(checkpoint.get("other_parameter"))
            trainers.append(get_trainer(other["MODEL_TYPE"], other["model"])(other, built))
    return Checkpoints(labels, config, tuple(data), trainers, time.perf_counter() - start)


class DrawnOnce:
    """A sampled evaluation's loader iterated once: its batches (the held-out items and
    the items drawn for them) kept, and given to every model's evaluation, so that each
    model is ranked among the same items, and RecBole's per-user drawing is paid once;
    every other attribute is the loader's."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.batches = list(loader)

    def __iter__(self) -> Any:
        return iter(self.batches)

    def __len__(self) -> int:
        return len(self.batches)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


def _evaluate_all(loaded: Checkpoints, loader: Any, ties: str, seed: int | None
                  ) -> list[pd.DataFrame]:  # fmt: skip
    """Every model's ranks of one loader, each evaluation from the first config's seed."""
    from recbole.utils import init_seed

    frames = []
    for name, trainer in zip(loaded.names, loaded.trainers):
        init_seed(loaded.config["seed"], loaded.config["reproducibility"])
        _, frame = record_ranks(trainer, loader, name=name, ties=ties, seed=seed,
                                load_best_model=False)  # fmt: skip
        frames.append(frame)
    return frames


def _joined(frames: list[pd.DataFrame], names: tuple[str, ...], keys: list[str]) -> pd.DataFrame:
    """One frame: ``user``, every model's rank column, then ``keys`` (the same in every
    frame: checked)."""
    first = frames[0]
    for name, frame in zip(names[1:], frames[1:]):
        for key in ["user", *keys]:
            if not np.array_equal(frame[key].to_numpy(), first[key].to_numpy()):
                raise ValueError(f"the evaluations of {names[0]} and {name} differ in {key}: "
                                 "not the same users and items")  # fmt: skip
    columns = {name: frame[name].to_numpy() for name, frame in zip(names, frames)}
    return pd.DataFrame({"user": first["user"].astype(str).to_numpy(), **columns,
                         **{key: first[key].to_numpy() for key in keys}})  # fmt: skip


def sampled_frame(
    loaded: Checkpoints, protocol: str = "recbole-uni100", *, ties: str = "random",
    seed: int | None = None
) -> tuple[pd.DataFrame, dict]:  # fmt: skip
    """Every model's sampled evaluation through one test loader: ``user`` (token), a rank
    column per model, ``m``, ``n``; and the tie order (:attr:`~.recbole.RankRecorder.tie_order`).

    Raises
    ------
    ValueError
        The models were ranked among different items (their draws' digests differ), or
        a user has several held-out items (the design needs one row per user).
    """
    mode = recbole_mode(protocol)
    if mode == FULL:
        raise ValueError(f"--decide needs a sampled protocol (recbole-uniN), not {FULL}")
    from recbole.utils import init_seed

    with quiet():
        init_seed(loaded.config["seed"], loaded.config["reproducibility"])
        loader = DrawnOnce(eval_loader(loaded.config, *loaded.data, mode))
    frames = _evaluate_all(loaded, loader, ties, seed)
    draws = [frame.attrs["draws"] for frame in frames]
    for name, digest in zip(loaded.names[1:], draws[1:]):
        if digest != draws[0]:
            raise ValueError(f"RecBole's sampled evaluation drew other items for {name} than "
                             f"for {loaded.names[0]}: the models are not paired")  # fmt: skip
    frame = _joined(frames, loaded.names, ["m", "n"])
    if frame["user"].duplicated().any():
        raise ValueError("a test user has several held-out items: the design needs one per "
                         "user (a leave-one-out split)")  # fmt: skip
    return frame, frames[0].attrs["tie_order"]


def exact_frame(
    loaded: Checkpoints, tokens: Sequence[str], *, ties: str = "random", seed: int | None = None
) -> pd.DataFrame:
    """The exact ranks of the users ``tokens`` by every model (full sorting of those users
    alone): ``user``, a rank column per model, ``n``, in the order of ``tokens``."""
    users = chosen_users(loaded.data[3]._dataset, tokens)
    with quiet():
        loader = eval_loader(loaded.config, *loaded.data, FULL, users)
    frame = _joined(_evaluate_all(loaded, loader, ties, seed), loaded.names, ["n"])
    return frame.set_index("user").loc[[str(t) for t in tokens]].reset_index()
