"""The corrections of section 5, one function each: the rank estimate (eq 20), least
squares (eqs 21-22), CLS (section 5.2), bias-variance (eqs 24-25) and the posterior
mean (eq 26). Each returns the vector M^ over the sampled rank r~ = 1..m+1."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..laws import (
    WITH_REPLACEMENT,
    check_law_arguments,
)
from ..metrics import (
    MetricFn,
    metric_by_name,
)
from .solvers import _solve_bias_variance, _solve_constrained, _solve_least_squares
from .systems import _prior, normal_equations, reduced_system

__all__ = [
    "bias_variance_correction",
    "constrained_least_squares_correction",
    "least_squares_correction",
    "posterior_mean_correction",
    "rank_estimate_correction",
]


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


def least_squares_correction(
    exact_values: ArrayLike, law_matrix: ArrayLike, prior: ArrayLike | None = None
) -> np.ndarray:
    """Minimal-bias estimator, eqs 21-22: argmin_x ||A x - b||^2.

    Solved with an SVD (numpy.linalg.lstsq) of the (m+1)-dimensional factor R
    of A (:func:`.systems.reduced_system`) rather than the normal equations
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
        As :func:`.systems.least_squares_design`.

    Examples
    --------
    >>> from sampled_metrics import metric_vector, sampled_rank_law

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
    exact_values: ArrayLike,
    law_matrix: ArrayLike,
    prior: ArrayLike | None = None,
    constraint: str = "monotone_in_range",
) -> np.ndarray:
    """Eq 21 under the order constraint M^(1) >= ... >= M^(m+1) ("CLS", sections 5.2 and 6.3).

    Section 5.2 states the order constraint; ``constraint="monotone_in_range"``
    (the default) also keeps M^ within the metric's range, min_r M(r) <= M^ <=
    max_r M(r), which an estimate of a metric can assume at no cost; the
    order constraint alone leaves small negative values on the tail
    (docs/protocol.md measures both readings). Solved exactly on the
    (m+1)-dimensional form (:func:`.systems.reduced_system`) as a non-negative least
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
        If the constraint is unknown; as :func:`.systems.least_squares_design` otherwise.

    Examples
    --------
    >>> from sampled_metrics import metric_vector, sampled_rank_law
    >>> M, P = metric_vector("recall@10", 3706), sampled_rank_law(3706, 100, "binomial")
    >>> x = constrained_least_squares_correction(M, P)
    >>> bool(np.all(np.diff(x) <= 0)), bool(x.min() >= 0)
    (True, True)
    >>> bool(constrained_least_squares_correction(M, P, constraint="monotone").min() < 0)
    True
    """
    system = reduced_system(exact_values, law_matrix, prior)
    return _solve_constrained(system, exact_values, constraint)[:, 0]


def bias_variance_correction(
    exact_values: ArrayLike, law_matrix: ArrayLike, gamma: float, prior: ArrayLike | None = None
) -> np.ndarray:
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
        If gamma is outside [0, 1]; as :func:`.systems.least_squares_design` otherwise.

    Examples
    --------
    >>> from sampled_metrics import metric_vector, sampled_rank_law
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


def posterior_mean_correction(
    exact_values: ArrayLike, law_matrix: ArrayLike, prior: ArrayLike | None = None
) -> np.ndarray:
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
    >>> from sampled_metrics import sampled_rank_law

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
