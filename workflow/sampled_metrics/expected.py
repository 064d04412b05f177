"""Expected sampled metrics, section 4.4 of Krichene & Rendle (KDD 2020)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from .laws import WITH_REPLACEMENT, WITHOUT_REPLACEMENT, sampled_rank_pmf
from .metrics import MetricFn, metric_vector


def metric_on_sample(metric: MetricFn | str, m: int) -> np.ndarray:
    """The uncorrected sampled metric as a vector over r~ = 1..m+1: the metric
    applied to the rank within the m + 1 ranked items (AUC uses n = m + 1)."""
    return metric_vector(metric, m + 1)


def expected_sampled_metric(
    values_on_sample, ranks, n, law: str = WITHOUT_REPLACEMENT
) -> np.ndarray:
    """E[M(r~) | r] = sum_{i=1}^{m+1} p(r~ = i | r) M(i), eq 16, for each true rank.

    ``values_on_sample`` is any vector over r~ = 1..m+1: the uncorrected metric
    (``metric_on_sample``) or a corrected one (``corrections``); m is its
    length minus one. ``n`` is a scalar or one ranked-set size per rank.
    """
    values = np.asarray(values_on_sample, dtype=float)
    m = values.size - 1
    return sampled_rank_pmf(ranks, n, m, law) @ values


def expected_recall_closed_form(
    ranks, n, m: int, k: int, law: str = WITHOUT_REPLACEMENT
) -> np.ndarray:
    """E[Recall@k(r~) | r] = P(r~ <= k) = CDF(k - 1), eq 18 (either law), from scipy.stats."""
    r = np.asarray(ranks, dtype=float)
    if law == WITH_REPLACEMENT:
        return stats.binom.cdf(k - 1, m, (r - 1) / (n - 1))
    return stats.hypergeom.cdf(k - 1, n - 1, r - 1, m)


def expected_ap_closed_form(ranks, n, m: int) -> np.ndarray:
    """E[AP(r~) | r] under sampling with replacement, eq 19:
    (1 - ((n - r)/(n - 1))^(m+1)) / ((r - 1)(m + 1)/(n - 1)) for r > 1, and 1 for r = 1."""
    r = np.asarray(ranks, dtype=float)
    q = (r - 1) / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = -np.expm1((m + 1) * np.log1p(-q)) / (q * (m + 1))
    return np.where(r == 1, 1.0, value)
