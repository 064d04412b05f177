"""Each method of the design study (:mod:`.study`) on one simulated phase 1, and the
simulation it reads: each model's sampled rank given its exact rank
(:func:`simulate_sampled_ranks`), Li et al.'s adaptive sampling (:func:`adaptive_ranks`),
a method's cost (:func:`method_cost`).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from ...estimation.decisions.design import Design, draw_design
from ...estimation.decisions.estimate import estimate_difference, estimate_mean, estimate_metric
from ...estimation.decisions.full_ranking import paired_test
from ...estimation.decisions.proxy import metric_proxy
from ...estimation.decisions.verdict import exact_verdict, interval_verdict
from ...estimation.estimators import (
    em_distributions,
    identification_intervals,
    point_estimates,
    sampled_evaluation,
)
from ...estimation.laws import sampling_law

__all__ = [
    "ADAPTIVE_STEPS",
    "SeedMethods",
    "adaptive_ranks",
    "method_cost",
    "simulate_sampled_ranks",
]

# Li et al.'s sample sizes: the extra sampled items, cumulatively, of a user whose
# held-out item still ranks first.
ADAPTIVE_STEPS = (100, 200, 400, 800, 1600)


def simulate_sampled_ranks(exact, n, m: int, law: str, rng) -> np.ndarray:
    """Each model's sampled rank r~ = 1 + the sampled items above the held-out one,
    drawn given its exact rank: Binomial(m, (r - 1)/(n - 1)) with replacement (eq 15),
    Hypergeometric(n - 1 items, r - 1 above, m draws) without; models independent.

    Parameters
    ----------
    exact : array_like of int
        (k, U) exact ranks in 1..n_u.
    n : array_like of int
        (U,) ranked-set sizes.
    m : int
    law : {"binomial", "hypergeometric"}
    rng : numpy.random.Generator

    Returns
    -------
    numpy.ndarray
        (k, U) int64 in 1..m + 1.

    Examples
    --------
    Every other item sampled without replacement: the sampled rank is the rank.

    >>> simulate_sampled_ranks([[1, 3, 5]], [5, 5, 5], 4, "hypergeometric",
    ...                        np.random.default_rng(0)).tolist()
    [[1, 3, 5]]
    """
    r = np.atleast_2d(np.asarray(exact, dtype=np.int64))
    size = np.broadcast_to(np.asarray(n, dtype=np.int64), r.shape)
    if sampling_law(law).replacement:
        return 1 + rng.binomial(m, (r - 1) / (size - 1))
    return 1 + rng.hypergeometric(r - 1, size - r, m)


def adaptive_ranks(exact, n, sampled, m: int, law: str, rng, steps=ADAPTIVE_STEPS) -> tuple:
    """Li et al.'s adaptive sampling of one model: while a user's held-out item ranks
    first among its sampled items, draw more, up to ``steps[j]`` more in all after step
    j (without replacement never more than the n_u - 1 other items).

    The stopping rule reads the sampled ranks alone, so the likelihood of what is seen
    is that of the final sampled rank among the final m_u items (the likelihood
    principle): EM over (r~_u, m_u) is Li et al.'s estimator.

    Parameters
    ----------
    exact, n : array_like of int
        (U,) exact ranks and ranked-set sizes.
    sampled : array_like of int
        (U,) phase 1's sampled ranks among m items.
    m : int
    law : {"binomial", "hypergeometric"}
    rng : numpy.random.Generator
    steps : sequence of int
        Increasing cumulative extra sample sizes.

    Returns
    -------
    tuple
        (sampled ranks (U,), m_u (U,)), both int64.

    Examples
    --------
    A user at rank 2 of 50 is found at the latest once every item is sampled:

    >>> r, m_u = adaptive_ranks([2, 50], [50, 50], [1, 5], 4, "hypergeometric",
    ...                         np.random.default_rng(0), steps=(10, 45))
    >>> r.tolist(), int(m_u[1])
    ([2, 5], 4)
    """
    r = np.asarray(exact, dtype=np.int64)
    size = np.asarray(n, dtype=np.int64) * np.ones_like(r)
    ranks = np.asarray(sampled, dtype=np.int64).copy()
    m_u = np.full(r.shape, m, dtype=np.int64)
    replacement = sampling_law(law).replacement
    for extra in steps:
        first = np.flatnonzero(ranks == 1)
        target = m + extra if replacement else np.minimum(m + extra, size[first] - 1)
        more = target - m_u[first]
        draw = first[more > 0]
        more = more[more > 0]
        if draw.size == 0:
            break
        if replacement:
            above = rng.binomial(more, (r[draw] - 1) / (size[draw] - 1))
        else:  # none of the r - 1 items above is among the m_u drawn so far
            pool = size[draw] - 1 - m_u[draw]
            above = rng.hypergeometric(r[draw] - 1, pool - (r[draw] - 1), more)
        ranks[draw] += above
        m_u[draw] += more
    return ranks, m_u


def method_cost(method: str, n, m_u=None, chosen=None) -> float:
    """Scored items as a share of full ranking's, sum_u n_u: phase 1 scores m_u + 1
    items of each user (``m_u``; none when None), the users of ``chosen`` n_u each.

    Examples
    --------
    >>> n = np.full(4, 101)
    >>> method_cost("design-0.5", n, m_u=np.full(4, 100), chosen=np.array([1, 0, 1, 0], bool))
    1.5
    >>> method_cost("full", n)
    1.0
    """
    n = np.asarray(n, dtype=float)
    if method == "full":
        return 1.0
    scored = 0.0 if m_u is None else float(np.sum(np.asarray(m_u) + 1))
    if chosen is not None:
        scored += float(n[chosen].sum())
    return scored / float(n.sum())


class SeedMethods:
    """What one seed's methods share: the exact ranks and metrics, phase 1, the proxy."""

    def __init__(self, exact, n, sampled, m, law, values, confidence, rng, steps):
        self.exact, self.n, self.sampled, self.m, self.law = exact, n, sampled, m, law
        self.values, self.confidence, self.rng, self.steps = values, confidence, rng, steps
        self._proxies = None

    @property
    def proxies(self) -> dict:
        """{metric: [Proxy of each model]}: phase 1's posterior means and variances."""
        if self._proxies is None:
            self._proxies = {
                metric: [
                    metric_proxy(row, self.m, self.n, metric, law=self.law) for row in self.sampled
                ]
                for metric in self.values
            }
        return self._proxies

    def full(self) -> tuple:
        """(cost, each model's (low, high, point), each pair's verdict function)."""

        def model_of(metric, k):
            value = float(self.values[metric][k].mean())
            return value, value, value

        def pair_of(metric, a, b):
            d = float(self.values[metric][a].mean() - self.values[metric][b].mean())
            test = paired_test(self.exact[[a, b]], self.n, metric, confidence=self.confidence)
            return d, d, d, test.verdict

        return 1.0, model_of, pair_of

    def uniform(self, budget: float) -> tuple:
        design = _uniform_design(self.n.size, budget, self.rng)
        zero = np.zeros(self.n.size)

        def interval(y):
            e = estimate_mean(design, y, zero, confidence=self.confidence)
            return e.low, e.high, e.value

        def pair_of(metric, a, b):
            low, high, value = interval(self.values[metric][a] - self.values[metric][b])
            return low, high, value, interval_verdict(low, high)

        cost = method_cost("uniform", self.n, chosen=design.chosen)
        return cost, lambda metric, k: interval(self.values[metric][k]), pair_of

    def design(self, budget: float) -> tuple:
        first = next(iter(self.values))
        spread = sum(p.variance for p in self.proxies[first])  # as predicted_spread's
        design = draw_design(
            self.sampled, self.m, self.n, budget=budget, metric=first, law=self.law,
            spread=spread, seed=self.rng,
        )  # fmt: skip
        options = {"law": self.law, "confidence": self.confidence}

        def model_of(metric, k):
            e = estimate_metric(
                design, self.exact[k], self.sampled[k], self.m, self.n, metric,
                proxy=self.proxies[metric][k], **options,
            )  # fmt: skip
            return e.low, e.high, e.value

        def pair_of(metric, a, b):
            pair = [self.proxies[metric][a], self.proxies[metric][b]]
            e = estimate_difference(
                design, self.exact[[a, b]], self.sampled[[a, b]], self.m, self.n, metric,
                proxy=pair, **options,
            )  # fmt: skip
            return e.low, e.high, e.value, e.verdict

        m_u = np.full(self.n.size, self.m)
        return method_cost("design", self.n, m_u=m_u, chosen=design.chosen), model_of, pair_of

    def pair_design(self, budget: float) -> tuple:
        """Two-phase sampling planned for one pair at a time: each pair's own design,
        strata from its two models' sampled ranks and Neyman's allocation on their
        predicted spread, at a budget of ``budget`` of the users; no model's metric
        alone (the cost: the pairs' mean)."""
        first = next(iter(self.values))
        pairs = list(combinations(range(len(self.exact)), 2))
        designs = {
            (a, b): draw_design(
                self.sampled[[a, b]], self.m, self.n, budget=budget, metric=first,
                law=self.law, seed=self.rng,
                spread=self.proxies[first][a].variance + self.proxies[first][b].variance,
            )
            for a, b in pairs
        }  # fmt: skip
        options = {"law": self.law, "confidence": self.confidence}

        def pair_of(metric, a, b):
            pair = [self.proxies[metric][a], self.proxies[metric][b]]
            e = estimate_difference(
                designs[a, b], self.exact[[a, b]], self.sampled[[a, b]], self.m, self.n,
                metric, proxy=pair, **options,
            )  # fmt: skip
            return e.low, e.high, e.value, e.verdict

        m_u = np.full(self.n.size, self.m)
        costs = [method_cost("design", self.n, m_u=m_u, chosen=d.chosen) for d in designs.values()]
        return float(np.mean(costs)), None, pair_of

    def range(self) -> tuple:
        """Identification intervals: each model's at the confidence, each pair's from
        the models' at 1 - (1 - confidence)/2, as
        :func:`sampled_metrics.estimation.estimators.difference_interval` (Bonferroni),
        each model's region solved once for every pair."""
        metrics = list(self.values)
        datas = [sampled_evaluation(row, self.m, self.n, self.law) for row in self.sampled]
        half = 1.0 - (1.0 - self.confidence) / 2.0
        whole = [identification_intervals(d, metrics, self.confidence) for d in datas]
        halves = [identification_intervals(d, metrics, half) for d in datas]

        def model_of(metric, k):
            low, high = whole[k][metric]
            return low, high, (low + high) / 2

        def pair_of(metric, a, b):
            low = halves[a][metric][0] - halves[b][metric][1]
            high = halves[a][metric][1] - halves[b][metric][0]
            return low, high, (low + high) / 2, interval_verdict(low, high)

        m_u = np.full(self.n.size, self.m)
        return method_cost("range", self.n, m_u=m_u), model_of, pair_of

    def adaptive_em(self) -> tuple:
        """Li et al.'s adaptive sampling and EM: point estimates, pairs by their sign."""
        grown = [
            adaptive_ranks(r, self.n, s, self.m, self.law, self.rng, self.steps)
            for r, s in zip(self.exact, self.sampled)
        ]
        datas = [sampled_evaluation(r, m_u, self.n, self.law) for r, m_u in grown]
        metrics = list(self.values)
        # one model at a time: EM over several evaluations at once iterates on the union
        # of their rows, slower here than one by one
        points = [
            point_estimates(
                data, metrics, ["em"], distributions={"em": em_distributions([data])[0]}
            )
            for data in datas
        ]

        def pair_of(metric, a, b):
            d = points[a][metric, "em"] - points[b][metric, "em"]
            return None, None, d, exact_verdict(d)

        # each model scores its own extra items: the models' mean
        m_u = np.mean([m_u for _, m_u in grown], axis=0)
        cost = method_cost("adaptive-em", self.n, m_u=m_u)
        return cost, lambda metric, k: (None, None, points[k][metric, "em"]), pair_of


def _uniform_design(users: int, budget: float, rng) -> Design:
    """A simple random sample of round(budget U) users: one stratum, pi = n / U."""
    chosen_count = max(2, round(budget * users))
    chosen = np.zeros(users, dtype=bool)
    chosen[rng.choice(users, size=chosen_count, replace=False)] = True
    return Design(
        np.zeros(users, dtype=np.int64),
        np.full(users, chosen_count / users),
        chosen,
        np.array([users]),
    )
