"""Products of the binomial law's rows: Gram matrices from 2m + 1 numbers.

Sampling with replacement (eq 15) makes the law's rows Bernstein polynomials of degree m,
p(r~ | r) = B_k(theta) = C(m, k) theta^k (1 - theta)^(m - k), k = r~ - 1 and theta =
(r - 1)/(n - 1); EM's and maxent's likelihood rows on the theta grid are the same
polynomials. A product of two is again one, of degree 2m:

    B_k(t) B_l(t) = C(m, k) C(m, l) / C(2m, k + l) B^(2m)_(k+l)(t),

so for any weights w over points t_j, sum_j w_j B_k(t_j) B_l(t_j) = c_kl S_(k+l) with
S_s = sum_j w_j B^(2m)_s(t_j): the (m + 1) x (m + 1) Gram matrix of the weighted rows
from one product of w with the degree-2m law, instead of a product over every point for
each pair. Since the B_l sum to 1 (a row of the law sums to 1), the Gram's row sums are
sum_j w_j B_k(t_j): the same S also gives the law's weighted column sums.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from .laws import WITH_REPLACEMENT, _log_binomial_coefficient, sampled_rank_law

__all__ = ["bernstein_gram", "doubled_law", "product_coefficients"]


@lru_cache(maxsize=4)
def product_coefficients(m: int) -> np.ndarray:
    """c_kl = C(m, k) C(m, l) / C(2m, k + l) for k, l = 0..m, read-only.

    In log space (log-binomial coefficients from beta functions): a relative error
    of about the rounding times log C(2m, m) (1e-14 at m = 100).

    Parameters
    ----------
    m : int
        The degree (the number of sampled items).

    Returns
    -------
    numpy.ndarray
        Shape (m + 1, m + 1), symmetric.

    Examples
    --------
    B_0 B_1 = (1 - t)^m m t (1 - t)^(m - 1) = m / (2m) B^(2m)_1, with m = 2:

    >>> product_coefficients(2).round(12).tolist()
    [[1.0, 0.5, 0.166666666667], [0.5, 0.666666666667, 0.5], [0.166666666667, 0.5, 1.0]]
    """
    k = np.arange(m + 1.0)
    log_c = _log_binomial_coefficient(float(m), k)
    total = _log_binomial_coefficient(2.0 * m, k[:, None] + k[None, :])
    coefficients = np.exp(log_c[:, None] + log_c[None, :] - total)
    coefficients.setflags(write=False)
    return coefficients


def bernstein_gram(moments: ArrayLike, m: int, degrees: ArrayLike | None = None) -> np.ndarray:
    """sum_j w_j B_k(t_j) B_l(t_j) for k, l in ``degrees``, from S_s = sum_j w_j
    B^(2m)_s(t_j), s = 0..2m (the module's identity).

    Parameters
    ----------
    moments : array_like
        S, length 2m + 1 (or shape (2m + 1, q): q weightings, a Gram for each).
    m : int
    degrees : array_like of int, optional
        The k of the rows wanted (the sampled ranks r~ - 1 present); all 0..m when None.

    Returns
    -------
    numpy.ndarray
        Shape (d, d) (or (d, d, q)), d = len(degrees).

    Raises
    ------
    ValueError
        If S does not hold 2m + 1 sums.

    Examples
    --------
    One point t = 1/2 of weight 1, m = 1: B_0 = B_1 = 1/2, so every product is 1/4;
    B^(2)(1/2) = (1/4, 1/2, 1/4):

    >>> bernstein_gram([0.25, 0.5, 0.25], 1).round(12).tolist()
    [[0.25, 0.25], [0.25, 0.25]]
    """
    S = np.asarray(moments, dtype=float)
    if S.shape[0] != 2 * m + 1:
        raise ValueError(f"moments must hold 2m + 1 = {2 * m + 1} sums, got {S.shape[0]}")
    if degrees is None:  # every degree: S[k + l] as a (Hankel) view of S, no gather
        coefficients = product_coefficients(int(m))
        step = S.strides[0]
        hankel = np.lib.stride_tricks.as_strided(
            S, (m + 1, m + 1, *S.shape[1:]), (step, step, *S.strides[1:]), writeable=False
        )
    else:
        k = np.asarray(degrees, dtype=np.int64)
        coefficients = product_coefficients(int(m))[np.ix_(k, k)]
        hankel = S[k[:, None] + k[None, :]]
    return coefficients * hankel if S.ndim == 1 else coefficients[..., None] * hankel


@lru_cache(maxsize=8)
def doubled_law(n: int, m: int) -> np.ndarray:
    """The binomial law of degree 2m at n, P2[r - 1, s] = B^(2m)_s((r - 1)/(n - 1)),
    read-only: p @ P2 is S for the weights p(r) over the ranks (cached by (n, m): the
    repetitions of an evaluation share the nodes of n; here rather than in
    corrections.law_cache, whose laws of more than 4M entries are built anew each time,
    while P2 at ML-20M's n has 5.4M).

    Parameters
    ----------
    n, m : int
        The ranked-set size and the degree of the law it doubles.

    Returns
    -------
    numpy.ndarray
        Shape (n, 2m + 1), not writeable.

    Examples
    --------
    >>> doubled_law(3, 1).round(12).tolist()
    [[1.0, 0.0, 0.0], [0.25, 0.5, 0.25], [0.0, 0.0, 1.0]]
    """
    P2 = sampled_rank_law(int(n), 2 * int(m), WITH_REPLACEMENT)
    P2.setflags(write=False)
    return P2
