"""Corrected sampled metrics, section 5 of Krichene & Rendle (KDD 2020).

A correction is a vector M^ over the sampled rank r~ = 1..m+1; the corrected
metric of an evaluation instance is M^[r~ - 1] (``apply_correction``). Every
correction here estimates the exact metric M(r) over true ranks r = 1..n.

The least-squares family (eqs 21-26) uses, with the law P[r, r~] = p(r~ | r)
and a prior p(r) over true ranks (uniform by default):

    A[r, r~] = sqrt(p(r)) p(r~ | r),   b[r] = sqrt(p(r)) M(r),
    c[r~]    = sum_r p(r) p(r~ | r).

(Eq 23 as printed abbreviates A; this is the form obtained from eq 21.)

Method names used throughout the project: ``sampled`` (no correction),
``rank_estimate``, ``ls``, ``cls``, and ``bv_<gamma>`` such as ``bv_0.1``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import linalg, optimize

from .expected import metric_on_sample
from .laws import WITHOUT_REPLACEMENT, sampled_rank_law
from .metrics import MetricFn, metric_by_name, metric_vector

__all__ = [
    "apply_correction",
    "average_squared_bias",
    "bias_variance_correction",
    "cached_law",
    "constrained_least_squares_correction",
    "corrected_metric",
    "least_squares_correction",
    "least_squares_design",
    "parse_method",
    "posterior_mean_correction",
    "rank_estimate_correction",
    "uniform_prior",
]

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


@lru_cache(maxsize=8)
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
        the same object for the same arguments (an LRU cache of 8 laws).

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
    P = sampled_rank_law(n, m, law)
    P.setflags(write=False)
    return P


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

    Solved with an SVD (numpy.linalg.lstsq) rather than the normal equations
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
    A, b, _ = least_squares_design(exact_values, law_matrix, prior)
    return np.linalg.lstsq(A, b, rcond=None)[0]


def constrained_least_squares_correction(exact_values, law_matrix, prior=None) -> np.ndarray:
    """Eq 21 under the order constraint M^(1) >= ... >= M^(m+1) ("CLS", sections 5.2 and 6.3).

    The order constraint is M^(1) >= M^(2) >= ... >= M^(m+1); the problem is
    solved exactly as a bounded least-squares problem. Write M^ = U z with
    z = (d_1, ..., d_m, t): M^(j) = t + sum_{i >= j} d_i,
    d_i = M^(i) - M^(i+1) >= 0 and t = M^(m+1) free. A is first reduced to its
    (m+1) x (m+1) triangular factor (QR), which leaves the objective unchanged
    up to a constant; then scipy.optimize.lsq_linear (bounded-variable least
    squares, an active-set method) solves for z.

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
        M^ over r~ = 1..m+1, non-increasing.

    Raises
    ------
    ValueError
        As :func:`least_squares_design`.

    Examples
    --------
    >>> M, P = metric_vector("ap", 20), sampled_rank_law(20, 5)
    >>> bool(np.all(np.diff(constrained_least_squares_correction(M, P)) <= 0))
    True
    """
    A, b, _ = least_squares_design(exact_values, law_matrix, prior)
    size = A.shape[1]
    Q, R = np.linalg.qr(A)
    U = np.triu(np.ones((size, size)))
    lower = np.r_[np.zeros(size - 1), -np.inf]
    solution = optimize.lsq_linear(
        R @ U, Q.T @ b, bounds=(lower, np.inf), method="bvls", tol=1e-14, max_iter=50 * size
    )
    return U @ solution.x


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
    A, b, c = least_squares_design(exact_values, law_matrix, prior)
    if gamma == 0.0:
        return least_squares_correction(exact_values, law_matrix, prior)
    # The system is symmetric positive definite: only its upper triangle is
    # formed (BLAS syrk) and it is solved by Cholesky, half the work of A.T @ A
    # and LU at m = n - 1 (Figure 6); condition number ~ 1/gamma.
    lhs = (1.0 - gamma) * linalg.blas.dsyrk(1.0, A, trans=1)
    lhs[np.diag_indices_from(lhs)] += gamma * c
    return linalg.solve(lhs, A.T @ b, assume_a="pos", lower=False)


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
    kind, gamma = parse_method(method)
    if kind == "sampled":
        return metric_on_sample(metric, m)
    if kind == "rank_estimate":
        return rank_estimate_correction(metric, n, m, interpolation)
    P = cached_law(int(n), int(m), law)
    exact = metric_vector(metric, n)
    if kind == "ls":
        return least_squares_correction(exact, P, prior)
    if kind == "cls":
        return constrained_least_squares_correction(exact, P, prior)
    return bias_variance_correction(exact, P, gamma, prior)


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
