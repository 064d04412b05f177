"""The frameworks' sampling protocols simulated on real scores: the sampled ranks.

:func:`simulate` draws a block of users' items for every repetition and counts, for
every recommender, the drawn items it ranks above the held-out item
(``beaten.beaten_items``): the sampled rank the framework would have reported. The
draws of a user depend only on (seed, protocol, the user's chunk of
``block_pass.SCORE_CHUNK`` users), so every recommender sees the same items (a paired
protocol, as with a shared test file) and the result does not depend on the blocks.
``cells.simulate_cells`` draws the same law for uniform paired protocols without
drawing every item; ``unpaired.simulate_unpaired`` gives each recommender its own draws
(RecBole, DaisyRec); ``protocol_pass.simulate_protocols`` runs them over blocks of users.
With replacement each user also gets the Hansen-Hurwitz estimate of the rank, and
every user the popularity-weighted rank R^pi = 1 + (n - 1) q (docs/popularity.md).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..passes.block_pass import SCORE_CHUNK
from ..passes.entries import row_counts
from .beaten import beaten_items
from .draws import _alias_table, _check_drawable, _draw_items
from .registry import Protocol

__all__ = [
    "ProtocolRanks",
    "beaten_items",
    "interaction_counts",
    "simulate",
    "weighted_ranks",
]


@dataclass(frozen=True)
class ProtocolRanks:
    """The simulated sampled ranks of users ``start..`` under one protocol.

    ``sampled``: (repetitions, recommenders, users) int16, 1 + the drawn items ranked
    above the held-out item; ``hansen_hurwitz``: the same shape, float64, the
    Hansen-Hurwitz estimate of the rank (protocols with replacement; else shape
    (0, recommenders, users)); ``weighted_rank``: (recommenders, users), the
    popularity-weighted rank R^pi = 1 + (n - 1) q (the rank itself at alpha = 0).

    Parameters
    ----------
    start : int
    sampled, hansen_hurwitz, weighted_rank : numpy.ndarray

    Examples
    --------
    >>> r = ProtocolRanks(0, np.ones((2, 1, 3), np.int16), np.ones((0, 1, 3)), np.ones((1, 3)))
    >>> r.sampled.shape
    (2, 1, 3)
    """

    start: int
    sampled: np.ndarray
    hansen_hurwitz: np.ndarray
    weighted_rank: np.ndarray


def interaction_counts(train: sp.spmatrix, test_items: ArrayLike) -> np.ndarray:
    """Interactions of each item over the training items and the held-out items: the
    counts RecBole's and BERT4Rec's popularity samplers weigh with.

    Parameters
    ----------
    train : scipy.sparse matrix (n_users, n_items)
    test_items : array_like of int (n_users,)

    Returns
    -------
    numpy.ndarray of float

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> interaction_counts(sp.csr_matrix([[1, 0, 1], [1, 0, 0]]), [1, 2]).tolist()
    [2.0, 1.0, 2.0]
    """
    X = sp.csr_matrix(train)
    n_items = X.shape[1]
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    # Counted a slice of the entries at a time: ``(train != 0).sum(axis=0)`` made a copy
    # of the matrix and summed it in int64, several times its size at once.
    counts = np.bincount(np.asarray(test_items), minlength=n_items).astype(float)
    for lo in range(0, X.nnz, _COUNTED_ENTRIES):
        data, indices = X.data[lo : lo + _COUNTED_ENTRIES], X.indices[lo : lo + _COUNTED_ENTRIES]
        counts += np.bincount(indices[data != 0], minlength=n_items)
    return counts


# Entries of the training matrix counted at a time by interaction_counts.
_COUNTED_ENTRIES = 2**20


def simulate(
    protocol: Protocol,
    beaten: list,
    excluded: np.ndarray,
    weights: ArrayLike,
    test_items: ArrayLike,
    *,
    start: int,
    repetitions: int,
    seed: int,
) -> ProtocolRanks:
    """The sampled ranks of users ``start..start + rows - 1`` under ``protocol`` for
    every recommender, in every repetition (see the module docstring).

    Parameters
    ----------
    protocol : Protocol
    beaten : list of bool numpy.ndarray (rows, n_items)
        Per recommender, :func:`beaten_items` of the users.
    excluded : bool numpy.ndarray (rows, n_items)
        The items the users may not draw: training items, and the held-out item
        unless ``protocol.target_in_pool``.
    weights : numpy.ndarray (n_items,)
        count ** protocol.alpha.
    test_items : array_like of int (rows,)
        The held-out items.
    start : int
        The first user (a multiple of ``SCORE_CHUNK``).
    repetitions : int
    seed : int

    Returns
    -------
    ProtocolRanks

    Examples
    --------
    With m = n - 1 without replacement every item is drawn: the sampled rank is the rank.

    >>> p = Protocol("all", 4, 0.0, False, False, False, "")
    >>> beaten = [np.array([[True, False, True, False, False]])]
    >>> excluded = np.array([[False, False, False, False, True]])  # item 4 held out
    >>> r = simulate(p, beaten, excluded, np.ones(5), [4], start=0, repetitions=2, seed=0)
    >>> r.sampled[:, 0, 0].tolist(), r.weighted_rank.tolist()
    ([3, 3], [[3.0]])
    """
    weights = np.asarray(weights, dtype=float)
    n_rows = excluded.shape[0]
    if start % SCORE_CHUNK:
        raise ValueError(f"users must start at a multiple of {SCORE_CHUNK}, not {start}")
    sampled = np.empty((repetitions, len(beaten), n_rows), dtype=np.int16)
    hansen_hurwitz = np.empty(
        (repetitions if protocol.replacement else 0, len(beaten), n_rows), dtype=float
    )
    total, weighted_rank = weighted_ranks(beaten, excluded, weights, test_items)
    stream = zlib.crc32(protocol.name.encode())
    _check_drawable(protocol, weights, excluded)
    table = _alias_table(weights)
    codes = _beaten_codes(beaten)
    for lo in range(0, n_rows, SCORE_CHUNK):
        hi = min(lo + SCORE_CHUNK, n_rows)
        rng = np.random.default_rng([seed, stream, start + lo])
        users = np.tile(np.arange(lo, hi), repetitions)
        items, ranked = _draw_items(protocol, table, excluded, users, rng)
        every_draw_ranked = ranked.all()
        # 1 / w of each draw; None for equal weights w, where the mean of the hits' terms
        # is their count / (m w) (for w = 1 the same float: the sum of ones is exact)
        inverse_weights = 1.0 / weights[items] if protocol.replacement and table else None
        # one gather per group of 8 recommenders: bit k of a code is "beaten by k"
        for group, group_codes in enumerate(codes):
            drawn = group_codes[users[:, None], items]
            for bit in range(min(8, len(beaten) - 8 * group)):
                k = 8 * group + bit
                hit = (drawn & np.uint8(1 << bit)) != 0
                hits = row_counts(hit)
                counts = hits if every_draw_ranked else row_counts(hit & ranked)
                sampled[:, k, lo:hi] = (1 + counts).reshape(repetitions, hi - lo)
                if protocol.replacement:
                    mean_term = (
                        hits / protocol.m / weights[0]
                        if inverse_weights is None
                        else np.where(hit, inverse_weights, 0.0).mean(axis=1)
                    )
                    estimate = 1.0 + total[users] * mean_term
                    hansen_hurwitz[:, k, lo:hi] = estimate.reshape(repetitions, hi - lo)
    return ProtocolRanks(start, sampled, hansen_hurwitz, weighted_rank)


def weighted_ranks(
    beaten: list, excluded: np.ndarray, weights: np.ndarray, test_items: ArrayLike
) -> tuple:
    """(total, weighted_rank): each row's pool mass (the weights of the items it may
    draw: draw probabilities are weights / total) and, per recommender, the
    popularity-weighted rank R^pi = 1 + (n - 1) q, q the beaten share of the negatives'
    mass (the pool without the held-out item, which NCF's pool holds and never beats).

    Parameters
    ----------
    beaten : list of bool numpy.ndarray (rows, n_items)
    excluded : bool numpy.ndarray (rows, n_items)
    weights : numpy.ndarray (n_items,)
    test_items : array_like of int (rows,)

    Returns
    -------
    tuple of numpy.ndarray
        (rows,) and (recommenders, rows).

    Examples
    --------
    >>> beaten = [np.array([[True, False, True, False]])]
    >>> total, r = weighted_ranks(beaten, np.array([[0, 0, 0, 1]], bool), np.ones(4), [3])
    >>> total.tolist(), r.tolist()
    ([3.0], [[3.0]])
    """
    weights = np.asarray(weights, dtype=float)
    n_rows = excluded.shape[0]
    pool = ~excluded
    total = _mass(pool, weights)
    rows = np.arange(n_rows)
    test_items = np.asarray(test_items)
    in_pool = pool[rows, test_items]
    negatives_mass = total - np.where(in_pool, weights[test_items], 0.0)
    beaten_mass = np.stack([_mass(b, weights) for b in beaten]) if beaten else np.empty((0, n_rows))
    negatives = row_counts(pool) - in_pool
    return total, 1.0 + negatives * beaten_mass / negatives_mass


def _mass(mask: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """mask @ weights per row; a count where every weight is 1 (the same floats)."""
    if np.all(weights == 1.0):
        return row_counts(mask).astype(float)
    # numpy casts a bool matrix to float64 whole before its product; rows of
    # SCORE_CHUNK cast in cache are 4x faster, each row's dot product the same
    out = np.empty(mask.shape[0])
    for a in range(0, mask.shape[0], SCORE_CHUNK):
        out[a : a + SCORE_CHUNK] = mask[a : a + SCORE_CHUNK].astype(float) @ weights
    return out


def _beaten_codes(beaten: list) -> list:
    """The recommenders' beaten masks packed 8 to a uint8 array (rows, n_items): bit k
    of group g's code is recommender 8 g + k's mask, so a draw is gathered once for 8."""
    codes = []
    for first in range(0, len(beaten), 8):
        code = np.zeros(beaten[first].shape, dtype=np.uint8)
        for bit, mask in enumerate(beaten[first : first + 8]):
            code |= mask.astype(np.uint8) << np.uint8(bit)
        codes.append(code)
    return codes
