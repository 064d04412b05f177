"""Identification intervals (``estimation.estimators.bounds``) against known truth: exact
ranks are drawn first, sampled ranks from them, and every interval is checked against
the exact metric of those ranks, never against the code's own output."""

from __future__ import annotations

import numpy as np
import pytest

from sampled_metrics.estimation.estimators import (
    difference_interval,
    identification_interval,
    identification_intervals,
    learned_rank_distribution,
    sampled_evaluation,
)
from sampled_metrics.estimation.estimators.region import confidence_region
from sampled_metrics.estimation.laws import sampled_rank_law, sampled_rank_pmf
from sampled_metrics.estimation.metrics import metric_by_name

METRICS = ("recall@10", "ndcg@10", "ap", "auc")


def exact(metric, ranks, n) -> float:
    return float(np.mean(metric_by_name(metric)(np.asarray(ranks, float), np.asarray(n, float))))


def draw(rng, ranks, n, m, law):
    """Sampled ranks of users at exact ranks ``ranks`` among ``n`` (eq 15, section 4.4)."""
    if law == "binomial":
        return 1 + rng.binomial(m, (ranks - 1) / (n - 1))
    return 1 + rng.hypergeometric(ranks - 1, n - ranks, m)


# Rank distributions on n items (the shapes of MovieLens 1M's 3,706 scaled to n): peaked
# at theta ~ 0.02; heavy-tailed, 60 % geometric (mean rank 60 of 3,706) + 40 %
# log-uniform; iALS-like, theta log-normal with recommender X's median 0.047.
def peaked(rng, n):
    theta = np.clip(rng.normal(0.02, 0.005, n.size), 0, 1)
    return 1 + np.round(theta * (n - 1)).astype(np.int64)


def heavy(rng, n):
    geometric = rng.geometric(np.minimum(1.0, 3706 / (60 * n)))
    log_uniform = np.floor(np.exp(rng.uniform(0, np.log(n)))).astype(np.int64)
    return np.clip(np.where(rng.random(n.size) < 0.6, geometric, log_uniform), 1, n)


def ials_like(rng, n):
    theta = np.clip(0.047 * np.exp(rng.normal(0, 1.3, n.size)), 0, 1)
    return 1 + np.round(theta * (n - 1)).astype(np.int64)


# --------------------------------------------------------------------------
# (1) every item sampled: the interval closes on the exact metric
# --------------------------------------------------------------------------


def test_every_item_sampled_closes_on_the_exact_metric():
    """m = n - 1 without replacement: the sampled rank is the rank (every threshold k
    is a statistic, as m <= 12), so the interval contains the exact metric and narrows
    like 1/sqrt(U)."""
    rng = np.random.default_rng(0)
    n, widths = 12, []
    for users in (500, 5000, 50000):
        ranks = heavy(rng, np.full(users, n))
        data = sampled_evaluation(ranks, m=n - 1, n=n, law="hypergeometric")
        assert np.array_equal(data.ranks, ranks)
        out = identification_intervals(data, ["recall@5", "ndcg@10", "ap", "auc"])
        for metric, (low, high) in out.items():
            assert low <= exact(metric, ranks, n) <= high, (users, metric)
        widths.append([high - low for low, high in out.values()])
    widths = np.array(widths)
    assert np.all(widths[1] < widths[0] / 2) and np.all(widths[2] < widths[1] / 2)
    assert widths[2].max() < 0.02


# --------------------------------------------------------------------------
# (2) coverage over repeated sampling, whatever the rank distribution
# --------------------------------------------------------------------------


def coverage(ranks, n, law, seeds, rng, **options) -> dict:
    """{metric: share of ``seeds`` redraws of the sampled ranks (m = 100) whose 95 %
    interval covers the exact metric of the fixed ``ranks``}."""
    truth = {metric: exact(metric, ranks, n) for metric in METRICS}
    covered = dict.fromkeys(METRICS, 0)
    for _ in range(seeds):
        data = sampled_evaluation(draw(rng, ranks, n, 100, law), m=100, n=n, law=law)
        for metric, (low, high) in identification_intervals(data, METRICS, **options).items():
            covered[metric] += low <= truth[metric] <= high
    return {metric: hits / seeds for metric, hits in covered.items()}


def floor(draws: int) -> float:
    """95 % minus 3 binomial standard errors."""
    return 0.95 - 3 * np.sqrt(0.95 * 0.05 / draws)


def test_coverage_of_the_exact_metric_at_m_100():
    """Exact ranks fixed (500 users, n = 300), sampled ranks redrawn 50 times for each
    rank distribution and law: every 95 % interval covers the exact metric at least
    95 % - 3 binomial standard errors of the time, in each setting (50 draws) and over
    all six (300 draws per metric). The bound holds by construction: it is near 100 %."""
    rng = np.random.default_rng(1)
    n, seeds, pooled = np.full(500, 300), 50, []
    for distribution in (peaked, heavy, ials_like):
        ranks = distribution(rng, n)
        for law in ("binomial", "hypergeometric"):
            shares = coverage(ranks, n, law, seeds, rng)
            assert min(shares.values()) >= floor(seeds), (distribution.__name__, law, shares)
            pooled.append(list(shares.values()))
    assert np.mean(pooled, axis=0).min() >= floor(seeds * len(pooled)), pooled


