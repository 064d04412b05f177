"""Each method of the design study on one simulated phase 1 (:class:`Phase1`): a
function ``run_<kind>(phase1, method) -> Found`` per kind of :mod:`.registry`, and the
simulation they read: each model's sampled rank given its exact rank
(:func:`simulate_sampled_ranks`), Li et al.'s adaptive sampling (:func:`adaptive_ranks`),
a method's cost (:func:`method_cost`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple
from typing import Protocol as Interface

import numpy as np
from numpy.typing import ArrayLike

from ...estimation.decisions.batched import (
    difference_variances,
    estimate_means,
    exact_verdicts,
    interval_verdicts,
    paired_intervals,
)
from ...estimation.decisions.design import Design, design_on_strata, min_strata, rank_bins
from ...estimation.laws import sampling_law

__all__ = [
    "Estimated",
    "Found",
    "Parameters",
    "Phase1",
    "adaptive_ranks",
    "method_cost",
    "run_adaptive_em",
    "run_design",
    "run_full",
    "run_pair_design",
    "run_range",
    "run_uniform",
    "simulate_sampled_ranks",
]


def simulate_sampled_ranks(
    exact: ArrayLike, n: ArrayLike, m: int, law: str, rng: np.random.Generator
) -> np.ndarray:
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


def adaptive_ranks(
    exact: ArrayLike,
    n: ArrayLike,
    sampled: ArrayLike,
    m: int,
    law: str,
    rng: np.random.Generator,
    steps: Sequence[int],
) -> tuple:
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
        Increasing cumulative extra sample sizes (``decisions.adaptive_steps``).

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


def method_cost(
    n: ArrayLike, m_u: ArrayLike | None = None, chosen: ArrayLike | None = None
) -> float:
    """Scored items as a share of full ranking's, sum_u n_u: phase 1 scores m_u + 1
    items of each user (``m_u``; none when None), the users of ``chosen`` n_u each.

    Examples
    --------
    >>> n = np.full(4, 101)
    >>> method_cost(n, m_u=np.full(4, 100), chosen=np.array([1, 0, 1, 0], bool))
    1.5
    >>> method_cost(n, chosen=np.ones(4, bool))
    1.0
    """
    n = np.asarray(n, dtype=float)
    scored = 0.0 if m_u is None else float(np.sum(np.asarray(m_u) + 1))
    if chosen is not None:
        scored += float(n[np.asarray(chosen, dtype=bool)].sum())
    return scored / float(n.sum())


class Parameters(Interface):
    """A method's parameters, as :class:`.registry.Method` holds them."""

    @property
    def budget(self) -> float | None:
        """The share of the users it ranks exactly."""
        ...

    @property
    def steps(self) -> tuple[int, ...]:
        """adaptive-em's cumulative extra sample sizes."""
        ...


class Estimated(NamedTuple):
    """A method's estimates of every model's metric or every pair's difference, one
    value each (models in order, pairs as :attr:`Phase1.pairs`): the intervals (None
    for point estimates), the points, and the pairs' verdicts (their values, None for
    the models), and where the method has them each value's standard error and degrees
    of freedom (what a family-wise test of the pairs reads)."""

    low: np.ndarray | None
    high: np.ndarray | None
    value: np.ndarray
    verdict: np.ndarray | None = None
    standard_error: np.ndarray | None = None
    freedom: np.ndarray | None = None


class Found(NamedTuple):
    """What a method found on one phase 1: its cost (:func:`method_cost`), the models'
    estimates {metric: Estimated} (None when it estimates pairs only) and the pairs'
    {metric: Estimated} (a metric left out when the method does not judge it); where a
    pair's cost is its own (a pair that stops early), each pair's, and whether its
    verdicts are already the family's (family-wise control of every pair together)."""

    cost: float
    models: dict[str, Estimated] | None
    pairs: dict[str, Estimated]
    pair_cost: np.ndarray | None = None
    familywise: bool = False


