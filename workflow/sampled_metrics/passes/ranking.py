"""Exact ranks of held-out items (section 6.1 of Krichene & Rendle, KDD 2020).

"For each of the 6040 test users, we rank all items (leaving out the user's
training items) and record at which position the withheld relevant item
appears." For one user with held-out item t and candidate set C (all items but
the user's training items; t is in C)::

    rank = 1 + #{j in C, j != t : y_j > y_t} + tie term,

with the tie term of :mod:`.ties` (the same in sampled ranks). The size of the
ranked set, n = |C| = n_items - |H_u|, is what AUC (eq 7) needs.

:func:`rank_from_scores` holds the rank on arrays of scores; :func:`exact_ranks`
ranks every user of a split, block by block. Under the "random" tie policy both
use the one seeded tie order of :func:`.ties.tie_order_keys`, the order of the
sampled ranks too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from .entries import row_counts
from .ties import check_tie_policy, random_ties_first, tie_order_keys, tie_term

if TYPE_CHECKING:
    from .scorer import Scorer

__all__ = [
    "above_and_tied",
    "block_ranks",
    "exact_ranks",
    "mask_training_items",
    "rank_from_scores",
    "ranks_from_masks",
]


def _ranks_of_masked(
    scores: np.ndarray, target_index: np.ndarray, tie_policy: str, keys: np.ndarray | None
) -> np.ndarray:
    """Ranks when non-candidates already hold -inf and all candidates are finite;
    ``keys`` (the shape of ``scores``) order the ties under "random"."""
    rows = np.arange(scores.shape[0])
    target = scores[rows, target_index][:, None]
    higher = row_counts(scores > target)
    tied = scores == target
    tied[rows, target_index] = False  # the target itself
    target_key = None if keys is None else keys[rows, target_index][:, None]
    return 1.0 + higher + tie_term(tied, tie_policy, keys, target_key)


def _shared_tie_keys(shape, users, items, tie_seed) -> np.ndarray:
    """``tie_order_keys(user, item, tie_seed)`` for every entry of a (rows x columns)
    score array: the one shared tie order of :mod:`.ties`."""
    if users is None or tie_seed is None:
        raise ValueError(
            "tie_policy='random' needs users (the user id of every row) and tie_seed (the "
            "seed of the shared tie order of exact_ranks and sampled_ranks)"
        )
    users = np.atleast_1d(np.asarray(users))
    items = np.arange(shape[1]) if items is None else np.asarray(items)
    seed = np.asarray(tie_seed)
    for what, ids in (("users", users), ("items", items), ("tie_seed", seed)):
        if ids.dtype.kind not in "iu" or np.any(ids < 0):
            raise ValueError(f"{what} must be non-negative integers")
    if users.shape != (shape[0],):
        raise ValueError("users needs one id per row of scores")
    if items.shape not in ((shape[1],), tuple(shape)):
        raise ValueError("items needs one id per column of scores, or an array of its shape")
    if seed.ndim:
        raise ValueError("tie_seed must be one integer")
    return tie_order_keys(users[:, None], items, int(seed))


def rank_from_scores(
    scores: ArrayLike,
    candidate_mask: ArrayLike | None,
    target_index: ArrayLike,
    tie_policy: str = "pessimistic",
    *,
    users: ArrayLike | None = None,
    items: ArrayLike | None = None,
    tie_seed: int | None = None,
) -> float | np.ndarray:
    """Rank of the target item among the candidates, for one or many users.

    Parameters
    ----------
    scores : array (n_items,) or (n_users, n_items)
        Predicted scores; higher is better.
    candidate_mask : bool array of the same shape, or None
        True where an item is ranked; None means every item. The target must be
        a candidate. Scores of non-candidates are ignored (may be anything).
    target_index : int or int array (n_users,)
        Column of the held-out item in each row.
    tie_policy : {"pessimistic", "optimistic", "average", "random"}, default "pessimistic"
        How candidates scored like the target count (see :mod:`.ties`).
    users : int or int array (n_users,), optional
        Needed by "random": the user id of each row. The tied candidates counted
        are those before the target in the shared seeded order
        ``ties.tie_order_keys(user, item, tie_seed)``, the order of
        :func:`exact_ranks` and ``sampling.sampled_ranks``; there is no other
        random order, so ranks agree with theirs for the same seed.
    items : int array (n_items,) or (n_users, n_items), optional
        Under "random", the item id of each column (default: the column index,
        as when ``scores`` holds every item).
    tie_seed : int, optional
        Needed by "random": the seed of the shared order (``seed`` of
        :func:`exact_ranks`, ``tie_seed`` of ``sampling.sampled_ranks``).

    Returns
    -------
    float64 array (n_users,), or a float for 1-d input
        1 + #candidates scored strictly higher + the tie term (see the module
        docstring).

    Raises
    ------
    ValueError
        If a candidate's score is NaN or infinite, if a target is not a
        candidate, if ``tie_policy`` is unknown, if "random" lacks ``users`` or
        ``tie_seed``, or if the shapes, ids or ``target_index`` do not fit.

    Examples
    --------
    Item 1 is tied with items 2 and 3, below item 0:

    >>> s = [0.9, 0.5, 0.5, 0.5, 0.1]
    >>> [rank_from_scores(s, None, 1, p) for p in ("pessimistic", "optimistic", "average")]
    [4.0, 2.0, 3.0]
    >>> rank_from_scores(s, [False, True, True, True, True], 1, "optimistic")  # item 0 not ranked
    1.0

    Under "random", the ties of user 0 follow the shared order of seed 0 (that of
    ``exact_ranks(..., tie_policy="random", seed=0)``): items 2 and 3 count when
    their keys are below item 1's.

    >>> from sampled_metrics.passes.ties import tie_order_keys
    >>> keys = tie_order_keys(0, [1, 2, 3], seed=0)
    >>> rank = rank_from_scores(s, None, 1, "random", users=0, tie_seed=0)
    >>> bool(rank == 2 + np.count_nonzero(keys[1:] < keys[0]))
    True
    """
    check_tie_policy(tie_policy)
    scores = np.asarray(scores)
    one_d = scores.ndim == 1
    S = np.atleast_2d(scores)
    if S.ndim != 2:
        raise ValueError("scores must be 1-d or 2-d")
    target = np.atleast_1d(np.asarray(target_index, dtype=np.int64))
    if target.shape != (S.shape[0],):
        raise ValueError("target_index needs one entry per row of scores")
    if np.any(target < 0) or np.any(target >= S.shape[1]):
        raise ValueError("target_index out of range")
    rows = np.arange(S.shape[0])
    if candidate_mask is None:
        mask = None
    else:
        mask = np.atleast_2d(np.asarray(candidate_mask, dtype=bool))
        if mask.shape != S.shape:
            raise ValueError("candidate_mask must have the shape of scores")
        if not np.all(mask[rows, target]):
            bad = int(np.flatnonzero(~mask[rows, target])[0])
            raise ValueError(f"row {bad}: the target item {int(target[bad])} is not a candidate")
    finite = np.isfinite(S)
    bad_rows = ~np.all(finite | ~mask, axis=1) if mask is not None else ~np.all(finite, axis=1)
    if np.any(bad_rows):
        bad = int(np.flatnonzero(bad_rows)[0])
        raise ValueError(f"row {bad}: scores contain NaN or inf")
    keys = _shared_tie_keys(S.shape, users, items, tie_seed) if tie_policy == "random" else None
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    ranks = _ranks_of_masked(S, target, tie_policy, keys)
    return float(ranks[0]) if one_d else ranks


def exact_ranks(
    model: Scorer,
    train: sp.spmatrix,
    test_items: ArrayLike,
    *,
    tie_policy: str = "pessimistic",
    block_size: int = 512,
    seed: int = 0,
    progress: bool = False,
    users: ArrayLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Exact rank of every user's held-out item among all items but their training items.

    Section 6.1: every item except the user's training items is ranked.

    Parameters
    ----------
    model : object
        With ``scores(users) -> (len(users), n_items)`` and optionally ``name``.
    train : scipy.sparse matrix (n_users, n_items)
        Its nonzeros are the training items H_u, which are excluded from the ranking.
    test_items : int array (n_users,)
        The held-out item of every user (must not be one of the user's training items).
    tie_policy : {"pessimistic", "optimistic", "average", "random"}, default "pessimistic"
        How items scored like the held-out item count (see :mod:`.ties`).
    block_size : int, default 512
        Users scored at a time (memory ~ block_size x n_items scores).
    seed : int, default 0
        Seeds the "random" tie policy: ties follow ``tie_order_keys(user, item,
        seed)``, so the result does not depend on ``block_size`` and
        ``sampling.sampled_ranks`` with the same ``tie_seed`` breaks ties alike.
    progress : bool, default False
        Show a tqdm bar over blocks.
    users : array_like of int, optional
        Rank only these users (rows of ``train``, distinct), e.g. those a two-phase
        design chose: only they are scored, each with the tie order it has among all.

    Returns
    -------
    ranks : float64 (n_users,) or (len(users),)
        Integers except under "average".
    n_candidates : int64 (n_users,) or (len(users),)
        n_items - |H_u|: the n of eq 7 (AUC).

    Raises
    ------
    ValueError
        Naming the recommender and the user when a score is NaN or infinite;
        also when a held-out item is a training item or out of range, when
        ``test_items`` is not one integer per user, when the model's scores
        have the wrong shape, or when ``tie_policy`` or ``block_size`` is invalid.

    Examples
    --------
    User 0 trained on item 0, so item 2 is second among items 1..3; user 1 ranks all 4:

    >>> from sampled_metrics.recommenders import PrecomputedScores
    >>> model = PrecomputedScores([[0.4, 0.3, 0.2, 0.1], [0.4, 0.3, 0.2, 0.1]])
    >>> ranks, n = exact_ranks(model, sp.csr_matrix([[1, 0, 0, 0], [0, 0, 0, 0]]), np.array([2, 2]))
    >>> ranks.tolist(), n.tolist()
    ([2.0, 3.0], [3, 4])
    >>> exact_ranks(model, sp.csr_matrix([[1, 0, 0, 0], [0, 0, 0, 0]]), np.array([2, 2]),
    ...             users=[1])[0].tolist()
    [3.0]
    """
    check_tie_policy(tie_policy)
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    X = sp.csr_matrix(train)
    X.sum_duplicates()
    X.eliminate_zeros()
    n_users, n_items = X.shape
    test = np.asarray(test_items)
    if test.shape != (n_users,) or not np.issubdtype(test.dtype, np.integer):
        raise ValueError(f"test_items must be an integer array with one item per user ({n_users})")
    test = test.astype(np.int64)
    if np.any(test < 0) or np.any(test >= n_items):
        raise ValueError("test_items out of range")
    rows = np.arange(n_users) if users is None else _rows(users, n_users)
    in_train = np.zeros(n_users, dtype=bool)  # of the users ranked (none: nothing to index)
    if rows.size:
        in_train[rows] = np.asarray(X[rows, test[rows]]).ravel() != 0
    if np.any(in_train):
        u = int(np.flatnonzero(in_train)[0])
        raise ValueError(
            f"user {u}: held-out item {int(test[u])} is also a training item "
            f"({int(in_train.sum())} such users)"
        )
    name = getattr(model, "name", type(model).__name__)
    history = np.diff(X.indptr)
    n_candidates = (n_items - history).astype(np.int64)
    ranked = X if users is None else X[rows]
    ranks = np.empty(rows.size, dtype=np.float64)

    starts = range(0, rows.size, block_size)
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc=f"ranking {name}", unit="block")
    for a in starts:
        b = min(a + block_size, rows.size)
        block = rows[a:b]
        S = np.asarray(model.scores(block))
        S = S.astype(np.float64) if not np.issubdtype(S.dtype, np.floating) else S.copy()
        if S.shape != (b - a, n_items):
            raise ValueError(
                f"recommender {name!r}: scores for users {block[0]}..{block[-1]} have shape "
                f"{S.shape}, expected {(b - a, n_items)}"
            )
        finite = np.isfinite(S)
        if not finite.all():
            r, i = np.argwhere(~finite)[0]
            raise ValueError(
                f"recommender {name!r}: score of user {int(block[r])} for item {int(i)} "
                f"is {S[r, i]} (NaN or inf)"
            )
        mask_training_items(S, ranked, a, b)
        ranks[a:b] = block_ranks(S, test[block], block, tie_policy, seed)[0]
    return ranks, n_candidates[rows]


