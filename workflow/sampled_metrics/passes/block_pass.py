"""Exact and sampled ranks in one pass over blocks of users: no users x items array.

A block of users is scored once by the fitted model; the block's exact ranks
(section 6.1, under the configured tie policy), its pessimistic ranks (every tied
item above the held-out one, Figure 5) and its sampled ranks in every repetition
(section 6.2) are all taken from those scores, which are then dropped. Under a tie
policy that orders the tied items one by one, a draw's rank is 1 + the drawn items the
exact ranking puts first (one mask of the block, read at the drawn positions); under
"average", from the drawn items' scores. Memory is the model plus one block, whose size
follows a budget (:func:`users_per_block`).

The result does not depend on how the users are cut into blocks or shards:

* scores are computed in chunks of :data:`SCORE_CHUNK` users starting at multiples
  of it (the last bits of a BLAS product depend on its shape), and blocks and
  shards are unions of chunks (a model with ``scores_into``, whose rows do not depend
  on each other, fills a whole block at once);
* a block's sampled items are those of the draw for all users at once
  (:class:`.draw_plan.DrawPlan`).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .draw_plan import DrawPlan, block_positions
from .entries import row_counts
from .ranking import above_and_tied, mask_training_items, ranks_from_masks
from .sampling import excluded_items, free_item_lookup, ranks_among_sampled, sampled_rank_dtype
from .ties import check_tie_policy, put_ties_first
from .user_ranks import UserRanks

if TYPE_CHECKING:
    from .scorer import Scorer

__all__ = ["SCORE_CHUNK", "rank_users", "score_users", "shard_bounds", "users_per_block"]

# Users scored by one call of model.scores, at multiples of it: small, so that the
# memory floor is low and small data sets still make several shards.
SCORE_CHUNK = 32
# Bytes per score held for a block (float32 scores, the free items' scores packed into
# them in place; bool masks above and tied, a pair for each of the study's layers: 8 at
# most) and per score of the chunk being computed (a model's float64 products and
# float32 copy).
_BLOCK_BYTES_PER_SCORE = 10
_CHUNK_BYTES_PER_SCORE = 24


def users_per_block(
    n_items: int, memory_mb: float, bytes_per_score: int = _BLOCK_BYTES_PER_SCORE
) -> int:
    """Users per block so that a block's scores and the chunk being computed fit
    ``memory_mb`` (besides the model): a multiple of :data:`SCORE_CHUNK`, at least one.

    Parameters
    ----------
    n_items : int
        Items scored per user.
    memory_mb : float
        The budget in MiB.
    bytes_per_score : int, optional
        What a block holds per score (the ranking pass's arrays by default).

    Returns
    -------
    int

    Examples
    --------
    >>> users_per_block(3706, 1024), users_per_block(26744, 1024), users_per_block(10**6, 64)
    (28896, 3936, 32)
    """
    budget = memory_mb * 2**20 - _CHUNK_BYTES_PER_SCORE * SCORE_CHUNK * n_items
    chunks = int(budget // (bytes_per_score * SCORE_CHUNK * max(n_items, 1)))
    return SCORE_CHUNK * max(1, chunks)


def shard_bounds(n_users: int, shards: int) -> list[tuple[int, int]]:
    """Cut users 0..n_users-1 into ``shards`` ranges of whole chunks, as even as
    possible (ranges may be empty when there are more shards than chunks).

    Parameters
    ----------
    n_users : int
        Number of users.
    shards : int
        Number of ranges (>= 1).

    Returns
    -------
    list of (start, stop)

    Raises
    ------
    ValueError
        When ``shards`` < 1.

    Examples
    --------
    >>> shard_bounds(6040, 2)
    [(0, 3040), (3040, 6040)]
    >>> shard_bounds(90, 4)  # 3 chunks of users for 4 shards
    [(0, 32), (32, 64), (64, 90), (90, 90)]
    """
    if shards < 1:
        raise ValueError("shards must be >= 1")
    n_chunks = -(-n_users // SCORE_CHUNK)
    cuts = [min(n_users, SCORE_CHUNK * (-(-n_chunks * s // shards))) for s in range(shards + 1)]
    return list(zip(cuts[:-1], cuts[1:]))


def score_users(model: Scorer, start: int, stop: int, out: np.ndarray | None = None) -> np.ndarray:
    """Scores of users ``start..stop-1``: float32 (stop - start, n_items),
    ``model.scores`` called on chunks of :data:`SCORE_CHUNK` users at multiples
    of it, so a user's scores do not depend on the block asked for. A model with
    ``scores_into(users, out)`` (EASE, item-kNN: a user's scores are the same bits
    whichever users are scored with it) fills the whole block in one call.

    Parameters
    ----------
    model : object
        With ``scores(users)``, and optionally ``scores_into(users, out)``.
    start, stop : int
        The users; ``start`` a multiple of :data:`SCORE_CHUNK`.
    out : numpy.ndarray, optional
        A float32 C-ordered array of at least ``stop - start`` rows: its first rows
        take the scores when its columns are the model's items (the pass's blocks reuse
        one array instead of faulting in fresh pages every block).

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValueError
        When ``start`` is not a multiple of :data:`SCORE_CHUNK`.

    Examples
    --------
    >>> from sampled_metrics.recommenders import PrecomputedScores
    >>> score_users(PrecomputedScores(np.eye(3)), 0, 2).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    if start % SCORE_CHUNK:
        raise ValueError(f"a block must start at a multiple of {SCORE_CHUNK} users, not {start}")
    fill = getattr(model, "scores_into", None)
    if fill is not None:  # a user's scores are the same bits in any block: all at once
        scores = _first_rows(out, (stop - start, model.n_items), np.float32)
        fill(np.arange(start, stop), scores)
        return scores
    scores = np.zeros((0, 0), dtype=np.float32)
    for a in range(start, stop, SCORE_CHUNK):
        users = np.arange(a, min(a + SCORE_CHUNK, stop))
        chunk = np.asarray(model.scores(users))
        if a == start:
            scores = _first_rows(out, (stop - start, chunk.shape[-1]), np.float32)
        if chunk.shape != (users.size, scores.shape[1]):
            raise ValueError(
                f"recommender {getattr(model, 'name', type(model).__name__)!r}: scores for "
                f"users {users[0]}..{users[-1]} have shape {chunk.shape}, expected "
                f"{(users.size, scores.shape[1])}"
            )
        scores[a - start : a - start + users.size] = chunk
    return scores


