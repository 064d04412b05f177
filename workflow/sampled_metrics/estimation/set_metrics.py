"""Ranking metrics of a set R of relevant positions among n items (section 3 of
Krichene & Rendle, KDD 2020, eqs 2-6), plus NDCG with graded relevance.

Positions are 1-based; duplicates in R are ignored. With |R| = 1 each reduces to
its single-item form of :mod:`.metrics` (eqs 7-13).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "graded_ndcg_at_k",
    "set_auc",
    "set_average_precision_at_k",
    "set_ndcg_at_k",
    "set_precision_at_k",
    "set_recall_at_k",
]


def _positions(relevant_positions, n: int | None = None) -> np.ndarray:
    R = np.unique(np.asarray(relevant_positions, dtype=int))
    if R.size == 0:
        raise ValueError("R must hold at least one relevant position")
    if R[0] < 1 or (n is not None and R[-1] > n):
        raise ValueError("relevant positions must lie in 1..n")
    return R


def set_auc(relevant_positions: ArrayLike, n: int) -> float:
    """AUC of a set R of relevant positions among n items, eq 2.

    AUC = (n - (|R|-1)/2 - mean(R)) / (n - |R|).

    Parameters
    ----------
    relevant_positions : array_like of int
        The positions R (1-based; duplicates are ignored).
    n : int
        Number of ranked items.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If R is empty, a position lies outside 1..n, or every item is relevant
        (AUC is then undefined).

    Examples
    --------
    R = {1, 3} among 4 items: 3 of the 4 (relevant, irrelevant) pairs are in order.

    >>> set_auc([1, 3], n=4)
    0.75
    """
    R = _positions(relevant_positions, n)
    if R.size == n:
        raise ValueError("AUC is undefined when every item is relevant")
    return float((n - (R.size - 1) / 2 - R.mean()) / (n - R.size))


def set_precision_at_k(relevant_positions: ArrayLike, k: int) -> float:
    """Precision@k of a set R, eq 3: |{r in R: r <= k}| / k.

    Parameters
    ----------
    relevant_positions : array_like of int
        The positions R (1-based; duplicates are ignored).
    k : int
        The cut-off.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If R is empty or holds a position below 1.

    Examples
    --------
    >>> set_precision_at_k([1, 3], k=2)
    0.5
    """
    return float(np.sum(_positions(relevant_positions) <= k) / k)


def set_recall_at_k(relevant_positions: ArrayLike, k: int) -> float:
    """Recall@k of a set R, eq 4: |{r in R: r <= k}| / |R|.

    Parameters
    ----------
    relevant_positions : array_like of int
        The positions R (1-based; duplicates are ignored).
    k : int
        The cut-off.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If R is empty or holds a position below 1.

    Examples
    --------
    >>> set_recall_at_k([1, 3], k=2), set_recall_at_k([1, 3], k=3)
    (0.5, 1.0)
    """
    R = _positions(relevant_positions)
    return float(np.sum(R <= k) / R.size)


def set_average_precision_at_k(relevant_positions: ArrayLike, k: int) -> float:
    """AP@k of a set R, eq 5: (1 / min(|R|, k)) sum_{i<=k, i in R} Prec(R)_i.

    Prec(R)_i at a relevant position i is (number of relevant positions <= i) / i.

    Parameters
    ----------
    relevant_positions : array_like of int
        The positions R (1-based; duplicates are ignored).
    k : int
        The cut-off.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If R is empty or holds a position below 1.

    Examples
    --------
    R = {1, 3}: (1/1 + 2/3) / 2.

    >>> round(set_average_precision_at_k([1, 3], k=3), 4)
    0.8333
    """
    R = _positions(relevant_positions)
    hits = R[R <= k]
    precisions = np.arange(1, hits.size + 1) / hits
    return float(precisions.sum() / min(R.size, k))


def set_ndcg_at_k(relevant_positions: ArrayLike, k: int) -> float:
    """NDCG@k of a set R, eq 6.

    NDCG@k = sum_{i<=k, i in R} 1/log2(i+1) divided by the ideal
    sum_{i=1}^{min(|R|,k)} 1/log2(i+1).

    Parameters
    ----------
    relevant_positions : array_like of int
        The positions R (1-based; duplicates are ignored).
    k : int
        The cut-off.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If R is empty or holds a position below 1.

    Examples
    --------
    >>> set_ndcg_at_k([1, 2], k=10), round(set_ndcg_at_k([2], k=10), 4)  # 1 / log2(3)
    (1.0, 0.6309)
    """
    R = _positions(relevant_positions)
    dcg = np.sum(1.0 / np.log2(R[R <= k] + 1))
    ideal = np.sum(1.0 / np.log2(np.arange(1, min(R.size, k) + 1) + 1))
    return float(dcg / ideal)


def graded_ndcg_at_k(
    gains_in_ranked_order: ArrayLike, k: int, *, exponential: bool = False
) -> float:
    """NDCG@k with graded relevance: DCG@k / IDCG@k.

    DCG@k = sum_{i=1}^k g_i / log2(i + 1) over the ranked list and IDCG@k is the
    DCG@k of the same gains sorted in decreasing order (the ideal ranking).
    With 0/1 relevance this equals eq 6.

    Parameters
    ----------
    gains_in_ranked_order : array_like
        ``gains_in_ranked_order[i-1]`` is the relevance of the item at position i
        (finite, non-negative).
    k : int
        The cut-off.
    exponential : bool, default False
        The gain is the relevance itself, or 2**rel - 1 with ``exponential=True``.

    Returns
    -------
    float
        DCG@k / IDCG@k; 0 when nothing is relevant.

    Raises
    ------
    ValueError
        If the gains are not a 1-d array of finite non-negative numbers.

    Examples
    --------
    >>> round(graded_ndcg_at_k([1, 0, 1], k=3), 4), round(set_ndcg_at_k([1, 3], k=3), 4)
    (0.9197, 0.9197)
    >>> graded_ndcg_at_k([0, 0], k=2)
    0.0
    """
    rel = np.asarray(gains_in_ranked_order, dtype=float)
    if rel.ndim != 1 or np.any(rel < 0) or np.any(~np.isfinite(rel)):
        raise ValueError("gains must be a 1-d array of finite non-negative numbers")
    gains = np.expm1(rel * np.log(2)) if exponential else rel
    discounts = 1.0 / np.log2(np.arange(2, min(k, gains.size) + 2))
    dcg = np.sum(gains[:k] * discounts)
    idcg = np.sum(np.sort(gains)[::-1][:k] * discounts)
    return float(dcg / idcg) if idcg > 0 else 0.0
