"""The least-squares systems of section 5 (eqs 21-25), built once per law and prior.

With the law P[r, r~] = p(r~ | r) and a prior p(r) over true ranks (uniform by
default):

    A[r, r~] = sqrt(p(r)) p(r~ | r),   b[r] = sqrt(p(r)) M(r),
    c[r~]    = sum_r p(r) p(r~ | r).

(Eq 23 as printed abbreviates A; this is the form obtained from eq 21.)

Every solver works on the (m+1)-dimensional form of these systems
(``reduced_system``): one QR factorization A = Q R, shared by all metrics of a
law, turns ||A x - b||^2 into ||R x - Q^T b||^2 + const, so a solve no longer
touches the n rows of the law; the bias-variance systems use the normal
equations (``normal_equations``). Also the objective of eq 21 itself
(``average_squared_bias``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg

from ..laws import significant_blocks

__all__ = [
    "ReducedSystem",
    "average_squared_bias",
    "binomial_normal_equations",
    "least_squares_design",
    "normal_equations",
    "reduced_system",
    "uniform_prior",
]


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


def least_squares_design(
    exact_values: ArrayLike, law_matrix: ArrayLike, prior: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    >>> from sampled_metrics import sampled_rank_law
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
    >>> from sampled_metrics import metric_vector, sampled_rank_law
    >>> system = reduced_system(metric_vector("ap", 12), sampled_rank_law(12, 3))
    >>> system.R.shape, system.Y.shape, bool(np.allclose(np.tril(system.R, -1), 0))
    ((4, 4), (4, 1), True)
    """

    R: np.ndarray
    Y: np.ndarray
    c: np.ndarray
    rcond: float


def reduced_system(
    exact_values: ArrayLike, law_matrix: ArrayLike, prior: ArrayLike | None = None
) -> ReducedSystem:
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
    >>> from sampled_metrics import metric_vector, sampled_rank_law

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
    RY = _r_factor(stacked)
    eps = np.finfo(float).eps
    return ReducedSystem(RY[:size, :size], RY[:size, size:], c, eps * max(n, size))


# Rows of [A | B] factored at a time by _r_factor: a block of 1024 x ~110 float64
# (0.9 MB) stays in cache, where LAPACK's pass over all n rows streams them from memory.
_QR_ROWS = 1024


def _r_factor(matrix: np.ndarray) -> np.ndarray:
    """The R factor of a tall matrix (rows >= columns), upper triangular (columns x
    columns), a block of ``_QR_ROWS`` rows at a time: each block's R, then the R of
    those stacked (TSQR; Demmel, Grigori, Hoemmen & Langou, SIAM J. Sci. Comput. 34,
    2012). [A | B] = Q R then, R unique up to the signs of its rows, which leave every
    ||R x - y|| of the reduced system as it was. At n = 26,744 and 112 columns 1.9
    times faster than one factorization of all rows, 1.6 times at n = 3,706."""
    geqrf = linalg.get_lapack_funcs("geqrf", (matrix,))

    def r_of(block):
        qr, _, _, info = geqrf(block)
        if info:
            raise np.linalg.LinAlgError(f"geqrf failed: info {info}")
        return np.triu(qr[: min(block.shape)])

    rows, columns = matrix.shape
    if rows <= _QR_ROWS:
        return r_of(matrix)
    blocks = [r_of(matrix[a : a + _QR_ROWS]) for a in range(0, rows, _QR_ROWS)]
    return r_of(np.vstack(blocks))[:columns]