def _rows(users, n_users: int) -> np.ndarray:
    """``users`` as distinct int64 rows in 0..n_users - 1, or a ValueError naming them."""
    rows = np.asarray(users)
    if rows.size == 0:
        return np.zeros(0, dtype=np.int64)
    if rows.ndim != 1 or not np.issubdtype(rows.dtype, np.integer):
        raise ValueError("users must be a list of integer rows of train")
    if rows.min() < 0 or rows.max() >= n_users or np.unique(rows).size != rows.size:
        raise ValueError(f"users must be distinct rows in 0..{n_users - 1}")
    return rows.astype(np.int64)


def mask_training_items(S: np.ndarray, train: sp.csr_matrix, start: int, stop: int) -> None:
    """Set the scores of users ``start..stop-1``'s training items to -inf in ``S``
    (their rows, in order), so that they are not ranked.

    Parameters
    ----------
    S : numpy.ndarray (stop - start, n_items)
        Scores of the users, changed in place.
    train : scipy.sparse.csr_matrix (n_users, n_items)
        Its nonzeros are the training items.
    start, stop : int
        The users of the rows of ``S``.

    Returns
    -------
    None

    Examples
    --------
    >>> S = np.ones((1, 3))
    >>> mask_training_items(S, sp.csr_matrix([[0, 0, 0], [1, 0, 1]]), 1, 2)
    >>> S.tolist()
    [[-inf, 1.0, -inf]]
    """
    lo, hi = train.indptr[start], train.indptr[stop]
    rows = np.repeat(np.arange(stop - start), np.diff(train.indptr[start : stop + 1]))
    S[rows, train.indices[lo:hi]] = -np.inf


