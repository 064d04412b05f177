"""Every estimator of a metric from sampled ranks, behind one API.

All of them read the same inputs (:class:`SampledEvaluation`): each user's sampled
rank r~_u in 1..m_u + 1, the user's sample size m_u and ranked-set size n_u (the
held-out item and the n_u - 1 items it competes with), and the sampling law
(``binomial``: with replacement; ``hypergeometric``: without). Each estimates the
mean exact metric over the users, (1/U) sum_u M(r_u, n_u) (eq 1 of the paper), for
any metric of :mod:`sampled_metrics.estimation.metrics`:

* **corrections** of Krichene & Rendle, section 5: ``sampled``, ``rank_estimate``,
  ``ls``, ``cls``, ``bv_<gamma>`` (a vector M^ over r~ per (m, n), eqs 20-25, uniform
  prior); the estimate is the mean of M^(r~_u);
* **a learned rank distribution** (Jin et al., "On Estimating Recommendation
  Evaluation Metrics under Sampling", AAAI 2021): ``em``, the maximum-likelihood
  distribution p(r) by EM over the mixture r~_u ~ sum_r p(r) p(r~ | r), and
  ``maxent``, their maximum-entropy estimate (a weighted squared distance between
  the implied and the observed distribution of r~, minus gamma times the entropy,
  gamma = 0.01, solved here by Newton's method in its dual rather than with a
  commercial conic solver); the estimate is the metric's expectation under the learned distribution;
* **learned-prior corrections**: ``bv_em_<gamma>``, ``bv_maxent_<gamma>`` (eqs 24-25
  with the learned distribution as p(r)), and ``mn_em``, ``mn_maxent`` (Li et al.,
  "Towards Reliable Item Sampling for Recommendation Evaluation", AAAI 2023: the
  variance weighted by 1/#users instead of gamma p(r)). The prior is learned from the
  sample being corrected, never from other repetitions.

**Users with different n.** The learned distribution lives on the relative position
theta = (r - 1)/(n - 1), on the grid theta_j = (j - 1)/(N - 1), j = 1..N, N the largest
n: under the binomial law p(r~ | r) depends on theta alone (eq 15), so every user's
likelihood is exact; a user's rank at theta is 1 + theta (n_u - 1). When all users
share one n the grid is the ranks themselves and both laws are exact; with different
n and the hypergeometric law the learned distribution uses the binomial likelihood
(documented approximation: the laws differ by O(m / n)). Learned-prior corrections are
built at up to ``nodes`` values of n and interpolated linearly in n between them, as
Figure 6's per-user corrections (exact when there are at most ``nodes`` distinct n).

**Uncertainty** (:func:`estimate_table`, :func:`compare`): an estimator that is a mean
of per-user values with a fixed vector (the corrections) gets the normal interval of
that mean, whose variance holds both the spread of the users' exact ranks and the
sampling variance of the law (each r~_u is one draw); the others are bootstrapped over
users (the learned distribution re-learned on every resample).

This package is one public face over its modules:

* :mod:`.data`           the inputs (:class:`SampledEvaluation`), checked once
* :mod:`.learned`        the learned rank distribution (EM, maximum entropy) and its plug-in
* :mod:`.learned_prior`  corrections with a learned prior (BV, MN), interpolated in n
* :mod:`.estimate`       estimates, intervals, bootstrap and paired comparisons
* :mod:`.bounds`         identification intervals: the exact metric's sharp bounds over a
                         confidence region of the sampled ranks, bias included
* :mod:`.region`         their linear programs, the parts that n, m and the law fix built
                         once per set of users

The estimators' names are entries of :mod:`sampled_metrics.estimation.registry`
(:func:`parse_estimator`).
"""

from __future__ import annotations

from ..registry import LEARNED_DISTRIBUTIONS, paper_methods, parse_estimator
from .bounds import (
    BOUNDS_DEFAULTS,
    difference_interval,
    identification_interval,
    identification_intervals,
)
from .data import EvaluationError, SampledEvaluation, sampled_evaluation
from .estimate import compare, estimate, estimate_table, point_estimates
from .learned import ESTIMATOR_DEFAULTS, em_distributions, learned_rank_distribution
from .learned_prior import mn_correction

__all__ = [
    "EvaluationError",
    "BOUNDS_DEFAULTS",
    "ESTIMATOR_DEFAULTS",
    "LEARNED_DISTRIBUTIONS",
    "SampledEvaluation",
    "compare",
    "difference_interval",
    "em_distributions",
    "estimate",
    "estimate_table",
    "identification_interval",
    "identification_intervals",
    "learned_rank_distribution",
    "mn_correction",
    "paper_methods",
    "parse_estimator",
    "point_estimates",
    "sampled_evaluation",
]
