"""The design study's shared work: what it computes once for many seeds or pairs is what
each would compute alone, checked against first principles (Bayes' rule, the strata's
definition) and against the one-at-a-time functions."""

import numpy as np
import pytest
from scipy import stats

from sampled_metrics.estimation.decisions.design import (
    design_on_strata,
    design_strata,
    draw_design,
    min_strata,
    rank_bins,
)
from sampled_metrics.estimation.decisions.proxy import metric_proxies, posterior_moments
from sampled_metrics.estimation.estimators.data import sampled_evaluation


def bayes_moments(sampled, m, n, prior, k):
    """E[Recall@k | r~] and its variance by Bayes' rule over the ranks 1..n, the prior
    given on the relative ranks (r - 1)/(n - 1) of a grid of len(prior) points."""
    ranks = np.arange(1, n + 1)
    grid = np.linspace(0.0, 1.0, prior.size)
    weight = np.interp((ranks - 1) / (n - 1), grid, prior)  # n is the grid here
    likelihood = stats.binom.pmf(np.arange(m + 1)[:, None], m, (ranks - 1) / (n - 1))
    posterior = likelihood * weight / (likelihood * weight).sum(axis=1, keepdims=True)
    mean = posterior @ (ranks <= k)
    return mean[sampled - 1], (mean * (1 - mean))[sampled - 1]


def test_posterior_moments_of_many_seeds_are_bayes_rule_under_each_seeds_prior():
    n, m, users = 150, 12, 40
    rng = np.random.default_rng(3)
    priors = [rng.dirichlet(np.ones(n)) for _ in range(3)]
    rows = [rng.integers(1, m + 2, users) for _ in priors]
    datas = [sampled_evaluation(row, m, n) for row in rows]
    found = posterior_moments(datas, priors, ["recall@10"])
    for row, prior, one in zip(rows, priors, found):
        mean, variance = bayes_moments(row, m, n, prior, 10)
        assert one["recall@10"].mean == pytest.approx(mean, abs=1e-12)
        assert one["recall@10"].variance == pytest.approx(variance, abs=1e-12)


def test_posterior_moments_of_many_seeds_are_each_seeds_own_to_the_bit():
    rng = np.random.default_rng(4)
    n = rng.integers(300, 900, 500)  # users' own n: moments interpolated between nodes
    priors = [rng.dirichlet(np.ones(n.max())) for _ in range(4)]
    rows = [rng.integers(1, 102, n.size) for _ in priors]
    datas = [sampled_evaluation(row, 100, n) for row in rows]
    metrics = ["recall@10", "ndcg@10"]
    # metric_proxies normalizes a prior given as weights: the same division here
    together = posterior_moments(datas, [prior / prior.sum() for prior in priors], metrics)
    for row, prior, found in zip(rows, priors, together):
        alone = metric_proxies(row, 100, n, metrics, prior=prior)
        for metric in metrics:
            assert np.array_equal(found[metric].mean, alone[metric].mean)
            assert np.array_equal(found[metric].variance, alone[metric].variance)


def test_posterior_moments_refuse_evaluations_of_other_users():
    one, other = (sampled_evaluation([1, 2], 1, n) for n in (3, 4))
    with pytest.raises(ValueError, match="same users"):
        posterior_moments([one, other], [np.full(4, 0.25)] * 2, ["recall@1"])


@pytest.mark.parametrize("edges", [(1, 2, 3, 5, 10), (1, 3), (4,)])
def test_min_strata_of_rank_bins_are_design_strata(edges):
    ranks = np.random.default_rng(5).integers(1, 40, size=(4, 300))
    for models in ([0], [1, 3], [0, 1, 2, 3]):
        stratum, strata = min_strata(rank_bins(ranks[models], edges), edges)
        expected, count = design_strata(ranks[models], edges=edges)
        assert strata == count and np.array_equal(stratum, expected)


def test_a_design_on_shared_strata_is_draw_designs_draw_for_draw():
    ranks = np.random.default_rng(6).integers(1, 12, size=(3, 2000))
    spread = np.random.default_rng(7).random(2000)
    for budget in (0.05, 0.25):
        a, b = np.random.default_rng(8), np.random.default_rng(8)
        for pair in ([0, 1], [1, 2], [0, 2]):
            expected = draw_design(ranks[pair], 10, 100, budget=budget, spread=spread, seed=a)
            stratum, strata = min_strata(rank_bins(ranks[pair]))
            found = design_on_strata(stratum, strata, spread, budget, seed=b)
            assert np.array_equal(found.chosen, expected.chosen)
            assert np.array_equal(found.probability, expected.probability)


def test_a_design_of_items_on_shared_strata_needs_the_users_n():
    stratum, strata = min_strata(rank_bins(np.ones((1, 50), dtype=int)))
    with pytest.raises(ValueError, match="ranked-set sizes"):
        design_on_strata(stratum, strata, np.ones(50), 0.5, unit="items")