@dataclass
class Phase1:
    """What one seed's methods share: every model's exact ranks (k, U), the ranked-set
    sizes n (U,), phase 1's simulated sampled ranks (k, U) among m items under ``law``,
    the exact metric values {metric: (k, U)} (the design is tuned for the first), the
    confidence of the intervals, the seed's generator (the methods that draw users draw
    from it in turn), and each model's own work (:mod:`.per_model`): the posterior
    moments {metric: (means, variances), (k, U) each}, the identification intervals
    (k, 2 levels, metrics, 2) and adaptive-em's (point estimates (k, metrics), m_u
    (k, U)), None where the seed does not run them."""

    exact: np.ndarray
    n: np.ndarray
    sampled: np.ndarray
    m: int
    law: str
    values: dict
    confidence: float
    rng: np.random.Generator
    moments: dict[str, tuple[np.ndarray, np.ndarray]]
    ranges: np.ndarray | None = None
    adaptive: tuple[np.ndarray, np.ndarray] | None = None

    @cached_property
    def stacked(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(values, means, variances): every metric's of every model, (metrics k, U)
        each, metric by metric: what one design's estimates of every metric read."""
        metrics = list(self.values)
        return (
            np.concatenate([self.values[metric] for metric in metrics]),
            np.concatenate([self.moments[metric][0] for metric in metrics]),
            np.concatenate([self.moments[metric][1] for metric in metrics]),
        )

    @cached_property
    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """The pairs (a, b), a before b, in the order of ``itertools.combinations``: the
        first models and the second."""
        first, second = np.triu_indices(len(self.exact), 1)
        return first, second

    @cached_property
    def bins(self) -> np.ndarray:
        """Each model's sampled-rank bins (k, U): the strata of a design of some of the
        models are their smallest (:func:`.design.rank_bins`)."""
        return rank_bins(self.sampled)

    def design(self, models: ArrayLike, budget: float, spread: np.ndarray) -> Design:
        """:func:`.design.draw_design` of these models' sampled ranks at ``budget`` with
        this spread, at its defaults, drawn from the seed's generator: the same design,
        its strata read from :attr:`bins`."""
        stratum, strata = min_strata(self.bins[np.asarray(models)])
        return design_on_strata(stratum, strata, spread, budget, seed=self.rng)

    @property
    def phase1_cost(self) -> np.ndarray:
        """Every user's phase 1: m sampled items (as m_u of :func:`method_cost`)."""
        return np.full(self.n.size, self.m)


def run_full(phase1: Phase1, method: Parameters) -> Found:
    """Every user ranked exactly: the metric itself (an interval of zero width about
    these users), the pairs' verdicts from the paired t-test (:func:`.paired_test`)."""
    a, b = phase1.pairs
    models, pairs = {}, {}
    for metric, values in phase1.values.items():
        value = values.mean(axis=1)
        models[metric] = Estimated(value, value, value)
        d = value[a] - value[b]
        low, high = paired_intervals(values[a] - values[b], phase1.confidence)
        users = values.shape[1]  # the paired test's standard error, U - 1 degrees of freedom
        error = (values[a] - values[b]).std(axis=1, ddof=1) / np.sqrt(users)
        pairs[metric] = Estimated(d, d, d, interval_verdicts(low, high), error,
                                  np.full(d.shape, users - 1.0))  # fmt: skip
    return Found(1.0, models, pairs)


def run_uniform(phase1: Phase1, method: Parameters) -> Found:
    """A simple random subset of round(b U) users ranked exactly, b the method's
    budget: their mean with the finite-population correction (one stratum, no proxy)."""
    design = _uniform_design(phase1.n.size, _budget(method), phase1.rng)
    a, b = phase1.pairs
    chosen = design.users
    models, pairs = {}, {}
    for metric, values in phase1.values.items():
        e = estimate_means(design, values[:, chosen], np.zeros(values.shape),
                           confidence=phase1.confidence)  # fmt: skip
        models[metric] = Estimated(e.low, e.high, e.value)
        y = values[a] - values[b]
        e = estimate_means(design, y[:, chosen], np.zeros(y.shape), confidence=phase1.confidence)
        pairs[metric] = Estimated(e.low, e.high, e.value, interval_verdicts(e.low, e.high),
                                  e.standard_error, e.degrees_of_freedom)  # fmt: skip
    return Found(method_cost(phase1.n, chosen=design.chosen), models, pairs)


def run_design(phase1: Phase1, method: Parameters) -> Found:
    """Two-phase sampling at the method's budget (:func:`.draw_design`, the estimators
    of :func:`.estimate_metric` and :func:`.estimate_difference`, every model and pair
    at once: :mod:`.batched`): one design for every model, strata from all their
    sampled ranks."""
    p = phase1
    first = next(iter(p.values))
    spread = p.moments[first][1].sum(axis=0)  # as predicted_spread's
    design = p.design(np.arange(len(p.exact)), _budget(method), spread)
    a, b = p.pairs
    chosen = design.users
    models, pairs = {}, {}
    for metric, values in p.values.items():
        means, variances = p.moments[metric]
        y = values[:, chosen]
        e = estimate_means(design, y, means, confidence=p.confidence,
                           predicted_variance=variances[:, chosen], bounds=(0.0, 1.0))  # fmt: skip
        models[metric] = Estimated(e.low, e.high, e.value)
        pairs[metric] = _differences(design, values, means, variances, (a, b), p.confidence)
    return Found(method_cost(p.n, m_u=p.phase1_cost, chosen=design.chosen), models, pairs)


def run_pair_design(phase1: Phase1, method: Parameters) -> Found:
    """Two-phase sampling planned for one pair at a time: each pair's own design,
    strata from its two models' sampled ranks and Neyman's allocation on their
    predicted spread, at the method's budget; no model's metric alone (the cost: the
    pairs' mean)."""
    p = phase1
    first = next(iter(p.values))
    values, means, variances = p.stacked
    # each metric's rows of the pair in the stacked arrays
    shift = len(p.exact) * np.arange(len(p.values))
    costs, found = [], []
    for a, b in zip(*p.pairs):
        spread = p.moments[first][1][a] + p.moments[first][1][b]
        design = p.design([a, b], _budget(method), spread)
        costs.append(method_cost(p.n, m_u=p.phase1_cost, chosen=design.chosen))
        found.append(_differences(design, values, means, variances,
                                  (a + shift, b + shift), p.confidence))  # fmt: skip
    # found: each pair's metrics (an interval each); the study's: each metric's pairs
    columns = [np.stack([np.asarray(one[i]) for one in found], axis=1)
               for i in range(len(Estimated._fields))]  # fmt: skip
    pairs = {metric: Estimated(*(column[j] for column in columns))
             for j, metric in enumerate(p.values)}  # fmt: skip
    return Found(float(np.mean(costs)), None, pairs)


def _differences(
    design: Design, values: np.ndarray, means: np.ndarray, variances: np.ndarray,
    pairs: tuple, confidence: float,
) -> Estimated:  # fmt: skip
    """:func:`.estimate_difference` of each pair (a, b) of ``pairs`` (the first models,
    the second) over one design, from the models' exact metric and proxies (values,
    means, variances: (k, U) each): the floor from :func:`.batched.difference_variances`,
    the interval cut to [-1, 1]."""
    a, b = pairs
    # the models of some pair, at the chosen users
    used = np.unique(np.concatenate([a, b]))
    y, g, v = (x[np.ix_(used, design.users)] for x in (values, means, variances))
    a_at, b_at = np.searchsorted(used, a), np.searchsorted(used, b)
    floor = difference_variances(design, y[a_at] - g[a_at], y[b_at] - g[b_at], v[a_at], v[b_at])
    e = estimate_means(design, y[a_at] - y[b_at], means[a] - means[b], confidence=confidence,
                       predicted_variance=floor, bounds=(-1.0, 1.0))  # fmt: skip
    return Estimated(e.low, e.high, e.value, interval_verdicts(e.low, e.high),
                     e.standard_error, e.degrees_of_freedom)  # fmt: skip


def run_range(phase1: Phase1, method: Parameters) -> Found:
    """Identification intervals from the sampled ranks alone (each model's,
    :func:`.per_model.model_draws`): each model's at the confidence, each pair's from
    the models' at 1 - (1 - confidence)/2, as
    :func:`sampled_metrics.estimation.estimators.difference_interval` (Bonferroni)."""
    p = phase1
    if p.ranges is None:
        raise ValueError("the identification intervals were not computed at this seed")
    a, b = p.pairs
    models, pairs = {}, {}
    for j, metric in enumerate(p.values):
        low, high = p.ranges[:, 0, j, 0], p.ranges[:, 0, j, 1]
        models[metric] = Estimated(low, high, (low + high) / 2)
        low, high = p.ranges[:, 1, j, 0], p.ranges[:, 1, j, 1]
        low, high = low[a] - high[b], high[a] - low[b]
        pairs[metric] = Estimated(low, high, (low + high) / 2, interval_verdicts(low, high))
    return Found(method_cost(p.n, m_u=p.phase1_cost), models, pairs)


def run_adaptive_em(phase1: Phase1, method: Parameters) -> Found:
    """Li et al.'s adaptive sampling (:func:`adaptive_ranks`), then EM over the sampled
    ranks with their own m_u (each model's, :func:`.per_model.model_draws`): point
    estimates, pairs by their sign."""
    p = phase1
    if p.adaptive is None:
        raise ValueError("adaptive sampling was not simulated at this seed")
    points, m_u = p.adaptive
    a, b = p.pairs
    models, pairs = {}, {}
    for j, metric in enumerate(p.values):
        value = points[:, j]
        models[metric] = Estimated(None, None, value)
        d = value[a] - value[b]
        pairs[metric] = Estimated(None, None, d, exact_verdicts(d))
    # each model scores its own extra items: the models' mean
    return Found(method_cost(p.n, m_u=m_u.mean(axis=0)), models, pairs)


def _budget(method: Parameters) -> float:
    """The method's budget, which its kind needs."""
    if method.budget is None:
        raise ValueError("this kind of method ranks a budget's share of the users: give one")
    return method.budget


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
