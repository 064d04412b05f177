"""Neyman's allocation with bounds (allocation._clipped) and the strata of the smallest
sampled rank, against their definitions: the shares of the smallest double t whose cost
reaches the budget, found by bisecting the doubles one by one, and each model's bin."""

from __future__ import annotations

import numpy as np
import pytest

from sampled_metrics.estimation.decisions.allocation import _clipped, _first_reaching
from sampled_metrics.estimation.decisions.design import design_strata


def _bisected(weight, low, high, costs, total):
    """clip(t weight, low, high) at the smallest double t in (0, top] whose cost
    reaches ``total``: halving [0, top] until its ends are neighbouring doubles."""

    def shares(t):
        return np.minimum(np.maximum(t * weight, low), high)

    def cost(t):
        return np.add.reduce(shares(t) * costs)

    top = float(np.max(high / np.where(weight > 0, weight, np.inf), initial=0.0))
    if cost(top) <= total:
        return shares(top)
    below, above = 0.0, top
    while True:
        middle = (below + above) / 2
        if middle in (below, above):
            return shares(above)
        if cost(middle) < total:
            below = middle
        else:
            above = middle


@pytest.mark.parametrize("strata", [3, 6, 36])
@pytest.mark.parametrize("unit_costs", [True, False])
def test_the_shares_are_those_of_the_smallest_t_that_spends_the_budget(strata, unit_costs):
    rng = np.random.default_rng(strata)
    for _ in range(300):
        sizes = rng.integers(0, 2000, strata) * (rng.random(strata) < 0.8)
        spreads = rng.random(strata) ** rng.choice([1, 5]) * (rng.random(strata) < 0.9)
        costs = np.ones(strata) if unit_costs else rng.uniform(50, 4000, strata)
        low, high = np.minimum(5, sizes).astype(float), sizes.astype(float)
        weight = sizes * spreads / np.sqrt(costs)
        cheapest, dearest = np.sum(low * costs), np.sum(high * costs)
        total = float(round(rng.uniform(cheapest, dearest * 1.1)))
        expected = _bisected(weight, low, high, costs, total)
        np.testing.assert_array_equal(_clipped(weight, low, high, costs, total), expected)


def test_the_first_double_reaching_a_step_is_found_from_any_guess():
    step = 0.1 + 0.2  # 0.30000000000000004: the step sits at a double of its own
    for guess in (1e-300, 0.1, np.nextafter(step, 0.0), step, 0.5, 1.0):
        assert _first_reaching(lambda t: float(t >= step), 0.5, guess, 1.0) == step


def test_the_bin_of_the_smallest_rank_is_the_smallest_bin():
    ranks = np.random.default_rng(0).integers(1, 102, size=(3, 1000))
    edges = (1, 2, 3, 5, 10)
    bins = np.searchsorted(np.asarray(edges), ranks, side="left")
    stratum, strata = design_strata(ranks, edges=edges, cells="min")
    assert strata == len(edges) + 1
    np.testing.assert_array_equal(stratum, bins.min(axis=0))


def test_a_budget_that_only_pays_the_floors_gives_the_floors():
    sizes = np.array([100.0, 40.0, 0.0, 7.0])
    weight, costs = np.array([3.0, 0.5, 0.0, 1e-9]), np.array([1.0, 2.0, 1.0, 3.0])
    low = np.minimum(5, sizes)
    total = float(np.sum(low * costs))
    shares = _clipped(weight, low, sizes, costs, total)
    np.testing.assert_array_equal(shares, _bisected(weight, low, sizes, costs, total))
    np.testing.assert_array_equal(shares, low)
