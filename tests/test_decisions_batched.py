"""The batched difference estimator (estimation/decisions/batched.py) against the one
row at a time of estimation/decisions/estimate.py: on random designs and values each
row's numbers are the single call's, to the last bit (the same sums in the same order).
"""

from __future__ import annotations

import numpy as np
import pytest

from sampled_metrics.estimation.decisions import Design, Proxy, estimate_mean
from sampled_metrics.estimation.decisions.batched import (
    difference_variances,
    estimate_means,
    stratum_covariances,
)
from sampled_metrics.estimation.decisions.estimate import difference_variance


def random_design(rng: np.random.Generator, users: int = 400, strata: int = 6) -> Design:
    """Strata of random sizes (one left empty), a few users chosen in each."""
    stratum = rng.integers(0, strata - 1, users)  # the last stratum empty
    sizes = np.bincount(stratum, minlength=strata)
    counts = np.minimum(sizes, rng.integers(2, 30, strata))
    chosen = np.zeros(users, dtype=bool)
    for h in range(strata):
        members = np.flatnonzero(stratum == h)
        chosen[rng.choice(members, size=counts[h], replace=False)] = True
    probability = (counts / np.maximum(sizes, 1))[stratum]
    return Design(stratum, probability, chosen, sizes)


@pytest.mark.parametrize("seed", range(5))
def test_each_row_is_the_single_estimate(seed):
    rng = np.random.default_rng(seed)
    design = random_design(rng)
    rows = 7
    y = rng.random((rows, design.n_users)) - rng.random((rows, design.n_users))
    g = y + rng.normal(0, 0.3, y.shape)
    v = rng.random(y.shape) * 0.1
    chosen = design.users
    batch = estimate_means(design, y[:, chosen], g, confidence=0.9,
                           predicted_variance=v[:, chosen], bounds=(-1.0, 1.0))  # fmt: skip
    bare = estimate_means(design, y[:, chosen], g, confidence=0.9)
    for p in range(rows):
        one = estimate_mean(design, y[p], g[p], confidence=0.9, predicted_variance=v[p])
        assert batch.value[p] == one.value
        assert batch.standard_error[p] == one.standard_error
        assert batch.degrees_of_freedom[p] == one.degrees_of_freedom
        assert (batch.low[p], batch.high[p]) == (max(one.low, -1.0), min(one.high, 1.0))
        plain = estimate_mean(design, y[p], g[p], confidence=0.9)
        assert (bare.low[p], bare.high[p]) == (plain.low, plain.high)


@pytest.mark.parametrize("seed", range(5))
def test_each_row_is_the_single_difference_variance(seed):
    rng = np.random.default_rng(seed)
    design = random_design(rng)
    chosen = design.users
    rows = 4
    ra, rb = rng.normal(size=(2, rows, chosen.size))
    rb[0] = ra[0]  # a correlation of 1
    rb[1] = 0.0  # a residual that never varies
    va, vb = rng.random((2, rows, design.n_users))
    batch = difference_variances(design, ra, rb, va[:, chosen], vb[:, chosen])
    for p in range(rows):
        one = difference_variance(
            design, ra[p], rb[p], Proxy(np.zeros(design.n_users), va[p]),
            Proxy(np.zeros(design.n_users), vb[p]),
        )  # fmt: skip
        assert np.array_equal(batch[p], one[chosen])


def test_the_covariance_within_strata_is_the_sample_covariance():
    rng = np.random.default_rng(3)
    stratum = rng.integers(0, 4, 60)
    counts = np.bincount(stratum, minlength=5)  # stratum 4 empty
    x, y = rng.normal(size=(2, 3, 60))
    found = stratum_covariances(stratum, counts, x, y)
    for p in range(3):
        for h in range(4):
            keep = stratum == h
            assert found[p, h] == pytest.approx(np.cov(x[p, keep], y[p, keep])[0, 1], rel=1e-12)
        assert found[p, 4] == 0.0
