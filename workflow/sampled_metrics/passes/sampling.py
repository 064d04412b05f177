"""Sampled evaluation with real scores (sections 4 and 6.2 of Krichene & Rendle).

For each user, m irrelevant items are drawn uniformly among the items the user
has not interacted with (neither training items nor the held-out item), and
the held-out item is ranked among those m + 1 by the model's scores, with the
same tie policy as the exact ranks (``ranking``).

Draws are seeded by (seed, repetition) only, so every recommender evaluated
with the same seed sees the same sampled items in a repetition (a paired
design, as when one sample is shared by all models of a study). Where each block of
users finds its draws, to draw it on its own, is the draw plan (:mod:`.draw_plan`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .entries import row_counts, true_entries
from .ties import check_tie_policy, tie_order_keys, tie_term

__all__ = [
    "draw_positions",
    "excluded_items",
    "free_item_lookup",
    "pool_sizes",
    "positions_to_items",
    "ranks_among_sampled",
    "sampled_rank_dtype",
    "sampled_ranks",
]


def excluded_items(train: sp.spmatrix, test_items: ArrayLike) -> sp.csr_matrix:
    """Per user, the sorted items that can never be sampled: training items and the held-out item.

    Parameters
    ----------
    train : scipy.sparse matrix (n_users, n_items)
        Its nonzeros are the training items.
    test_items : array_like of int (n_users,)
        The held-out item of every user.

    Returns
    -------
    scipy.sparse.csr_matrix
        A binary (float32) CSR matrix of the shape of ``train``, with sorted
        indices: the excluded items of each row.

    Examples
    --------
    >>> E = excluded_items(sp.csr_matrix([[1, 0, 0, 0, 0], [0, 1, 1, 0, 0]]), [2, 4])
    >>> E.toarray().astype(int).tolist()
    [[1, 0, 1, 0, 0], [0, 1, 1, 0, 1]]
    """
    X = sp.csr_matrix(train, dtype=np.float32, copy=True)
    X.data[:] = 1.0
    held_out = sp.csr_matrix(
        (np.ones(X.shape[0], np.float32), (np.arange(X.shape[0]), np.asarray(test_items))),
        shape=X.shape,
    )
    E = (X + held_out).tocsr()
    E.sum_duplicates()
    E.sort_indices()
    return E


def pool_sizes(excluded: sp.csr_matrix) -> np.ndarray:
    """Per user, how many items can be sampled: n_items - |excluded|.

    Parameters
    ----------
    excluded : scipy.sparse.csr_matrix (n_users, n_items)
        The excluded items (see :func:`excluded_items`).

    Returns
    -------
    numpy.ndarray
        Integer pool size of each user.

    Examples
    --------
    >>> E = excluded_items(sp.csr_matrix([[1, 0, 0, 0, 0], [0, 1, 1, 0, 0]]), [2, 4])
    >>> pool_sizes(E).tolist()
    [3, 2]
    """
    return excluded.shape[1] - np.diff(excluded.indptr)


def draw_positions(
    pool: np.ndarray, m: int, rng: np.random.Generator, replacement: bool = False
) -> np.ndarray:
    """For each user, m uniform positions in 0..pool[u]-1; distinct unless ``replacement``.

    Without replacement: draw with replacement, then redraw the duplicate
    copies until none is left. Every step treats all positions alike, so the
    resulting m-set is uniform among all m-subsets.

    Parameters
    ----------
    pool : array_like of int (n_users,)
        Pool size of each user (see :func:`pool_sizes`).
    m : int
        Number of positions per user.
    rng : numpy.random.Generator
        The source of randomness.
    replacement : bool, default False
        Draw with replacement.

    Returns
    -------
    numpy.ndarray
        int64, shape (len(pool), m), sorted within a row when distinct.

    Raises
    ------
    ValueError
        Naming the user, when drawing without replacement and a pool holds fewer
        than m items.

    Examples
    --------
    >>> pos = draw_positions([5, 8], m=4, rng=np.random.default_rng(0))
    >>> pos.shape, bool(np.all(np.diff(pos, axis=1) > 0)), bool(np.all(pos < [[5], [8]]))
    ((2, 4), True, True)
    >>> draw_positions([3], m=3, rng=np.random.default_rng(1)).tolist()  # the whole pool
    [[0, 1, 2]]
    """
    pool = np.asarray(pool, dtype=np.int64)
    if not replacement:
        _check_pools(pool, m)
    return _positions(pool, m, lambda _round, size: rng.random(size), replacement)


def _check_pools(pool: np.ndarray, m: int) -> None:
    """Without replacement every pool must hold m items: else ValueError naming the user."""
    if np.any(pool < m):
        user = int(np.argmin(pool))
        raise ValueError(
            f"cannot draw m={m} distinct items for user {user}: "
            f"only {int(pool[user])} items are not in their history"
        )


def _positions(pool, m, uniforms, replacement, on_redraw=None) -> np.ndarray:
    """The draws of :func:`draw_positions`; ``uniforms(round, size)`` gives the next
    ``size`` uniforms of the stream (round 0: the first draws, round r >= 1: the
    r-th redraw of duplicates, in row-major order) and ``on_redraw(round, rows)``
    is told which rows redraw in each round.

    Made and sorted as int32 when every pool fits (the same values: a uniform times the
    pool, truncated): numpy converts floats to int32 and sorts int32 rows 2-4 times
    faster than int64; returned as int64."""
    index = np.int32 if pool.size and pool.max() < 2**31 else np.int64
    positions = (uniforms(0, pool.size * m).reshape(pool.size, m) * pool[:, None]).astype(index)
    if replacement:
        return positions.astype(np.int64, copy=False)
    positions.sort(axis=1)
    # Only rows with duplicates change (a sorted row stays as it is), so each round
    # works on those rows alone, in row-major order as over the whole array.
    redrawn = np.flatnonzero(np.any(positions[:, 1:] == positions[:, :-1], axis=1))
    redraw = 1
    while redrawn.size:
        sub = positions[redrawn]
        duplicate = np.zeros(sub.shape, dtype=bool)
        duplicate[:, 1:] = sub[:, 1:] == sub[:, :-1]
        rows = redrawn[true_entries(duplicate)[0]]
        if on_redraw is not None:
            on_redraw(redraw, rows)
        sub[duplicate] = (uniforms(redraw, rows.size) * pool[rows]).astype(index)
        sub.sort(axis=1)
        positions[redrawn] = sub
        redrawn = redrawn[np.any(sub[:, 1:] == sub[:, :-1], axis=1)]
        redraw += 1
    return positions.astype(np.int64, copy=False)


def positions_to_items(excluded: sp.csr_matrix, positions: np.ndarray) -> np.ndarray:
    """Map position p of user u to the p-th item (0-based) not excluded for u.

    With the user's sorted excluded items e_0 < e_1 < ..., the p-th free item is
    p + #{i : e_i - i <= p}; one searchsorted over all users (each offset by
    u * (n_items + 1)) does it without building the pools.

    Parameters
    ----------
    excluded : scipy.sparse.csr_matrix (n_users, n_items)
        The excluded items, with sorted indices (see :func:`excluded_items`).
    positions : numpy.ndarray of int (n_users, m)
        Positions in 0..pool[u]-1 (see :func:`draw_positions`).

    Returns
    -------
    numpy.ndarray
        The item ids, shape of ``positions``.

    Examples
    --------
    User 0 may draw items 1, 3, 4 and user 1 items 0, 3:

    >>> E = excluded_items(sp.csr_matrix([[1, 0, 0, 0, 0], [0, 1, 1, 0, 0]]), [2, 4])
    >>> positions_to_items(E, np.array([[0, 2], [0, 1]])).tolist()
    [[1, 4], [0, 3]]
    """
    return free_item_lookup(excluded)(positions)


def free_item_lookup(excluded: sp.csr_matrix) -> Callable[..., Any]:
    """:func:`positions_to_items` for one ``excluded`` matrix, its search array built
    once: a function ``positions -> items`` to call for every repetition (or
    ``(positions, rows) -> items`` for one position of each of the users ``rows``).

    Parameters
    ----------
    excluded : scipy.sparse.csr_matrix (n_users, n_items)
        The excluded items, with sorted indices (see :func:`excluded_items`).

    Returns
    -------
    callable

    Examples
    --------
    >>> E = excluded_items(sp.csr_matrix([[1, 0, 0, 0, 0], [0, 1, 1, 0, 0]]), [2, 4])
    >>> free_item_lookup(E)(np.array([[0, 2], [0, 1]])).tolist()
    [[1, 4], [0, 3]]
    >>> free_item_lookup(E)(np.array([1, 2]), rows=np.array([1, 0])).tolist()
    [3, 4]
    """
    n_users, n_items = excluded.shape
    counts = np.diff(excluded.indptr)
    rank_in_row = np.arange(excluded.nnz) - np.repeat(excluded.indptr[:-1], counts)
    offset = np.arange(n_users, dtype=np.int64) * (n_items + 1)
    gaps = excluded.indices.astype(np.int64) - rank_in_row + np.repeat(offset, counts)
    first = excluded.indptr[:-1, None]

    def items(positions: np.ndarray, rows=None) -> np.ndarray:
        """The items at ``positions`` (n_users, m), or at one position of each of
        the users ``rows`` (both 1-d)."""
        if rows is None:
            return positions + np.searchsorted(gaps, positions + offset[:, None], "right") - first
        start = excluded.indptr[rows]
        return positions + np.searchsorted(gaps, positions + offset[rows], "right") - start

    return items


def sampled_ranks(
    scores: np.ndarray,
    test_items: ArrayLike,
    excluded: sp.csr_matrix,
    m: int,
    repetitions: int,
    seed: int,
    *,
    tie_policy: str = "pessimistic",
    tie_seed: int | None = None,
    replacement: bool = False,
    progress: bool = False,
) -> np.ndarray:
    """Ranks of the held-out items among m sampled items, for every repetition.

    Repetition ``rep`` draws from ``numpy.random.default_rng([seed, rep])``.

    Parameters
    ----------
    scores : numpy.ndarray (n_users, n_items)
        The full score matrix of one model.
    test_items : array_like of int (n_users,)
        The held-out item of every user.
    excluded : scipy.sparse.csr_matrix (n_users, n_items)
        Items that are never sampled (see :func:`excluded_items`).
    m : int
        Number of sampled items per user.
    repetitions : int
        Number of independent draws.
    seed : int
        Seed of the draws.
    tie_policy : {"pessimistic", "optimistic", "average", "random"}, default "pessimistic"
        How sampled items scored like the held-out item count (see :mod:`.ties`).
    tie_seed : int, optional
        Under the "random" tie policy, ties follow ``ties.tie_order_keys`` with
        ``tie_seed`` (default ``seed``); give it the seed of the exact ranks so
        that both break ties in the same order.
    replacement : bool, default False
        Sample with replacement.
    progress : bool, default False
        Show a tqdm bar over repetitions.

    Returns
    -------
    numpy.ndarray
        An int16/float array (repetitions, n_users) of ranks in 1..m+1 (float
        only under the "average" tie policy).

    Raises
    ------
    ValueError
        If a score is NaN or infinite (naming the first such user and item), if
        ``tie_policy`` is unknown, or if a user has fewer than m items to draw
        from without replacement.

    Examples
    --------
    Each user has exactly m = 2 items to draw from, so every repetition agrees:

    >>> E = excluded_items(sp.csr_matrix([[1, 1, 0, 0, 0], [0, 1, 1, 0, 0]]), [2, 4])
    >>> scores = np.array([[5.0, 4, 3, 2, 1], [1.0, 2, 3, 6, 5]])
    >>> sampled_ranks(scores, [2, 4], E, m=2, repetitions=2, seed=0).tolist()
    [[1, 2], [1, 2]]
    """
    check_tie_policy(tie_policy)
    scores = np.asarray(scores)
    bad = ~np.isfinite(scores)
    if bad.any():
        user, item = np.argwhere(bad)[0]
        raise ValueError(
            f"scores contain {int(bad.sum())} NaN or inf value(s), first at "
            f"user {int(user)}, item {int(item)}: {scores[user, item]}"
        )
    test = np.asarray(test_items, dtype=np.int64)
    users = np.arange(scores.shape[0])
    target = scores[users, test][:, None]
    tie_seed = seed if tie_seed is None else tie_seed
    pool = pool_sizes(excluded)
    out = np.empty((repetitions, users.size), dtype=np.float64)
    reps = range(repetitions)
    if progress:
        from tqdm.auto import tqdm

        reps = tqdm(reps, desc="sampling repetitions", unit="rep")
    for rep in reps:
        rng = np.random.default_rng([seed, rep])
        items = positions_to_items(excluded, draw_positions(pool, m, rng, replacement))
        out[rep] = ranks_among_sampled(
            scores[users[:, None], items], target, users, items, test, tie_policy, tie_seed
        )
    return out.astype(sampled_rank_dtype(m, tie_policy), copy=False)


def sampled_rank_dtype(m: int, tie_policy: str) -> np.dtype:
    """The type of sampled ranks 1..m+1: float64 under "average" (halves), else the
    smallest of int16, int32 and int64 that holds m + 1.

    Parameters
    ----------
    m : int
        Number of sampled items.
    tie_policy : str
        The tie policy (see :mod:`.ties`).

    Returns
    -------
    numpy.dtype

    Examples
    --------
    >>> [str(sampled_rank_dtype(m, "random")) for m in (100, 32766, 32767)]
    ['int16', 'int16', 'int32']
    >>> str(sampled_rank_dtype(100, "average"))
    'float64'
    """
    if tie_policy == "average":
        return np.dtype(np.float64)
    for dtype in (np.int16, np.int32):
        if m + 1 <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def ranks_among_sampled(
    sampled: np.ndarray,
    target: np.ndarray,
    users: np.ndarray,
    items: np.ndarray | Callable[[np.ndarray, np.ndarray], np.ndarray],
    test_items: np.ndarray,
    tie_policy: str,
    tie_seed: int,
) -> np.ndarray:
    """Rank of each user's held-out item among their sampled items (section 4).

    rank = 1 + #{sampled items scored higher} + the tie term of :mod:`.ties`.

    Parameters
    ----------
    sampled : numpy.ndarray (n_users, m)
        The scores of the sampled items.
    target : numpy.ndarray (n_users, 1)
        The score of each user's held-out item.
    users : numpy.ndarray of int (n_users,)
        User ids (for the "random" tie order).
    items : numpy.ndarray of int (n_users, m), or callable
        The sampled items' ids (for the "random" tie order), or a function
        ``(rows, columns) -> ids`` asked only for the tied items.
    test_items : numpy.ndarray of int (n_users,)
        The held-out items' ids (for the "random" tie order).
    tie_policy : str
        One of ``ties.TIE_POLICIES``.
    tie_seed : int
        Seed of the "random" tie order.

    Returns
    -------
    numpy.ndarray
        float64 ranks, one per user.

    Examples
    --------
    >>> ranks_among_sampled(np.array([[3.0, 1.0, 2.0]]), np.array([[2.0]]), np.array([0]),
    ...                     np.array([[4, 5, 6]]), np.array([7]), "pessimistic", 0).tolist()
    [3.0]
    """
    higher = row_counts(sampled > target)
    tied = sampled == target
    if tie_policy != "random":
        return 1.0 + higher + tie_term(tied, tie_policy)
    # the random order's keys of the tied items only (the others' keys count for nothing)
    row, column = true_entries(tied)
    tied_items = items(row, column) if callable(items) else items[row, column]
    above = tie_order_keys(users[row], tied_items, tie_seed) < tie_order_keys(
        users[row], test_items[row], tie_seed
    )
    return 1.0 + higher + np.bincount(row[above], minlength=tied.shape[0]).astype(np.float64)
