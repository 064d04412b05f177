"""The law of the sampled rank (section 4.3) and expected metrics (section 4.4)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sampled_metrics.estimation import metrics as M
from sampled_metrics.estimation.expected import (
    expected_ap_closed_form,
    expected_recall_closed_form,
    expected_sampled_metric,
    metric_on_sample,
)
from sampled_metrics.estimation.laws import LAWS, sampled_rank_law, sampled_rank_pmf


@pytest.mark.parametrize("n, m", [(10, 3), (50, 5), (3706, 100), (10_000, 99)])
def test_law_matches_scipy_stats(n, m):
    ranks = np.unique(np.r_[1, 2, np.arange(1, n + 1, max(1, n // 300)), n - 1, n])
    r, k = ranks[:, None], np.arange(m + 1)[None, :]
    binom = stats.binom.pmf(k, m, (r - 1) / (n - 1))
    hyper = stats.hypergeom.pmf(k, n - 1, r - 1, m)
    np.testing.assert_allclose(sampled_rank_pmf(ranks, n, m, "binomial"), binom, atol=1e-10)
    np.testing.assert_allclose(sampled_rank_pmf(ranks, n, m, "hypergeometric"), hyper, atol=1e-10)


def test_law_edges_by_hand():
    P = sampled_rank_law(5, 2, "binomial")
    assert P[0].tolist() == [1, 0, 0]  # rank 1 never drops
    assert P[-1].tolist() == [0, 0, 1]  # rank n is always last
    np.testing.assert_allclose(P[2], [0.25, 0.5, 0.25])  # p(above) = 2/4
    H = sampled_rank_law(5, 2, "hypergeometric")
    np.testing.assert_allclose(H[2], [1 / 6, 4 / 6, 1 / 6])  # 2 of 4 above, draw 2
    assert sampled_rank_law(7, 6, "hypergeometric").tolist() == np.eye(7).tolist()


@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("n, m", [(10_000, 99), (3706, 100), (3706, 1), (200, 199), (37, 12)])
def test_sampled_auc_is_unbiased(law, n, m):
    """Section 4.4.1: E[AUC_{m+1}(r~)] = AUC_n(r) for every r, both laws."""
    ranks = np.arange(1, n + 1)
    expected = expected_sampled_metric(metric_on_sample("auc", m), ranks, n, law)
    np.testing.assert_allclose(expected, M.auc(ranks, n), rtol=0, atol=1e-12)


def test_per_user_n_equals_one_law_per_n():
    ranks, ns = np.array([1, 4, 7, 3]), np.array([9, 9, 12, 5])
    P = sampled_rank_pmf(ranks, ns, 3, "hypergeometric")
    for i, (r, n) in enumerate(zip(ranks, ns)):
        np.testing.assert_allclose(P[i], sampled_rank_law(n, 3)[r - 1])


@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("n, m", [(3706, 100), (1500, 1499)])
def test_each_row_of_the_law_is_computed_alone(law, n, m):
    # p(r~ | r) depends on r alone: the whole law (built block by block) holds, to the
    # last bit, the rows computed one at a time, whatever block a row falls in.
    rows = np.r_[1:4, n // 2 - 1 : n // 2 + 2, n - 2 : n + 1]
    whole = sampled_rank_law(n, m, law)
    alone = np.vstack([sampled_rank_pmf([r], n, m, law) for r in rows])
    assert np.array_equal(whole[rows - 1], alone)


@pytest.mark.parametrize("law", LAWS)
def test_the_law_without_its_tails_drops_only_negligible_entries(law):
    """tails=False: per-user rows in any order (sorted by p inside, in blocks of close
    windows) are the rows computed alone, bit for bit, and each equals the whole law's row
    but for entries below laws.NEGLIGIBLE, which it sets to 0 (most of them at m = 2000)."""
    from sampled_metrics.estimation.laws import NEGLIGIBLE

    rng = np.random.default_rng(7)
    n = rng.integers(2100, 3000, 700)
    ranks = np.minimum(rng.integers(1, 3000, n.size), n)
    lean = sampled_rank_pmf(ranks, n, 2000, law, tails=False)
    whole = sampled_rank_pmf(ranks, n, 2000, law)
    for i in rng.choice(n.size, 25, replace=False):
        assert np.array_equal(
            lean[i], sampled_rank_pmf([ranks[i]], n[i], 2000, law, tails=False)[0]
        )
    dropped = (lean == 0) & (whole > 0)
    assert (lean == 0).mean() > 0.5 and dropped.any() and whole[dropped].max() <= NEGLIGIBLE
    np.testing.assert_allclose(lean, whole, rtol=1e-10, atol=NEGLIGIBLE)


@pytest.mark.parametrize("n, m", [(10_000, 99), (3706, 100), (100, 10)])
def test_expected_ap_equals_closed_form_eq19(n, m):
    ranks = np.arange(1, n + 1)
    from_law = expected_sampled_metric(metric_on_sample("ap", m), ranks, n, "binomial")
    np.testing.assert_allclose(from_law, expected_ap_closed_form(ranks, n, m), rtol=1e-10)


@pytest.mark.parametrize("law", LAWS)
def test_expected_recall_equals_cdf_eq18(law):
    n, m, ranks = 3706, 100, np.arange(1, 3707)
    from_law = expected_sampled_metric(metric_on_sample("recall@10", m), ranks, n, law)
    np.testing.assert_allclose(
        from_law, expected_recall_closed_form(ranks, n, m, 10, law), atol=1e-10
    )


@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("name", ["recall@10", "ndcg@10", "ap", "ndcg", "precision@1", "auc"])
def test_with_one_sample_every_metric_is_affine_in_the_rank(law, name):
    """Section 4.4.4: with m = 1, E[M(r~)] = r const1 + const2 with
    const1 = (M(2) - M(1)) / (n - 1)."""
    n, ranks = 500, np.arange(1, 501)
    values = metric_on_sample(name, 1)
    expected = expected_sampled_metric(values, ranks, n, law)
    const1 = (values[1] - values[0]) / (n - 1)
    const2 = (n * values[0] - values[1]) / (n - 1)
    np.testing.assert_allclose(expected, ranks * const1 + const2, atol=1e-12)


@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("true_rank", [1, 2, 40, 900, 1800, 3706])
def test_law_matches_real_sampling(law, true_rank):
    """Draw real samples of m items among n - 1 and compare the empirical law
    of r~ with P by a chi-square test (fixed seed)."""
    n, m, draws = 3706, 100, 5_000
    rng = np.random.default_rng(true_rank)
    others = np.arange(n - 1)  # item j < true_rank - 1 is ranked above
    if law == "binomial":
        picks = rng.integers(0, n - 1, size=(draws, m))
    else:
        picks = np.argpartition(rng.random((draws, n - 1)), m, axis=1)[:, :m]
    observed_rank = 1 + np.sum(others[picks] < true_rank - 1, axis=1)
    expected = sampled_rank_law(n, m, law)[true_rank - 1] * draws
    counts = np.bincount(observed_rank - 1, minlength=m + 1).astype(float)
    keep = expected > 5  # pool sparse cells into one
    f_obs = np.r_[counts[keep], counts[~keep].sum()]
    f_exp = np.r_[expected[keep], expected[~keep].sum()]
    if f_exp[-1] < 1e-9:
        f_obs, f_exp = f_obs[:-1], f_exp[:-1]
    assert counts[~keep].sum() <= max(5 * f_exp[-1], 5)
    if f_obs.size > 1:
        assert stats.chisquare(f_obs, f_exp * f_obs.sum() / f_exp.sum()).pvalue > 1e-3
    else:
        assert f_obs[0] == draws  # a degenerate law: every draw agrees


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 400), st.integers(1, 120), st.sampled_from(LAWS))
def test_every_row_is_a_distribution_with_the_right_mean(n, m, law):
    if law == "hypergeometric":
        m = min(m, n - 1)
    P = sampled_rank_law(n, m, law)
    assert np.all(P >= 0) and not np.any(np.isnan(P))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    mean = P @ np.arange(1, m + 2)
    np.testing.assert_allclose(mean, 1 + m * (np.arange(1, n + 1) - 1) / (n - 1), atol=1e-9)


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="without replacement"):
        sampled_rank_law(10, 10, "hypergeometric")
    with pytest.raises(ValueError, match="unknown law"):
        sampled_rank_law(10, 3, "poisson")
    with pytest.raises(ValueError, match="integer"):
        sampled_rank_pmf([1.5], 10, 3)
    with pytest.raises(ValueError, match="1..n"):
        sampled_rank_pmf([11], 10, 3)


def test_significant_blocks_hold_every_significant_entry_and_no_more_columns():
    from sampled_metrics.estimation.laws import NEGLIGIBLE, significant_blocks

    law = sampled_rank_pmf(np.arange(1, 301), 300, 40, "binomial")
    law[5] = 0.0  # a row without any significant entry
    blocks = significant_blocks(law, 16)
    assert [rows.start for rows, _, _ in blocks] == list(range(0, 300, 16))
    assert blocks[-1][0].stop == 300
    for rows, low, high in blocks:
        significant = np.flatnonzero((law[rows] > NEGLIGIBLE).any(axis=0))
        assert significant.min() == low  # nothing significant left of low, low itself is
        assert significant.max() < high
        if rows.start != 0:  # the empty row's span ends at the last column
            assert significant.max() == high - 1
