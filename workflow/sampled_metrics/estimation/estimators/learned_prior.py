"""Corrections with a prior learned from the sample being corrected: ``bv_em_<gamma>``,
``bv_maxent_<gamma>`` (eqs 24-25 with the learned distribution as p(r)) and ``mn_em``,
``mn_maxent`` (Li et al., "Towards Reliable Item Sampling for Recommendation
Evaluation", AAAI 2023: the variance weighted by 1/#users instead of gamma p(r)), built
at up to ``nodes`` values of n and interpolated linearly in n between them."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg

from ..corrections.law_cache import cached_law
from ..corrections.solvers import solve_positive_definite
from ..metrics import metric_vector
from .data import SampledEvaluation, _distinct_counts
from .learned import _prior_on_ranks

__all__ = ["mn_correction"]


def mn_correction(
    exact_values: ArrayLike, law_matrix: ArrayLike, prior: ArrayLike, n_users: int
) -> np.ndarray:
    """The MN correction of Li et al. (AAAI 2023): with P = p(r~ | r), D = diag(p(r)),

        M^ = [P^T D P + (1/U) (diag(P^T 1) - P^T P)]^-1 P^T D M,

    the minimizer of sum_r p(r) bias_r(M^)^2 + (1/U) sum_r Var_r(M^), bias_r and Var_r
    the bias and variance of M^(r~) given the rank r: BV (eq 24) with the variance
    weighted by 1/U, U the number of users, instead of gamma p(r).

    Parameters
    ----------
    exact_values : array_like
        M(r) over r = 1..n (or several metrics as columns).
    law_matrix : array_like
        P, shape (n, m + 1).
    prior : array_like
        p(r) over r = 1..n.
    n_users : int
        U.

    Returns
    -------
    numpy.ndarray
        M^ over r~ = 1..m + 1 (one column per metric when several).

    Examples
    --------
    With every item sampled (P = I) there is no variance and M^ = M:

    >>> mn_correction([1.0, 0.5, 0.0], np.eye(3), [0.2, 0.3, 0.5], 10).round(12).tolist()
    [1.0, 0.5, 0.0]
    """
    from ..corrections.systems import normal_equations

    P = np.asarray(law_matrix, dtype=float)
    gram, rhs, _ = normal_equations(exact_values, P, prior)  # P^T D P (upper), P^T D M
    solution = _solve_symmetric(_mn_system(gram, _variance_term(P), n_users), rhs)
    return solution[:, 0] if np.ndim(exact_values) == 1 else solution


def _mn_system(gram: np.ndarray, variance: np.ndarray, n_users: int) -> np.ndarray:
    """P^T D P + (diag(P^T 1) - P^T P) / U, from the upper triangle of P^T D P and the
    variance term diag(P^T 1) - P^T P (:func:`_variance_term`)."""
    lhs = np.triu(gram) + np.triu(gram, 1).T
    return lhs + variance / n_users


def _variance_term(P: np.ndarray) -> np.ndarray:
    """diag(P^T 1) - P^T P: the variances of M^ summed over r, whatever the prior."""
    return np.diag(P.sum(axis=0)) - P.T @ P


@lru_cache(maxsize=16)
def _law_variance_term(n: int, m: int, law: str) -> np.ndarray:
    """:func:`_variance_term` of the cached law (n, m, law): every repetition's MN
    system at a node of n reads it."""
    term = _variance_term(cached_law(n, m, law))
    term.setflags(write=False)
    return term


def _solve_symmetric(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs^-1 rhs for a symmetric positive semi-definite lhs; a sampled rank that the
    prior makes impossible leaves lhs singular and its value undetermined (it has
    weight 0 in the objective): the minimum-norm solution sets it to 0."""
    try:
        return solve_positive_definite(lhs, rhs)
    except (linalg.LinAlgError, ValueError):
        return linalg.lstsq(lhs, rhs)[0]


def _learned_prior_vectors(metrics, specs, pi, data, nodes) -> dict:
    """{(m, n): {(metric, method): M^ over r~}} of the learned-prior corrections
    ``specs`` (method -> (family, gamma)) at the node values of n of each m: one law,
    prior and set of normal equations per node serve every metric and method."""
    from ..corrections.solvers import _solve_bias_variance
    from ..nodes import interpolation_nodes

    vectors = {}
    for m in _distinct_counts(data.m)[0]:
        for n in interpolation_nodes(data.n[data.m == m], nodes):
            exact = _metric_columns(tuple(metrics), int(n))
            gram, rhs, c = _normal_equations(exact, int(n), int(m), data.law, pi)
            solutions = {}
            for method, (family, gamma) in specs.items():
                if family == "mn":  # the system of mn_correction
                    variance = _law_variance_term(int(n), int(m), data.law)
                    lhs = _mn_system(gram, variance, data.n_users)
                    solutions[method] = _solve_symmetric(lhs, rhs)
                else:
                    solutions[method] = _solve_bias_variance(gram.copy(), rhs, c, gamma)
            vectors[m, n] = {
                (metric, method): solution[:, k]
                for method, solution in solutions.items()
                for k, metric in enumerate(metrics)
            }
    return vectors


@lru_cache(maxsize=16)
def _metric_columns(metrics: tuple, n: int) -> np.ndarray:
    """M(r) over r = 1..n of each metric (columns), read-only: every repetition's
    systems at a node of n read them."""
    exact = np.column_stack([metric_vector(metric, n) for metric in metrics])
    exact.setflags(write=False)
    return exact


def _normal_equations(exact, n: int, m: int, law: str, pi: np.ndarray) -> tuple:
    """normal_equations of the law at (n, m) under the prior pi on ranks; the binomial
    law's from its degree-2m law (systems.binomial_normal_equations), shared by every
    repetition at this node."""
    from ..corrections.systems import binomial_normal_equations, normal_equations
    from ..laws import WITH_REPLACEMENT

    prior = _prior_on_ranks(pi, n)
    if law == WITH_REPLACEMENT:
        return binomial_normal_equations(exact, n, m, prior)
    return normal_equations(exact, cached_law(n, m, law), prior)


def _per_user_from_vectors(vectors: dict, keys, data: SampledEvaluation) -> dict:
    """{key: M^_{m_u, n_u}(r~_u)} of each ``key`` = (metric, method), linear in n between
    the node values of n of each m (the weights computed once for every key): each user
    reads the two nodes around n_u, w_lo M^_lo(r~_u) + w_hi M^_hi(r~_u)."""
    from ..nodes import bracketing_weights

    values = {key: np.empty(data.n_users) for key in keys}
    for m in _distinct_counts(data.m)[0]:
        users = np.flatnonzero(data.m == m)
        nodes = np.array(sorted(n for mm, n in vectors if mm == m))
        low, w_low, high, w_high = bracketing_weights(data.n[users], nodes)
        at = (data.ranks[users] - 1) * nodes.size  # row r~_u of the (m + 1, nodes) tables
        low, high = at + low, at + high
        for key in keys:
            table = np.column_stack([vectors[m, n][key] for n in nodes]).ravel()
            values[key][users] = table[low] * w_low + table[high] * w_high
    return values
