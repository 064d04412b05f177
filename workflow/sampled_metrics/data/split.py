"""The leave-last-out split of section 9, and its file.

The evaluation protocol of the paper (following the Neural Collaborative
Filtering setup) holds out each user's last interaction and ranks it against
the items the user has not interacted with in training.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pandas as pd

from ..io.atomic import CORRUPT_FILE_ERRORS, write_npz
from .errors import EVENT_COLUMNS, DataError, require_columns, require_file

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["Split", "leave_last_out_split", "load_split", "SplitUsers", "save_split", "split_users"]


@dataclass(frozen=True, eq=False)
class Split:
    """A leave-last-out split: training matrix and one held-out item per user.

    ``train`` is a binary float32 CSR matrix (users x items, sorted indices);
    ``test_items[u]`` is the column of user ``u``'s held-out item, never among
    the user's training items. ``user_ids`` / ``item_ids`` give the original
    ids of rows / columns, sorted. ``n_skipped_users`` counts users dropped
    for having too few events.
    """

    train: sp.csr_matrix
    test_items: np.ndarray
    user_ids: np.ndarray
    item_ids: np.ndarray
    n_skipped_users: int = 0

    def __post_init__(self) -> None:
        n_users, n_items = self.train.shape
        if len(self.user_ids) != n_users or len(self.item_ids) != n_items:
            raise DataError(
                f"Split: train is {n_users}x{n_items} but there are "
                f"{len(self.user_ids)} user ids, {len(self.item_ids)} item ids"
            )
        if self.test_items.shape != (n_users,):
            raise DataError(f"Split: {self.test_items.shape} test items for {n_users} users")
        if n_users and (self.test_items.min() < 0 or self.test_items.max() >= n_items):
            raise DataError(f"Split: test item index outside 0..{n_items - 1}")

    @property
    def n_users(self) -> int:
        """Number of users (rows), each with exactly one held-out item."""
        return self.train.shape[0]

    @property
    def n_items(self) -> int:
        """Number of items (columns): every item of the train or test data."""
        return self.train.shape[1]

    def candidate_counts(self) -> np.ndarray:
        """Per user, n_items minus the user's training items (int64).

        This is the size of the set the held-out item is ranked in (the
        held-out item included).
        """
        return _candidate_counts(self.n_items, self.train.indptr)

    def users(self) -> SplitUsers:
        """Its users, their candidate counts and the number of items."""
        return SplitUsers(self.user_ids, self.candidate_counts(), self.n_items)

    def unseen_test_items(self) -> int:
        """Number of users whose held-out item no user has in training."""
        item_counts = np.bincount(self.train.indices, minlength=self.n_items)
        return int(np.count_nonzero(item_counts[self.test_items] == 0))


def leave_last_out_split(
    df: pd.DataFrame, *, min_events: int = 2, on_short_users: str = "skip"
) -> Split:
    """Hold out each user's last event; the user's other events are training.

    The last event is the one with the largest ``time``. Ties are broken by
    the row order of ``df``: events are stably sorted by time, so among equal
    times the LAST row is the latest and becomes the test item.

    Users with fewer than ``min_events`` events are dropped with
    ``on_short_users="skip"`` (counted in ``Split.n_skipped_users``) or raise
    :class:`DataError` with ``"error"``. Users and items get indices in sorted
    order of their ids; the items are those of the kept users (train or
    test). ``df`` must have one row per (user, item); see :func:`binarize`.
    """
    require_columns(df, EVENT_COLUMNS, "leave_last_out_split")
    if on_short_users not in ("skip", "error"):
        raise ValueError(f"on_short_users must be 'skip' or 'error', got {on_short_users!r}")
    if min_events < 1:
        raise ValueError(f"min_events must be >= 1, got {min_events}")
    _check_split_input(df)
    df, n_skipped = _drop_short_users(df, min_events, on_short_users)
    if df.empty:
        raise DataError(
            f"leave_last_out_split: no user has {min_events} or more events "
            f"({n_skipped} skipped), nothing to split"
        )
    user_codes, user_ids = _factorize_sorted(df["user"], "user")
    item_codes, item_ids = _factorize_sorted(df["item"], "item")
    order = np.argsort(df["time"].to_numpy(), kind="stable")
    order = order[np.argsort(user_codes[order], kind="stable")]
    is_test = np.zeros(len(order), dtype=bool)
    is_test[np.cumsum(np.bincount(user_codes, minlength=len(user_ids))) - 1] = True
    rows, cols = user_codes[order], item_codes[order]
    train = _binary_csr(rows[~is_test], cols[~is_test], (len(user_ids), len(item_ids)))
    return Split(
        train=train,
        test_items=cols[is_test].astype(np.int64),
        user_ids=user_ids,
        item_ids=item_ids,
        n_skipped_users=n_skipped,
    )


def _check_split_input(df: pd.DataFrame) -> None:
    if df.empty:
        raise DataError("leave_last_out_split: no events")
    if df[list(EVENT_COLUMNS)].isna().to_numpy().any():
        raise DataError("leave_last_out_split: missing values in user/item/time")
    n_dup = _repeated_pairs(df["user"], df["item"])
    if n_dup:
        raise DataError(
            f"leave_last_out_split: {n_dup} repeated (user, item) pairs; call binarize() first"
        )


def _repeated_pairs(users: pd.Series, items: pd.Series) -> int:
    """Rows whose (user, item) pair occurred in an earlier row: one sort of integer
    keys (pandas' duplicated() hashes the pairs, about 10 GB at 100M rows)."""
    user_codes, _ = pd.factorize(users)
    item_codes, item_uniques = pd.factorize(items)
    keys = user_codes.astype(np.int64) * len(item_uniques) + item_codes
    del user_codes, item_codes
    keys.sort()
    return int(np.count_nonzero(keys[1:] == keys[:-1]))


def _drop_short_users(df: pd.DataFrame, min_events: int, on_short_users: str):
    counts = df.groupby("user", sort=False)["user"].transform("size").to_numpy()
    short = counts < min_events
    if not short.any():
        return df, 0
    short_users = pd.unique(df["user"].to_numpy()[short])
    if on_short_users == "error":
        example = short_users[0]
        example = example.item() if isinstance(example, np.generic) else example
        raise DataError(
            f"{len(short_users)} user(s) have fewer than {min_events} events, e.g. user {example!r}"
        )
    return df[~short], len(short_users)


def _factorize_sorted(values: pd.Series, name: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError as e:
        raise DataError(f"{name} ids cannot be sorted (mixed types?): {e}") from e
    return codes.astype(np.int64), np.asarray(uniques)


def _binary_csr(rows: np.ndarray, cols: np.ndarray, shape) -> sp.csr_matrix:
    import scipy.sparse as sp  # here: reading a split's users (split_users) needs no matrix

    data = np.ones(len(rows), dtype=np.float32)
    matrix = sp.csr_matrix((data, (rows, cols)), shape=shape, dtype=np.float32)
    matrix.sort_indices()
    return matrix


# --------------------------------------------------------------------------
# Saving and loading a split
# --------------------------------------------------------------------------

_SPLIT_KEYS = (
    "train_indptr",
    "train_indices",
    "train_shape",
    "test_items",
    "user_ids",
    "item_ids",
    "n_skipped_users",
)


def _plain_ids(ids: np.ndarray, name: str) -> np.ndarray:
    """Ids as an array numpy can store without pickle (numbers or strings)."""
    ids = np.asarray(ids)
    if ids.dtype.kind in "iuf" or ids.dtype.kind == "U":
        return ids
    if all(isinstance(x, str) for x in ids):
        return ids.astype(str)
    raise DataError(f"save_split: {name} ids must be all numbers or all strings")


def save_split(split: Split, path: str | Path) -> None:
    """Write ``split`` to one ``.npz`` file, atomically (temp file + rename)."""
    path = Path(path)
    arrays = {
        "train_indptr": split.train.indptr,
        "train_indices": split.train.indices,
        "train_shape": np.asarray(split.train.shape, dtype=np.int64),
        "test_items": np.asarray(split.test_items, dtype=np.int64),
        "user_ids": _plain_ids(split.user_ids, "user"),
        "item_ids": _plain_ids(split.item_ids, "item"),
        "n_skipped_users": np.int64(split.n_skipped_users),
    }
    write_npz(arrays, path, compressed=True)


def load_split(path: str | Path) -> Split:
    """Read a split written by :func:`save_split`.

    A missing file, missing keys or corrupt content raise :class:`DataError`
    naming the file.
    """
    path = Path(path)
    require_file(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            absent = [k for k in _SPLIT_KEYS if k not in npz.files]
            if absent:
                raise DataError(f"{path}: not a saved split, missing key(s) {absent}")
            arrays = {k: npz[k] for k in _SPLIT_KEYS}
        return _split_from_arrays(arrays)
    except DataError as e:
        if str(path) in str(e):
            raise
        raise DataError(f"{path}: inconsistent split ({e})") from e
    except (*CORRUPT_FILE_ERRORS, ValueError) as e:
        raise DataError(f"{path}: corrupt split file ({type(e).__name__}: {e})") from e


class SplitUsers(NamedTuple):
    """The users of a split and the size of the set each one's held-out item is
    ranked in, read without the training pairs (:func:`split_users`)."""

    user_ids: np.ndarray
    n_candidates: np.ndarray  # n_items minus the user's training items
    n_items: int

    @property
    def smallest_pool(self) -> int:
        """The fewest items outside a user's history (training and held-out items)."""
        return int(self.n_candidates.min()) - 1


def split_users(path: str | Path) -> SplitUsers:
    """The user ids, candidate counts and number of items of a saved split, read
    without its training pairs (cheap at any size): what a later stage checks its
    per-user files against, and the sizes checked at start-up
    (``sampled_metrics.pipeline.data_checks.check_data_sizes``).

    Parameters
    ----------
    path : str or Path
        A file written by :func:`save_split`.

    Returns
    -------
    SplitUsers
        ``user_ids``, ``n_candidates`` (as :meth:`Split.candidate_counts`),
        ``n_items``, and the ``smallest_pool`` of items outside a history.

    Examples
    --------
    >>> import tempfile, os
    >>> events = pd.DataFrame({"user": [1, 1, 1, 2, 2], "item": [1, 2, 3, 1, 4],
    ...                        "time": [1, 2, 3, 1, 2]})
    >>> path = os.path.join(tempfile.mkdtemp(), "split.npz")
    >>> save_split(leave_last_out_split(events), path)
    >>> users = split_users(path)
    >>> users.n_candidates.tolist(), users.n_items, users.smallest_pool
    ([2, 3], 4, 1)
    """
    path = Path(path)
    require_file(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            n_items = int(npz["train_shape"][1])
            n_candidates = _candidate_counts(n_items, npz["train_indptr"])
            user_ids = npz["user_ids"]
    except (*CORRUPT_FILE_ERRORS, ValueError, KeyError, IndexError) as e:
        raise DataError(f"{path}: corrupt split file ({type(e).__name__}: {e})") from e
    if len(user_ids) != len(n_candidates) or not len(user_ids):
        raise DataError(
            f"{path}: inconsistent split ({len(user_ids)} user ids, "
            f"{len(n_candidates)} users in training)"
        )
    return SplitUsers(user_ids, n_candidates, n_items)


def _candidate_counts(n_items: int, indptr: np.ndarray) -> np.ndarray:
    return (n_items - np.diff(indptr)).astype(np.int64)


def _split_from_arrays(a: Mapping[str, np.ndarray]) -> Split:
    import scipy.sparse as sp  # here: reading a split's users (split_users) needs no matrix

    indices = a["train_indices"]
    shape = tuple(int(x) for x in a["train_shape"])
    train = sp.csr_matrix(
        (np.ones(len(indices), dtype=np.float32), indices, a["train_indptr"]), shape=shape
    )
    train.check_format(full_check=True)
    return Split(
        train=train,
        test_items=a["test_items"].astype(np.int64),
        user_ids=a["user_ids"],
        item_ids=a["item_ids"],
        n_skipped_users=int(a["n_skipped_users"]),
    )
