"""Sampled evaluation with real scores (sections 4 and 6.2 of Krichene & Rendle).

For each user, m irrelevant items are drawn uniformly among the items the user
has not interacted with (neither training items nor the held-out item), and
the held-out item is ranked among those m + 1 by the model's scores, with the
same tie policy as the exact ranks (``ranking``).

Draws are seeded by (seed, repetition) only, so every recommender evaluated
with the same seed sees the same sampled items in a repetition (a paired
design, as when one sample is shared by all models of a study).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .ties import check_tie_policy, tie_order_keys, tie_term


def excluded_items(train, test_items) -> sp.csr_matrix:
    """Per user, the sorted items that can never be sampled: training items
    and the held-out item (a binary CSR matrix of the shape of ``train``)."""
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
    """Per user, how many items can be sampled: n_items - |excluded|."""
    return excluded.shape[1] - np.diff(excluded.indptr)


def draw_positions(
    pool: np.ndarray, m: int, rng: np.random.Generator, replacement: bool = False
) -> np.ndarray:
    """For each user, m positions in 0..pool[u]-1, uniform; distinct unless
    ``replacement``. Shape (len(pool), m), sorted within a row when distinct.

    Without replacement: draw with replacement, then redraw the duplicate
    copies until none is left. Every step treats all positions alike, so the
    resulting m-set is uniform among all m-subsets.
    """
    pool = np.asarray(pool, dtype=np.int64)
    if not replacement and np.any(pool < m):
        user = int(np.argmin(pool))
        raise ValueError(
            f"cannot draw m={m} distinct items for user {user}: "
            f"only {int(pool[user])} items are not in their history"
        )
    positions = (rng.random((pool.size, m)) * pool[:, None]).astype(np.int64)
    if replacement:
        return positions
    positions.sort(axis=1)
    duplicate = np.zeros(positions.shape, dtype=bool)
    duplicate[:, 1:] = positions[:, 1:] == positions[:, :-1]
    while duplicate.any():
        rows = np.nonzero(duplicate)[0]
        positions[duplicate] = (rng.random(rows.size) * pool[rows]).astype(np.int64)
        positions.sort(axis=1)
        duplicate[:, 1:] = positions[:, 1:] == positions[:, :-1]
    return positions


def positions_to_items(excluded: sp.csr_matrix, positions: np.ndarray) -> np.ndarray:
    """Map position p of user u to the p-th item (0-based) not excluded for u.

    With the user's sorted excluded items e_0 < e_1 < ..., the p-th free item is
    p + #{i : e_i - i <= p}; one searchsorted over all users (each offset by
    u * (n_items + 1)) does it without building the pools.
    """
    n_users, n_items = excluded.shape
    counts = np.diff(excluded.indptr)
    rank_in_row = np.arange(excluded.nnz) - np.repeat(excluded.indptr[:-1], counts)
    offset = np.arange(n_users, dtype=np.int64) * (n_items + 1)
    gaps = excluded.indices.astype(np.int64) - rank_in_row + np.repeat(offset, counts)
    queries = positions + offset[:, None]
    before = np.searchsorted(gaps, queries, side="right") - excluded.indptr[:-1, None]
    return positions + before


def sampled_ranks(
    scores: np.ndarray,
    test_items,
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

    ``scores`` is the full (n_users, n_items) score matrix of one model.
    Repetition ``rep`` draws from ``numpy.random.default_rng([seed, rep])``.
    Under the "random" tie policy, ties follow ``ties.tie_order_keys`` with
    ``tie_seed`` (default ``seed``); give it the seed of the exact ranks so that
    both break ties in the same order.
    Returns an int16/float array (repetitions, n_users) of ranks in 1..m+1
    (float only under the "average" tie policy).
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
    target_key = tie_order_keys(users, test, tie_seed)[:, None] if tie_policy == "random" else None
    pool = pool_sizes(excluded)
    out = np.empty((repetitions, users.size), dtype=np.float64)
    reps = range(repetitions)
    if progress:
        from tqdm.auto import tqdm

        reps = tqdm(reps, desc="sampling repetitions", unit="rep")
    for rep in reps:
        rng = np.random.default_rng([seed, rep])
        items = positions_to_items(excluded, draw_positions(pool, m, rng, replacement))
        sampled = scores[users[:, None], items]
        higher = np.count_nonzero(sampled > target, axis=1)
        keys = tie_order_keys(users[:, None], items, tie_seed) if tie_policy == "random" else None
        out[rep] = 1.0 + higher + tie_term(sampled == target, tie_policy, keys, target_key)
    return out if tie_policy == "average" else out.astype(np.int16)
