"""RecBole's data for the adapter (:mod:`.recbole`): whether RecBole is here, a test
loader of another eval mode on the same split (:func:`eval_loader`), and the test data
of some users only (:func:`chosen_users`), so that a full ranking scores only them.

recbole and torch are imported inside the functions (the module imports without them).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from . import UnknownUser, not_installed
from .quiet import quiet

if TYPE_CHECKING:  # recbole has no type information: to mypy these are Any
    from recbole.config import Config
    from recbole.data.dataloader import AbstractDataLoader
    from recbole.data.dataset import Dataset

__all__ = ["chosen_users", "eval_loader", "require_recbole", "trusted_pickles", "unpickled"]


def require_recbole() -> None:
    """Raise :class:`~.FrameworkNotInstalled` unless recbole and torch import."""
    try:
        import recbole  # noqa: F401
        import torch  # noqa: F401
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in ("recbole", "torch"):
            raise
        raise not_installed("recbole", "RecBole and torch", "your RecBole environment") from None


@contextmanager
def trusted_pickles() -> Iterator[None]:
    """Within the block torch loads a checkpoint's pickled config (torch >= 2.6 loads it
    only with ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1``; your own checkpoint is trusted)."""
    before = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"]
        else:
            os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = before


def unpickled(config: Config) -> None:
    """Make a checkpoint's unpickled config usable for evaluation: Config.__init__
    restores numpy's removed aliases (np.float, ...) that RecBole's metrics use, which an
    unpickled config has not run; the user's saved loaders are never overwritten."""
    config.compatibility_settings()
    config["save_dataloaders"] = False


def _neg_sample_args(mode: str) -> dict:
    """RecBole's ``test_neg_sample_args`` of an eval mode (Config's
    ``_set_eval_neg_sample_args``: ``full``, ``uniN``, ``popN``).

    Examples
    --------
    >>> _neg_sample_args("pop50")
    {'distribution': 'popularity', 'sample_num': 50}
    >>> _neg_sample_args("uni-100")
    Traceback (most recent call last):
    ValueError: RecBole eval mode 'uni-100': give full, uniN or popN, N > 0 (uni100, pop50)
    """
    if mode == "full":
        return {"distribution": "uniform", "sample_num": "none"}
    kinds = {"uni": "uniform", "pop": "popularity"}
    match = re.fullmatch(r"(uni|pop)([1-9][0-9]*)", mode) if isinstance(mode, str) else None
    if match:
        return {"distribution": kinds[match[1]], "sample_num": int(match[2])}
    raise ValueError(f"RecBole eval mode {mode!r}: give full, uniN or popN, N > 0 (uni100, pop50)")


def eval_loader(
    config: Config,
    dataset: Dataset,
    train_data: AbstractDataLoader,
    valid_data: AbstractDataLoader,
    test_data: AbstractDataLoader,
    mode: str,
    users: np.ndarray | None = None,
) -> AbstractDataLoader:
    """A test loader of another eval mode (``full``, ``uniN``, ``popN``) on the same
    split (the three loaders' datasets), built as RecBole's ``data_preparation`` builds
    one (``create_samplers``, ``get_dataloader``); ``dataset`` is the whole data set
    (``create_dataset(config)``). Sets ``config["eval_args"]["mode"]["test"]`` to ``mode``.

    ``users`` (RecBole's internal user ids, :func:`chosen_users`) keeps only those users'
    interactions in the three splits, ``full`` only: a kept user's history (its items of
    the splits but the test set's), held-out items and pool are those of the whole
    evaluation, and neither the sampler nor the loader goes through the other users."""
    if users is not None and mode != "full":
        raise ValueError(f"users= ranks exactly: eval mode full, not {mode}")
    neg_sample_args = _neg_sample_args(mode)
    require_recbole()
    from recbole.data.utils import create_samplers, get_dataloader

    config["eval_args"]["mode"]["test"] = mode
    config["test_neg_sample_args"] = neg_sample_args
    built = [loader._dataset for loader in (train_data, valid_data, test_data)]
    if users is not None:  # a user's used items are its items of the three splits
        built = [_of_users(split, users) for split in built]
    with quiet():
        _, _, sampler = create_samplers(config, dataset, built)
        return get_dataloader(config, "test")(config, built[2], sampler, shuffle=False)


def chosen_users(test_dataset: Dataset, tokens: Iterable[object]) -> np.ndarray:
    """RecBole's internal ids of the user ``tokens``, each a user of ``test_dataset``
    (:class:`~sampled_metrics.frameworks.adapters.UnknownUser` names the first that is not)."""
    field = test_dataset.uid_field
    known = set(test_dataset.inter_feat[field].numpy().tolist())
    ids = []
    for token in tokens:
        try:
            user = int(test_dataset.token2id(field, str(token)))
        except ValueError:
            raise UnknownUser(token) from None
        if user not in known:
            raise UnknownUser(token)
        ids.append(user)
    return np.array(ids, dtype=np.int64)


def _of_users(test_dataset, users):
    """The test dataset with only ``users``' interactions (the same fields and id maps)."""
    import torch

    field = test_dataset.uid_field
    # the rows by position: a boolean mask over a large split indexes far slower
    rows = np.flatnonzero(np.isin(test_dataset.inter_feat[field].numpy(), users))
    return test_dataset.copy(test_dataset.inter_feat[torch.as_tensor(rows)])