@pytest.mark.parametrize("law", ["binomial", "hypergeometric"])
def test_coverage_with_users_of_different_n(law):
    """Users with n from 300 to 360: strata of neighbouring n and, without replacement,
    the hypergeometric law bounded over groups of n (not approximated by eq 15)."""
    rng = np.random.default_rng(2)
    n = rng.integers(300, 361, 400)
    seeds = 16
    shares = coverage(heavy(rng, n), n, law, seeds, rng, strata=4)
    assert min(shares.values()) >= floor(seeds), shares


@pytest.mark.parametrize("resolution", [0.0, 0.005, 0.1])
@pytest.mark.parametrize("law", ["binomial", "hypergeometric"])
def test_the_users_own_cells_satisfy_every_relaxed_coefficient(law, resolution):
    """The heart of the guarantee, checked without randomness: put each user in their
    cell; the relaxed coefficients bound each statistic's exact expectation (each
    user's law at their own r, n and m) and the metric, on fine and coarse cells alike,
    with users of different n and of two sample sizes."""
    rng = np.random.default_rng(3)
    n = rng.integers(120, 201, 300)
    ranks, m = ials_like(rng, n), rng.choice([20, 30], n.size)
    sampled = np.where(m == 20, draw(rng, ranks, n, 20, law), draw(rng, ranks, n, 30, law))
    data = sampled_evaluation(sampled, m=m, n=n, law=law)
    region = confidence_region(data, 0.05, resolution, 3, 8)
    shape = region.shape
    x = np.zeros(shape.a_ub.shape[1])
    for cells, part in zip(shape.strata, shape.slices):
        for row, value in enumerate(cells.n[:, 0]):
            for above in ranks[(n == value) & (m == cells.m)] - 1:
                column = np.flatnonzero((cells.low[row] <= above) & (above <= cells.high[row]))
                assert column.size == 1
                x[part.start + column[0]] += 1 / data.n_users
    assert np.allclose(shape.a_eq @ x, shape.b_eq)
    expected = []
    for size, ks, _ in shape.classes:  # per class, in the order of the rows
        mine = m == size
        cdf = np.cumsum(sampled_rank_pmf(ranks[mine], n[mine], size, law), axis=1)
        theta = (ranks[mine] - 1) / (n[mine] - 1)
        expected.append(np.append(cdf[:, ks - 1].sum(axis=0), theta.sum()) / data.n_users)
    expected = np.concatenate(expected)
    relaxed = shape.a_ub @ x  # low . x, then -high . x, per statistic
    assert np.all(relaxed[0::2] <= expected + 1e-12)
    assert np.all(-relaxed[1::2] >= expected - 1e-12)
    for metric in METRICS:
        low, high = shape.extremes(metric)
        assert low @ x - 1e-12 <= exact(metric, ranks, n) <= high @ x + 1e-12


# --------------------------------------------------------------------------
# (3) EM's plug-in lies inside whenever its law fits the region
# --------------------------------------------------------------------------


@pytest.mark.parametrize("law", ["binomial", "hypergeometric"])
def test_em_plug_in_is_inside_when_its_law_fits_the_region(law):
    """One n: EM's grid is the ranks, so its distribution is a set of ranks; when the
    expected statistics under it lie in the region it is feasible and its plug-in
    sum_r pi_r M(r) lies in the interval. (With several n, EM places every user on one
    grid of theta, independent of n, at ranks 1 + theta (n_u - 1) that are not
    integers: its plug-in is not the metric of any set of ranks, so no such claim.)"""
    rng = np.random.default_rng(4)
    n, m, fits = 200, 50, 0
    ranks = heavy(rng, np.full(1000, n))
    law_matrix = sampled_rank_law(n, m, law)
    for _ in range(8):
        data = sampled_evaluation(draw(rng, ranks, n, m, law), m=m, n=n, law=law)
        pi = learned_rank_distribution(data, "em")
        region = confidence_region(data, 0.05, 0.005, 8, 12)
        _, ks, lo, hi = region.statistics[0]
        implied = np.append(
            (pi @ np.cumsum(law_matrix, axis=1))[ks - 1], pi @ np.arange(n) / (n - 1)
        )
        if np.all((lo <= implied) & (implied <= hi)):
            fits += 1
            for metric in METRICS:
                low, high = region.bounds(metric)
                plug_in = pi @ metric_by_name(metric)(np.arange(1.0, n + 1), float(n))
                assert low - 1e-9 <= plug_in <= high + 1e-9, metric
    assert fits >= 6


# --------------------------------------------------------------------------
# (4) fewer sampled items, wider intervals
# --------------------------------------------------------------------------


