"""Protocols that redraw for every model (RecBole, DaisyRec): each recommender's own law.

RecBole draws its negatives in the dataloader's collate from the global generator and
DaisyRec its candidates after training, so two models are ranked among different
items. Only each model's own law of the sampled rank then matters, not the joint law
of one draw over all models, and it needs no drawn item but the beaten ones.

A user u with pool mass T_u (the weights of the items they may draw, weights
count ** alpha) and beaten mass B_u (those of the pool items the model ranks above
the held-out item) takes m independent draws, each beaten with probability
q_u = B_u / T_u, so

- K, the beaten draws, follows Binomial(m, q_u) (the margin of the multinomial law
  of the draws' items; Johnson, Kotz & Balakrishnan, *Discrete Multivariate
  Distributions*, 1997, ch. 35), and given K the beaten draws are K independent
  draws among the beaten items with probabilities w_j / B_u (the multinomial law given
  its margin, ibid.);
- repeats counted (DaisyRec): the sampled rank is 1 + K;
- repeats collapsed (RecBole: an item drawn twice is one column of its scores): the
  sampled rank is 1 + the distinct items among the K beaten draws, drawn here as
  positions in the user's beaten items (uniform positions for equal weights; for
  popularity weights, a uniform point of the user's stretch of the cumulative weights
  and ``searchsorted``);
- the Hansen-Hurwitz estimate of the rank (every draw, with replacement) is
  1 + T_u mean_i 1{i beaten} / w_i over the m draws (Hansen & Hurwitz 1943), the sum
  over the K beaten draws of 1 / w divided by m: for equal weights w, K / (m w)
  (``simulate``'s formula, the same floats).

The draws of recommender k for a user depend only on (seed, protocol, k, the user's
chunk of ``SCORE_CHUNK`` users), k its index among the study's recommenders: each
(recommender, chunk) has its own generator, so the recommenders' ranks are independent
given the scores, and the result depends neither on the blocks nor on which of the
recommenders are simulated together.
"""

from __future__ import annotations

import zlib

import numpy as np
from numpy.typing import ArrayLike

from ..passes.block_pass import SCORE_CHUNK
from ..passes.entries import row_counts, true_entries
from .draws import _check_drawable
from .registry import Protocol
from .simulate import ProtocolRanks, weighted_ranks

__all__ = ["simulate_unpaired"]


def simulate_unpaired(
    protocol: Protocol,
    beaten: list,
    excluded: np.ndarray,
    weights: ArrayLike,
    test_items: ArrayLike,
    *,
    start: int,
    repetitions: int,
    seed: int,
    first_recommender: int = 0,
) -> ProtocolRanks:
    """The sampled ranks of users ``start..`` under a protocol with replacement, each
    recommender with its own draws (see the module docstring); ``simulate``'s arguments.

    Parameters
    ----------
    protocol : Protocol
        With replacement.
    beaten : list of bool numpy.ndarray (rows, n_items)
        Per recommender, ``beaten_items`` of the users.
    excluded : bool numpy.ndarray (rows, n_items)
        The items the users may not draw.
    weights : numpy.ndarray (n_items,)
        count ** protocol.alpha.
    test_items : array_like of int (rows,)
    start : int
        The first user (a multiple of ``SCORE_CHUNK``).
    repetitions, seed : int
    first_recommender : int, default 0
        The index of ``beaten[0]`` among the study's recommenders: recommender k's draws
        are seeded by its index in the study, so one recommender simulated alone
        draws exactly as among all of them.

    Returns
    -------
    ProtocolRanks

    Raises
    ------
    ValueError
        For a protocol without replacement, a start off the chunks or a user with
        nothing to draw.

    Examples
    --------
    Every pool item beaten: all m draws are beaten, 3 distinct items at most.

    >>> p = Protocol("tiny", 50, 0.0, True, True, False, "", paired=False)
    >>> beaten = [np.array([[True, True, True, False]])]
    >>> excluded = np.array([[False, False, False, True]])
    >>> r = simulate_unpaired(p, beaten, excluded, np.ones(4), [3], start=0,
    ...                       repetitions=2, seed=0)
    >>> r.sampled[:, 0, 0].tolist(), r.hansen_hurwitz[:, 0, 0].tolist()
    ([4, 4], [4.0, 4.0])
    """
    if not protocol.replacement:
        raise ValueError(f"protocol {protocol.name}: unpaired draws need replacement")
    if start % SCORE_CHUNK:
        raise ValueError(f"users must start at a multiple of {SCORE_CHUNK}, not {start}")
    weights = np.asarray(weights, dtype=float)
    _check_drawable(protocol, weights, excluded)
    n_rows = excluded.shape[0]
    total, weighted_rank = weighted_ranks(beaten, excluded, weights, test_items)
    sampled = np.empty((repetitions, len(beaten), n_rows), dtype=np.int16)
    hansen_hurwitz = np.empty((repetitions, len(beaten), n_rows), dtype=float)
    uniform = bool(np.all(weights == weights[0]))
    stream = zlib.crc32(protocol.name.encode())
    pool = ~excluded
    for k, mask in enumerate(beaten, start=first_recommender):
        column = k - first_recommender
        for lo in range(0, n_rows, SCORE_CHUNK):
            hi = min(lo + SCORE_CHUNK, n_rows)
            rng = np.random.default_rng([seed, stream, k + 1, start + lo])
            ranks, estimate = _chunk(
                protocol, mask[lo:hi] & pool[lo:hi], total[lo:hi], weights, uniform,
                repetitions, rng,
            )  # fmt: skip
            sampled[:, column, lo:hi] = ranks
            hansen_hurwitz[:, column, lo:hi] = estimate
    return ProtocolRanks(start, sampled, hansen_hurwitz, weighted_rank)