def block_ranks(
    S: np.ndarray, test_items: np.ndarray, users: np.ndarray, tie_policy: str, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Ranks of a block of users whose non-candidates hold -inf: under ``tie_policy``
    and pessimistic (every tied candidate above the held-out item);
    :func:`ranks_from_masks` of :func:`above_and_tied`.

    Parameters
    ----------
    S : numpy.ndarray (n_users, n_items)
        Scores, -inf for the items that are not ranked (:func:`mask_training_items`).
    test_items : numpy.ndarray of int (n_users,)
        The held-out item of each row.
    users : numpy.ndarray of int (n_users,)
        The user id of each row (for the "random" tie order).
    tie_policy : str
        One of ``ties.TIE_POLICIES``.
    seed : int
        Seed of the "random" tie order.

    Returns
    -------
    ranks, pessimistic : float64 arrays (n_users,)

    Examples
    --------
    >>> S = np.array([[0.9, 0.5, 0.5, -np.inf, 0.5]])
    >>> block_ranks(S, np.array([1]), np.array([0]), "optimistic", 0)
    (array([2.]), array([4.]))
    """
    above, tied = above_and_tied(S, test_items)
    return ranks_from_masks(above, tied, test_items, users, tie_policy, seed)


def above_and_tied(
    S: np.ndarray, test_items: ArrayLike, out: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(above, tied), bool (rows, items): the items scored above each row's held-out
    item, and those scored exactly like it (the held-out item itself not). A row's
    ranks under every tie policy follow from the two (:func:`ranks_from_masks`), and
    so do the items any tie order puts above it (``frameworks.beaten.order_ties``).

    Parameters
    ----------
    S : numpy.ndarray (rows, n_items)
        Scores.
    test_items : array_like of int (rows,)
    out : tuple of two bool numpy.ndarray (rows, n_items), optional
        Arrays to write (above, tied) into.

    Returns
    -------
    tuple of numpy.ndarray

    Examples
    --------
    >>> above, tied = above_and_tied(np.array([[0.9, 0.5, 0.5]]), [1])
    >>> above.astype(int).tolist(), tied.astype(int).tolist()
    ([[1, 0, 0]], [[0, 0, 1]])
    """
    rows = np.arange(S.shape[0])
    test_items = np.asarray(test_items)
    target = S[rows, test_items][:, None]
    above, tied = (None, None) if out is None else out
    tied = np.equal(S, target, out=tied)
    tied[rows, test_items] = False
    return np.greater(S, target, out=above), tied


def ranks_from_masks(
    above: np.ndarray,
    tied: np.ndarray,
    test_items: np.ndarray,
    users: np.ndarray,
    tie_policy: str,
    seed: int,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`block_ranks` from the masks of :func:`above_and_tied`: 1 + the items
    above + the policy's share of the tied ones (``ties.tie_term``; under "random" the
    keys of :func:`.ties.tie_order_keys` for the tied items only), and 1 + the items
    above + every tied item.

    Parameters
    ----------
    above, tied : numpy.ndarray of bool (n_users, n_items)
    test_items, users : numpy.ndarray of int (n_users,)
    tie_policy : str
    seed : int

    Returns
    -------
    ranks, pessimistic : float64 arrays (n_users,)

    Examples
    --------
    >>> above, tied = np.array([[True, False, False]]), np.array([[False, False, True]])
    >>> ranks_from_masks(above, tied, np.array([1]), np.array([0]), "average", 0)
    (array([2.5]), array([3.]))
    """
    ranked_above = 1.0 + row_counts(above)
    pessimistic = ranked_above + row_counts(tied)
    if tie_policy != "random":
        return ranked_above + tie_term(tied, tie_policy), pessimistic
    term = np.zeros(above.shape[0])
    for row, _ in random_ties_first(tied, test_items, users, seed):
        term += np.bincount(row, minlength=term.size)
    return ranked_above + term, pessimistic