def test_width_grows_as_m_shrinks():
    rng = np.random.default_rng(5)
    n = 300
    ranks = ials_like(rng, np.full(3000, n))
    widths = []
    for m in (n - 1, 100, 10):
        data = sampled_evaluation(
            draw(rng, ranks, n, m, "hypergeometric"), m=m, n=n, law="hypergeometric"
        )
        out = identification_intervals(data, METRICS)
        for metric, (low, high) in out.items():
            assert low <= exact(metric, ranks, n) <= high
        widths.append([high - low for low, high in out.values()])
    widths = np.array(widths)
    assert np.all(widths[0] < widths[1]) and np.all(widths[1] < widths[2]), widths


# --------------------------------------------------------------------------
# the difference of two models
# --------------------------------------------------------------------------


def test_difference_interval_is_the_bonferroni_combination_and_covers():
    rng = np.random.default_rng(6)
    n = np.full(800, 300)
    ranks_x, ranks_y = ials_like(rng, n), heavy(rng, n)
    first = sampled_evaluation(draw(rng, ranks_x, n, 100, "binomial"), m=100, n=n)
    second = sampled_evaluation(draw(rng, ranks_y, n, 100, "binomial"), m=100, n=n)
    for metric in ("ndcg@10", "auc"):
        low, high = difference_interval(first, second, metric)
        low_x, high_x = identification_interval(first, metric, 0.975)
        low_y, high_y = identification_interval(second, metric, 0.975)
        assert (low, high) == pytest.approx((low_x - high_y, high_x - low_y))
        assert low <= exact(metric, ranks_x, n) - exact(metric, ranks_y, n) <= high


def test_each_bound_is_the_dual_bound_of_the_linear_program():
    """The bound returned is weak duality's: never above the solver's minimum, and
    within its tolerance of it."""
    from scipy import optimize

    rng = np.random.default_rng(7)
    n = rng.integers(200, 301, 500)
    data = sampled_evaluation(draw(rng, heavy(rng, n), n, 50, "binomial"), m=50, n=n)
    region = confidence_region(data, 0.05, 0.005, 4, 12)
    shape = region.shape
    for metric in METRICS:
        low, _ = shape.extremes(metric)
        primal = optimize.linprog(
            low, A_ub=shape.a_ub, b_ub=region.b_ub, A_eq=shape.a_eq, b_eq=shape.b_eq
        ).fun
        assert primal - 1e-6 <= region._minimum(low) <= primal + 1e-12


def test_the_region_shared_by_evaluations_of_the_same_users_is_theirs():
    """Evaluations of one set of users share the parts of the region that n, m and the
    law fix; an interval is the same read from the shared parts (after another
    model's evaluation of the same users) as built afresh (the users in another order:
    other n and m arrays, the same region), and another model's is its own."""
    rng = np.random.default_rng(11)
    n = rng.integers(150, 251, 400)
    ranks = {"good": peaked(rng, n), "bad": ials_like(rng, n)}
    sampled = {name: draw(rng, r, n, 30, "hypergeometric") for name, r in ranks.items()}
    shared = {
        name: identification_intervals(sampled_evaluation(s, 30, n, "hypergeometric"), METRICS)
        for name, s in sampled.items()
    }
    order = rng.permutation(n.size)
    for name, s in sampled.items():
        data = sampled_evaluation(s[order], 30, n[order], "hypergeometric")
        fresh = identification_intervals(data, METRICS)
        for metric in METRICS:
            assert np.allclose(fresh[metric], shared[name][metric], rtol=0, atol=1e-9)
            low, high = shared[name][metric]
            assert low <= exact(metric, ranks[name], n) <= high
    assert shared["good"]["recall@10"] != shared["bad"]["recall@10"]


# --------------------------------------------------------------------------
# (5) bad inputs
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda d: identification_interval(d, "nope"), "unknown metric"),
        (lambda d: identification_interval(d, "auc", 1.5), "confidence must lie in"),
        (lambda d: identification_interval(d, "auc", 0.0), "confidence must lie in"),
        (lambda d: identification_interval(d, "auc", grid=10), "unknown options"),
        (lambda d: identification_interval(d, "auc", resolution=-0.1), "resolution must"),
        (lambda d: identification_interval(d, "auc", strata=0), "at least 1"),
        (lambda d: identification_interval([1, 2, 3], "auc"), "must be a SampledEvaluation"),
        (lambda d: difference_interval(d, d, "auc", 2.0), "confidence must lie in"),
    ],
)
def test_bad_inputs_give_one_clear_value_error(call, message):
    data = sampled_evaluation([1, 2, 3], m=5, n=10)
    with pytest.raises(ValueError, match=message):
        call(data)


def test_a_metric_increasing_in_the_rank_is_refused():
    data = sampled_evaluation([1, 2, 3], m=5, n=10)
    shape = confidence_region(data, 0.05, 0.005, 8, 12).shape
    with pytest.raises(ValueError, match="non-increasing in the rank"):
        shape.metric_extremes(lambda ranks, n: ranks / n)
