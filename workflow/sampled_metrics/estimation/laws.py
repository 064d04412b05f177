"""The law of the sampled rank, section 4.3 of Krichene & Rendle (KDD 2020).

The relevant item has true rank r among n items. m irrelevant items are drawn
uniformly from the n - 1 others; its rank among the m + 1 is r~ = 1 + the number
of drawn items ranked above it. Each draw is above it with probability
(r - 1) / (n - 1) (eq 15), so

* with replacement:    r~ - 1 ~ Binomial(m, (r - 1) / (n - 1))             (section 4.3)
* without replacement: r~ - 1 ~ Hypergeometric(population n - 1,
                                               successes r - 1, draws m)  (section 4.4)

This module is the only place where p(r~ | r) is computed. The pmfs are
evaluated in log space (binomial: log-binomial coefficients from
scipy.special.betaln; hypergeometric: the ratio recurrence of consecutive
terms), then each row is normalized. This agrees with scipy.stats.binom and
scipy.stats.hypergeom to ~1e-12 and is ~100x faster than
scipy.stats.hypergeom.pmf, which matters for Figure 6 (m up to n - 1).

The laws are records of one registry, :data:`SAMPLING_LAWS` (name -> :class:`SamplingLaw`):
a new law is one entry there, with the log-pmf of r~ - 1. Constants:
``WITH_REPLACEMENT = "binomial"``, ``WITHOUT_REPLACEMENT = "hypergeometric"`` and
``LAWS``, the tuple of the registered names: the values of the ``law`` arguments of
the package.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

__all__ = [
    "LAWS",
    "SAMPLING_LAWS",
    "SamplingLaw",
    "WITHOUT_REPLACEMENT",
    "WITH_REPLACEMENT",
    "NEGLIGIBLE",
    "check_law_arguments",
    "sampling_law",
    "sampled_rank_law",
    "sampled_rank_pmf",
    "significant_blocks",
    "significant_span",
]

WITH_REPLACEMENT = "binomial"
WITHOUT_REPLACEMENT = "hypergeometric"


def _log_binomial_coefficient(a, b):
    """log C(a, b) for real a >= b >= 0, accurate for large arguments."""
    return -np.log1p(a) - special.betaln(a - b + 1.0, b + 1.0)


def check_law_arguments(
    ranks: ArrayLike, n: ArrayLike, m: int, law: str
) -> tuple[np.ndarray, np.ndarray, int]:
    """Check the arguments of the sampled-rank law (section 4.3) and return them as
    arrays: true ranks r in 1..n (integers), n >= 2, m >= 1, and m <= n - 1 without
    replacement.

    Parameters
    ----------
    ranks : array_like
        True ranks r.
    n : int or array_like
        Number of ranked items (broadcast with ``ranks``).
    m : int
        Number of sampled items.
    law : {"binomial", "hypergeometric"}
        With or without replacement.

    Returns
    -------
    r, n : float arrays of the same shape; m : int

    Raises
    ------
    ValueError
        Naming what does not hold.

    Examples
    --------
    >>> check_law_arguments([1, 3], 5, 2, "binomial")[2]
    2
    >>> check_law_arguments([1], 5, 0, "binomial")
    Traceback (most recent call last):
    ValueError: m must be a positive integer, got 0
    """
    replacement = sampling_law(law).replacement
    r = np.atleast_1d(np.asarray(ranks, dtype=float))
    n = np.broadcast_to(np.asarray(n, dtype=float), r.shape)
    if np.any(r != np.round(r)):
        raise ValueError(
            "the sampled-rank law needs integer true ranks "
            "(the 'average' tie policy gives half-integers)"
        )
    if np.any(n < 2) or np.any(n != np.round(n)):
        raise ValueError("n must be an integer >= 2")
    if np.any(r < 1) or np.any(r > n):
        raise ValueError("true ranks must lie in 1..n")
    if int(m) != m or m < 1:
        raise ValueError(f"m must be a positive integer, got {m!r}")
    if not replacement and np.any(m > n - 1):
        raise ValueError(
            f"cannot draw m={m} items without replacement from n - 1 = {int(n.min()) - 1}"
        )
    return r, n, int(m)


# Entries of the law computed at a time by sampled_rank_pmf (1 MB of float64).
_BLOCK_ENTRIES = 1 << 17

# A probability of the law below this adds less than rounding to a sum of its products
# with bounded values: a row of the law sums to 1 over r~ (its largest entry is at least
# 1 / (m + 1)), and the likelihood of a sampled rank over the relative rank theta
# integrates to 1 / (m + 1) (so does its largest value). The Gram matrix of the
# bias-variance corrections (corrections.systems), EM's products (estimators.learned) and
# the expectations of Figure 6 skip them; the ill-conditioned QR of ls and cls does not
# (zeroing them moves CLS's AUC correction by up to 2e-2).
NEGLIGIBLE = 1e-20


def significant_span(matrix: np.ndarray) -> tuple:
    """(first, last): for each row, the columns first..last - 1 hold every entry above
    :data:`NEGLIGIBLE` (a row with none: first = last = the number of columns).

    A row of a law (or of a likelihood) is unimodal, so its significant entries are one
    window; the entries outside it are negligible, those inside are all kept.

    Parameters
    ----------
    matrix : numpy.ndarray
        Two dimensions, non-negative.

    Returns
    -------
    first, last : numpy.ndarray of int
        One value per row.

    Examples
    --------
    >>> first, last = significant_span(np.array([[0.0, 0.5, 1e-30, 0.5], [1e-30, 0, 0, 0]]))
    >>> first.tolist(), last.tolist()
    ([1, 4], [4, 4])
    """
    big = np.asarray(matrix) > NEGLIGIBLE
    first = np.where(big.any(axis=1), big.argmax(axis=1), big.shape[1])
    last = np.where(big.any(axis=1), big.shape[1] - big[:, ::-1].argmax(axis=1), big.shape[1])
    return first, last


def significant_blocks(matrix: np.ndarray, rows_per_block: int) -> list:
    """[(rows, low, high)]: the rows in consecutive blocks of ``rows_per_block``, each
    with the columns low..high - 1 that hold every entry of its rows above
    :data:`NEGLIGIBLE` (:func:`significant_span` of each row, joined; low >= high for a
    block without any). Products over these blocks skip a law's negligible entries.

    Parameters
    ----------
    matrix : numpy.ndarray
        Two dimensions, non-negative.
    rows_per_block : int

    Returns
    -------
    list of (slice, int, int)

    Examples
    --------
    >>> law = np.array([[0.5, 0.5, 0, 0], [0, 0.5, 0.5, 0], [0, 0, 0, 1.0]])
    >>> [(rows.start, low, high) for rows, low, high in significant_blocks(law, 2)]
    [(0, 0, 3), (2, 3, 4)]
    """
    first, last = significant_span(matrix)
    blocks = []
    for start in range(0, first.size, rows_per_block):
        rows = slice(start, min(start + rows_per_block, first.size))
        blocks.append((rows, int(first[rows].min()), int(last[rows].max())))
    return blocks


def sampled_rank_pmf(
    ranks: ArrayLike, n: ArrayLike, m: int, law: str = WITHOUT_REPLACEMENT, *, tails: bool = True
) -> np.ndarray:
    """The law p(r~ | r) of the sampled rank for each true rank (section 4.3, eq 15).

    Parameters
    ----------
    ranks : array_like of int
        True ranks r, integers in 1..n.
    n : int or array_like of int
        Number of ranked items: a scalar or one number per rank (a per-user
        ranked-set size), at least 2.
    m : int
        Number of sampled irrelevant items, at least 1 (at most n - 1 without
        replacement).
    law : {"hypergeometric", "binomial"}, default "hypergeometric"
        "binomial" (sampling with replacement) or "hypergeometric" (without
        replacement, the default).
    tails : bool, default True
        Compute every entry. False: a row's entries far from its mean, all below
        :data:`NEGLIGIBLE`, are 0 and not computed (``_law_windows``): at m = 3705 a
        law 3 to 4 times faster. For expectations P @ V of bounded V (an error below
        (m + 1) NEGLIGIBLE max|V|), not for the least-squares corrections, whose
        ill-conditioned QR (ls, cls) the tails move.

    Returns
    -------
    numpy.ndarray
        A matrix of shape (len(ranks), m + 1) whose row i, column j is
        P(r~ = j + 1 | r = ranks[i], n). Each row sums to 1.

    Raises
    ------
    ValueError
        If the law is unknown, a rank is not an integer in 1..n (the "average"
        tie policy gives half-integers), n is not an integer >= 2, m is not a
        positive integer, or m > n - 1 without replacement.

    Examples
    --------
    With n = 3 and m = 1, the item at rank 2 is beaten by the one drawn item half
    the time:

    >>> sampled_rank_pmf([1, 2, 3], n=3, m=1).tolist()
    [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]]
    >>> P = sampled_rank_pmf([1, 50, 100], n=100, m=10, law="binomial")
    >>> P.shape, np.round(P.sum(axis=1), 12).tolist()
    ((3, 11), [1.0, 1.0, 1.0])
    """
    r, n, m = check_law_arguments(ranks, n, m, law)
    above, others = r - 1.0, n - 1.0
    if tails:
        first, last = np.zeros(r.size, dtype=np.int64), np.full(r.size, m + 1)
    else:
        first, last = _law_windows(above / others, m)
    pmf = np.empty((r.size, m + 1)) if tails else np.zeros((r.size, m + 1))
    # Rows in blocks of about _BLOCK_ENTRIES entries (the temporaries of a block stay in
    # cache); without tails, rows of close p together (their windows overlap).
    order = np.arange(r.size) if tails else np.argsort(above / others, kind="stable")
    step = max(1, _BLOCK_ENTRIES // int(np.max(last - first, initial=1)))
    for start in range(0, r.size, step):
        chosen = order[start : start + step]
        rows = slice(start, start + step) if tails else chosen
        low, block, total, narrow = _law_block(
            above[rows], others[rows], m, law, first[rows], last[rows]
        )
        if tails:  # every column: written in place
            np.divide(block, total, out=pmf[rows])
            continue
        pmf[rows, low : low + block.shape[1]] = block / total
        if narrow.any():  # a window that cut a significant entry: that row over every r~
            wide = chosen[narrow]
            everywhere = np.zeros(wide.size, dtype=np.int64), np.full(wide.size, m + 1)
            _, block, total, _ = _law_block(above[wide], others[wide], m, law, *everywhere)
            pmf[wide] = block / total
    return pmf


# Below this m, a law without tails is computed whole all the same: its rows' windows
# would save less than their bookkeeping costs (per-user laws of m = 100: 2x slower).
_WINDOWS_FROM_M = 500


def _law_windows(p: np.ndarray, m: int) -> tuple:
    """(first, last): each row's law is computed for r~ - 1 = first..last - 1 only, its
    mean m p +- (12 binomial standard deviations + 20), within 0..m; beyond it the law
    is below NEGLIGIBLE (checked by _law_block). A window over half of the row or more,
    or any below m = _WINDOWS_FROM_M, takes the whole row: at large m most rows skip
    most of their m + 1 entries."""
    spread = 12.0 * np.sqrt(m * p * (1.0 - p)) + 20.0
    first = np.clip(np.floor(m * p - spread), 0, m).astype(np.int64)
    last = np.clip(np.ceil(m * p + spread) + 1, 1, m + 1).astype(np.int64)
    whole = (2 * (last - first) >= m + 1) | (m < _WINDOWS_FROM_M)
    return np.where(whole, 0, first), np.where(whole, m + 1, last)


def _law_block(above, others, m: int, law: str, first, last) -> tuple:
    """(low, block, total, narrow): the law of these rows on the columns low..low + width
    - 1 that their windows first..last - 1 cover together (0 outside a row's own window),
    each row relative to its largest entry, with its total (a column: the law is block /
    total), and whether an edge of a row's window is above NEGLIGIBLE of its largest (the
    law is log-concave in r~: beyond its edges it only falls).

    A row's entries depend on that row alone, to the last bit: its own window, the
    hypergeometric ratios summed from the window's start, and its total summed in order
    (zeros outside change no partial sum), pairwise when the window is the whole row."""
    low, high = int(first.min()), int(last.max())
    k = np.arange(low, high, dtype=float)[None, :]
    whole = (first == 0) & (last == m + 1)
    block = SAMPLING_LAWS[law].log_pmf(above[:, None], others[:, None], m, k, first[:, None])
    if not whole.all():
        block[(k < first[:, None]) | (k >= last[:, None])] = -np.inf
    block -= block.max(axis=1, keepdims=True)
    np.exp(block, out=block)
    if whole.all():
        return low, block, block.sum(axis=1, keepdims=True), np.zeros(whole.size, dtype=bool)
    total = np.empty((block.shape[0], 1))
    total[whole, 0] = block[whole].sum(axis=1)
    total[~whole, 0] = np.cumsum(block[~whole], axis=1)[:, -1]
    rows = np.arange(block.shape[0])
    lower = np.where(first > 0, block[rows, np.maximum(first - low, 0)], 0.0)
    upper = np.where(last <= m, block[rows, np.minimum(last - 1 - low, high - low - 1)], 0.0)
    return low, block, total, np.maximum(lower, upper) > NEGLIGIBLE


def _binomial_log_pmf(above, others, m: int, k, start) -> np.ndarray:  # noqa: ARG001
    """log P(k of m draws are above) at the columns ``k`` (a row), Binomial(m, p),
    p = above / others a column.

    log C(m, k) + m log(1 - p) + k log(p / (1 - p)): one multiply-add per entry (each
    entry alone, ``start`` unused); the rows with p = 0 or 1 are point masses.
    """
    p = (above / others)[:, 0]
    inner = (p > 0) & (p < 1)
    log_pmf = np.full((p.size, k.shape[1]), -np.inf)
    log_pmf[p == 0] = np.where(k[0] == 0, 0.0, -np.inf)
    log_pmf[p == 1] = np.where(k[0] == m, 0.0, -np.inf)
    q = p[inner][:, None]
    log_pmf[inner] = (
        _log_binomial_coefficient(float(m), k) + m * np.log1p(-q) + k * (np.log(q) - np.log1p(-q))
    )
    return log_pmf


def _hypergeometric_log_pmf(successes, population, m: int, k, start) -> np.ndarray:
    """log P(k of m draws are above) at the columns ``k`` (a row of consecutive k),
    Hypergeometric(population, successes, m), up to a constant per row (rows are
    normalized later).

    Summed from the bottom of the support, or from ``start`` (a column per row) when
    higher, with the ratio pmf(k+1) / pmf(k) = (K - k)(m - k) / ((k + 1)(N - K - m +
    k + 1)), which keeps every term small; log-binomial coefficients of large arguments
    would lose ~1e-12.
    """
    K, N = successes, population
    low = np.maximum(0.0, m - (N - K))
    high = np.minimum(float(m), K)
    j = k[:, :-1]
    steps = (j >= np.maximum(low, start)) & (j < high)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.log(K - j) + np.log(m - j) - np.log(j + 1) - np.log(N - K - m + j + 1)
    log_ratio = np.where(steps, log_ratio, 0.0)
    log_pmf = np.concatenate([np.zeros((K.shape[0], 1)), np.cumsum(log_ratio, axis=1)], axis=1)
    return np.where((k >= low) & (k <= high), log_pmf, -np.inf)


def sampled_rank_law(
    n: int, m: int, law: str = WITHOUT_REPLACEMENT, *, tails: bool = True
) -> np.ndarray:
    """The full law of the sampled rank for every true rank r = 1..n (section 4.3).

    Parameters
    ----------
    n : int
        Number of ranked items, at least 2.
    m : int
        Number of sampled irrelevant items (at most n - 1 without replacement).
    law : {"hypergeometric", "binomial"}, default "hypergeometric"
        Sampling without (default) or with replacement.
    tails : bool, default True
        As :func:`sampled_rank_pmf`.

    Returns
    -------
    numpy.ndarray
        A matrix P of shape (n, m + 1): P[r - 1, j - 1] = p(r~ = j | r).

    Raises
    ------
    ValueError
        As :func:`sampled_rank_pmf`.

    Examples
    --------
    With m = n - 1 and no replacement every other item is drawn, so the sampled
    rank equals the true rank:

    >>> sampled_rank_law(3, 2).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]

    With replacement, each draw is above rank r with probability (r - 1)/(n - 1) (eq 15):

    >>> np.round(sampled_rank_law(4, 1, law="binomial"), 4).tolist()
    [[1.0, 0.0], [0.6667, 0.3333], [0.3333, 0.6667], [0.0, 1.0]]
    """
    return sampled_rank_pmf(np.arange(1, int(n) + 1), n, m, law, tails=tails)


@dataclass(frozen=True)
class SamplingLaw:
    """One law of the sampled rank: how r~ - 1 is distributed given r, n and m.

    Parameters
    ----------
    name : str
        The value of the package's ``law`` arguments.
    replacement : bool
        Whether the m items are drawn with replacement (then m may exceed n - 1).
    log_pmf : callable
        ``log_pmf(above, others, m, k, start)``: for columns ``above`` = r - 1 and
        ``others`` = n - 1, the rows log P(r~ - 1 = k) at the consecutive k of the row
        ``k``, up to a constant per row (any constant: rows are normalized; ``start``, a
        column, the first k each row keeps).

    Examples
    --------
    >>> SAMPLING_LAWS["binomial"].replacement, sampling_law("hypergeometric").replacement
    (True, False)
    """

    name: str
    replacement: bool
    log_pmf: Callable[..., np.ndarray]


# The registry of laws: one entry each.
SAMPLING_LAWS = {
    law.name: law
    for law in (
        SamplingLaw(WITH_REPLACEMENT, True, _binomial_log_pmf),
        SamplingLaw(WITHOUT_REPLACEMENT, False, _hypergeometric_log_pmf),
    )
}
LAWS = tuple(SAMPLING_LAWS)


def sampling_law(name: str) -> SamplingLaw:
    """The registered law of that name.

    Parameters
    ----------
    name : str
        A key of :data:`SAMPLING_LAWS`.

    Returns
    -------
    SamplingLaw

    Raises
    ------
    ValueError
        For an unknown name, naming it and the known ones.

    Examples
    --------
    >>> sampling_law("binomial").replacement
    True
    >>> sampling_law("poisson")
    Traceback (most recent call last):
    ValueError: unknown law 'poisson'; choose one of ('binomial', 'hypergeometric')
    """
    if name not in SAMPLING_LAWS:
        raise ValueError(f"unknown law {name!r}; choose one of {LAWS}")
    return SAMPLING_LAWS[name]
