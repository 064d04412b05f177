"""Expected sampled metrics, section 4.4 of Krichene & Rendle (KDD 2020).

The expectation of any vector over the sampled rank r~ = 1..m+1 under the law
of :mod:`.laws` (eq 16), and the closed forms of eq 18 (Recall@k) and eq 19
(AP, sampling with replacement).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .laws import (
    WITHOUT_REPLACEMENT,
    check_law_arguments,
    sampled_rank_pmf,
    sampling_law,
)
from .metrics import MetricFn, metric_vector

__all__ = [
    "expected_ap_closed_form",
    "expected_recall_closed_form",
    "expected_sampled_metric",
    "metric_on_sample",
]


def metric_on_sample(metric: MetricFn | str, m: int) -> np.ndarray:
    """The uncorrected sampled metric as a vector over r~ = 1..m+1.

    The metric applied to the rank within the m + 1 ranked items (AUC uses
    n = m + 1).

    Parameters
    ----------
    metric : callable or str
        A metric ``f(ranks, n)`` or its name (see :func:`.metrics.metric_by_name`).
    m : int
        Number of sampled irrelevant items.

    Returns
    -------
    numpy.ndarray
        Vector of length m + 1: M(r~) for r~ = 1..m+1.

    Raises
    ------
    ValueError
        If the metric's name is unknown.

    Examples
    --------
    >>> metric_on_sample("auc", 2).tolist()
    [1.0, 0.5, 0.0]
    >>> metric_on_sample("recall@1", 2).tolist()
    [1.0, 0.0, 0.0]
    """
    return metric_vector(metric, m + 1)


def expected_sampled_metric(
    values_on_sample: ArrayLike, ranks: ArrayLike, n: ArrayLike, law: str = WITHOUT_REPLACEMENT
) -> np.ndarray:
    """E[M(r~) | r] = sum_{i=1}^{m+1} p(r~ = i | r) M(i), eq 16, for each true rank.

    Parameters
    ----------
    values_on_sample : array_like
        Any vector over r~ = 1..m+1: the uncorrected metric
        (:func:`metric_on_sample`) or a corrected one (:mod:`.corrections`); m
        is its length minus one.
    ranks : array_like of int
        True ranks r.
    n : int or array_like of int
        A scalar or one ranked-set size per rank.
    law : {"hypergeometric", "binomial"}, default "hypergeometric"
        Sampling without (default) or with replacement.

    Returns
    -------
    numpy.ndarray
        E[M(r~) | r] for each rank.

    Raises
    ------
    ValueError
        As :func:`.laws.sampled_rank_pmf`.

    Examples
    --------
    Sampled AUC is unbiased (section 4.4.1): the expectation is (n - r)/(n - 1).

    >>> v = metric_on_sample("auc", 10)
    >>> np.round(expected_sampled_metric(v, [1, 10, 50, 100], n=100), 4).tolist()
    [1.0, 0.9091, 0.5051, 0.0]

    With m = n - 1 and no replacement, the sampled rank is the true rank:

    >>> expected_sampled_metric(metric_on_sample("ap", 9), [1, 2, 5], n=10).tolist()
    [1.0, 0.5, 0.2]
    """
    values = np.asarray(values_on_sample, dtype=float)
    m = values.size - 1
    return sampled_rank_pmf(ranks, n, m, law) @ values


def expected_recall_closed_form(
    ranks: ArrayLike, n: ArrayLike, m: int, k: int, law: str = WITHOUT_REPLACEMENT
) -> np.ndarray:
    """E[Recall@k(r~) | r] = P(r~ <= k) = CDF(k - 1), eq 18 (either law), from scipy.stats.

    Parameters
    ----------
    ranks : array_like
        True ranks r.
    n : int or array_like
        Number of ranked items (a scalar or one per rank).
    m : int
        Number of sampled irrelevant items.
    k : int
        The cut-off of Recall@k.
    law : {"hypergeometric", "binomial"}, default "hypergeometric"
        A law with replacement uses scipy.stats.binom, one without scipy.stats.hypergeom.

    Returns
    -------
    numpy.ndarray
        P(r~ <= k) for each rank.

    Examples
    --------
    With replacement and k = 1, P(r~ = 1) = ((n - r)/(n - 1))^m:

    >>> r = [1, 2, 3]
    >>> np.round(expected_recall_closed_form(r, n=3, m=2, k=1, law="binomial"), 4).tolist()
    [1.0, 0.25, 0.0]
    >>> v = metric_on_sample("recall@5", 10)
    >>> bool(np.allclose(expected_recall_closed_form(r, 100, 10, k=5),
    ...                  expected_sampled_metric(v, r, 100)))
    True
    """
    from scipy import stats  # here: importing scipy.stats is slow, and most jobs never need it

    check_law_arguments(ranks, n, m, law)
    r, n = np.asarray(ranks, dtype=float), np.asarray(n)
    if sampling_law(law).replacement:
        return stats.binom.cdf(k - 1, m, (r - 1) / (n - 1))
    return stats.hypergeom.cdf(k - 1, n - 1, r - 1, m)


def expected_ap_closed_form(ranks: ArrayLike, n: ArrayLike, m: int) -> np.ndarray:
    """E[AP(r~) | r] under sampling with replacement, eq 19.

    E[AP(r~) | r] = (1 - ((n - r)/(n - 1))^(m+1)) / ((r - 1)(m + 1)/(n - 1))
    for r > 1, and 1 for r = 1.

    Parameters
    ----------
    ranks : array_like
        True ranks r.
    n : int or array_like
        Number of ranked items (a scalar or one per rank).
    m : int
        Number of sampled irrelevant items.

    Returns
    -------
    numpy.ndarray
        E[AP(r~) | r] for each rank.

    Examples
    --------
    With n = 3 and m = 1, rank 2 is sampled at 1 or 2 with equal chance
    (AP 1 or 1/2); rank 3 always at 2:

    >>> np.round(expected_ap_closed_form([1, 2, 3], n=3, m=1), 4).tolist()
    [1.0, 0.75, 0.5]
    >>> v, r = metric_on_sample("ap", 10), [1, 5, 50]
    >>> bool(np.allclose(expected_ap_closed_form(r, 100, 10),
    ...                  expected_sampled_metric(v, r, 100, law="binomial")))
    True
    """
    r, n = np.asarray(ranks, dtype=float), np.asarray(n)
    q = (r - 1) / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = -np.expm1((m + 1) * np.log1p(-q)) / (q * (m + 1))
    return np.where(r == 1, 1.0, value)