def _chunk(protocol, beaten, total, weights, uniform, repetitions, rng) -> tuple:
    """(sampled, Hansen-Hurwitz), each (repetitions, users), of one recommender on a
    chunk of users whose beaten pool items are ``beaten``."""
    users = beaten.shape[0]
    if uniform:  # the counts are enough: a draw among them is a position
        count = row_counts(beaten)
        q = count * weights[0] / total  # B / T, the masses of equal weights
    else:
        row, item = true_entries(beaten)  # row-major: each user's beaten items together
        w = weights[item]
        beaten_mass = np.bincount(row, w, minlength=users)
        count = np.bincount(row, minlength=users)
        q = beaten_mass / total
    # K ~ Binomial(m, q_u), entries in the order (repetition, user)
    k = rng.binomial(protocol.m, np.minimum(np.tile(q, repetitions), 1.0))
    user = np.tile(np.arange(users), repetitions)
    if uniform:
        # simulate's equal-weight estimate: 1 + T (hits / m / w)
        estimate = 1.0 + total[user] * (k / protocol.m / weights[0])
    if protocol.collapse or not uniform:
        owner = np.repeat(np.arange(k.size), k)
        first = np.concatenate([[0], np.cumsum(count)[:-1]])  # each user's first position
        if uniform:
            position = first[user[owner]] + rng.integers(0, count[user[owner]])
        else:
            cumulative = np.cumsum(w)
            below = np.concatenate([[0.0], cumulative])[first]  # mass before each user
            # each entry's uniforms in increasing order, so the points of a repetition
            # are sorted, which searchsorted walks ~6x faster, and an entry's positions
            # come out sorted
            u = _sorted_uniforms(k, rng)
            point = below[user[owner]] + u * beaten_mass[user[owner]]
            position = np.searchsorted(cumulative, point, side="right")
            # float rounding at a stretch's ends: stay in the user's own items
            last = first + count - 1
            position = np.clip(position, first[user[owner]], last[user[owner]])
            inverse = np.bincount(owner, 1.0 / w[position], minlength=k.size)
            estimate = 1.0 + total[user] * (inverse / protocol.m)
        if protocol.collapse and not uniform:  # positions sorted within an entry
            new = np.ones(position.size, dtype=bool)
            new[1:] = (position[1:] != position[:-1]) | (owner[1:] != owner[:-1])
            k = np.bincount(owner[new], minlength=k.size)
        elif protocol.collapse:
            k = _distinct(owner, position, int(count.sum()), k.size)
    shape = (repetitions, users)
    return (1 + k).reshape(shape).astype(np.int16), estimate.reshape(shape)


def _sorted_uniforms(k: np.ndarray, rng) -> np.ndarray:
    """k[e] uniforms on [0, 1) in increasing order for each entry e, entries one after
    another: the order statistics of k iid uniforms, drawn as the normalised sums of
    k + 1 exponentials, U_(i) = S_i / S_{k+1} (Devroye, *Non-Uniform Random Variate
    Generation*, 1986, ch. V.2, Theorem 2.2), without sorting."""
    ends = np.cumsum(k + 1)  # one past each entry's k + 1 exponentials
    sums = np.cumsum(rng.standard_exponential(int(ends[-1]) if ends.size else 0))
    before = np.concatenate([[0.0], sums[ends[:-1] - 1]])  # the sum before each entry
    last = np.zeros(sums.size, dtype=bool)
    last[ends - 1] = True  # S_{k+1}, the normaliser
    entry = np.repeat(np.arange(k.size), k)
    return (sums[~last] - before[entry]) / (sums[ends - 1] - before)[entry]


def _distinct(owner, position, positions: int, entries: int) -> np.ndarray:
    """(entries,) int64: the distinct positions each entry (owner) drew, by sorting the
    keys owner * positions + position (uint32 when they fit: sorted faster)."""
    keys = owner.astype(np.int64) * max(positions, 1) + position
    if entries * max(positions, 1) < 2**32:
        keys = keys.astype(np.uint32)
    keys.sort(kind="stable")  # timsort: each owner's keys are a run
    first = np.ones(keys.size, dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    return np.bincount(keys[first] // max(positions, 1), minlength=entries)
