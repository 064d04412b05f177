"""The uniform protocols simulated by cell counts: the law of :func:`simulate.simulate`,
without drawing every item.

A user's pool (the n items they may draw) splits into cells by the item's beaten code,
the set of recommenders that rank it above the held-out item (bit k: recommender k,
as ``simulate._beaten_codes``). A recommender's sampled rank is 1 + the drawn items
whose code has its bit, so a uniform draw matters only through the beaten items it
takes (code != 0), and which cells they lie in. With b = n - c_0 beaten items (by at
least one recommender; the held-out item, in NCF's pool, is beaten by none):

- m distinct items drawn uniformly (NCF, Elliot): K, the beaten items drawn, follows
  Hypergeometric(b, n - b, m), and given K they are a uniform K-subset of the b
  (the multivariate hypergeometric law of the cell counts, Johnson, Kotz &
  Balakrishnan, *Discrete Multivariate Distributions*, 1997, ch. 39, by its
  sequential conditionals);
- m independent uniform draws (RecBole uniN, DaisyRec): K ~ Binomial(m, b / n), and
  given K the beaten draws are K independent uniform draws among the b (the
  multinomial law of the cell counts, ibid., ch. 35, conditioned on its margin).

So a user's K beaten draws are drawn as positions among their b beaten items,
ordered by code (a K-subset without replacement: independent draws, the repeats
redrawn until K are distinct, a procedure that commutes with relabelling the items
and so gives every K-subset the same chance; or its complement, when K > b / 2), and
a position's code is read in the chunk's beaten items sorted by (user, code). The cost
is the beaten items drawn, not m: about m b / n draws per user and repetition. When
repeats count (DaisyRec) only the cell counts matter: code 0 and the cells expecting
at least ``_BINOMIAL_FROM`` draws get theirs from Multinomial(m, c / n) at once
(numpy's, by conditional binomials), the other cells pooled into one category whose
draws, given their number, are independent uniform draws among its items, placed as
positions as above (a margin of a multinomial and the law given it, ibid.).

RecBole collapses repeats: its sampled rank counts the distinct items drawn, here the
distinct positions; the Hansen-Hurwitz estimate counts every draw, 1 + n hits / m
(``simulate``'s for weights of 1; for equal weights w != 1 ``simulate`` multiplies
the term by w, its pool mass n w, where the estimate of a uniform draw is n).

The draws of a user depend only on (seed, protocol, the user's chunk of
``SCORE_CHUNK`` users): each chunk has its own generator, used in an order its own
users decide, so the result does not depend on the blocks. The generators are seeded
as ``simulate``'s but not consumed alike: the law is the same, the numbers are not.
Popularity-weighted protocols (weights not all equal) and more than
:data:`MAX_RECOMMENDERS` recommenders are refused: :func:`simulator` picks ``simulate``
for them.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

from ..passes.block_pass import SCORE_CHUNK
from ..passes.entries import row_counts, true_entries
from .draws import _check_drawable
from .registry import Protocol
from .simulate import ProtocolRanks, simulate, weighted_ranks

__all__ = ["MAX_RECOMMENDERS", "cell_counts", "is_uniform", "simulate_cells", "simulator"]

# One uint8 code per item: 2^8 cells per user.
MAX_RECOMMENDERS = 8
# Counted repeats: a cell expecting this many draws per user (over a chunk) takes a
# binomial of its own, the others share theirs (a binomial costs a few draws).
_BINOMIAL_FROM = 3.0


def is_uniform(weights: ArrayLike) -> bool:
    """Whether draws with these weights are uniform over the pool (all equal, > 0).

    Parameters
    ----------
    weights : array_like

    Returns
    -------
    bool

    Examples
    --------
    >>> is_uniform(np.ones(4)), is_uniform([1.0, 2.0])
    (True, False)
    """
    weights = np.asarray(weights, dtype=float)
    return bool(weights.size and weights[0] > 0 and np.all(weights == weights[0]))


def simulator(
    protocol: Protocol, weights: ArrayLike, recommenders: int
) -> Callable[..., ProtocolRanks]:
    """The function that simulates ``protocol``: :func:`simulate_cells` for uniform
    draws and at most :data:`MAX_RECOMMENDERS` recommenders, else ``simulate``.

    Parameters
    ----------
    protocol : Protocol
    weights : array_like
        count ** protocol.alpha.
    recommenders : int

    Returns
    -------
    callable
        With ``simulate``'s signature.

    Examples
    --------
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS as P
    >>> simulator(P["daisyrec"], np.ones(5), 6).__name__
    'simulate_cells'
    >>> simulator(P["bert4rec"], np.arange(1.0, 6.0), 6).__name__
    'simulate'
    """
    if is_uniform(weights) and recommenders <= MAX_RECOMMENDERS:
        return simulate_cells
    return simulate


def cell_counts(beaten: list, excluded: np.ndarray) -> np.ndarray:
    """(rows, 2^R) int64: how many of each row's pool items (not ``excluded``) have
    each beaten code, bit k set when ``beaten[k]`` holds the item.

    Parameters
    ----------
    beaten : list of R <= 8 bool numpy.ndarray (rows, n_items)
    excluded : bool numpy.ndarray (rows, n_items)

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> beaten = [np.array([[0, 1, 1, 1, 0]], bool), np.array([[0, 0, 1, 1, 1]], bool)]
    >>> cell_counts(beaten, np.array([[0, 0, 0, 0, 1]], bool)).tolist()
    [[1, 1, 0, 2]]
    """
    return _code_counts(beaten, excluded)[0]


def _code_counts(beaten: list, excluded: np.ndarray) -> tuple:
    """(rows, 2^R) int64 counts of each code over the pool and over the excluded items."""
    if not 0 < len(beaten) <= MAX_RECOMMENDERS:
        raise ValueError(f"{len(beaten)} recommenders: cells take 1 to {MAX_RECOMMENDERS}")
    width = 1 << len(beaten)
    rows = excluded.shape[0]
    pool = np.empty((rows, width), dtype=np.int64)
    dropped = np.empty((rows, width), dtype=np.int64)
    for a in range(0, rows, SCORE_CHUNK):  # a chunk's codes stay in cache
        b = min(a + SCORE_CHUNK, rows)
        code = beaten[0][a:b].astype(np.uint8)
        for bit, mask in enumerate(beaten[1:], start=1):
            code |= mask[a:b].view(np.uint8) << np.uint8(bit)
        if width <= 128:  # bit 7 marks the excluded items: counted apart
            code |= excluded[a:b].view(np.uint8) << np.uint8(7)
            for row in range(b - a):
                both = np.bincount(code[row], minlength=256)
                pool[a + row], dropped[a + row] = both[:width], both[128 : 128 + width]
            continue
        for row in range(b - a):
            pool[a + row] = np.bincount(code[row], minlength=width)
        r, c = true_entries(excluded[a:b])
        drop = np.bincount(r * width + code[r, c], minlength=(b - a) * width)
        dropped[a:b] = drop.reshape(b - a, width)
        pool[a:b] -= dropped[a:b]
    return pool, dropped


def simulate_cells(
    protocol: Protocol,
    beaten: list,
    excluded: np.ndarray,
    weights: ArrayLike,
    test_items: ArrayLike,
    *,
    start: int,
    repetitions: int,
    seed: int,
    counts: np.ndarray | None = None,
) -> ProtocolRanks:
    """``simulate``'s sampled ranks (same arguments, same law) for a uniform protocol,
    drawn as beaten positions (see the module docstring).

    Parameters
    ----------
    protocol : Protocol
    beaten : list of bool numpy.ndarray (rows, n_items)
        Per recommender (at most :data:`MAX_RECOMMENDERS`), ``beaten_items``.
    excluded : bool numpy.ndarray (rows, n_items)
        The items the users may not draw.
    weights : numpy.ndarray (n_items,)
        count ** protocol.alpha: all equal (uniform draws).
    test_items : array_like of int (rows,)
    start : int
        The first user (a multiple of ``SCORE_CHUNK``).
    repetitions, seed : int
    counts : numpy.ndarray, optional
        :func:`cell_counts` of (beaten, excluded), when already counted (protocols
        with the same pool share them); checked against the pool sizes.

    Returns
    -------
    ProtocolRanks

    Raises
    ------
    ValueError
        For weights not all equal or too many recommenders (use ``simulate``), a start
        off the chunks, a user with too few items to draw, or counts of other pools.

    Examples
    --------
    With m = n without replacement every item is drawn: the sampled rank is the rank.

    >>> p = Protocol("all", 4, 0.0, False, False, False, "")
    >>> beaten = [np.array([[True, False, True, False, False]])]
    >>> excluded = np.array([[False, False, False, False, True]])  # item 4 held out
    >>> r = simulate_cells(p, beaten, excluded, np.ones(5), [4], start=0, repetitions=2,
    ...                    seed=0)
    >>> r.sampled[:, 0, 0].tolist(), r.weighted_rank.tolist()
    ([3, 3], [[3.0]])
    """
    weights = np.asarray(weights, dtype=float)
    if not is_uniform(weights):
        raise ValueError(
            f"protocol {protocol.name}: weights not all equal (popularity draws): cells "
            "hold uniform draws only, use simulate()"
        )
    if len(beaten) > MAX_RECOMMENDERS:
        raise ValueError(
            f"{len(beaten)} recommenders: cells hold at most {MAX_RECOMMENDERS} (one uint8 "
            "code), use simulate()"
        )
    if start % SCORE_CHUNK:
        raise ValueError(f"users must start at a multiple of {SCORE_CHUNK}, not {start}")
    n_rows, n_recs = excluded.shape[0], len(beaten)
    if counts is not None:
        size = excluded.shape[1] - row_counts(excluded)  # the pool
        if counts.shape != (n_rows, 1 << n_recs) or np.any(counts.sum(axis=1) != size):
            raise ValueError("counts are not cell_counts(beaten, excluded): other pools")
    elif n_recs:
        counts, _ = _code_counts(beaten, excluded)
        size = counts.sum(axis=1)
    else:
        size = excluded.shape[1] - row_counts(excluded)
        counts = size[:, None]
    _check_drawable(protocol, weights, excluded)
    _, weighted_rank = weighted_ranks(beaten, excluded, weights, test_items)
    sampled = np.ones((repetitions, n_recs, n_rows), dtype=np.int16)
    hansen_hurwitz = np.ones(
        (repetitions if protocol.replacement else 0, n_recs, n_rows), dtype=float
    )
    if n_recs == 0 or repetitions == 0:
        return ProtocolRanks(start, sampled, hansen_hurwitz, weighted_rank)
    # bit k of cell j: recommender k beats the cell's items
    bits = _bits(n_recs).astype(float)
    stream = zlib.crc32(protocol.name.encode())
    for lo in range(0, n_rows, SCORE_CHUNK):
        hi = min(lo + SCORE_CHUNK, n_rows)
        rng = np.random.default_rng([seed, stream, start + lo])
        taken, kept = _chunk_cells(protocol, counts[lo:hi], size[lo:hi], repetitions, rng)
        hits = _by_recommender(taken, bits, repetitions)
        ranked = hits if kept is taken else _by_recommender(kept, bits, repetitions)
        sampled[:, :, lo:hi] += ranked.astype(np.int16)
        if protocol.replacement:
            hansen_hurwitz[:, :, lo:hi] = 1.0 + size[lo:hi].astype(float) * (hits / protocol.m)
    return ProtocolRanks(start, sampled, hansen_hurwitz, weighted_rank)


def _bits(n_recs: int) -> np.ndarray:
    """(2^R, R) int64: bit k of cell j, recommender k beats the cell's items."""
    return (np.arange(1 << n_recs)[:, None] >> np.arange(n_recs)) & 1


