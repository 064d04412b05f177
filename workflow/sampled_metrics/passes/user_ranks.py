"""The ranks of a range of users (a shard of the ranking pass): the record, its file,
and the ranks of all users joined from consecutive ranges."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..io.atomic import read_npz, write_npz

__all__ = ["UserRanks", "concatenate_user_ranks", "load_user_ranks", "save_user_ranks"]

# The arrays of a file of UserRanks, in the order of its fields.
_FIELDS = ("start", "rank", "n_candidates", "pessimistic", "sampled")


@dataclass(frozen=True)
class UserRanks:
    """The ranks of users ``start .. start + len(rank) - 1``.

    ``rank``: exact ranks under the tie policy (float64); ``n_candidates``: the
    size of each user's ranked set (int64); ``pessimistic``: exact ranks with every
    tie above (float64); ``sampled``: (repetitions, users) sampled ranks.

    Parameters
    ----------
    start : int
        The first user.
    rank, n_candidates, pessimistic : numpy.ndarray (users,)
        As above.
    sampled : numpy.ndarray (repetitions, users)
        As above.

    Examples
    --------
    >>> UserRanks(64, np.ones(3), np.ones(3, np.int64), np.ones(3), np.ones((2, 3))).stop
    67
    """

    start: int
    rank: np.ndarray
    n_candidates: np.ndarray
    pessimistic: np.ndarray
    sampled: np.ndarray

    @property
    def stop(self) -> int:
        return self.start + int(self.rank.size)


def concatenate_user_ranks(parts: list[UserRanks], n_users: int) -> UserRanks:
    """The ranks of all users from the ranks of consecutive ranges (shards).

    Parameters
    ----------
    parts : list of UserRanks
        Ranges that together cover users 0..n_users-1 in order.
    n_users : int
        Number of users.

    Returns
    -------
    UserRanks

    Raises
    ------
    ValueError
        When the ranges leave a gap, overlap, or do not end at ``n_users``, or
        disagree on the repetitions.

    Examples
    --------
    >>> one = lambda a, b: UserRanks(a, np.ones(b - a), np.ones(b - a, np.int64),
    ...                              np.ones(b - a), np.ones((2, b - a), np.int16))
    >>> concatenate_user_ranks([one(0, 2), one(2, 5)], 5).sampled.shape
    (2, 5)
    """
    position = 0
    for part in parts:
        if part.start != position:
            raise ValueError(
                f"the shards leave users {position}..{part.start - 1} unranked"
                if part.start > position
                else f"the shards rank users from {part.start} twice"
            )
        position = part.stop
    if position != n_users:
        raise ValueError(f"the shards rank users 0..{position - 1}, not all {n_users}")
    if len({p.sampled.shape[0] for p in parts}) > 1 or len({p.sampled.dtype for p in parts}) > 1:
        raise ValueError("the shards have different repetitions or rank types")
    return UserRanks(
        0,
        np.concatenate([p.rank for p in parts]),
        np.concatenate([p.n_candidates for p in parts]),
        np.concatenate([p.pessimistic for p in parts]),
        np.concatenate([p.sampled for p in parts], axis=1),
    )


def save_user_ranks(ranks: UserRanks, path: str | Path) -> None:
    """Write :class:`UserRanks` to an .npz file atomically.

    Parameters
    ----------
    ranks : UserRanks
        The ranks.
    path : str or pathlib.Path
        The file.

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "shard.npz"
    >>> r = UserRanks(1024, np.ones(2), np.ones(2, np.int64), np.ones(2), np.ones((3, 2)))
    >>> save_user_ranks(r, path)
    >>> load_user_ranks(path).stop
    1026
    """

    arrays = {field: getattr(ranks, field) for field in _FIELDS}
    write_npz(arrays, path)


def load_user_ranks(path: str | Path) -> UserRanks:
    """Read :class:`UserRanks` written by :func:`save_user_ranks`.

    Parameters
    ----------
    path : str or pathlib.Path
        The file.

    Returns
    -------
    UserRanks

    Raises
    ------
    ValueError
        Naming the file when it is damaged or its arrays disagree in length.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "shard.npz"
    >>> _ = path.write_bytes(b"cut")
    >>> load_user_ranks(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...shard.npz: not a file of ranks (...); delete it and rerun
    """
    arrays = read_npz(path, _FIELDS, "file of ranks")
    n = arrays["rank"].shape
    if (
        arrays["n_candidates"].shape != n
        or arrays["pessimistic"].shape != n
        or (arrays["sampled"].ndim != 2 or arrays["sampled"].shape[1:] != n)
    ):
        raise ValueError(f"{path}: its arrays disagree in length; delete it and rerun")
    return UserRanks(int(arrays["start"]), *(arrays[key] for key in _FIELDS[1:]))
