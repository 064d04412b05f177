"""Every registered law of the sampled rank against what any such law must satisfy
(section 4.3): rows are distributions on r~ = 1..m+1, the mean number of beaten draws is
m (r - 1) / (n - 1) (each draw, with or without replacement, is above the relevant item
with probability (r - 1) / (n - 1), eq 15), the best item is never beaten and the worst
always, and a law is checked against a simulation of its own draws."""

import numpy as np
import pytest

from sampled_metrics.estimation.laws import (
    LAWS,
    SAMPLING_LAWS,
    sampled_rank_law,
    sampled_rank_pmf,
    sampling_law,
)

N, M = 40, 12


@pytest.mark.parametrize("law", LAWS)
def test_rows_are_distributions(law):
    P = sampled_rank_law(N, M, law)
    assert P.shape == (N, M + 1)
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("law", LAWS)
def test_mean_beaten_draws_is_m_times_the_share_above(law):
    P = sampled_rank_law(N, M, law)
    r = np.arange(1, N + 1)
    np.testing.assert_allclose(P @ np.arange(M + 1), M * (r - 1) / (N - 1), atol=1e-9)


@pytest.mark.parametrize("law", LAWS)
def test_the_best_item_is_never_beaten_and_the_worst_always(law):
    P = sampled_rank_pmf([1, N], N, M, law)
    assert P[0, 0] == pytest.approx(1.0)
    assert P[1, M] == pytest.approx(1.0)


@pytest.mark.parametrize("law", LAWS)
def test_the_law_matches_its_simulated_draws(law):
    """Draw m of the n - 1 other items (with or without replacement, as the law says)
    and count those ranked above r: the frequencies match the pmf within 4 standard
    errors of each cell."""
    rng = np.random.default_rng(2020)
    r, draws = 15, 40_000
    replacement = sampling_law(law).replacement
    beaten = np.array(
        [np.sum(rng.choice(N - 1, M, replace=replacement) < r - 1) for _ in range(draws)]
    )
    observed = np.bincount(beaten, minlength=M + 1) / draws
    expected = sampled_rank_pmf([r], N, M, law)[0]
    error = np.sqrt(expected * (1 - expected) / draws)
    assert np.all(np.abs(observed - expected) <= 4 * error + 1e-12)


def test_the_registry_names_every_law_once():
    assert tuple(SAMPLING_LAWS) == LAWS
    assert all(SAMPLING_LAWS[name].name == name for name in LAWS)
    assert {SAMPLING_LAWS[name].replacement for name in LAWS} == {True, False}


def test_an_unknown_law_is_one_error_naming_it():
    with pytest.raises(ValueError, match="unknown law 'poisson'"):
        sampled_rank_pmf([1], N, M, "poisson")