def _first_rows(array, shape: tuple, dtype) -> np.ndarray:
    """``array``'s first ``shape[0]`` rows when it is a C-ordered array of ``dtype`` with
    enough of them and the same columns, else a new array of ``shape``."""
    if (
        array is not None
        and array.dtype == dtype
        and array.flags.c_contiguous
        and array.shape[0] >= shape[0]
        and array.shape[1:] == tuple(shape[1:])
    ):
        return array[: shape[0]]
    return np.empty(shape, dtype=dtype)


def rank_users(
    model: Scorer,
    train: sp.spmatrix,
    test_items: ArrayLike,
    plan: DrawPlan,
    start: int,
    stop: int,
    *,
    tie_policy: str,
    tie_seed: int,
    memory_mb: float,
    user_ids: ArrayLike | None = None,
    beaten: Any = None,  # a frameworks.beaten_files.BeatenWriter (a higher layer)
    progress: bool = False,
) -> UserRanks:
    """Exact, pessimistic and sampled ranks of users ``start..stop-1`` in one pass
    over their scores, block by block (see the module docstring).

    Parameters
    ----------
    model : object
        With ``scores(users) -> (len(users), n_items)`` and optionally ``name``.
    train : scipy.sparse matrix (n_users, n_items)
        Its nonzeros are the training items, which are not ranked nor sampled.
    test_items : array_like of int (n_users,)
        The held-out item of every user.
    plan : draw_plan.DrawPlan
        The draws of every repetition (``plan.chunk`` must be :data:`SCORE_CHUNK`).
    start, stop : int
        The users; ``start`` a multiple of :data:`SCORE_CHUNK`.
    tie_policy : str
        Tie policy of the exact and sampled ranks (see :mod:`.ties`).
    tie_seed : int
        Seed of the "random" tie order, shared by exact and sampled ranks.
    memory_mb : float
        Budget of a block (:func:`users_per_block`).
    user_ids : array_like, optional
        The users' ids, for messages.
    beaten : studies.protocols.beaten_files.BeatenWriter, optional
        Given each block's masks (``ranking.above_and_tied``; ``unmasked`` of the scores
        before the training items are masked, if it ``needs_unmasked``; ``masked``, the
        masks the block is ranked with): the protocol study's, stored so that the study
        does not score the model again.
    progress : bool, default False
        Show a tqdm bar over blocks.

    Returns
    -------
    UserRanks
        Equal, user for user, to ``ranking.exact_ranks`` and
        ``sampling.sampled_ranks`` with the plan's seed.

    Raises
    ------
    ValueError
        Naming the recommender, user and item of a NaN or infinite score; when the
        plan was drawn for other users or chunks, or the block is out of range.

    Examples
    --------
    >>> from sampled_metrics.recommenders import PrecomputedScores
    >>> from sampled_metrics.passes.draw_plan import draw_plan
    >>> from sampled_metrics.passes.sampling import pool_sizes
    >>> train = sp.csr_matrix([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0]])
    >>> test = np.array([1, 0])
    >>> plan = draw_plan(pool_sizes(excluded_items(train, test)), m=2, repetitions=3,
    ...                  seed=0, chunk=SCORE_CHUNK)
    >>> model = PrecomputedScores([[9.0, 5, 4, 3, 2], [1.0, 9, 2, 3, 4]])
    >>> r = rank_users(model, train, test, plan, 0, 2, tie_policy="random", tie_seed=0,
    ...                memory_mb=64)
    >>> r.rank.tolist(), r.n_candidates.tolist(), r.sampled.tolist()
    ([1.0, 4.0], [4, 4], [[1, 3], [1, 3], [1, 3]])
    """
    check_tie_policy(tie_policy)
    X = sp.csr_matrix(train)
    n_users, n_items = X.shape
    test = np.asarray(test_items, dtype=np.int64)
    name = getattr(model, "name", type(model).__name__)
    if plan.chunk != SCORE_CHUNK or plan.n_users != n_users:
        raise ValueError(
            f"the draw plan is for {plan.n_users} users in chunks of {plan.chunk}, "
            f"not {n_users} users in chunks of {SCORE_CHUNK}"
        )
    if not 0 <= start <= stop <= n_users or (start % SCORE_CHUNK and start < n_users):
        raise ValueError(f"users {start}..{stop - 1} are not a block of whole chunks")
    history = np.diff(X.indptr)
    # the pool of sampled items: every item but the training items and the held-out one
    # (pool_sizes of excluded_items, without building them for the whole range)
    ranged = np.arange(start, stop)
    in_train = np.asarray(X[ranged, test[ranged]]).ravel() != 0 if ranged.size else ranged > 0
    pool = n_items - history[start:stop] - 1 + in_train
    if not np.array_equal(pool, plan.pool[start:stop]):
        raise ValueError("the draw plan was drawn for other training items")
    rank = np.empty(stop - start)
    pessimistic = np.empty(stop - start)
    sampled = np.empty((plan.repetitions, stop - start), sampled_rank_dtype(plan.m, tie_policy))
    size = users_per_block(n_items, memory_mb)
    starts = range(start, stop, size)
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc=f"ranking {name}", unit="block")
    block = None  # the first block's arrays: the later ones reuse them
    masks: tuple[Any, ...] = (None, None)
    for a in starts:
        b = min(a + size, stop)
        S = score_users(model, a, b, out=block)
        block = S if block is None else block
        if S.shape[1] != n_items:
            raise ValueError(f"recommender {name!r} scores {S.shape[1]} items, not {n_items}")
        _check_finite(S, a, name, user_ids)
        masks = tuple(_first_rows(mask, S.shape, bool) for mask in masks)
        if beaten is not None and beaten.needs_unmasked:
            beaten.unmasked(*above_and_tied(S, test[a:b], out=masks))
        mask_training_items(S, X, a, b)
        users = np.arange(a, b)
        local = slice(a - start, b - start)
        above, tied = above_and_tied(S, test[a:b], out=masks)
        if beaten is not None:
            beaten.masked(above, tied, a, b)
        excluded = excluded_items(X[a:b], test[a:b])
        if tie_policy == "average":  # half items: from the scores of the drawn items
            rank[local], pessimistic[local] = ranks_from_masks(
                above, tied, test[a:b], users, tie_policy, tie_seed
            )
            _rank_draws_by_scores(S, excluded, test[a:b], users, plan, (a, b),
                                  tie_policy, tie_seed, out=sampled[:, local])  # fmt: skip
        else:  # an order of the tied items: 1 + the drawn items it puts first
            pessimistic[local] = 1.0 + row_counts(above)
            pessimistic[local] += row_counts(tied)
            put_ties_first(above, tied, test[a:b], users, tie_policy, tie_seed)
            rank[local] = 1.0 + row_counts(above)
            first, row_start = _pack_free(above, excluded)  # in above's own array
            for rep in range(plan.repetitions):
                drawn = first[block_positions(plan, a, b, rep) + row_start]
                sampled[rep, local] = 1 + row_counts(drawn)
        del S, above, tied, excluded  # before the next block's scores
    n_candidates = (n_items - history[start:stop]).astype(np.int64)
    return UserRanks(start, rank, n_candidates, pessimistic, sampled)


