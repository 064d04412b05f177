"""The difference estimator of :mod:`.estimate` for many rows over one design at once:
several models' metrics or pairs' differences, each row y (the chosen users') with its
proxy g (every user's) and predicted variance. Row p's numbers are those of
:func:`.estimate.estimate_mean` with lambda = 1 about these users (the defaults) on
row p, in the same arithmetic: the sums within strata run over the chosen users in
their order, as ``numpy.bincount`` adds them, so that a study of many models and
pairs gets the numbers of one call a row at the cost of one call.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .design import Design
from .estimate import chosen_counts
from .verdict import EQUAL_WITHIN, Verdict

__all__ = [
    "Estimates",
    "difference_variances",
    "estimate_means",
    "exact_verdicts",
    "interval_verdicts",
    "paired_intervals",
    "stratum_covariances",
    "stratum_sums",
]


class Estimates(NamedTuple):
    """Each row's estimate, standard error, interval and Satterthwaite's degrees of
    freedom (as :class:`.estimate.Estimate`'s fields), arrays of one value a row."""

    value: np.ndarray
    standard_error: np.ndarray
    low: np.ndarray
    high: np.ndarray
    degrees_of_freedom: np.ndarray


def stratum_sums(stratum: np.ndarray, strata: int, w: np.ndarray) -> np.ndarray:
    """Each row's sum of w within each stratum, (P, H) from (P, n): one ``bincount`` for
    every row (row p's stratum h is bin p H + h), so each sum adds the row's users in
    their order.

    Examples
    --------
    >>> stratum_sums(np.array([0, 1, 0]), 3, np.array([[1.0, 2.0, 3.0], [0.5, 0.0, 0.5]]))
    array([[4., 2., 0.],
           [1., 0., 0.]])
    """
    rows = w.shape[0]
    keys = (np.arange(rows)[:, None] * strata + stratum[None, :]).ravel()
    return np.bincount(keys, w.ravel(), minlength=rows * strata).reshape(rows, strata)


def _centered(stratum: np.ndarray, counts: np.ndarray, x: np.ndarray) -> np.ndarray:
    """x less its row's mean within the user's stratum."""
    return x - (stratum_sums(stratum, counts.size, x) / np.maximum(counts, 1))[:, stratum]


def stratum_covariances(
    stratum: np.ndarray, counts: np.ndarray, x: np.ndarray, y: np.ndarray | None = None
) -> np.ndarray:
    """The sample covariance of x and y (x's variance when y is None) within each
    stratum, row by row (0 where fewer than 2): (P, H) from (P, n) rows over n users of
    strata ``stratum`` (n,) with ``counts`` (H,) users each.

    Examples
    --------
    >>> x = np.array([[1.0, 3.0, 5.0], [2.0, 2.0, 7.0]])
    >>> stratum_covariances(np.array([0, 0, 1]), np.array([2, 1]), x).tolist()
    [[2.0, 0.0], [0.0, 0.0]]
    """
    dx = _centered(stratum, counts, x)
    dy = dx if y is None else _centered(stratum, counts, y)
    return stratum_sums(stratum, counts.size, dx * dy) / np.maximum(counts - 1, 1)


def estimate_means(
    design: Design,
    values: ArrayLike,
    proxy: ArrayLike,
    *,
    confidence: float,
    predicted_variance: ArrayLike | None = None,
    bounds: tuple[float, float] = (-np.inf, np.inf),
) -> Estimates:
    """The difference estimator theta^ = (1/U) sum_u g_u + (1/U) sum_{u chosen} (y_u -
    g_u) / pi_u of each row, its variance sum_h c_h s_h^2 (s_h^2 floored at the chosen
    users' mean predicted variance) and the interval at Student's t with
    Satterthwaite's degrees of freedom (:mod:`.estimate`'s formulas, lambda = 1, about
    these U users), cut to ``bounds``.

    Parameters
    ----------
    design : Design
    values : array_like of float
        (P, n_chosen): y of the chosen users, in the order of the users.
    proxy : array_like of float
        (P, U): g of every user.
    confidence : float
    predicted_variance : array_like of float, optional
        (P, n_chosen): Var[y_u | phase 1] of the chosen users.
    bounds : (float, float)
        The values the mean can take: the interval is cut to them.

    Returns
    -------
    Estimates

    Examples
    --------
    Every user chosen: each row's mean, an interval of zero width.

    >>> d = Design(np.array([0, 0, 1]), np.ones(3), np.ones(3, bool), np.array([2, 1]))
    >>> e = estimate_means(d, [[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]], np.zeros((2, 3)),
    ...                    confidence=0.95)
    >>> e.value.round(12).tolist(), e.standard_error.tolist()
    ([0.666666666667, 0.0], [0.0, 0.0])
    """
    # row-major, so that each row's sums over users are numpy's pairwise sums of a row
    y = np.ascontiguousarray(np.atleast_2d(np.asarray(values, dtype=float)))
    g = np.ascontiguousarray(np.atleast_2d(np.asarray(proxy, dtype=float)))
    chosen = design.users
    if y.shape[1] != chosen.size or g.shape != (y.shape[0], design.n_users):
        raise ValueError(
            f"values must be (P, {chosen.size}) and proxy (P, {design.n_users}), "
            f"got {y.shape} and {g.shape}"
        )
    users = design.n_users
    stratum = design.stratum[chosen]
    pi = design.probability[chosen]
    sizes = design.stratum_sizes
    counts = chosen_counts(design)
    c = (sizes / users) ** 2 * (1 - counts / np.maximum(sizes, 1)) / np.maximum(counts, 1)
    residual = y - np.take(g, chosen, axis=1)
    value = g.mean(axis=1) + np.sum(residual / pi, axis=1) / users
    parts = c * stratum_covariances(stratum, counts, residual)
    degrees = np.maximum(counts - 1, 1).astype(float)
    if predicted_variance is not None:
        v = np.atleast_2d(np.asarray(predicted_variance, dtype=float))
        floor = stratum_sums(stratum, sizes.size, v) / np.maximum(counts, 1)
        parts = np.maximum(parts, c * floor)
    total = np.sum(parts, axis=1)
    error = np.sqrt(np.maximum(total, 0.0))
    # Satterthwaite's, as .promise.effective_degrees_of_freedom's, row by row
    spread = np.sum(parts**2 / degrees, axis=1, where=parts > 0, initial=0.0)
    positive = spread > 0
    freedom = np.full(total.shape, np.inf)
    freedom[positive] = total[positive] ** 2 / spread[positive]
    half = special.stdtrit(freedom, 0.5 + confidence / 2) * error
    low = np.maximum(value - half, bounds[0])
    high = np.minimum(value + half, bounds[1])
    return Estimates(value, error, low, high, freedom)


def difference_variances(
    design: Design,
    residual_a: ArrayLike,
    residual_b: ArrayLike,
    variance_a: ArrayLike,
    variance_b: ArrayLike,
) -> np.ndarray:
    """:func:`.estimate.difference_variance` of each row, at the chosen users: v_A + v_B -
    2 rho (v_A v_B)^(1/2), rho the correlation of the two models' residuals pooled
    within strata over the chosen users.

    Parameters
    ----------
    design : Design
    residual_a, residual_b : array_like of float
        (P, n_chosen): y - g of model A and of model B at the chosen users.
    variance_a, variance_b : array_like of float
        (P, n_chosen): the proxies' variances v_A, v_B at the chosen users.

    Returns
    -------
    numpy.ndarray
        (P, n_chosen).

    Examples
    --------
    >>> d = Design(np.zeros(3, int), np.ones(3), np.ones(3, bool), np.array([3]))
    >>> r, v = np.array([[0.0, 1, 2], [0.0, 1, 2]]), np.full((2, 3), 0.25)
    >>> difference_variances(d, r, np.array([[0.0, 1, 2], [0.0, 0, 0]]), v, v).tolist()
    [[0.0, 0.0, 0.0], [0.5, 0.5, 0.5]]
    """
    ra, rb = (np.atleast_2d(np.asarray(r, dtype=float)) for r in (residual_a, residual_b))
    va, vb = (np.atleast_2d(np.asarray(v, dtype=float)) for v in (variance_a, variance_b))
    stratum = design.stratum[design.users]
    counts = np.bincount(stratum, minlength=design.stratum_sizes.size)
    pooled = np.maximum(counts - 1, 0)
    da, db = _centered(stratum, counts, ra), _centered(stratum, counts, rb)
    # the three covariances of every row in one pass: rows ab, then aa, then bb
    products = np.concatenate([da * db, da * da, db * db])
    covariances = stratum_sums(stratum, counts.size, products) / np.maximum(counts - 1, 1)
    ab, aa, bb = np.split(np.sum(pooled * covariances, axis=1), 3)
    both = (aa > 0) & (bb > 0)
    rho = np.zeros(ab.shape)
    rho[both] = np.minimum(ab[both] / np.sqrt(aa[both] * bb[both]), 1.0)
    total = va + vb
    v = total - (2 * rho)[:, None] * np.sqrt(va) * np.sqrt(vb)  # no underflow
    return np.where(v > 1e-12 * total, v, 0.0)


def interval_verdicts(low: ArrayLike, high: ArrayLike) -> np.ndarray:
    """:func:`.verdict.interval_verdict` of each interval: the verdicts' values (str).

    Examples
    --------
    >>> interval_verdicts([0.01, -0.03, -0.01], [0.02, -0.01, 0.01]).tolist()
    ['A better', 'B better', 'undecided']
    """
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    return np.where(
        low > EQUAL_WITHIN,
        Verdict.FIRST.value,
        np.where(high < -EQUAL_WITHIN, Verdict.SECOND.value, Verdict.UNDECIDED.value),
    ).astype(object)


def exact_verdicts(difference: ArrayLike) -> np.ndarray:
    """:func:`.verdict.exact_verdict` of each exact difference: the verdicts' values.

    Examples
    --------
    >>> exact_verdicts([0.002, 1e-17, -0.5]).tolist()
    ['A better', 'undecided', 'B better']
    """
    d = np.asarray(difference, dtype=float)
    first = np.where(d > 0, Verdict.FIRST.value, Verdict.SECOND.value)
    return np.where(np.abs(d) <= EQUAL_WITHIN, Verdict.UNDECIDED.value, first).astype(object)


def paired_intervals(differences: ArrayLike, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`.full_ranking.paired_test`'s interval (Student's t, U - 1 degrees of
    freedom) of each row of per-user differences (P, U), about users like these.

    Examples
    --------
    >>> low, high = paired_intervals([[0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]], 0.95)
    >>> low.round(4).tolist(), high.round(4).tolist()
    ([-0.4187, 1.0], [1.4187, 1.0])
    """
    d = np.ascontiguousarray(np.atleast_2d(np.asarray(differences, dtype=float)))
    users = d.shape[1]
    mean = d.mean(axis=1)
    error = d.std(axis=1, ddof=1) / math.sqrt(users)
    half = float(special.stdtrit(users - 1, 0.5 + confidence / 2)) * error
    return mean - half, mean + half
