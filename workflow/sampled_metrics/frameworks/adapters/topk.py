"""A held-out item's rank where a framework orders its top k and nothing beyond.

RecBole's evaluation (``adapters.recbole``) lists each row's top k by ``torch.topk``,
whose order among equal scores is unspecified but is what RecBole's metrics read; below
the top k no metric of RecBole looks, and nothing orders the held-out item among the
items it ties with. :func:`held_out_ranks` keeps the framework's order in the top k and,
beyond it, places the held-out item by a tie order: by default the pipeline's
``random`` tie policy (``passes.ties``: a seeded uniformly random place among the tied
items, one fixed order per (seed, user)). Pure numpy: no framework needed.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ...passes.entries import row_counts
from ...passes.ties import put_ties_first

__all__ = ["TIES", "check_ties", "held_out_ranks"]

# Where a held-out item below the framework's top k goes among the items it ties with.
TIES = ("random", "optimistic", "pessimistic")


def check_ties(ties: str, seed: object) -> None:
    """Raise ValueError unless ``ties`` is one of :data:`TIES` and ``seed`` a
    non-negative integer.

    Examples
    --------
    >>> check_ties("random", 0)
    >>> check_ties("average", 0)
    Traceback (most recent call last):
    ValueError: ties 'average': give one of random, optimistic, pessimistic
    """
    if ties not in TIES:
        raise ValueError(f"ties {ties!r}: give one of {', '.join(TIES)}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"the tie order's seed must be a non-negative integer, not {seed!r}")


def held_out_ranks(
    scores: ArrayLike,
    targets: ArrayLike,
    negative: ArrayLike,
    top: ArrayLike,
    users: ArrayLike,
    *,
    ties: str = "random",
    seed: int = 0,
) -> np.ndarray:
    """Each held-out item's rank: RecBole's order in its top k, a tie order beyond.

    In the top k (``top``: the items of the row in RecBole's ``torch.topk`` order) the
    rank is 1 + the negatives listed before the held-out item, the place RecBole's
    metrics read, ties included. Beyond the top k every negative listed in it comes
    first, then every negative scored higher, then the negatives tied with the
    held-out item that ``ties`` puts first (``passes.ties.put_ties_first``):
    ``"random"`` those whose key ``tie_order_keys(user, item, seed)`` is below the
    held-out item's, so that its place among the T tied negatives is uniform on
    0..T (the pipeline's ``random`` tie policy); ``"optimistic"`` none;
    ``"pessimistic"`` all.

    Parameters
    ----------
    scores : numpy.ndarray (rows, items)
        Each held-out item's row of scores.
    targets : array_like of int (rows,)
        The held-out items.
    negative : bool numpy.ndarray (rows, items)
        The items each is ranked against.
    top : int numpy.ndarray (rows, k)
        The row's top k, best first, in the framework's order.
    users : array_like of int (rows,)
        Non-negative user ids: the key of the ``"random"`` order.
    ties : {"random", "optimistic", "pessimistic"}, default "random"
    seed : int, default 0
        Seed of the ``"random"`` order.

    Returns
    -------
    numpy.ndarray of int64 (rows,)

    Examples
    --------
    Items 1, 2 and 3 tie at 0.5; the top 1 lists item 0. Item 2 ranks after item 0,
    before or after each of the other two:

    >>> scores = np.array([[0.9, 0.5, 0.5, 0.5]])
    >>> negative = np.array([[True, True, False, True]])
    >>> args = (scores, [2], negative, np.array([[0]]), [0])
    >>> [int(held_out_ranks(*args, ties=t)[0]) for t in ("optimistic", "pessimistic")]
    [2, 4]
    >>> sorted({int(held_out_ranks(*args, seed=s)[0]) for s in range(20)})
    [2, 3, 4]
    """
    check_ties(ties, seed)
    scores, negative, top = np.asarray(scores), np.asarray(negative, dtype=bool), np.asarray(top)
    targets, users = np.asarray(targets, dtype=np.int64), np.asarray(users, dtype=np.int64)
    listed = top == targets[:, None]
    found = listed.any(axis=1)
    in_top = np.take_along_axis(negative, top, axis=1)
    rank = 1 + (np.cumsum(in_top, axis=1) * listed).sum(axis=1)  # negatives before it
    out = np.flatnonzero(~found)
    if out.size:
        target = scores[out, targets[out]][:, None]
        topped = np.zeros((out.size, negative.shape[1]), dtype=bool)
        topped[np.arange(out.size)[:, None], top[out]] = True
        first = negative[out] & (topped | (scores[out] > target))
        tied = negative[out] & (scores[out] == target) & ~topped
        put_ties_first(first, tied, targets[out], users[out], ties, int(seed))
        rank[out] = 1 + row_counts(first)
    return rank.astype(np.int64)
