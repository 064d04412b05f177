"""The design study's sequential designs: exact ranks in waves, every pair of the models
judged together at each look (:func:`.family_looks`, Holm's recycling of the error of
the pairs decided), the next wave drawn where the pairs not decided are least certain
(:func:`.next_wave`), until every pair is decided or the budget is spent; the defaults of
``DECISION_DEFAULTS`` (spending, first wave, growth, budget, family). The loop is the
one the command line drives from files (``plan --sequential``, ``plan --continue``),
here with the simulated sampled ranks and, at each look, the exact ranks of the users
ranked so far (the others' are not read). ``sequential-pair`` runs the same design on
each pair alone, as a comparison of two models would: its own waves, its own error.
"""

from __future__ import annotations

import numpy as np

from ...estimation.decisions.defaults import DECISION_DEFAULTS
from ...estimation.decisions.loop import Looks, waves_to_the_end
from ...estimation.decisions.proxy import Proxy
from ...estimation.decisions.sequential import Look, family_looks
from ...estimation.decisions.waves import Waves, first_wave, wave_totals
from .methods import Estimated, Found, Parameters, Phase1, method_cost

__all__ = ["run_sequential", "run_sequential_pair", "sequential_looks"]


def sequential_looks(
    exact: np.ndarray,
    sampled: np.ndarray,
    m: int,
    n: np.ndarray,
    metric: str,
    *,
    proxies: list[Proxy],
    spread: np.ndarray,
    law: str,
    alpha: float,
    budget: float,
    seed: np.random.Generator,
) -> tuple[Waves, dict[tuple[int, int], list[Look]]]:
    """The sequential design run to its end on every pair of the k models: the waves
    and each pair's looks.

    Parameters
    ----------
    exact : numpy.ndarray
        (k, U) exact ranks; a look reads those of the users ranked by then.
    sampled : numpy.ndarray of int
        (k, U) phase 1's sampled ranks.
    m : int
    n : numpy.ndarray of int
        (U,) ranked-set sizes.
    metric : str
        The design's metric: its pairs stop the waves.
    proxies : list of Proxy
        Each model's proxy of ``metric``.
    spread : numpy.ndarray
        (U,) the users' predicted spread that allocates wave 1 (as the design's).
    law : {"binomial", "hypergeometric"}
    alpha : float
        The family's error, both sides.
    budget : float
        The most users ranked, a share of them.
    seed : numpy.random.Generator
        Draws wave 1 and the seed of the later waves, in this order.
    """
    totals = wave_totals(n.size, budget)
    waves = first_wave(sampled, m, n, totals[0], law=law, seed=seed, metric=metric,
                       spread=spread)  # fmt: skip

    def look(waves: Waves, previous: Looks | None) -> Looks:
        seen = np.where(waves.chosen, exact, np.nan)  # the ranks ranked exactly so far
        return family_looks(waves, seen, sampled, m, n, metric, proxies=proxies, alpha=alpha,
                            budget=totals[-1], law=law, resume=previous)  # fmt: skip

    return waves_to_the_end(waves, totals, look, seed=int(seed.integers(1 << 31)))


def run_sequential(phase1: Phase1, method: Parameters) -> Found:
    """The sequential design (the module's) on the design's metric, the first: each pair's
    estimate and repeated confidence interval at the look it stopped at, its verdict,
    and its cost, phase 1 and the users ranked by that look; the method's cost is every
    wave's. Holm's recycling makes the verdicts the family's already."""
    p = phase1
    metric = next(iter(p.values))
    means, variances = p.moments[metric]
    proxies = [Proxy(mean, variance) for mean, variance in zip(means, variances)]
    waves, looks = sequential_looks(
        p.exact, p.sampled, p.m, p.n, metric, proxies=proxies, spread=variances.sum(axis=0),
        law=p.law, alpha=1.0 - p.confidence, budget=DECISION_DEFAULTS["sequential_budget"],
        seed=p.rng,
    )  # fmt: skip
    last = [looks[int(i), int(j)][-1] for i, j in zip(*p.pairs)]
    costs = np.array([
        method_cost(p.n, m_u=p.phase1_cost, chosen=waves.design(look.wave).chosen)
        for look in last
    ])  # fmt: skip
    column = {key: np.array([getattr(look, key) for look in last])
              for key in ("low", "high", "value", "standard_error")}  # fmt: skip
    verdict = np.array([look.verdict.value for look in last], dtype=object)
    pairs = {metric: Estimated(column["low"], column["high"], column["value"], verdict,
                               column["standard_error"])}  # fmt: skip
    total = method_cost(p.n, m_u=p.phase1_cost, chosen=waves.chosen)
    return Found(total, None, pairs, pair_cost=costs, familywise=True)


def run_sequential_pair(phase1: Phase1, method: Parameters) -> Found:
    """Each pair alone in its own sequential design (the module's, of two models: its
    strata, allocation and waves from them, the whole error its own): its estimate and
    repeated interval at the look it stopped at, its verdict and its cost; the method's
    cost the pairs' mean (as ``pair-design``'s). No family: each verdict is at the
    confidence alone."""
    p = phase1
    metric = next(iter(p.values))
    means, variances = p.moments[metric]
    found, costs = [], []
    for a, b in zip(*p.pairs):
        both = [int(a), int(b)]
        waves, looks = sequential_looks(
            p.exact[both], p.sampled[both], p.m, p.n, metric,
            proxies=[Proxy(means[i], variances[i]) for i in both],
            spread=variances[both].sum(axis=0), law=p.law, alpha=1.0 - p.confidence,
            budget=DECISION_DEFAULTS["sequential_budget"], seed=p.rng,
        )  # fmt: skip
        last = looks[0, 1][-1]
        found.append(last)
        costs.append(method_cost(p.n, m_u=p.phase1_cost, chosen=waves.design(last.wave).chosen))
    column = {key: np.array([getattr(look, key) for look in found])
              for key in ("low", "high", "value")}  # fmt: skip
    verdict = np.array([look.verdict.value for look in found], dtype=object)
    pairs = {metric: Estimated(column["low"], column["high"], column["value"], verdict)}
    return Found(float(np.mean(costs)), None, pairs, pair_cost=np.array(costs))
