"""Identification intervals: what the sampled ranks say about the exact metric, bias
included (partial identification: sharp bounds over a confidence region).

**The claim.** Fix the users' exact ranks r_u (and n_u, m_u); nothing is assumed about
them. The only randomness is the sampling of each user's negatives, independent across
users. :func:`identification_interval` returns [low, high] with P(low <= M* <= high) >=
the confidence, M* = (1/U) sum_u M(r_u, n_u) the exact metric of these users, whatever
the ranks: the bias of every point estimator is included (and ranks drawn from a
population first change nothing: the guarantee holds for every draw).

**The construction.** Let x be the share of users in each cell of (stratum of n, theta
= (r - 1)/(n - 1)) (below). Per sample size m (a class of U_c users) the statistics T_f
= (1/U_c) sum_u f(r~_u), f the indicators 1[r~ <= k] at ``thresholds`` values of k
(every k when m is smaller, else spread geometrically) and f = (r~ - 1)/m, have
expectations linear in x; so is M*. The **confidence region**: for every statistic,
[lo_f, hi_f] that misses E T_f with probability at most alpha_f, the alpha_f summing to
1 - confidence (Bonferroni). They are Chernoff's bounds in Kullback-Leibler form
(Hoeffding 1963, Theorem 1): a mean of U independent variables in [0, 1] with mean mu
has P(mean >= a) <= exp(-U KL(a || mu)) for a > mu, and the same below. They need
independence only, and the users' r~_u are not identically distributed (each has its
own rank): that rules out a Dvoretzky-Kiefer-Wolfowitz band on the CDF of r~ (i.i.d.
draws from one law), and per-threshold Clopper-Pearson bounds, exact for a binomial
count, can undercover a sum of Bernoulli variables of different probabilities, whose
tail can be the heavier near 0 (p = 2e-4 and 0: P(S >= 1) = 2e-4 > 1 - (1 - 1e-4)^2).
The mean statistic gets m U trials instead of U: given r_u, r~_u - 1 is Binomial(m,
theta_u), or hypergeometric with the same mean and a moment generating function at most
the binomial's (Hoeffding 1963, Theorem 4): +-0.0014 on MovieLens 1M's mean theta at m =
100, where the DKW band gives +-0.018.

The interval is [min, max] of M*(x) over every x >= 0 whose expected statistics lie in
the region: two linear programs (HiGHS). With probability >= confidence every E T_f
lies in its bounds; then the users' own x is feasible, and low <= M* <= high.

**Cells and strata keep the guarantee.** A cell holds several (n, r), so every
coefficient is an interval over what the cell holds and each constraint takes the end
that makes it weaker (the cell's lowest metric value in the minimum, its highest in the
maximum; for E T_f its lowest value against hi_f, its highest against lo_f): the users'
own x stays feasible and its metric between the two objectives whatever the cells;
coarser cells widen the interval, never break it. The extremes are exact:

* cells of theta: one per rank of the largest n, N, while a rank is wider than
  ``resolution`` times its theta, then of relative width ``resolution``; edges a_j /
  (N - 1), a_j integers, so the cell of (n, r) (the largest j with a_j (n - 1) <= (r -
  1)(N - 1)) is exact. ``resolution=0``: a cell per rank of N, and with one n every
  coefficient is exact. A metric's extremes are at the cell's largest and smallest rank
  of each n (the metrics are non-increasing in r; another is refused);
* with replacement, P(r~ <= k | theta) = P(Binomial(m, theta) <= k - 1) decreases in
  theta: extremes at the cell's smallest and largest theta. E[(r~ - 1)/m] = theta;
* without replacement, r~ - 1 ~ Hypergeometric(population n - 1, successes r - 1, m) is
  stochastically increasing in the successes and decreasing in the population, so over
  a cell's (n, r) with n within a factor 1 + ``resolution`` of each other P(r~ <= k)
  lies between its values at (most successes, smallest population) and (fewest
  successes, largest population). Exact with one n; rigorous with several (not eq 15's
  binomial approximation), wider by about ``resolution`` in theta.

**Strata**: the users of each m cut into ``strata`` groups of neighbouring n with about
equal numbers of users; each stratum's cells sum to its known share. For metrics of r
rather than theta (Recall@10 at theta = 9/3000 holds at n = 3001, not at n = 3701) this
keeps the maximum from placing every user at the smallest n.

Each bound returned is the objective of HiGHS's dual solution made dual feasible, valid
by weak duality whatever the solver's tolerance. If the region contradicts every x
(probability at most 1 - confidence) the interval is the widest the cells allow.

**The difference of two models** (:func:`difference_interval`): [low_X - high_Y, high_X -
low_Y], each at confidence 1 - (1 - confidence)/2: both hold together with probability
>= confidence (Bonferroni) whatever the dependence between the models' sampled ranks.
Conservative: an interval of the difference itself would need the joint law of (r~_X,
r~_Y).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..metrics import metric_by_name
from .data import SampledEvaluation
from .region import confidence_region

__all__ = [
    "BOUNDS_DEFAULTS",
    "difference_interval",
    "identification_interval",
    "identification_intervals",
]

# strata: groups of neighbouring n per sample size (at most); resolution: the relative
# width of the cells of theta (and of the groups of n of the hypergeometric bounds);
# thresholds: how many k of 1[r~ <= k] per sample size (at most).
BOUNDS_DEFAULTS = {"strata": 8, "resolution": 0.005, "thresholds": 12}


def identification_interval(
    data: SampledEvaluation,
    metric: str,
    confidence: float = 0.95,
    **options: Any,
) -> tuple:
    """The identification interval of the exact metric: the smallest and the largest
    value of (1/U) sum_u M(r_u, n_u) over every set of ranks whose sampled ranks'
    expected statistics lie in their confidence region (see the module).

    Parameters
    ----------
    data : SampledEvaluation
    metric : str
        A name of :func:`sampled_metrics.estimation.metrics.metric_by_name`.
    confidence : float, default 0.95
        The probability, whatever the users' ranks, that the interval covers the exact
        metric of these users.
    **options
        ``strata`` (groups of neighbouring n per sample size, default 8),
        ``resolution`` (relative width of the cells of theta, default 0.005; 0: a cell
        per rank of the largest n; any value keeps the guarantee), ``thresholds`` (at
        most this many k of 1[r~ <= k] per sample size, default 12; every k when m is
        smaller): :data:`BOUNDS_DEFAULTS`.

    Returns
    -------
    (float, float)
        low, high.

    Raises
    ------
    ValueError
        For data that is not a :class:`SampledEvaluation`, an unknown metric or option,
        a metric that increases with the rank, or a confidence outside (0, 1).

    Examples
    --------
    With every other item sampled (m = n - 1, without replacement) the sampled rank is
    the rank, and the interval closes on the exact metric as users are added:

    >>> import numpy as np
    >>> from sampled_metrics import sampled_evaluation
    >>> round(float(np.mean(1 / np.log2(np.array([1, 2, 3, 5, 8]) + 1))), 3)
    0.567
    >>> for copies in (200, 2000, 20000):
    ...     ranks = np.tile([1, 2, 3, 5, 8], copies)
    ...     data = sampled_evaluation(ranks, m=9, n=10, law="hypergeometric")
    ...     low, high = identification_interval(data, "ndcg@10")
    ...     print(data.n_users, round(low, 3), round(high, 3))
    1000 0.539 0.596
    10000 0.558 0.576
    100000 0.564 0.569
    """
    return identification_intervals(data, [metric], confidence, **options)[metric]


def identification_intervals(
    data: SampledEvaluation, metrics: Iterable[str], confidence: float = 0.95, **options: Any
) -> dict:
    """:func:`identification_interval` of several metrics, one region for all.

    Parameters
    ----------
    data : SampledEvaluation
    metrics : sequence of str
    confidence : float, default 0.95
        Of each interval (not of all of them together).
    **options
        As :func:`identification_interval`.

    Returns
    -------
    dict
        {metric: (low, high)}.

    Examples
    --------
    >>> import numpy as np
    >>> from sampled_metrics import sampled_evaluation
    >>> data = sampled_evaluation(np.tile([1, 2, 6], 500), m=5, n=6, law="hypergeometric")
    >>> {k: tuple(round(v, 2) for v in b)
    ...  for k, b in identification_intervals(data, ["recall@1", "auc"]).items()}
    {'recall@1': (0.29, 0.37), 'auc': (0.58, 0.62)}
    """
    if not isinstance(data, SampledEvaluation):
        raise ValueError(
            f"data must be a SampledEvaluation (build it with sampled_evaluation), "
            f"got {type(data).__name__}"
        )
    if isinstance(metrics, str):
        metrics = [metrics]
    unknown = set(options) - set(BOUNDS_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown options {sorted(unknown)}; known: {sorted(BOUNDS_DEFAULTS)}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    settings = {**BOUNDS_DEFAULTS, **options}
    metrics = list(dict.fromkeys(metrics))
    for metric in metrics:
        metric_by_name(metric)  # an unknown name fails before the region is built
    resolution, strata, most = (settings[key] for key in ("resolution", "strata", "thresholds"))
    if not (0.0 <= resolution < 1.0 and int(strata) >= 1 and int(most) >= 1):
        raise ValueError(
            f"resolution must lie in [0, 1) (got {resolution!r}), strata and thresholds "
            f"must be at least 1 (got {strata!r}, {most!r})"
        )
    region = confidence_region(data, 1.0 - confidence, float(resolution), int(strata), int(most))
    return {metric: region.bounds(metric) for metric in metrics}


def difference_interval(
    first: SampledEvaluation,
    second: SampledEvaluation,
    metric: str,
    confidence: float = 0.95,
    **options: Any,
) -> tuple:
    """An interval of the difference of the exact metrics of two models, first minus
    second: [low_1 - high_2, high_1 - low_2] from their identification intervals, each at
    confidence 1 - (1 - confidence) / 2, which hold together with probability at least
    ``confidence`` (Bonferroni), whatever the ranks and however the two models' sampled
    ranks depend on each other. Conservative: the pairing is not used.

    Parameters
    ----------
    first, second : SampledEvaluation
        The two models' evaluations (usually the same users and sampled items).
    metric : str
    confidence : float, default 0.95
    **options
        As :func:`identification_interval`.

    Returns
    -------
    (float, float)
        low, high.

    Examples
    --------
    >>> import numpy as np
    >>> from sampled_metrics import sampled_evaluation
    >>> a = sampled_evaluation(np.tile([1, 2, 3], 1000), m=9, n=10, law="hypergeometric")
    >>> b = sampled_evaluation(np.tile([4, 6, 8], 1000), m=9, n=10, law="hypergeometric")
    >>> low, high = difference_interval(a, b, "auc")
    >>> bool(0 < low < 4 / 9 < high)
    True
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    half = 1.0 - (1.0 - confidence) / 2.0
    low_1, high_1 = identification_interval(first, metric, half, **options)
    low_2, high_2 = identification_interval(second, metric, half, **options)
    return low_1 - high_2, high_1 - low_2
