"""Corrected sampled metrics, section 5 of Krichene & Rendle (KDD 2020).

A correction is a vector M^ over the sampled rank r~ = 1..m+1; the corrected
metric of an evaluation instance is M^[r~ - 1] (``apply_correction``). Every
correction here estimates the exact metric M(r) over true ranks r = 1..n.

The least-squares family (eqs 21-26) uses, with the law P[r, r~] = p(r~ | r)
and a prior p(r) over true ranks (uniform by default):

    A[r, r~] = sqrt(p(r)) p(r~ | r),   b[r] = sqrt(p(r)) M(r),
    c[r~]    = sum_r p(r) p(r~ | r).

(Eq 23 as printed abbreviates A; this is the form obtained from eq 21.)

Every solver works on the (m+1)-dimensional form of these systems
(``reduced_system``): one QR factorization A = Q R, shared by all metrics of a
law, turns ||A x - b||^2 into ||R x - Q^T b||^2 + const, so a solve no longer
touches the n rows of the law.

Method names used throughout the project: ``sampled`` (no correction),
``rank_estimate``, ``ls``, ``cls``, and ``bv_<gamma>`` such as ``bv_0.1``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np
from scipy import linalg, optimize
from threadpoolctl import threadpool_limits

from .expected import metric_on_sample
from .laws import WITH_REPLACEMENT, WITHOUT_REPLACEMENT, check_law_arguments, sampled_rank_law
from .metrics import MetricFn, metric_by_name, metric_vector

__all__ = [
    "apply_correction",
    "average_squared_bias",
    "bias_variance_correction",
    "CLS_CONSTRAINTS",
    "ReducedSystem",
    "cached_law",
    "clear_law_cache",
    "constrained_least_squares_correction",
    "corrected_metric",
    "correction_vectors",
    "correction_vectors_by_n",
    "least_squares_correction",
    "least_squares_design",
    "normal_equations",
    "parse_method",
    "posterior_mean_correction",
    "rank_estimate_correction",
    "reduced_system",
    "uniform_prior",
]

# The constraints of CLS: "monotone" is the order constraint of section 5.2
# alone; "monotone_in_range" adds that M^ stays within the metric's own range
# min_r M(r) <= M^ <= max_r M(r) (a metric is never negative, nor above 1).
CLS_CONSTRAINTS = ("monotone_in_range", "monotone")

# --------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------


def uniform_prior(n: int) -> np.ndarray:
    """p(r) = 1/n for r = 1..n, the prior of the paper's experiments (section 5.2).

    Parameters
    ----------
    n : int
        Number of ranked items.

    Returns
    -------
    numpy.ndarray
        Vector of length n, every entry 1/n.

    Examples
    --------
    >>> uniform_prior(4).tolist()
    [0.25, 0.25, 0.25, 0.25]
    """
    return np.full(int(n), 1.0 / n)


def _prior(prior, n: int) -> np.ndarray:
    if prior is None:
        return uniform_prior(n)
    p = np.asarray(prior, dtype=float)
    if p.shape != (n,) or np.any(~np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
        raise ValueError(f"prior must be {n} finite non-negative numbers with a positive sum")
    return p / p.sum()


# Laws of at most this many entries (32 MB) are cached, 8 of them: the cache stays
# under 256 MB while Figure 6 builds laws of n x n entries at its largest m.
_CACHED_LAW_ENTRIES = 2**22


def cached_law(n: int, m: int, law: str) -> np.ndarray:
    """``sampled_rank_law`` cached by (n, m, law), read-only: metrics and methods share one law.

    Parameters
    ----------
    n : int
        Number of ranked items.
    m : int
        Number of sampled irrelevant items.
    law : {"hypergeometric", "binomial"}
        Sampling without or with replacement.

    Returns
    -------
    numpy.ndarray
        The (n, m + 1) matrix of :func:`.laws.sampled_rank_law`, not writeable;
        the same object for the same arguments while it is in the cache (an LRU
        cache of 8 laws of at most ``_CACHED_LAW_ENTRIES`` entries; a larger law
        is built anew each time).

    Raises
    ------
    ValueError
        As :func:`.laws.sampled_rank_pmf`.

    Examples
    --------
    >>> P = cached_law(3, 2, "hypergeometric")
    >>> P.flags.writeable, cached_law(3, 2, "hypergeometric") is P
    (False, True)
    """
    if n * (m + 1) <= _CACHED_LAW_ENTRIES:
        return _read_only_law(n, m, law)
    return _read_only_law.__wrapped__(n, m, law)


@lru_cache(maxsize=8)
def _read_only_law(n: int, m: int, law: str) -> np.ndarray:
    P = sampled_rank_law(n, m, law)
    P.setflags(write=False)
    return P


def clear_law_cache() -> None:
    """Empty the cache of :func:`cached_law` (for timing it cold).

    Parameters
    ----------
    None

    Returns
    -------
    None

    Examples
    --------
    >>> P = cached_law(3, 2, "binomial"); clear_law_cache()
    >>> cached_law(3, 2, "binomial") is P
    False
    """
    _read_only_law.cache_clear()


def least_squares_design(exact_values, law_matrix, prior=None):
    """(A, b, c) of eqs 23 and 25 for exact metric values M(1..n), the law and the prior.

    A[r, r~] = sqrt(p(r)) p(r~ | r), b[r] = sqrt(p(r)) M(r) and
    c[r~] = sum_r p(r) p(r~ | r) (see the module docstring on eq 23).

    Parameters
    ----------
    exact_values : array_like
        M(1..n), one value per true rank.
    law_matrix : array_like
        The law P (n x (m+1)), P[r - 1, r~ - 1] = p(r~ | r).
    prior : array_like, optional
        p(r) over r = 1..n (normalized here); uniform when None.

    Returns
    -------
    A : numpy.ndarray
        Shape (n, m + 1).
    b : numpy.ndarray
        Shape (n,).
    c : numpy.ndarray
        Shape (m + 1,).

    Raises
    ------
    ValueError
        If ``exact_values`` does not have one value per row of the law, or the
        prior is not n finite non-negative numbers with a positive sum.

    Examples
    --------
    >>> A, b, c = least_squares_design([1.0, 0.5, 0.0], sampled_rank_law(3, 2))
    >>> A.shape, np.round(b, 4).tolist(), np.round(c, 4).tolist()
    ((3, 3), [0.5774, 0.2887, 0.0], [0.3333, 0.3333, 0.3333])
    """
    P = np.asarray(law_matrix, dtype=float)
    M = np.asarray(exact_values, dtype=float)
    if M.shape != (P.shape[0],):
        raise ValueError("exact_values must have one value per true rank (rows of the law)")
    p = _prior(prior, P.shape[0])
    sqrt_p = np.sqrt(p)
    return sqrt_p[:, None] * P, sqrt_p * M, p @ P


@dataclass(frozen=True)
class ReducedSystem:
    """Eq 21 in m + 1 dimensions, for k metrics sharing one law and prior.

    With A = Q R (Q: n x (m+1) orthonormal columns), for every metric j
    ||A x - b_j||^2 = ||R x - Y[:, j]||^2 + const_j, A^T A = R^T R and
    A^T b_j = R^T Y[:, j]. Built by :func:`reduced_system`.

    Attributes
    ----------
    R : numpy.ndarray
        (m+1, m+1) upper triangular factor of A.
    Y : numpy.ndarray
        (m+1, k) projections Q^T b_j.
    c : numpy.ndarray
        (m+1,) c[r~] = sum_r p(r) p(r~ | r) of eq 25.
    rcond : float
        Singular-value cutoff of least squares, relative to the largest: the
        one numpy.linalg.lstsq would use on the n x (m+1) matrix A.

    Parameters
    ----------
    R, Y, c, rcond
        The attributes above.

    Examples
    --------
    >>> system = reduced_system(metric_vector("ap", 12), sampled_rank_law(12, 3))
    >>> system.R.shape, system.Y.shape, bool(np.allclose(np.tril(system.R, -1), 0))
    ((4, 4), (4, 1), True)
    """

    R: np.ndarray
    Y: np.ndarray
    c: np.ndarray
    rcond: float


def reduced_system(exact_values, law_matrix, prior=None) -> ReducedSystem:
    """One QR factorization of [A | B] gives eq 21 in m + 1 dimensions for every metric.

    Parameters
    ----------
    exact_values : array_like
        M(1..n) of one metric (shape (n,)) or of k metrics (shape (n, k)).
    law_matrix : array_like
        The law P (n x (m+1)).
    prior : array_like, optional
        p(r) over r = 1..n; uniform when None.

    Returns
    -------
    ReducedSystem

    Raises
    ------
    ValueError
        As :func:`least_squares_design`.

    Examples
    --------
    The reduced objective equals the full one up to a constant:

    >>> M, P = metric_vector("ap", 30), sampled_rank_law(30, 4)
    >>> system, x, y = reduced_system(M, P), np.linspace(1, 0, 5), np.linspace(0.5, 0, 5)
    >>> reduced = [np.sum((system.R @ v - system.Y[:, 0]) ** 2) for v in (x, y)]
    >>> full = [average_squared_bias(v, M, P) for v in (x, y)]
    >>> bool(np.isclose(full[0] - full[1], reduced[0] - reduced[1]))
    True
    """
    B = np.asarray(exact_values, dtype=float)
    B = B[:, None] if B.ndim == 1 else B
    P = np.asarray(law_matrix, dtype=float)
    n, size = P.shape
    A, b, c = least_squares_design(B[:, 0], P, prior)
    weighted = np.sqrt(_prior(prior, n))[:, None] * B
    # Zero rows change no residual and let the R factor have its full size when n is small.
    stacked = np.zeros((max(n, size + B.shape[1]), size + B.shape[1]))
    stacked[:n, :size], stacked[:n, size:] = A, weighted
    RY = linalg.qr(stacked, mode="r", check_finite=False)[0]
    eps = np.finfo(float).eps
    return ReducedSystem(RY[:size, :size], RY[:size, size:], c, eps * max(n, size))


def _solve_least_squares(system: ReducedSystem) -> np.ndarray:
    """Eq 22 for every metric of the system: the minimum-norm solutions, (m+1, k)."""
    return np.linalg.lstsq(system.R, system.Y, rcond=system.rcond)[0]


def normal_equations(exact_values, law_matrix, prior=None):
    """(A^T A, A^T B, c): eqs 24-25 in m + 1 dimensions, for one or k metrics.

    Only the upper triangle of A^T A is formed (BLAS syrk); the bias-variance
    systems are well conditioned for gamma > 0, so they need no QR.

    Parameters
    ----------
    exact_values : array_like
        M(1..n) (shape (n,)) or k metrics (shape (n, k)).
    law_matrix : array_like
        The law P (n x (m+1)).
    prior : array_like, optional
        p(r) over r = 1..n; uniform when None.

    Returns
    -------
    gram : numpy.ndarray
        (m+1, m+1), upper triangle of A^T A.
    rhs : numpy.ndarray
        (m+1, k), A^T b_j.
    c : numpy.ndarray
        (m+1,), as in :func:`least_squares_design`.

    Examples
    --------
    >>> gram, rhs, c = normal_equations(metric_vector("ap", 10), sampled_rank_law(10, 3))
    >>> gram.shape, rhs.shape, round(float(c.sum()), 12)
    ((4, 4), (4, 1), 1.0)
    """
    B = np.asarray(exact_values, dtype=float)
    B = B[:, None] if B.ndim == 1 else B
    A, _, c = least_squares_design(B[:, 0], law_matrix, prior)
    weighted = np.sqrt(_prior(prior, A.shape[0]))[:, None] * B
    return _banded_gram(A), A.T @ weighted, c


# A law entry below this adds less than rounding to any entry of A^T A that matters:
# each row of the law sums to 1, so its largest entry is at least 1 / (m + 1).
_NEGLIGIBLE = 1e-20
_ROW_BLOCK = 256


def _banded_gram(A) -> np.ndarray:
    """Upper triangle of A^T A, each block of rows multiplied only over the columns it reaches.

    A row of the law is unimodal in r~, so its entries above ``_NEGLIGIBLE`` are
    one contiguous window, about 20 standard deviations of r~ wide: at m = 3705
    a few hundred of the 3706 columns. Summing BLAS syrk products of those
    windows makes A^T A band-limited and up to 40 times cheaper at large m.
    """
    big = A > _NEGLIGIBLE
    first = np.where(big.any(axis=1), big.argmax(axis=1), A.shape[1])
    last = A.shape[1] - big[:, ::-1].argmax(axis=1)
    gram = np.zeros((A.shape[1], A.shape[1]))
    for start in range(0, A.shape[0], _ROW_BLOCK):
        rows = slice(start, start + _ROW_BLOCK)
        low, high = int(first[rows].min()), int(last[rows].max())
        if low < high:
            gram[low:high, low:high] += linalg.blas.dsyrk(1.0, A[rows, low:high], trans=1)
    return gram


def _upper_bandwidth(matrix) -> int:
    """The largest j - i with matrix[i, j] != 0 (upper triangle)."""
    nonzero = matrix != 0
    last = matrix.shape[1] - 1 - nonzero[:, ::-1].argmax(axis=1)
    return int(np.max(last - np.arange(matrix.shape[0])))


def _solve_bias_variance(gram, rhs, c, gamma: float) -> np.ndarray:
    """Eq 25: ((1 - gamma) A^T A + gamma diag(c))^-1 A^T b, gamma in (0, 1], (m+1, k).

    Symmetric positive definite with condition number ~ 1/gamma: solved by Cholesky
    on the upper triangle, in banded storage when A^T A is band-limited (large m).
    A prior under which some sampled rank has no evidence (c = 0, e.g. a learned prior
    that is 0 beyond some rank) leaves that M^ undetermined, with weight 0 in eq 24:
    the system is then singular and the minimum-norm solution sets it to 0.
    """
    lhs = (1.0 - gamma) * gram
    lhs[np.diag_indices_from(lhs)] += gamma * c
    width = _upper_bandwidth(lhs)
    try:
        if width >= lhs.shape[0] // 4:
            return linalg.solve(lhs, rhs, assume_a="pos", lower=False)
        banded = np.zeros((width + 1, lhs.shape[0]))
        for offset in range(width + 1):
            banded[width - offset, offset:] = np.diagonal(lhs, offset)
        return linalg.solveh_banded(banded, rhs)
    except linalg.LinAlgError:
        return linalg.lstsq(np.triu(lhs) + np.triu(lhs, 1).T, rhs)[0]


def _solve_monotone(R, y, low=None, high=None) -> np.ndarray:
    """argmin ||R x - y|| over non-increasing x, and low <= x <= high when given.

    Write x = U z (U upper triangular ones): z_i = x_i - x_{i+1} >= 0 are the
    steps and z_last = x_last. Monotone only: x_last is free, so its column is
    projected out and the steps solve a non-negative least-squares problem
    (scipy.optimize.nnls, Lawson-Hanson, exact). In range: x = low + (high -
    low) U z with z >= 0 and sum(z) <= 1 (x_1 <= high); when the plain NNLS
    solution breaks sum(z) <= 1, that constraint is active and its multiplier
    is found by bracketing (see :func:`_nnls_on_sum`).
    """
    size = R.shape[1]
    B = np.cumsum(R, axis=1)  # R @ U

    def x_from(z):  # U @ z
        return np.cumsum(z[::-1])[::-1]

    iterations = 50 * size
    if low is None:
        a, steps_design = B[:, -1], B[:, :-1]
        design = steps_design - np.outer(a, a @ steps_design) / (a @ a)
        steps = optimize.nnls(design, y - a * (a @ y) / (a @ a), maxiter=iterations)[0]
        last = a @ (y - steps_design @ steps) / (a @ a)
        return x_from(np.r_[steps, last])
    scale = high - low
    target = y - low * R.sum(axis=1)
    z = optimize.nnls(scale * B, target, maxiter=iterations)[0]
    if z.sum() > 1.0 + 1e-9:  # beyond rounding: the upper bound is active
        z = _nnls_on_sum(scale * B, target, iterations)
    return np.clip(low + scale * x_from(z), low, high)


def _nnls_on_sum(B, y, iterations: int) -> np.ndarray:
    """argmin ||B z - y|| over z >= 0 with sum(z) = 1 (the active upper bound).

    For a target tau, z(tau) = argmin_{z >= 0} ||B z - y||^2 + mu (sum(z) - tau)^2
    meets the optimality conditions of the constrained problem with multiplier
    2 mu (1 - tau) >= 0 as soon as sum(z(tau)) = 1; sum(z(tau)) rises with tau
    and is >= 1 at tau = 1 when the unconstrained solution has sum > 1, so tau
    is bracketed below 1 and found by Brent's method.
    """
    weight = np.sqrt(np.sum(B * B) / B.shape[1])
    augmented = np.vstack([B, np.full((1, B.shape[1]), weight)])

    def excess(tau):
        z = optimize.nnls(augmented, np.r_[y, weight * tau], maxiter=iterations)[0]
        return z.sum() - 1.0

    if excess(1.0) <= 0.0:  # only by rounding: the constraint is met at tau = 1
        return optimize.nnls(augmented, np.r_[y, weight], maxiter=iterations)[0]
    gap = 1.0
    while excess(1.0 - gap) > 0.0:
        gap *= 2.0
    tau = optimize.brentq(excess, 1.0 - gap, 1.0, xtol=1e-15, rtol=4 * np.finfo(float).eps)
    return optimize.nnls(augmented, np.r_[y, weight * tau], maxiter=iterations)[0]


def _check_constraint(constraint: str) -> None:
    if constraint not in CLS_CONSTRAINTS:
        raise ValueError(
            f"unknown CLS constraint {constraint!r}; choose one of {', '.join(CLS_CONSTRAINTS)}"
        )


def _solve_constrained(system: ReducedSystem, exact_values, constraint: str) -> np.ndarray:
    """CLS for every metric of the system (eq 21 + constraints), (m+1, k)."""
    _check_constraint(constraint)
    B = np.asarray(exact_values, dtype=float)
    B = B[:, None] if B.ndim == 1 else B
    columns = []
    for j in range(system.Y.shape[1]):
        if constraint == "monotone":
            columns.append(_solve_monotone(system.R, system.Y[:, j]))
        else:
            low, high = float(B[:, j].min()), float(B[:, j].max())
            columns.append(_solve_monotone(system.R, system.Y[:, j], low, high))
    return np.column_stack(columns)


def average_squared_bias(values_on_sample, exact_values, law_matrix, prior=None) -> float:
    """sum_r p(r) (E[M^(r~) | r] - M(r))^2, the objective of eq 21.

    Parameters
    ----------
    values_on_sample : array_like
        M^ over r~ = 1..m+1.
    exact_values : array_like
        M(1..n).
    law_matrix : array_like
        The law P (n x (m+1)).
    prior : array_like, optional
        p(r) over r = 1..n; uniform when None.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        As :func:`least_squares_design`.

    Examples
    --------
    With m = n - 1 the law is the identity, and the uncorrected metric has no bias:

    >>> average_squared_bias([1.0, 0.5, 0.0], [1.0, 0.5, 0.0], sampled_rank_law(3, 2))
    0.0
    >>> round(average_squared_bias([1.0, 1.0, 1.0], [1.0, 0.5, 0.0], np.eye(3)), 4)  # 1.25 / 3
    0.4167
    """
    A, b, _ = least_squares_design(exact_values, law_matrix, prior)
    residual = A @ np.asarray(values_on_sample, dtype=float) - b
    return float(residual @ residual)


# --------------------------------------------------------------------------
# The corrections
# --------------------------------------------------------------------------


def rank_estimate_correction(
    metric: MetricFn | str, n: int, m: int, interpolation: str = "floor"
) -> np.ndarray:
    """Metric at the unbiased rank estimate, eq 20: M^(r~) = M(1 + (n-1)(r~-1)/m).

    The estimate is real; ``interpolation="floor"`` rounds it down as in the
    paper's experiments, ``"linear"`` interpolates M between neighbouring ranks.

    Parameters
    ----------
    metric : callable or str
        A metric ``f(ranks, n)`` or its name (see :func:`.metrics.metric_by_name`).
    n : int
        Number of ranked items.
    m : int
        Number of sampled irrelevant items.
    interpolation : {"floor", "linear"}, default "floor"
        How to evaluate M at a fractional rank estimate.

    Returns
    -------
    numpy.ndarray
        M^ over r~ = 1..m+1.

    Raises
    ------
    ValueError
        If ``interpolation`` is neither "floor" nor "linear", or the metric's
        name is unknown.

    Examples
    --------
    The rank estimates themselves at m = 100, n = 3706 (the metric f(r) = r):

    >>> rank_estimate_correction(lambda r, n: r, n=3706, m=100)[[0, 1, 2, -1]].tolist()
    [1.0, 38.0, 75.0, 3706.0]

    Hence, as the paper notes (section 6.3), Recall@10 and NDCG@10 are identical
    under this correction: both are 1 at r~ = 1 and 0 elsewhere.

    >>> recall = rank_estimate_correction("recall@10", 3706, 100)
    >>> bool(np.array_equal(recall, rank_estimate_correction("ndcg@10", 3706, 100)))
    True
    """
    check_law_arguments(1, n, m, WITH_REPLACEMENT)  # n >= 2 and m >= 1, for any law
    fn = metric_by_name(metric) if isinstance(metric, str) else metric
    estimate = 1.0 + (n - 1) * np.arange(m + 1) / m
    low = np.floor(estimate)
    if interpolation == "floor":
        return np.asarray(fn(low, n), dtype=float)
    if interpolation == "linear":
        high = np.minimum(low + 1, n)
        weight = estimate - low
        return (1 - weight) * fn(low, n) + weight * fn(high, n)
    raise ValueError(f"interpolation must be 'floor' or 'linear', got {interpolation!r}")


def least_squares_correction(exact_values, law_matrix, prior=None) -> np.ndarray:
    """Minimal-bias estimator, eqs 21-22: argmin_x ||A x - b||^2.

    Solved with an SVD (numpy.linalg.lstsq) of the (m+1)-dimensional factor R
    of A (:func:`reduced_system`) rather than the normal equations
    (A^T A)^-1 A^T b, whose condition number is the square of A's.

    Parameters
    ----------
    exact_values : array_like
        M(1..n).
    law_matrix : array_like
        The law P (n x (m+1)).
    prior : array_like, optional
        p(r) over r = 1..n; uniform when None.

    Returns
    -------
    numpy.ndarray
        M^ over r~ = 1..m+1.

    Raises
    ------
    ValueError
        As :func:`least_squares_design`.

    Examples
    --------
    Sampled AUC is already unbiased (section 4.4.1), so least squares returns it:

    >>> x = least_squares_correction(metric_vector("auc", 5), sampled_rank_law(5, 2))
    >>> bool(np.allclose(x, [1.0, 0.5, 0.0]))
    True

    For AP it oscillates (section 5.4):

    >>> M, P = metric_vector("ap", 20), sampled_rank_law(20, 5)
    >>> bool(np.all(np.diff(least_squares_correction(M, P)) <= 0))
    False
    """
    return _solve_least_squares(reduced_system(exact_values, law_matrix, prior))[:, 0]


def constrained_least_squares_correction(
    exact_values, law_matrix, prior=None, constraint: str = "monotone_in_range"
) -> np.ndarray:
    """Eq 21 under the order constraint M^(1) >= ... >= M^(m+1) ("CLS", sections 5.2 and 6.3).

    Section 5.2 states the order constraint; ``constraint="monotone_in_range"``
    (the default) also keeps M^ within the metric's range, min_r M(r) <= M^ <=
    max_r M(r), which an estimate of a metric can assume at no cost; the
    order constraint alone leaves small negative values on the tail
    (docs/protocol.md measures both readings). Solved exactly on the
    (m+1)-dimensional form (:func:`reduced_system`) as a non-negative least
    squares problem in the steps M^(i) - M^(i+1) (see ``_solve_monotone``).

    Parameters
    ----------
    exact_values : array_like
        M(1..n).
    law_matrix : array_like
        The law P (n x (m+1)).
    prior : array_like, optional
        p(r) over r = 1..n; uniform when None.
    constraint : {"monotone_in_range", "monotone"}, default "monotone_in_range"
        The constraints (see ``CLS_CONSTRAINTS``).

    Returns
    -------
    numpy.ndarray
        M^ over r~ = 1..m+1, non-increasing.

    Raises
    ------
    ValueError
        If the constraint is unknown; as :func:`least_squares_design` otherwise.

    Examples
    --------
    >>> M, P = metric_vector("recall@10", 3706), sampled_rank_law(3706, 100, "binomial")
    >>> x = constrained_least_squares_correction(M, P)
    >>> bool(np.all(np.diff(x) <= 0)), bool(x.min() >= 0)
    (True, True)
    >>> bool(constrained_least_squares_correction(M, P, constraint="monotone").min() < 0)
    True
    """
    system = reduced_system(exact_values, law_matrix, prior)
    return _solve_constrained(system, exact_values, constraint)[:, 0]


def bias_variance_correction(exact_values, law_matrix, gamma: float, prior=None) -> np.ndarray:
    """Bias^2 + gamma * Variance trade-off, eqs 24-25.

    M^ = ((1 - gamma) A^T A + gamma diag(c))^-1 A^T b.
    gamma = 1 gives the posterior mean of eq 26; gamma -> 0 tends to the
    least-squares solution of eq 22 (which gamma = 0 returns).

    Parameters
    ----------
    exact_values : array_like
        M(1..n).
    law_matrix : array_like
        The law P (n x (m+1)).
    gamma : float
        Weight of the variance, in [0, 1].
    prior : array_like, optional
        p(r) over r = 1..n; uniform when None.

    Returns
    -------
    numpy.ndarray
        M^ over r~ = 1..m+1.

    Raises
    ------
    ValueError
        If gamma is outside [0, 1]; as :func:`least_squares_design` otherwise.

    Examples
    --------
    >>> M, P = metric_vector("ndcg@10", 50), sampled_rank_law(50, 5)
    >>> bool(np.allclose(bias_variance_correction(M, P, 1.0), posterior_mean_correction(M, P)))
    True
    >>> bool(np.allclose(bias_variance_correction(M, P, 0.0), least_squares_correction(M, P)))
    True
    """
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must lie in [0, 1], got {gamma!r}")
    if gamma == 0.0:
        return least_squares_correction(exact_values, law_matrix, prior)
    return _solve_bias_variance(*normal_equations(exact_values, law_matrix, prior), gamma)[:, 0]


def posterior_mean_correction(exact_values, law_matrix, prior=None) -> np.ndarray:
    """Eq 26: M^(r~) = sum_r p(r | r~) M(r) by Bayes' rule (BV with gamma = 1).

    Sampled ranks that no true rank can produce (c = 0) get 0.

    Parameters
    ----------
    exact_values : array_like
        M(1..n).
    law_matrix : array_like
        The law P (n x (m+1)).
    prior : array_like, optional
        p(r) over r = 1..n; uniform when None.

    Returns
    -------
    numpy.ndarray
        M^ over r~ = 1..m+1.

    Raises
    ------
    ValueError
        If the prior is not n finite non-negative numbers with a positive sum.

    Examples
    --------
    AUC with n = 3, m = 1: r~ = 1 comes from r = 1 (weight 1) or r = 2 (weight 1/2).

    >>> np.round(posterior_mean_correction([1.0, 0.5, 0.0], sampled_rank_law(3, 1)), 4).tolist()
    [0.8333, 0.1667]
    >>> P = sampled_rank_law(3, 1)
    >>> posterior_mean_correction([1.0, 0.5, 0.0], P, prior=[1, 0, 0]).tolist()
    [1.0, 0.0]
    """
    P = np.asarray(law_matrix, dtype=float)
    p = _prior(prior, P.shape[0])
    joint = p[:, None] * P  # p(r) p(r~ | r)
    evidence = joint.sum(axis=0)  # p(r~)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(evidence > 0, joint.T @ np.asarray(exact_values, float) / evidence, 0.0)


# --------------------------------------------------------------------------
# By name, and applied to observed ranks
# --------------------------------------------------------------------------


def parse_method(method: str) -> tuple[str, float | None]:
    """Split a method name into (kind, gamma): "bv_0.1" -> ("bv", 0.1), "cls" -> ("cls", None).

    Parameters
    ----------
    method : str
        ``"sampled"``, ``"rank_estimate"``, ``"ls"``, ``"cls"`` or ``"bv_<gamma>"``.

    Returns
    -------
    kind : str
        The method without its parameter.
    gamma : float or None
        The gamma of ``bv_<gamma>``, None for the other methods.

    Raises
    ------
    ValueError
        Naming the method when it is unknown or its gamma is not a number in [0, 1].

    Examples
    --------
    >>> parse_method("bv_0.1"), parse_method("cls")
    (('bv', 0.1), ('cls', None))
    >>> parse_method("bv_2")
    Traceback (most recent call last):
    ValueError: method 'bv_2': gamma must be a number in [0, 1]
    """
    kinds = ("sampled", "rank_estimate", "ls", "cls")
    if method in kinds:
        return method, None
    if method.startswith("bv_"):
        try:
            gamma = float(method[3:])
        except ValueError:
            gamma = np.nan
        if 0.0 <= gamma <= 1.0:
            return "bv", gamma
        raise ValueError(f"method {method!r}: gamma must be a number in [0, 1]")
    raise ValueError(f"unknown correction method {method!r}; known: {', '.join(kinds)}, bv_<gamma>")


def corrected_metric(
    metric: MetricFn | str,
    method: str,
    n: int,
    m: int,
    law: str = WITHOUT_REPLACEMENT,
    prior=None,
    interpolation: str = "floor",
    cls_constraint: str = "monotone_in_range",
) -> np.ndarray:
    """The vector M^ over r~ = 1..m+1 of a named correction method (section 5).

    For a metric, n items, m samples, the sampling law and a prior over ranks.

    Parameters
    ----------
    metric : callable or str
        A metric ``f(ranks, n)`` or its name (see :func:`.metrics.metric_by_name`).
    method : str
        A method name (see :func:`parse_method`).
    n : int
        Number of ranked items.
    m : int
        Number of sampled irrelevant items.
    law : {"hypergeometric", "binomial"}, default "hypergeometric"
        The sampling law (unused by ``sampled`` and ``rank_estimate``).
    prior : array_like, optional
        p(r) over r = 1..n, for ``ls``, ``cls`` and ``bv_<gamma>``; uniform when None.
    interpolation : {"floor", "linear"}, default "floor"
        For ``rank_estimate`` (see :func:`rank_estimate_correction`).
    cls_constraint : {"monotone_in_range", "monotone"}, default "monotone_in_range"
        For ``cls`` (see :func:`constrained_least_squares_correction`).

    Returns
    -------
    numpy.ndarray
        M^ over r~ = 1..m+1.

    Raises
    ------
    ValueError
        If the method, the metric, the law or a parameter is invalid.

    Examples
    --------
    >>> corrected_metric("recall@1", "sampled", n=10, m=2).tolist()
    [1.0, 0.0, 0.0]
    >>> corrected_metric("recall@10", "rank_estimate", n=3706, m=100)[:3].tolist()
    [1.0, 0.0, 0.0]
    """
    vectors = correction_vectors(
        [metric], [method], n, m, law, prior, interpolation, cls_constraint
    )
    return next(iter(vectors.values()))


def correction_vectors(
    metrics,
    methods,
    n: int,
    m: int,
    law: str = WITHOUT_REPLACEMENT,
    prior=None,
    interpolation: str = "floor",
    cls_constraint: str = "monotone_in_range",
) -> dict:
    """{(metric, method): M^ over r~ = 1..m+1} for every pair, sharing the work.

    One law, one QR factorization (for ``ls``, ``cls``, ``bv_0``) and one Gram
    matrix (for ``bv_<gamma>``) serve every metric and method: the systems of
    eqs 21-25 are solved in m + 1 dimensions (:func:`reduced_system`,
    :func:`normal_equations`).

    Parameters
    ----------
    metrics : iterable of str or callable
        Metrics (see :func:`.metrics.metric_by_name`).
    methods : iterable of str
        Method names (see :func:`parse_method`).
    n, m, law, prior, interpolation, cls_constraint
        As :func:`corrected_metric`.

    Returns
    -------
    dict
        {(metric, method): numpy.ndarray of length m + 1}, metric by metric.

    Raises
    ------
    ValueError
        As :func:`corrected_metric`.

    Examples
    --------
    >>> vectors = correction_vectors(["ap"], ["sampled", "rank_estimate"], n=10, m=3)
    >>> np.round(vectors["ap", "rank_estimate"], 4).tolist()  # AP at ranks 1, 4, 7, 10
    [1.0, 0.25, 0.1429, 0.1]
    """
    metrics, parsed = list(metrics), {method: parse_method(method) for method in methods}
    if any(kind == "cls" for kind, _ in parsed.values()):
        _check_constraint(cls_constraint)
    needs_qr = any(kind in ("ls", "cls") or gamma == 0.0 for kind, gamma in parsed.values())
    needs_gram = any(kind == "bv" and gamma > 0.0 for kind, gamma in parsed.values())
    solutions = {}
    if needs_qr or needs_gram:
        P = cached_law(int(n), int(m), law)
        exact = np.column_stack([metric_vector(metric, n) for metric in metrics])
        system = reduced_system(exact, P, prior) if needs_qr else None
        if needs_gram:  # A^T A = R^T R: the QR, when there is one, saves the n-row product
            normal = (
                normal_equations(exact, P, prior)
                if system is None
                else (system.R.T @ system.R, system.R.T @ system.Y, system.c)
            )
        for method, (kind, gamma) in parsed.items():
            if kind == "cls":
                solutions[method] = _solve_constrained(system, exact, cls_constraint)
            elif kind == "ls" or gamma == 0.0:
                solutions[method] = _solve_least_squares(system)
            elif kind == "bv":
                solutions[method] = _solve_bias_variance(*normal, gamma)
    vectors = {}
    for j, metric in enumerate(metrics):
        for method, (kind, _) in parsed.items():
            if kind == "sampled":
                vectors[metric, method] = metric_on_sample(metric, m)
            elif kind == "rank_estimate":
                vectors[metric, method] = rank_estimate_correction(metric, n, m, interpolation)
            else:
                vectors[metric, method] = solutions[method][:, j]
    return vectors


def apply_correction(values_on_sample, sampled_ranks) -> np.ndarray:
    """Per-instance corrected metric: M^[r~ - 1] for each observed sampled rank.

    Parameters
    ----------
    values_on_sample : array_like
        M^ over r~ = 1..m+1.
    sampled_ranks : array_like of int
        Observed sampled ranks r~, integers in 1..m+1.

    Returns
    -------
    numpy.ndarray
        M^(r~) for each sampled rank.

    Raises
    ------
    ValueError
        If a sampled rank is not an integer in 1..m+1.

    Examples
    --------
    >>> apply_correction([1.0, 0.5, 0.0], [1, 3, 3, 2]).tolist()
    [1.0, 0.0, 0.0, 0.5]
    """
    values = np.asarray(values_on_sample, dtype=float)
    r = np.asarray(sampled_ranks)
    if np.any(r != np.round(r)) or np.any(r < 1) or np.any(r > values.size):
        raise ValueError(f"sampled ranks must be integers in 1..{values.size}")
    return values[r.astype(np.int64) - 1]


def correction_vectors_by_n(
    n_values, *args, workers: int = 1, progress: bool = False, **kwargs
) -> dict:
    """{n: :func:`correction_vectors` (metrics, methods, n, ...)} for every distinct n,
    built in ``workers`` processes: the per-user corrections of a large data set
    build one system per distinct ranked-set size.

    BLAS runs on one thread in every process, so the result does not depend on
    ``workers`` nor on the machine's cores: at large n the last bits of the QR,
    and through them CLS's active set (up to 7e-5 at n = 20001), change with
    BLAS's thread count (identical up to n = 3706 on this machine).

    Parameters
    ----------
    n_values : iterable of int
        The values of n.
    *args, **kwargs
        ``metrics, methods`` and the arguments after ``n`` of :func:`correction_vectors`.
    workers : int, default 1
        Processes (forked; 1 builds in this process).
    progress : bool, default False
        Show a tqdm bar over the values of n.

    Returns
    -------
    dict
        {n: {(metric, method): M^}}.

    Examples
    --------
    >>> by_n = correction_vectors_by_n([10, 12, 10], ["recall@1"], ["sampled"], m=2)
    >>> sorted(by_n), by_n[12]["recall@1", "sampled"].tolist()
    ([10, 12], [1.0, 0.0, 0.0])
    """
    metrics, methods, *rest = args
    distinct = [int(n) for n in np.unique(np.asarray(list(n_values), dtype=np.int64))]
    build = partial(_vectors_at, metrics, methods, rest, kwargs)

    def collect(results) -> dict:
        if progress:
            from tqdm.auto import tqdm

            results = tqdm(results, total=len(distinct), desc="corrections per n", unit="n")
        return dict(zip(distinct, results))

    if workers <= 1 or len(distinct) < 2:
        with threadpool_limits(1):
            return collect(map(build, distinct))
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    chunk = max(1, len(distinct) // (8 * workers))
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(
        workers, context, initializer=threadpool_limits, initargs=(1,)
    ) as pool:
        return collect(pool.map(build, distinct, chunksize=chunk))


def _vectors_at(metrics, methods, rest, kwargs, n):
    """correction_vectors at one n (a top-level function, so that workers can run it)."""
    return correction_vectors(metrics, methods, n, *rest, **kwargs)
