"""Ranking metrics of section 3 of Krichene & Rendle (KDD 2020).

Two families, one definition each:

* Single relevant item (section 3.1, eqs 7-13), vectorized over an array of
  ranks. Every function has the signature ``f(ranks, n)`` so that exact,
  sampled, corrected and plotted code all call the same thing; ``n`` is the
  size of the ranked list and only AUC uses it. Ranks are 1-based and may be
  fractional (the "average" tie policy yields half-integers).
* A set R of relevant positions among n items (section 3, eqs 2-6), plus NDCG
  with graded relevance.

Aliases named in the paper: Hit Ratio = Recall, Reciprocal Rank (MRR) = AP for
|R| = 1, Accuracy = Recall@1 = Precision@1.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

MetricFn = Callable[[np.ndarray, "int | np.ndarray"], np.ndarray]


def _ranks(ranks) -> np.ndarray:
    r = np.asarray(ranks, dtype=float)
    if np.any(~np.isfinite(r)) or np.any(r < 1):
        raise ValueError("ranks must be finite and >= 1")
    return r


# --------------------------------------------------------------------------
# Single relevant item, eqs 7-13
# --------------------------------------------------------------------------


def auc(ranks, n) -> np.ndarray:
    """AUC of one relevant item at rank r among n items, eq 7: (n - r) / (n - 1).

    ``n`` may be a scalar or an array broadcastable with ``ranks`` (per-user
    size of the ranked set).
    """
    r = _ranks(ranks)
    n = np.asarray(n, dtype=float)
    if np.any(n < 2):
        raise ValueError("AUC needs n >= 2 ranked items")
    if np.any(r > n):
        raise ValueError("rank larger than n")
    return (n - r) / (n - 1)


def precision_at_k(ranks, n=None, *, k: int) -> np.ndarray:
    """Precision@k of one relevant item, eq 8: delta(r <= k) / k."""
    return (_ranks(ranks) <= k) / k


def recall_at_k(ranks, n=None, *, k: int) -> np.ndarray:
    """Recall@k (= Hit Ratio@k) of one relevant item, eq 9: delta(r <= k)."""
    return (_ranks(ranks) <= k).astype(float)


def average_precision_at_k(ranks, n=None, *, k: float = np.inf) -> np.ndarray:
    """AP@k of one relevant item, eq 10: delta(r <= k) / r.

    With the default ``k = inf`` this is the untruncated AP of eq 12, which for
    one relevant item is the reciprocal rank (MRR).
    """
    r = _ranks(ranks)
    return (r <= k) / r


def ndcg_at_k(ranks, n=None, *, k: float = np.inf) -> np.ndarray:
    """NDCG@k of one relevant item, eq 11: delta(r <= k) / log2(r + 1).

    With the default ``k = inf`` this is the untruncated NDCG of eq 13.
    """
    r = _ranks(ranks)
    return (r <= k) / np.log2(r + 1)


hit_ratio_at_k = recall_at_k


def reciprocal_rank(ranks, n=None) -> np.ndarray:
    """Reciprocal rank 1/r: equal to untruncated AP (eq 12) for |R| = 1."""
    return average_precision_at_k(ranks)


def accuracy(ranks, n=None) -> np.ndarray:
    """Accuracy = Recall@1 = Precision@1 for |R| = 1 (section 3.1)."""
    return recall_at_k(ranks, k=1)


_NAMED = {
    "auc": auc,
    "ap": average_precision_at_k,
    "mrr": average_precision_at_k,
    "rr": average_precision_at_k,
    "ndcg": ndcg_at_k,
    "accuracy": accuracy,
}
_AT_K = {
    "recall": recall_at_k,
    "hr": recall_at_k,
    "hit_ratio": recall_at_k,
    "precision": precision_at_k,
    "prec": precision_at_k,
    "ap": average_precision_at_k,
    "ndcg": ndcg_at_k,
}
_AT_K_PATTERN = re.compile(r"^([a-z_]+)@([1-9][0-9]*)$")


def metric_by_name(name: str) -> MetricFn:
    """The metric function ``f(ranks, n)`` for a name such as ``"recall@10"``,
    ``"ndcg@10"``, ``"ndcg"``, ``"ap"``, ``"mrr"``, ``"auc"``, ``"hr@10"``.

    Raises ``ValueError`` naming the metric when it is unknown.
    """
    key = name.strip().lower()
    if key in _NAMED:
        return _NAMED[key]
    match = _AT_K_PATTERN.match(key)
    if match and match.group(1) in _AT_K:
        fn, k = _AT_K[match.group(1)], int(match.group(2))
        return lambda ranks, n=None: fn(ranks, n, k=k)
    known = sorted(set(_NAMED) | {f"{m}@k" for m in _AT_K})
    raise ValueError(f"unknown metric {name!r}; known: {', '.join(known)}")


def metric_vector(metric: MetricFn | str, n: int) -> np.ndarray:
    """The metric at every rank 1..n as a vector M of length n (M[r-1] = M(r))."""
    fn = metric_by_name(metric) if isinstance(metric, str) else metric
    return np.asarray(fn(np.arange(1, n + 1), n), dtype=float)


# --------------------------------------------------------------------------
# A set R of relevant positions among n items, eqs 2-6
# --------------------------------------------------------------------------


def _positions(relevant_positions, n: int | None = None) -> np.ndarray:
    R = np.unique(np.asarray(relevant_positions, dtype=int))
    if R.size == 0:
        raise ValueError("R must hold at least one relevant position")
    if R[0] < 1 or (n is not None and R[-1] > n):
        raise ValueError("relevant positions must lie in 1..n")
    return R


def set_auc(relevant_positions, n: int) -> float:
    """AUC of a set R of relevant positions among n items, eq 2:
    (n - (|R|-1)/2 - mean(R)) / (n - |R|)."""
    R = _positions(relevant_positions, n)
    if R.size == n:
        raise ValueError("AUC is undefined when every item is relevant")
    return float((n - (R.size - 1) / 2 - R.mean()) / (n - R.size))


def set_precision_at_k(relevant_positions, k: int) -> float:
    """Precision@k of a set R, eq 3: |{r in R: r <= k}| / k."""
    return float(np.sum(_positions(relevant_positions) <= k) / k)


def set_recall_at_k(relevant_positions, k: int) -> float:
    """Recall@k of a set R, eq 4: |{r in R: r <= k}| / |R|."""
    R = _positions(relevant_positions)
    return float(np.sum(R <= k) / R.size)


def set_average_precision_at_k(relevant_positions, k: int) -> float:
    """AP@k of a set R, eq 5: (1 / min(|R|, k)) sum_{i<=k, i in R} Prec(R)_i.

    Prec(R)_i at a relevant position i is (number of relevant positions <= i) / i.
    """
    R = _positions(relevant_positions)
    hits = R[R <= k]
    precisions = np.arange(1, hits.size + 1) / hits
    return float(precisions.sum() / min(R.size, k))


def set_ndcg_at_k(relevant_positions, k: int) -> float:
    """NDCG@k of a set R, eq 6: sum_{i<=k, i in R} 1/log2(i+1) divided by the
    ideal sum_{i=1}^{min(|R|,k)} 1/log2(i+1)."""
    R = _positions(relevant_positions)
    dcg = np.sum(1.0 / np.log2(R[R <= k] + 1))
    ideal = np.sum(1.0 / np.log2(np.arange(1, min(R.size, k) + 1) + 1))
    return float(dcg / ideal)


def graded_ndcg_at_k(gains_in_ranked_order, k: int, *, exponential: bool = False) -> float:
    """NDCG@k with graded relevance: DCG@k / IDCG@k, with
    DCG@k = sum_{i=1}^k g_i / log2(i + 1) over the ranked list and IDCG@k the
    DCG@k of the same gains sorted in decreasing order (the ideal ranking).

    ``gains_in_ranked_order[i-1]`` is the relevance of the item at position i.
    The gain is the relevance itself, or 2**rel - 1 with ``exponential=True``.
    With 0/1 relevance this equals eq 6. Returns 0 when nothing is relevant.
    """
    rel = np.asarray(gains_in_ranked_order, dtype=float)
    if rel.ndim != 1 or np.any(rel < 0) or np.any(~np.isfinite(rel)):
        raise ValueError("gains must be a 1-d array of finite non-negative numbers")
    gains = np.expm1(rel * np.log(2)) if exponential else rel
    discounts = 1.0 / np.log2(np.arange(2, min(k, gains.size) + 2))
    dcg = np.sum(gains[:k] * discounts)
    idcg = np.sum(np.sort(gains)[::-1][:k] * discounts)
    return float(dcg / idcg) if idcg > 0 else 0.0
