"""The Gram matrices of the binomial law from the law of twice its degree
(sampled_metrics.estimation.bernstein), tested against Bernstein polynomials evaluated
independently (scipy.stats.binom) and against the direct products they replace."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from scipy import stats

from sampled_metrics.estimation.bernstein import bernstein_gram, product_coefficients
from sampled_metrics.estimation.corrections import bias_variance_correction
from sampled_metrics.estimation.corrections.systems import (
    binomial_normal_equations,
    normal_equations,
)
from sampled_metrics.estimation.estimators import (
    estimate,
    learned_rank_distribution,
    mn_correction,
    sampled_evaluation,
)
from sampled_metrics.estimation.estimators import learned as learned_module
from sampled_metrics.estimation.laws import sampled_rank_law
from sampled_metrics.estimation.metrics import metric_vector


def bernstein_rows(m: int, points) -> np.ndarray:
    """B_k(t_j) = C(m, k) t^k (1 - t)^(m - k), rows k = 0..m, columns the points."""
    return stats.binom.pmf(np.arange(m + 1)[:, None], m, np.asarray(points)[None, :])


@pytest.mark.parametrize("m", [1, 4, 30, 100])
def test_a_product_of_two_bernstein_polynomials_is_one_of_twice_the_degree(m):
    """B_k(t) B_l(t) = C(m, k) C(m, l) / C(2m, k + l) B^(2m)_(k+l)(t) at every t."""
    t = np.random.default_rng(m).random(7)
    rows, doubled = bernstein_rows(m, t), bernstein_rows(2 * m, t)
    k = np.arange(m + 1)
    products = rows[:, None, :] * rows[None, :, :]
    from_identity = product_coefficients(m)[:, :, None] * doubled[k[:, None] + k[None, :]]
    np.testing.assert_allclose(from_identity, products, rtol=1e-11, atol=1e-300)


def test_the_gram_of_weighted_rows_comes_from_2m_plus_1_sums():
    """sum_j w_j B_k(t_j) B_l(t_j) for signed weights, three weightings at once and a
    subset of the degrees (the sampled ranks present), as the rows' own product."""
    rng = np.random.default_rng(3)
    m, points = 12, rng.random(200)
    weights = rng.normal(size=(200, 3))
    rows, doubled = bernstein_rows(m, points), bernstein_rows(2 * m, points)
    grams = bernstein_gram(doubled @ weights, m)
    for q in range(3):
        np.testing.assert_allclose(grams[:, :, q], (rows * weights[:, q]) @ rows.T, atol=1e-13)
    degrees = np.array([0, 3, 4, 11])
    single = bernstein_gram(doubled @ weights[:, 0], m, degrees)
    direct = (rows[degrees] * weights[:, 0]) @ rows[degrees].T
    np.testing.assert_allclose(single, direct, atol=1e-13)
    whole = (rows * weights[:, 0]) @ rows.T  # every degree from one weighting
    np.testing.assert_allclose(bernstein_gram(doubled @ weights[:, 0], m), whole, atol=1e-13)


def test_a_gram_needs_its_2m_plus_1_sums():
    """S_(k + l) reaches s = 2m: fewer sums than 2m + 1 leave products undefined."""
    with pytest.raises(ValueError, match="2m \\+ 1 = 7"):
        bernstein_gram(np.ones(6), 3)


@pytest.mark.parametrize("n, m", [(12, 3), (500, 40), (3706, 100)])
def test_the_binomial_normal_equations_are_the_direct_ones(n, m):
    """A^T A, A^T b and c of eqs 23-25 with the binomial law, a prior that is 0 on some
    ranks and two metrics: as normal_equations' products over the n rows."""
    rng = np.random.default_rng(n)
    prior = rng.random(n) * (rng.random(n) < 0.8)
    M = np.column_stack([metric_vector("ndcg@10", n), metric_vector("auc", n)])
    direct = normal_equations(M, sampled_rank_law(n, m, "binomial"), prior)
    gram, rhs, c = binomial_normal_equations(M, n, m, prior)
    scale = np.abs(direct[0]).max()
    np.testing.assert_allclose(np.triu(gram), np.triu(direct[0]), rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(gram, gram.T)
    np.testing.assert_allclose(rhs, direct[1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(c, direct[2], rtol=1e-12, atol=1e-15)
    p = prior / prior.sum()
    assert c.sum() == pytest.approx(1.0, abs=1e-13)  # the law's rows sum to 1
    assert np.allclose(c, p @ sampled_rank_law(n, m, "binomial"), rtol=1e-12)


def test_learned_priors_with_replacement_solve_eq_25_and_mn_with_their_prior():
    """bv_em_<gamma> and mn_em under the binomial law (their systems from the law of
    degree 2m) apply eq 25 and Li et al.'s MN built from the law itself with the EM
    distribution as the prior (one n: the grid is the ranks)."""
    rng = np.random.default_rng(8)
    n, m = 60, 10
    sampled = 1 + rng.binomial(m, rng.beta(0.7, 4, 3000))
    data = sampled_evaluation(sampled, m, n, "binomial")
    prior = learned_rank_distribution(data, "em")
    P, M = sampled_rank_law(n, m, "binomial"), metric_vector("recall@5", n)
    vector = bias_variance_correction(M, P, 0.1, prior)
    assert estimate("recall@5", "bv_em_0.1", data) == pytest.approx(
        vector[sampled - 1].mean(), rel=1e-10
    )
    mn = mn_correction(M, P, prior, sampled.size)
    assert estimate("recall@5", "mn_em", data) == pytest.approx(mn[sampled - 1].mean(), rel=1e-10)


def test_maxent_newton_matrix_from_the_doubled_degree_is_the_rows_product():
    """One sample size (Bernstein rows of one degree): maxent's second moments from the
    2m + 1 sums equal the rows' product, and maxent's distribution is the same either
    way to rounding; users of two sample sizes take the rows' product."""
    rng = np.random.default_rng(6)
    n = rng.integers(300, 501, 4000)
    ranks = 1 + rng.binomial(40, rng.beta(0.5, 5, 4000))
    like = learned_module._likelihood(sampled_evaluation(ranks, 40, n, "binomial"))
    assert like.bernstein is not None
    pi = rng.dirichlet(np.ones(like.grid))
    direct = (like.rows * pi) @ like.rows.T
    np.testing.assert_allclose(learned_module._second_moments(like, pi), direct, atol=1e-15)
    rows_only = dataclasses.replace(like, bernstein=None)
    np.testing.assert_allclose(
        learned_module._maxent(like, 0.01), learned_module._maxent(rows_only, 0.01), atol=1e-14
    )
    two_sizes = np.where(rng.random(4000) < 0.5, 40, 20)
    mixed = sampled_evaluation(np.minimum(ranks, two_sizes + 1), two_sizes, n, "binomial")
    assert learned_module._likelihood(mixed).bernstein is None


def test_maxents_log_partition_is_the_log_of_the_sum_of_exponentials():
    """log sum_j exp(u_j): the direct sum where it does not overflow, shifted by c when
    u is (lse(u + c) = lse(u) + c), tied maxima counted, and finite far beyond exp's range."""
    rng = np.random.default_rng(5)
    u = rng.normal(size=500)
    u[[3, 70]] = u.max()
    lse = learned_module._log_sum_exp
    assert lse(u) == pytest.approx(np.log(np.sum(np.exp(u))), rel=1e-15)
    assert lse(u + 1000.0) == pytest.approx(lse(u) + 1000.0, rel=1e-15)
    assert lse(np.zeros(8)) == pytest.approx(np.log(8.0), rel=1e-15)
