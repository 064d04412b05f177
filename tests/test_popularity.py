"""Popularity-sampled negatives (sampled_metrics.estimation.popularity), tested from first
principles: the law of the sampled rank against simulated draws (chi-square), the
Hansen-Hurwitz rank unbiased over many draws, alpha = 0 as the paper's uniform case,
the successive (without-replacement) approximation measured, and the paper's
estimators correcting popularity-sampled metrics into metrics of R^pi."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from sampled_metrics.estimation.estimators import estimate, sampled_evaluation
from sampled_metrics.estimation.laws import sampled_rank_pmf
from sampled_metrics.estimation.popularity import (
    binomial_law_of_weighted_rank,
    hansen_hurwitz_rank,
    popularity_probabilities,
    sampled_rank_from_draws,
    successive_beaten_law,
    weighted_rank,
)
from sampled_metrics.frameworks.draws import draw_negatives


def catalogue(items=200, seed=0):
    """Zipf-like counts, an eligible set (a few items seen by the user excluded, and
    the held-out item 0), and the eligible items the model scores above item 0."""
    rng = np.random.default_rng(seed)
    counts = np.floor(1000 / np.arange(1, items + 1) ** 1.1) + rng.integers(0, 3, items)
    eligible = np.ones(items, dtype=bool)
    eligible[[0, 5, 17, 40]] = False
    above = eligible & (rng.random(items) < 0.3)
    return counts, eligible, above


@pytest.mark.parametrize("alpha", [0.0, 0.5, 1.0])
def test_the_sampled_rank_with_replacement_is_binomial_in_the_beaten_mass(alpha):
    counts, eligible, above = catalogue()
    pi = popularity_probabilities(counts, alpha, eligible)
    m, draws = 10, 20000
    rng = np.random.default_rng(1)
    sampled = np.array(
        [sampled_rank_from_draws(drawn, above) for drawn in draw_negatives(pi, m, rng, size=draws)]
    )
    q = pi[above].sum()
    law = binomial_law_of_weighted_rank(q, m)
    observed = np.bincount(sampled - 1, minlength=m + 1)
    expected = law * draws
    keep = expected >= 5  # chi-square cells with enough mass, the rest pooled
    chi2 = np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep])
    rest_o, rest_e = observed[~keep].sum(), expected[~keep].sum()
    cells = keep.sum()
    if rest_e > 0:
        chi2 += (rest_o - rest_e) ** 2 / rest_e
        cells += 1
    assert stats.chi2.sf(chi2, cells - 1) > 1e-3


def test_alpha_zero_is_the_papers_uniform_sampling():
    """pi uniform over the eligible items; R^pi is the rank 1 + |A|; the law is eq 15."""
    counts, eligible, above = catalogue()
    pi = popularity_probabilities(counts, 0.0, eligible)
    assert np.allclose(pi[eligible], 1 / eligible.sum()) and not pi[~eligible].any()
    n = int(eligible.sum()) + 1
    rank = weighted_rank(above, pi, n)
    assert rank == pytest.approx(1 + above.sum())
    law = binomial_law_of_weighted_rank(pi[above].sum(), 10)
    paper = sampled_rank_pmf(np.full(11, int(round(rank))), n, 10, "binomial")
    assert np.allclose(law, paper.ravel()[: law.size] if paper.ndim == 1 else paper[0])


def test_hansen_hurwitz_is_unbiased_for_the_standard_rank_and_knows_its_variance():
    counts, eligible, above = catalogue(seed=2)
    pi = popularity_probabilities(counts, 1.0, eligible)
    m, draws = 20, 20000
    rng = np.random.default_rng(3)
    results = np.array(
        [hansen_hurwitz_rank(drawn, above, pi) for drawn in draw_negatives(pi, m, rng, size=draws)]
    )
    truth = 1 + above.sum()
    variance = (np.sum(1 / pi[above]) - above.sum() ** 2) / m
    standard_error = np.sqrt(variance / draws)
    assert abs(results[:, 0].mean() - truth) < 4 * standard_error
    assert results[:, 0].var() == pytest.approx(variance, rel=0.05)
    assert results[:, 1].mean() == pytest.approx(variance, rel=0.05)  # its own estimate


def test_hansen_hurwitz_needs_every_eligible_item_to_be_drawable():
    """An eligible item with pi = 0 above the held-out item is never counted: the
    estimate misses it (the condition of unbiasedness)."""
    pi = np.array([0.0, 0.5, 0.5])
    above = np.array([True, True, False])
    draws = np.random.default_rng(4).choice(3, size=(5000, 4), p=pi)
    estimates = [hansen_hurwitz_rank(d, above, pi)[0] for d in draws]
    assert np.mean(estimates) == pytest.approx(2.0, abs=0.05)  # 1 + 1, not 1 + 2


@pytest.mark.parametrize("m", [10, 50, 150])
def test_successive_sampling_is_close_to_its_conditional_poisson_approximation(m):
    """Without replacement (numpy's successive draws, 196 eligible items): the
    approximate law against 20000 simulated draws is within 0.02 in total variation
    and 3 standard errors in the mean; the with-replacement law is not (its spread is
    too wide once m is a fair share of the items)."""
    counts, eligible, above = catalogue(seed=5)
    pi = popularity_probabilities(counts, 1.0, eligible)
    rng = np.random.default_rng(6)
    sampled = np.array(
        [
            sampled_rank_from_draws(drawn, above)
            for drawn in draw_negatives(pi, m, rng, replacement=False, size=20000)
        ]
    )
    observed = np.bincount(sampled - 1, minlength=m + 1) / sampled.size
    law = successive_beaten_law(above, pi, m)
    assert 0.5 * np.abs(observed - law).sum() < 0.02
    mean = np.arange(1, m + 2) @ law
    assert abs(sampled.mean() - mean) < 3 * sampled.std() / np.sqrt(sampled.size)
    with_replacement = binomial_law_of_weighted_rank(pi[above].sum(), m)
    if m >= 50:
        assert 0.5 * np.abs(observed - with_replacement).sum() > 0.15


def test_the_estimators_correct_popularity_sampled_metrics_into_metrics_of_r_pi():
    """Users with random orders over a Zipf catalogue, negatives drawn by popularity
    with replacement: the sampled AUC is unbiased for the mean AUC of R^pi (1 - q),
    and EM on the sampled ranks recovers the mean NDCG@10 of R^pi."""
    counts, eligible, _ = catalogue(items=400, seed=7)
    pi = popularity_probabilities(counts, 1.0, eligible)
    n = int(eligible.sum()) + 1
    rng = np.random.default_rng(8)
    users, m = 20000, 50
    # each user's beaten mass: a random share of the eligible items, skewed to the top
    shares = rng.beta(0.4, 3.0, users)
    order = rng.permuted(np.tile(np.flatnonzero(eligible), (200, 1)), axis=1)
    q = np.empty(users)
    for u in range(users):
        items = order[u % 200][: int(shares[u] * (n - 1))]
        q[u] = pi[items].sum()
    sampled = 1 + rng.binomial(m, q)
    data = sampled_evaluation(sampled, m, n)
    r_pi = 1 + (n - 1) * q
    auc_truth = np.mean((n - r_pi) / (n - 1))
    assert estimate("auc", "sampled", data) == pytest.approx(auc_truth, abs=0.005)
    ndcg_truth = np.mean(np.where(r_pi <= 10, 1 / np.log2(r_pi + 1), 0.0))
    assert estimate("ndcg@10", "em", data, em_iterations=500) == pytest.approx(ndcg_truth, abs=0.01)