def _rank_draws_by_scores(S, excluded, test, users, plan, block, tie_policy, tie_seed, out):
    """``out[rep]``: the sampled ranks of every repetition of the users of ``block``
    from the scores of the drawn items (``sampling.ranks_among_sampled``)."""
    a, b = block
    target = S[np.arange(b - a), test][:, None]
    packed, row_start = _pack_free(S, excluded)  # the scores overwritten
    free_items = free_item_lookup(excluded)
    for rep in range(plan.repetitions):
        positions = block_positions(plan, a, b, rep)
        out[rep] = ranks_among_sampled(
            packed[positions + row_start],
            target,
            users,
            partial(_items_at, free_items, positions),
            test,
            tie_policy,
            tie_seed,
        )


def _items_at(free_items, positions: np.ndarray, row, column) -> np.ndarray:
    """The items drawn at (row, column): for the tied ones only."""
    return free_items(positions[row, column], row)


def _pack_free(S: np.ndarray, excluded) -> tuple:
    """(packed, row_start): the entries of each user's free items (not ``excluded``:
    scores, or whether an item is ranked first), in item order, row after row, and where
    each row starts (a column), so that the p-th free item of row u has
    ``packed[row_start[u] + p]`` (as the draws' positions).

    ``packed`` is the start of S's own (C-ordered) array, S overwritten: rows are packed
    a few at a time, and the free entries up to row u never reach past its start."""
    n_rows, n_items = S.shape
    flat = S.reshape(-1)
    if not np.shares_memory(flat, S):
        raise ValueError("the entries of a block must be one C-ordered array")
    indptr, indices = excluded.indptr, excluded.indices
    row_start = np.zeros((n_rows, 1), dtype=np.int64)
    np.cumsum(n_items - np.diff(indptr)[:-1], out=row_start[1:, 0])
    step = SCORE_CHUNK  # rows at a time: copies within the budget's chunk
    free = np.empty((min(step, n_rows), n_items), dtype=bool)
    end = 0
    for lo in range(0, n_rows, step):
        hi = min(lo + step, n_rows)
        rows_free = free[: hi - lo]
        rows_free.fill(True)
        taken = np.repeat(np.arange(hi - lo), np.diff(indptr[lo : hi + 1]))
        rows_free[taken, indices[indptr[lo] : indptr[hi]]] = False
        values = S[lo:hi][rows_free]
        flat[end : end + values.size] = values
        end += values.size
    return flat[:end], row_start


def _check_finite(S: np.ndarray, start: int, name: str, user_ids) -> None:
    if np.isfinite(S.min()) and np.isfinite(S.max()):  # NaN in both, -inf, +inf
        return
    finite = np.isfinite(S)
    if not finite.all():
        r, i = np.argwhere(~finite)[0]
        user = start + int(r)
        shown = f"{user}" if user_ids is None else f"{user} (id {user_ids[user]!r})"
        raise ValueError(
            f"recommender {name!r}: {int((~finite).sum())} scores are NaN or inf, first the "
            f"score of user {shown} for item {int(i)}: {S[r, i]}"
        )
