"""The solvers of the least-squares systems (:mod:`.systems`), for k metrics at once:
least squares (eq 22), bias-variance (eq 25) and the order-constrained least squares
of CLS (eq 21 under the constraints of section 5.2)."""

from __future__ import annotations

import numpy as np
from scipy import linalg

from .systems import ReducedSystem

__all__ = ["CLS_CONSTRAINTS", "solve_positive_definite"]


# The constraints of CLS: "monotone" is the order constraint of section 5.2
# alone; "monotone_in_range" adds that M^ stays within the metric's own range
# min_r M(r) <= M^ <= max_r M(r) (a metric is never negative, nor above 1).
CLS_CONSTRAINTS = ("monotone_in_range", "monotone")


def solve_positive_definite(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs^-1 rhs for a symmetric positive definite lhs (its upper triangle read), by
    Cholesky: LAPACK's potrf and potrs, the arithmetic of scipy.linalg.solve with
    assume_a="pos", without its condition estimate and checks (a third of its time on
    maxent's and MN's small systems, solved once per Newton step and per repetition).

    Parameters
    ----------
    lhs : numpy.ndarray
        (k, k), symmetric positive definite.
    rhs : numpy.ndarray
        (k,) or (k, q).

    Returns
    -------
    numpy.ndarray
        The solution, shaped as ``rhs``.

    Raises
    ------
    ValueError
        If an entry is not finite.
    numpy.linalg.LinAlgError
        If lhs is not positive definite (to the rounding).

    Examples
    --------
    >>> solve_positive_definite(np.array([[4.0, 2.0], [2.0, 3.0]]), np.array([2.0, 1.0]))
    array([0.5, 0. ])
    """
    lhs, rhs = np.asarray(lhs, dtype=float), np.asarray(rhs, dtype=float)
    if not (np.isfinite(lhs).all() and np.isfinite(rhs).all()):
        raise ValueError("the system must hold finite numbers")
    potrf, potrs = linalg.get_lapack_funcs(("potrf", "potrs"), (lhs, rhs))
    factor, info = potrf(lhs, lower=False, clean=False)
    if info:
        raise np.linalg.LinAlgError(f"not positive definite (potrf info {info})")
    solution, info = potrs(factor, rhs, lower=False)
    if info:
        raise np.linalg.LinAlgError(f"potrs failed: info {info}")
    return solution


def _solve_least_squares(system: ReducedSystem) -> np.ndarray:
    """Eq 22 for every metric of the system: the minimum-norm solutions, (m+1, k)."""
    return np.linalg.lstsq(system.R, system.Y, rcond=system.rcond)[0]


def _upper_bandwidth(matrix) -> int:
    """The largest j - i with matrix[i, j] != 0 (upper triangle)."""
    nonzero = matrix != 0
    last = matrix.shape[1] - 1 - nonzero[:, ::-1].argmax(axis=1)
    return int(np.max(last - np.arange(matrix.shape[0])))


# Bandwidth, as a fraction of the size, from which eq 25 is solved as a dense system.
_DENSE_FRACTION = 0.9


def _solve_bias_variance(gram, rhs, c, gamma: float) -> np.ndarray:
    """Eq 25: ((1 - gamma) A^T A + gamma diag(c))^-1 A^T b, gamma in (0, 1], (m+1, k).

    Symmetric positive definite with condition number ~ 1/gamma: solved by Cholesky
    on the upper triangle, in banded storage unless A^T A is (nearly) full. LAPACK's
    banded Cholesky is as fast as the dense one per flop, so it wins up to a bandwidth
    of about 9/10 of the size: at m = 3705, 0.10 s against 0.64 s for a bandwidth of a
    quarter, 0.47 s against 0.62 s for three quarters (Figure 6's largest sample sizes).
    A prior under which some sampled rank has no evidence (c = 0, e.g. a learned prior
    that is 0 beyond some rank) leaves that M^ undetermined, with weight 0 in eq 24:
    the system is then singular and the minimum-norm solution sets it to 0.
    """
    lhs = (1.0 - gamma) * gram
    lhs[np.diag_indices_from(lhs)] += gamma * c
    width = _upper_bandwidth(lhs)
    try:
        if width >= _DENSE_FRACTION * lhs.shape[0]:
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
    from scipy import optimize  # here only: slow to import, and few jobs solve

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
    from scipy import optimize  # here only: slow to import, and few jobs solve

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