def normal_equations(
    exact_values: ArrayLike, law_matrix: ArrayLike, prior: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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
    >>> from sampled_metrics import metric_vector, sampled_rank_law
    >>> gram, rhs, c = normal_equations(metric_vector("ap", 10), sampled_rank_law(10, 3))
    >>> gram.shape, rhs.shape, round(float(c.sum()), 12)
    ((4, 4), (4, 1), 1.0)
    """
    B = np.asarray(exact_values, dtype=float)
    B = B[:, None] if B.ndim == 1 else B
    A, _, c = least_squares_design(B[:, 0], law_matrix, prior)
    weighted = np.sqrt(_prior(prior, A.shape[0]))[:, None] * B
    return _banded_gram(A), A.T @ weighted, c


def binomial_normal_equations(
    exact_values: ArrayLike, n: int, m: int, prior: ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`normal_equations` of the binomial law (sampling with replacement) at
    (n, m), from the law of degree 2m (:mod:`..bernstein`): with S = w^T P2 for the
    weights w = p and w = p M_j, A^T A is the Gram of w = p, and A^T b_j and c are the
    row sums of the Grams of p M_j and of p (the law's rows sum to 1). One product of
    k + 1 weightings with the cached P2 instead of a product over the n rows per pair
    of columns: 5 times faster at n = 3,706 and m = 100 when the repetitions' priors
    share P2. A^T A is returned whole (its upper triangle as normal_equations').

    Parameters
    ----------
    exact_values : array_like
        M(1..n) (shape (n,)) or k metrics (shape (n, k)).
    n, m : int
        The law's ranked-set size and number of sampled items.
    prior : array_like, optional
        p(r) over r = 1..n; uniform when None.

    Returns
    -------
    gram, rhs, c
        As :func:`normal_equations`'.

    Examples
    --------
    >>> from sampled_metrics import metric_vector, sampled_rank_law
    >>> M, prior = metric_vector("ap", 10), np.linspace(1, 2, 10)
    >>> direct = normal_equations(M, sampled_rank_law(10, 3, "binomial"), prior)
    >>> fast = binomial_normal_equations(M, 10, 3, prior)
    >>> [bool(np.allclose(np.triu(a), np.triu(b), rtol=1e-12)) for a, b in zip(direct, fast)]
    [True, True, True]
    """
    from ..bernstein import bernstein_gram, doubled_law

    B = np.asarray(exact_values, dtype=float)
    B = B[:, None] if B.ndim == 1 else B
    p = _prior(prior, n)
    moments = np.column_stack([p, p[:, None] * B]).T @ doubled_law(n, m)  # (k + 1, 2m + 1)
    grams = bernstein_gram(moments.T, m)  # (m + 1, m + 1, k + 1)
    gram = grams[:, :, 0]
    return gram, grams[:, :, 1:].sum(axis=1), gram.sum(axis=1)


_ROW_BLOCK = 256


def _banded_gram(A) -> np.ndarray:
    """Upper triangle of A^T A, each block of rows multiplied only over the columns it reaches.

    A row of the law is unimodal in r~, so its entries above ``laws.NEGLIGIBLE`` are
    one contiguous window (:func:`~sampled_metrics.estimation.laws.significant_blocks`),
    about 20 standard deviations of r~ wide: at m = 3705 a few hundred of the 3706
    columns. Summing BLAS syrk products of those windows makes A^T A band-limited and
    up to 40 times cheaper at large m.
    """
    gram = np.zeros((A.shape[1], A.shape[1]))
    for rows, low, high in significant_blocks(A, _ROW_BLOCK):
        if low < high:
            gram[low:high, low:high] += linalg.blas.dsyrk(1.0, A[rows, low:high], trans=1)
    return gram


def average_squared_bias(
    values_on_sample: ArrayLike,
    exact_values: ArrayLike,
    law_matrix: ArrayLike,
    prior: ArrayLike | None = None,
) -> float:
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
    >>> from sampled_metrics import sampled_rank_law

    With m = n - 1 the law is the identity, and the uncorrected metric has no bias:

    >>> average_squared_bias([1.0, 0.5, 0.0], [1.0, 0.5, 0.0], sampled_rank_law(3, 2))
    0.0
    >>> round(average_squared_bias([1.0, 1.0, 1.0], [1.0, 0.5, 0.0], np.eye(3)), 4)  # 1.25 / 3
    0.4167
    """
    A, b, _ = least_squares_design(exact_values, law_matrix, prior)
    residual = A @ np.asarray(values_on_sample, dtype=float) - b
    return float(residual @ residual)