def _by_recommender(per_cell, bits, repetitions) -> np.ndarray:
    """(entries, cells) counts -> (repetitions, recommenders, users) int64 sums over
    the cells each recommender beats (entries in the order (repetition, user))."""
    sums = np.rint(per_cell @ bits).astype(np.int64)
    return sums.reshape(repetitions, -1, bits.shape[1]).transpose(0, 2, 1)


def _chunk_cells(protocol, counts, size, repetitions, rng) -> tuple:
    """A chunk's beaten draws per cell, float (repetitions x users, cells), entries in
    the order (repetition, user): all of them (taken) and the ranked ones (kept: the
    distinct ones under ``collapse``; ``taken`` itself otherwise)."""
    users, width = counts.shape
    user = np.tile(np.arange(users), repetitions)
    beaten = counts.copy()
    beaten[:, 0] = 0  # code 0: beaten by none, never counted
    large = None
    if protocol.replacement and not protocol.collapse:
        # Multinomial(m, c / n) over code 0, the cells expecting many draws and the
        # rest pooled: numpy's conditional binomials, largest first (numpy stops when
        # none are left); the rest's draws are uniform over its items, placed below
        expected = protocol.m * (counts / size[:, None]).mean(axis=0)
        big = np.flatnonzero((expected >= _BINOMIAL_FROM) | (np.arange(width) == 0))
        big = big[np.argsort(-expected[big], kind="stable")]
        rest = size - counts[:, big].sum(axis=1)
        drawn = rng.multinomial(
            protocol.m, (np.column_stack([counts[:, big], rest]) / size[:, None])[user]
        )
        large = np.zeros((user.size, width))
        large[:, big] = drawn[:, :-1]
        large[:, 0] = 0.0
        beaten[:, big] = 0
        b = beaten.sum(axis=1)
        b_e = b[user]
        # an empty rest draws nothing (bar float rounding in numpy's conditionals)
        k = np.where(b_e > 0, drawn[:, -1], 0)
    else:
        b = beaten.sum(axis=1)
        b_e, n_e = b[user], size[user]
        # K: the beaten items drawn (all m when every item is beaten)
        k = np.where((b_e == n_e) & (b_e > 0), protocol.m, 0)
        draw = np.flatnonzero((b_e > 0) & (b_e < n_e))
        if protocol.replacement:
            k[draw] = rng.binomial(protocol.m, b_e[draw] / n_e[draw])
        else:
            k[draw] = rng.hypergeometric(b_e[draw], n_e[draw] - b_e[draw], protocol.m)
    # without replacement, the smaller of the K-subset and its complement
    flip = np.zeros(k.size, dtype=bool) if protocol.replacement else 2 * k > b_e
    owner = np.repeat(np.arange(k.size), np.where(flip, b_e - k, k))
    # a draw is a key owner * base + position; a key's cell: the chunk's beaten items,
    # ordered by (user, code), as codes
    base = int(b.max()) + 1
    keys = owner * base + rng.integers(0, b_e[owner])
    if k.size * base < 2**32:
        keys = keys.astype(np.uint32)  # sorts twice as fast
    if not protocol.replacement:
        keys = _distinct_keys(keys, base, b_e, rng)
    codes = np.repeat(np.tile(np.arange(width, dtype=np.uint8), users), beaten.ravel())
    offset = np.concatenate([[0], np.cumsum(b)[:-1]])
    taken = _per_cell(keys, base, codes, offset[user], width, k.size)
    if large is not None:
        taken += large
    if flip.any():
        taken[flip] = beaten[user[flip]] - taken[flip]
    if not protocol.collapse:
        return taken, taken
    keys.sort(kind="stable")  # timsort: each owner's keys are a run
    first = np.ones(keys.size, dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    return taken, _per_cell(keys[first], base, codes, offset[user], width, k.size)


def _per_cell(keys, base, codes, offset, width: int, entries: int) -> np.ndarray:
    """(entries, cells) float: the draws (keys owner * base + position) per cell;
    ``codes[offset[owner] + position]`` is a draw's cell."""
    owner, position = np.divmod(keys.astype(np.intp), base)
    cell = codes[offset[owner] + position]
    flat = np.bincount(owner * width + cell, minlength=entries * width)
    return flat.reshape(entries, width).astype(float)


def _distinct_keys(keys, base: int, high, rng) -> np.ndarray:
    """The keys owner * base + position, the positions made distinct within an owner:
    a repeat redrawn, uniform below ``high[owner]``, until none is left. The procedure
    commutes with relabelling the positions and keeps each owner's number of them, so
    it draws each subset of that size with the same chance (whichever copy of a repeat
    is redrawn); it ends when an owner has fewer than ``high`` (here at most half).
    Returned sorted."""
    keys = np.sort(keys, kind="stable")  # timsort: each owner's keys are a run
    while True:
        repeat = np.flatnonzero(keys[1:] == keys[:-1]) + 1
        if not repeat.size:
            return keys
        owner = keys[repeat].astype(np.intp) // base
        redrawn = np.sort((owner * base + rng.integers(0, high[owner])).astype(keys.dtype))
        # two sorted runs: timsort merges them in one linear pass
        keys = np.sort(np.concatenate([np.delete(keys, repeat), redrawn]), kind="stable")
