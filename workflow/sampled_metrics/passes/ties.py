"""Ties: items scored exactly like the held-out item, in exact and sampled ranks alike.

The rank of the held-out item t among the candidates C is

    rank = 1 + #{j in C, j != t : y_j > y_t} + tie term,

and the tie term counts some of the t_eq other candidates with y_j == y_t, by
policy: ``pessimistic`` t_eq, ``optimistic`` 0, ``average`` t_eq / 2, ``random``
the number of tied items that come first in a seeded random order of the items
(:func:`tie_order_keys`), which is uniform on 0..t_eq.

The random order is one fixed order per (seed, user): a pure function of
(seed, user, item). Exact ranking (:mod:`.ranking`) and sampled ranking
(:mod:`.sampling`) both use it, so the items form one strict order and the
rank among m sampled items follows the law of section 4.3 given the exact
rank, ties included (redrawing the tie break for each sample would not).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike

from .entries import row_counts, true_entries

__all__ = [
    "TIE_POLICIES",
    "check_tie_policy",
    "put_ties_first",
    "random_ties_first",
    "tie_order_keys",
    "tie_term",
]

TIE_POLICIES = ("pessimistic", "optimistic", "average", "random")


def check_tie_policy(tie_policy: str) -> str:
    """Return ``tie_policy`` if it is one of :data:`TIE_POLICIES`, else raise ValueError.

    Parameters
    ----------
    tie_policy : str
        "pessimistic", "optimistic", "average" or "random".

    Returns
    -------
    str
        ``tie_policy`` itself.

    Raises
    ------
    ValueError
        Naming the policy and the known ones, when it is unknown.

    Examples
    --------
    >>> check_tie_policy("average")
    'average'
    >>> check_tie_policy("worst")
    Traceback (most recent call last):
    ValueError: unknown tie_policy 'worst'; known: pessimistic, optimistic, average, random
    """
    if tie_policy not in TIE_POLICIES:
        raise ValueError(f"unknown tie_policy {tie_policy!r}; known: {', '.join(TIE_POLICIES)}")
    return tie_policy


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """The splitmix64 finalizer: a bijective scramble of 64-bit integers."""
    with np.errstate(over="ignore"):
        z = x + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def tie_order_keys(users: ArrayLike, items: ArrayLike, seed: int) -> np.ndarray:
    """Keys of a seeded random order of the items of each user.

    Under the "random" tie policy, a tied item counts as ranked above the
    held-out item when its key is smaller. A pure function of (seed, user,
    item), so exact and sampled ranking agree.

    Parameters
    ----------
    users : array_like of int
        User ids (non-negative), broadcast with ``items``.
    items : array_like of int
        Item ids (non-negative).
    seed : int
        Seed of the order (non-negative).

    Returns
    -------
    numpy.ndarray
        uint64 keys, broadcast over ``users`` and ``items``.

    Examples
    --------
    A key does not depend on the other items asked for at the same time:

    >>> keys = tie_order_keys(0, [3, 1, 2], seed=7)
    >>> str(keys.dtype), bool(keys[1] == tie_order_keys(0, 1, seed=7))
    ('uint64', True)
    """
    counter = (np.asarray(users, dtype=np.uint64) << np.uint64(32)) | np.asarray(
        items, dtype=np.uint64
    )
    return _splitmix64(counter ^ _splitmix64(np.asarray(seed, dtype=np.uint64)))


def tie_term(
    tied: np.ndarray,
    tie_policy: str,
    keys: np.ndarray | None = None,
    target_key: np.ndarray | None = None,
) -> np.ndarray:
    """The tie term of the rank, one per row.

    "pessimistic" counts the tied candidates all, "optimistic" none, "average"
    half of them, "random" those whose key (:func:`tie_order_keys`, in
    ``keys``) is below the target's key (``target_key``, one per row).

    Parameters
    ----------
    tied : bool numpy.ndarray (rows x items)
        True for the other candidates scored exactly like the target.
    tie_policy : str
        One of :data:`TIE_POLICIES`; another raises ValueError.
    keys : numpy.ndarray, optional
        The items' keys, the shape of ``tied``; needed by "random".
    target_key : numpy.ndarray, optional
        The target's key, shape (rows, 1); needed by "random".

    Returns
    -------
    numpy.ndarray
        float64, one tie term per row.

    Examples
    --------
    >>> tied = np.array([[True, True, False]])
    >>> [tie_term(tied, p).tolist() for p in ("pessimistic", "optimistic", "average")]
    [[2.0], [0.0], [1.0]]
    >>> tie_term(tied, "random", keys=np.array([[1, 5, 0]]), target_key=np.array([[3]])).tolist()
    [1.0]
    """
    if tie_policy == "random":
        if keys is None or target_key is None:
            raise ValueError('tie policy "random" needs keys and target_key')
        return row_counts(tied & (keys < target_key)).astype(np.float64)
    check_tie_policy(tie_policy)
    ties = row_counts(tied).astype(np.float64)
    if tie_policy == "pessimistic":
        return ties
    if tie_policy == "optimistic":
        return np.zeros(ties.shape)
    return ties / 2.0  # average


def put_ties_first(
    above: np.ndarray,
    tied: np.ndarray,
    test_items: ArrayLike,
    users: ArrayLike,
    tie_order: str,
    seed: int,
) -> None:
    """Add to ``above``, in place, the tied items that ``tie_order`` puts before the
    held-out item: then 1 + a row's count is its rank, and a draw's rank is 1 + the drawn
    items it holds. "pessimistic": every tied item; "optimistic": none; "random": those
    whose key (:func:`tie_order_keys`) is below the held-out item's; "index" (a
    framework's order, ``frameworks.beaten``): those of a lower item index.

    Parameters
    ----------
    above, tied : bool numpy.ndarray (rows, n_items)
        The items scored above and exactly like the held-out one
        (``ranking.above_and_tied``); ``tied`` is not changed.
    test_items, users : array_like of int (rows,)
    tie_order : str
        "pessimistic", "optimistic", "random" or "index" ("average" counts half items).
    seed : int
        Seed of the "random" order.

    Returns
    -------
    None

    Examples
    --------
    >>> above, tied = np.array([[True, False, False]]), np.array([[False, True, True]])
    >>> put_ties_first(above, tied, [0], [0], "index", 0)
    >>> above.astype(int).tolist()
    [[1, 0, 0]]
    """
    if tie_order == "optimistic":
        return
    if tie_order == "pessimistic":
        above |= tied
        return
    test_items = np.asarray(test_items)
    if tie_order == "index":
        above |= tied & (np.arange(tied.shape[1]) < test_items[:, None])
        return
    if tie_order != "random":
        raise ValueError(f"tie order {tie_order!r} does not order the tied items one by one")
    users = np.asarray(users)
    step = max(1, _TIED_ENTRIES // max(tied.shape[1], 1))
    for lo in range(0, tied.shape[0], step):
        rows = slice(lo, lo + step)
        block = tied[rows]
        if np.count_nonzero(block) * _DENSE_TIES >= block.size:
            # mostly tied (a sparse item-kNN's zero scores): every item's key at once
            # costs less than gathering the tied entries and scattering them back
            keys = tie_order_keys(users[rows, None], np.arange(block.shape[1]), seed)
            target = tie_order_keys(users[rows], test_items[rows], seed)
            above[rows] |= block & (keys < target[:, None])
            continue
        for row, item in random_ties_first(block, test_items[rows], users[rows], seed):
            above[lo + row, item] = True


def random_ties_first(
    tied: np.ndarray, test_items: ArrayLike, users: ArrayLike, seed: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(rows, items) of the tied entries whose key (:func:`tie_order_keys`) is below the
    held-out item's, yielded a few rows at a time (at most about 2^20 tied entries).

    Parameters
    ----------
    tied : bool numpy.ndarray (rows, n_items)
        The items scored exactly like the held-out one.
    test_items, users : array_like of int (rows,)
    seed : int
        Seed of the "random" order.

    Yields
    ------
    rows, items : numpy.ndarray of int
        Row indices (into ``tied``) and items of the tied entries ordered first.

    Examples
    --------
    >>> tied = np.array([[True, True, False], [False, False, True]])
    >>> [(r.tolist(), i.tolist()) for r, i in random_ties_first(tied, [2, 0], [0, 1], seed=0)]
    [([0, 0], [0, 1])]
    >>> bool(tie_order_keys(1, 2, seed=0) < tie_order_keys(1, 0, seed=0))  # row 1's tie: after
    False
    """
    users, test_items = np.asarray(users), np.asarray(test_items)
    target_keys = tie_order_keys(users, test_items, seed)
    step = max(1, _TIED_ENTRIES // max(tied.shape[1], 1))  # bounds the arrays of tied entries
    for lo in range(0, tied.shape[0], step):
        row, item = true_entries(tied[lo : lo + step])
        row += lo
        first = tie_order_keys(users[row], item, seed) < target_keys[row]
        yield row[first], item[first]


# Tied entries ordered at a time under "random".
_TIED_ENTRIES = 2**20
# put_ties_first keys every item of a block whose tied entries are at least 1 in this
# many: a key costs a few times less than a tied entry's gather and scatter.
_DENSE_TIES = 4
