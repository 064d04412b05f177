"""Ranking metrics of section 3 of Krichene & Rendle (KDD 2020).

Two families, one definition each:

* Single relevant item (section 3.1, eqs 7-13), vectorized over an array of
  ranks. Every function has the signature ``f(ranks, n)`` so that exact,
  sampled, corrected and plotted code all call the same thing; ``n`` is the
  size of the ranked list and only AUC uses it. Ranks are 1-based and may be
  fractional (the "average" tie policy yields half-integers).
* A set R of relevant positions among n items (section 3, eqs 2-6), plus NDCG
  with graded relevance: in :mod:`.set_metrics`.

Aliases named in the paper: Hit Ratio = Recall, Reciprocal Rank (MRR) = AP for
|R| = 1, Accuracy = Recall@1 = Precision@1.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "MetricFn",
    "accuracy",
    "auc",
    "average_precision_at_k",
    "hit_ratio_at_k",
    "metric_by_name",
    "metric_vector",
    "ndcg_at_k",
    "precision_at_k",
    "recall_at_k",
    "reciprocal_rank",
]

# A metric f(ranks, n): the ranks of the held-out items among n (only AUC reads n).
MetricFn = Callable[[ArrayLike, ArrayLike], np.ndarray]


def _ranks(ranks: ArrayLike) -> np.ndarray:
    r = np.asarray(ranks, dtype=float)
    if np.any(~np.isfinite(r)) or np.any(r < 1):
        raise ValueError("ranks must be finite and >= 1")
    return r


# --------------------------------------------------------------------------
# Single relevant item, eqs 7-13
# --------------------------------------------------------------------------


def auc(ranks: ArrayLike, n: ArrayLike) -> np.ndarray:
    """AUC of one relevant item at rank r among n items, eq 7: (n - r) / (n - 1).

    Parameters
    ----------
    ranks : array_like
        1-based ranks r of the relevant item (may be fractional).
    n : int or array_like
        Size of the ranked list: a scalar or an array broadcastable with
        ``ranks`` (per-user size of the ranked set).

    Returns
    -------
    numpy.ndarray
        (n - r) / (n - 1) for each rank.

    Raises
    ------
    ValueError
        If a rank is not finite or below 1, if n < 2, or if a rank exceeds n.

    Examples
    --------
    >>> float(auc(1, n=3))
    1.0
    >>> auc([1, 2, 3], n=3).tolist()
    [1.0, 0.5, 0.0]
    """
    r = _ranks(ranks)
    n = np.asarray(n, dtype=float)
    if np.any(n < 2):
        raise ValueError("AUC needs n >= 2 ranked items")
    if np.any(r > n):
        raise ValueError("rank larger than n")
    return (n - r) / (n - 1)


def precision_at_k(ranks: ArrayLike, n: ArrayLike | None = None, *, k: int) -> np.ndarray:
    """Precision@k of one relevant item, eq 8: delta(r <= k) / k.

    Parameters
    ----------
    ranks : array_like
        1-based ranks r of the relevant item (may be fractional).
    n : optional
        Size of the ranked list; unused (kept for the common signature ``f(ranks, n)``).
    k : int
        The cut-off.

    Returns
    -------
    numpy.ndarray
        delta(r <= k) / k for each rank.

    Raises
    ------
    ValueError
        If a rank is not finite or below 1.

    Examples
    --------
    >>> precision_at_k([1, 5, 20], k=10).tolist()
    [0.1, 0.1, 0.0]
    """
    return (_ranks(ranks) <= k) / k


def recall_at_k(ranks: ArrayLike, n: ArrayLike | None = None, *, k: int) -> np.ndarray:
    """Recall@k (= Hit Ratio@k) of one relevant item, eq 9: delta(r <= k).

    ``hit_ratio_at_k`` is the same function.

    Parameters
    ----------
    ranks : array_like
        1-based ranks r of the relevant item (may be fractional).
    n : optional
        Size of the ranked list; unused (kept for the common signature ``f(ranks, n)``).
    k : int
        The cut-off.

    Returns
    -------
    numpy.ndarray
        1.0 where r <= k, else 0.0.

    Raises
    ------
    ValueError
        If a rank is not finite or below 1.

    Examples
    --------
    >>> recall_at_k([1, 5, 20], k=10).tolist()
    [1.0, 1.0, 0.0]
    >>> hit_ratio_at_k is recall_at_k
    True
    """
    return (_ranks(ranks) <= k).astype(float)


def average_precision_at_k(
    ranks: ArrayLike, n: ArrayLike | None = None, *, k: float = np.inf
) -> np.ndarray:
    """AP@k of one relevant item, eq 10: delta(r <= k) / r.

    With the default ``k = inf`` this is the untruncated AP of eq 12, which for
    one relevant item is the reciprocal rank (MRR).

    Parameters
    ----------
    ranks : array_like
        1-based ranks r of the relevant item (may be fractional).
    n : optional
        Size of the ranked list; unused (kept for the common signature ``f(ranks, n)``).
    k : float, default inf
        The cut-off.

    Returns
    -------
    numpy.ndarray
        delta(r <= k) / r for each rank.

    Raises
    ------
    ValueError
        If a rank is not finite or below 1.

    Examples
    --------
    >>> average_precision_at_k([1, 2, 4]).tolist()
    [1.0, 0.5, 0.25]
    >>> average_precision_at_k([1, 2, 4], k=2).tolist()
    [1.0, 0.5, 0.0]
    """
    r = _ranks(ranks)
    return (r <= k) / r


def ndcg_at_k(ranks: ArrayLike, n: ArrayLike | None = None, *, k: float = np.inf) -> np.ndarray:
    """NDCG@k of one relevant item, eq 11: delta(r <= k) / log2(r + 1).

    With the default ``k = inf`` this is the untruncated NDCG of eq 13.

    Parameters
    ----------
    ranks : array_like
        1-based ranks r of the relevant item (may be fractional).
    n : optional
        Size of the ranked list; unused (kept for the common signature ``f(ranks, n)``).
    k : float, default inf
        The cut-off.

    Returns
    -------
    numpy.ndarray
        delta(r <= k) / log2(r + 1) for each rank.

    Raises
    ------
    ValueError
        If a rank is not finite or below 1.

    Examples
    --------
    >>> ndcg_at_k([1, 3, 7]).tolist()
    [1.0, 0.5, 0.3333333333333333]
    >>> ndcg_at_k([1, 3, 7], k=5).tolist()
    [1.0, 0.5, 0.0]
    """
    r = _ranks(ranks)
    return (r <= k) / np.log2(r + 1)


hit_ratio_at_k = recall_at_k


def reciprocal_rank(ranks: ArrayLike, n: ArrayLike | None = None) -> np.ndarray:
    """Reciprocal rank 1/r: equal to untruncated AP (eq 12) for |R| = 1.

    Parameters
    ----------
    ranks : array_like
        1-based ranks r of the relevant item (may be fractional).
    n : optional
        Size of the ranked list; unused (kept for the common signature ``f(ranks, n)``).

    Returns
    -------
    numpy.ndarray
        1 / r for each rank.

    Raises
    ------
    ValueError
        If a rank is not finite or below 1.

    Examples
    --------
    >>> reciprocal_rank([1, 4]).tolist()
    [1.0, 0.25]
    """
    return average_precision_at_k(ranks)


def accuracy(ranks: ArrayLike, n: ArrayLike | None = None) -> np.ndarray:
    """Accuracy = Recall@1 = Precision@1 for |R| = 1 (section 3.1).

    Parameters
    ----------
    ranks : array_like
        1-based ranks r of the relevant item (may be fractional).
    n : optional
        Size of the ranked list; unused (kept for the common signature ``f(ranks, n)``).

    Returns
    -------
    numpy.ndarray
        1.0 where r = 1, else 0.0.

    Raises
    ------
    ValueError
        If a rank is not finite or below 1.

    Examples
    --------
    >>> accuracy([1, 2]).tolist()
    [1.0, 0.0]
    """
    return recall_at_k(ranks, k=1)


# With one held-out item per user, the frameworks' names are these metrics: a hit
# (RecBole's hit@k, Elliot's HR, cornac's HitRatio) is recall@k, the reciprocal rank
# (mrr@k, LensKit's recip_rank) and mean average precision (map@k) are AP.
_NAMED: dict[str, MetricFn] = {
    "auc": auc,
    "ap": average_precision_at_k,
    "map": average_precision_at_k,
    "mrr": average_precision_at_k,
    "rr": average_precision_at_k,
    "recip_rank": average_precision_at_k,
    "ndcg": ndcg_at_k,
    "accuracy": accuracy,
}
_AT_K: dict[str, Callable[..., np.ndarray]] = {
    "recall": recall_at_k,
    "hr": recall_at_k,
    "hit": recall_at_k,
    "hit_ratio": recall_at_k,
    "hitratio": recall_at_k,
    "precision": precision_at_k,
    "prec": precision_at_k,
    "ap": average_precision_at_k,
    "map": average_precision_at_k,
    "mrr": average_precision_at_k,
    "ndcg": ndcg_at_k,
}
_AT_K_PATTERN = re.compile(r"^([a-z_]+)@([1-9][0-9]*)$")


def metric_by_name(name: str) -> MetricFn:
    """The metric function ``f(ranks, n)`` for a name such as ``"recall@10"``.

    Names are case-insensitive: ``"recall@10"``, ``"ndcg@10"``, ``"ndcg"``,
    ``"ap"``, ``"mrr"``, ``"auc"``, ``"hr@10"``, and more (the error message
    lists them all).

    Parameters
    ----------
    name : str
        The metric's name; ``"<metric>@<k>"`` sets a cut-off.

    Returns
    -------
    callable
        ``f(ranks, n=None)``, the metric of section 3.1 (only AUC uses ``n``).

    Raises
    ------
    ValueError
        Naming the metric, when it is unknown.

    Examples
    --------
    >>> metric_by_name("recall@10")([1, 5, 20]).tolist()
    [1.0, 1.0, 0.0]
    >>> metric_by_name("AUC") is auc
    True
    """
    key = name.strip().lower()
    if key in _NAMED:
        return _NAMED[key]
    match = _AT_K_PATTERN.match(key)
    if match and match.group(1) in _AT_K:
        fn, k = _AT_K[match.group(1)], int(match.group(2))

        def at_k(ranks: ArrayLike, n: ArrayLike | None = None) -> np.ndarray:
            return fn(ranks, n, k=k)

        return at_k
    known = sorted(set(_NAMED) | {f"{m}@k" for m in _AT_K})
    raise ValueError(f"unknown metric {name!r}; known: {', '.join(known)}")


def metric_vector(metric: MetricFn | str, n: int) -> np.ndarray:
    """The metric at every rank 1..n as a vector M of length n (M[r-1] = M(r)).

    Parameters
    ----------
    metric : callable or str
        A metric ``f(ranks, n)`` or its name (see :func:`metric_by_name`).
    n : int
        Number of ranked items.

    Returns
    -------
    numpy.ndarray
        Float vector of length n.

    Raises
    ------
    ValueError
        If the metric's name is unknown.

    Examples
    --------
    >>> metric_vector("auc", 3).tolist()
    [1.0, 0.5, 0.0]
    >>> metric_vector("recall@2", 4).tolist()
    [1.0, 1.0, 0.0, 0.0]
    """
    fn = metric_by_name(metric) if isinstance(metric, str) else metric
    return np.asarray(fn(np.arange(1, n + 1), n), dtype=float)
