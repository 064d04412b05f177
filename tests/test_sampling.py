"""Sampled evaluation with real scores: draws, item mapping, ranks."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from sampled_metrics.estimation.laws import WITHOUT_REPLACEMENT, sampled_rank_pmf
from sampled_metrics.passes.ranking import exact_ranks
from sampled_metrics.passes.sampling import (
    draw_positions,
    excluded_items,
    pool_sizes,
    positions_to_items,
    ranks_among_sampled,
    sampled_ranks,
)
from sampled_metrics.passes.ties import tie_order_keys
from sampled_metrics.recommenders import PrecomputedScores


def small_case():
    # 3 users, 6 items. user 0 trained on {1, 4}, held out 2; user 1 trained on {0}, held out 5;
    # user 2 trained on {0, 1, 2}, held out 3.
    train = sp.csr_matrix(
        np.array([[0, 1, 0, 0, 1, 0], [1, 0, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0]], dtype=np.float32)
    )
    return train, np.array([2, 5, 3])


def test_excluded_items_and_pools_by_hand():
    train, test = small_case()
    E = excluded_items(train, test)
    assert [list(E[u].indices) for u in range(3)] == [[1, 2, 4], [0, 5], [0, 1, 2, 3]]
    assert pool_sizes(E).tolist() == [3, 4, 2]


def test_positions_map_to_the_free_items_in_order():
    train, test = small_case()
    E = excluded_items(train, test)
    free = [[0, 3, 5], [1, 2, 3, 4], [4, 5]]
    positions = np.array([[0, 1, 2], [3, 0, 2], [1, 0, 1]])
    items = positions_to_items(E, positions)
    for u in range(3):
        assert items[u].tolist() == [free[u][p] for p in positions[u]]


def test_distinct_draws_are_distinct_and_uniform():
    rng = np.random.default_rng(1)
    pool = np.array([5] * 20_000)
    draws = draw_positions(pool, 3, rng)
    assert np.all(np.diff(draws, axis=1) > 0)
    # every 3-subset of 5 positions (10 of them) equally likely
    codes = (1 << draws).sum(axis=1)
    counts = np.unique(codes, return_counts=True)[1]
    assert counts.size == 10
    assert stats.chisquare(counts).pvalue > 1e-3


def _positions_by_the_definition(pool, m, rng):
    """draw_positions as its docstring defines it, in int64: m uniforms a user times the
    pool, truncated, sorted; then the later copy of each repeat redrawn (row-major order
    over the whole array) until no row has one."""
    positions = (rng.random(pool.size * m).reshape(pool.size, m) * pool[:, None]).astype(np.int64)
    positions.sort(axis=1)
    while True:
        repeat = np.zeros(positions.shape, dtype=bool)
        repeat[:, 1:] = positions[:, 1:] == positions[:, :-1]
        rows = np.nonzero(repeat)[0]
        if not rows.size:
            return positions
        positions[repeat] = (rng.random(rows.size) * pool[rows]).astype(np.int64)
        positions.sort(axis=1)


@pytest.mark.parametrize("pool_range", [(100, 130), (1400, 3700), (20000, 26744)])
def test_draw_positions_follow_their_definition_draw_for_draw(pool_range):
    pool = np.random.default_rng(1).integers(*pool_range, size=500)
    found = draw_positions(pool, 100, np.random.default_rng([7, 3]))
    assert found.dtype == np.int64
    np.testing.assert_array_equal(
        found, _positions_by_the_definition(pool, 100, np.random.default_rng([7, 3]))
    )


def test_too_small_pool_is_refused_with_the_user():
    with pytest.raises(ValueError, match="user 1"):
        draw_positions(np.array([10, 2, 10]), 3, np.random.default_rng(0))
    # with replacement it is fine
    assert draw_positions(
        np.array([10, 2, 10]), 3, np.random.default_rng(0), replacement=True
    ).shape == (3, 3)


def test_sampled_ranks_follow_the_law_of_the_exact_rank():
    """One user with exact rank r among n: the sampled ranks follow
    Hypergeometric(n - 1, r - 1, m) + 1 (the law of section 4.3)."""
    n_items, m, true_rank = 400, 20, 57
    scores = np.arange(n_items, 0, -1, dtype=np.float32)[None, :]  # item i has rank i + 1
    train = sp.csr_matrix((1, n_items), dtype=np.float32)
    test = np.array([true_rank - 1])
    ranks = sampled_ranks(
        np.repeat(scores, 1, 0), test, excluded_items(train, test), m, 3000, seed=5
    )
    counts = np.bincount(ranks[:, 0] - 1, minlength=m + 1)
    expected = sampled_rank_pmf([true_rank], n_items, m)[0] * ranks.shape[0]
    keep = expected > 5
    obs = np.r_[counts[keep], counts[~keep].sum()]
    exp = np.r_[expected[keep], expected[~keep].sum()]
    assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-3


def test_training_items_are_never_sampled_and_ties_follow_the_policy():
    # user 0: held-out item 0 scores 1.0; items 1, 2 (training) score 9; items 3..5 tie at 1.0
    scores = np.array([[1.0, 9.0, 9.0, 1.0, 1.0, 1.0]])
    train = sp.csr_matrix(np.array([[0, 1, 1, 0, 0, 0]], dtype=np.float32))
    test = np.array([0])
    E = excluded_items(train, test)
    pessimistic = sampled_ranks(scores, test, E, 3, 5, seed=0)
    optimistic = sampled_ranks(scores, test, E, 3, 5, seed=0, tie_policy="optimistic")
    average = sampled_ranks(scores, test, E, 3, 5, seed=0, tie_policy="average")
    assert pessimistic.ravel().tolist() == [4] * 5  # never 6: training items are not drawn
    assert optimistic.ravel().tolist() == [1] * 5
    assert average.ravel().tolist() == [2.5] * 5
    # random: one fixed order of the items per (tie seed, user), shared with the
    # exact ranks; with all three tied items drawn, every repetition agrees with it
    for tie_seed in range(30):
        rand = sampled_ranks(scores, test, E, 3, 5, seed=0, tie_policy="random", tie_seed=tie_seed)
        exact, _ = exact_ranks(
            PrecomputedScores(scores), train, test, tie_policy="random", seed=tie_seed
        )
        assert rand.ravel().tolist() == [exact[0]] * 5
    orders = {
        sampled_ranks(scores, test, E, 3, 1, seed=0, tie_policy="random", tie_seed=t)[0, 0]
        for t in range(200)
    }
    assert orders == {1, 2, 3, 4}


def test_random_ties_sampled_ranks_follow_the_law_of_the_exact_rank():
    """With ties broken in one order shared with the exact ranks, the sampled
    rank given the exact rank follows the hypergeometric law (section 4.3)."""
    n_items, m = 40, 6
    scores = np.zeros((1, n_items))
    scores[0, :10] = 1.0  # 10 items above a 30-item tie at 0
    train = sp.csr_matrix((1, n_items), dtype=np.float32)
    test = np.array([25])
    exact, n_candidates = exact_ranks(
        PrecomputedScores(scores), train, test, tie_policy="random", seed=3
    )
    sampled = sampled_ranks(
        scores, test, excluded_items(train, test), m, 4000, seed=1, tie_policy="random", tie_seed=3
    )
    expected = sampled_rank_pmf(exact.astype(int), n_candidates, m, WITHOUT_REPLACEMENT)[0]
    observed = np.bincount(sampled.ravel() - 1, minlength=m + 1)
    keep = expected > 0
    assert observed[~keep].sum() == 0
    assert stats.chisquare(observed[keep], expected[keep] * observed.sum()).pvalue > 1e-3


def test_same_seed_same_draws_and_different_seed_different():
    rng = np.random.default_rng(0)
    scores = rng.random((50, 300))
    train = sp.random(50, 300, density=0.1, random_state=1, format="csr")
    test = np.array([next(i for i in range(300) if train[u, i] == 0) for u in range(50)])
    E = excluded_items(train, test)
    a = sampled_ranks(scores, test, E, 30, 4, seed=11)
    assert np.array_equal(a, sampled_ranks(scores, test, E, 30, 4, seed=11))
    assert not np.array_equal(a, sampled_ranks(scores, test, E, 30, 4, seed=12))


def test_nan_scores_are_refused():
    train, test = small_case()
    scores = np.ones((3, 6))
    scores[1, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        sampled_ranks(scores, test, excluded_items(train, test), 2, 1, seed=0)


@pytest.mark.parametrize("m", [32766, 32767, 40000])
def test_sampled_ranks_at_the_int16_limit_do_not_wrap(m):
    """The held-out item scored below every other item ranks m + 1, whatever m."""
    train = sp.csr_matrix((2, 6))
    scores = np.array([[5.0, 4, 3, 2, 1, 0], [0.0, 5, 4, 3, 2, 1]])
    ranks = sampled_ranks(
        scores, [5, 0], excluded_items(train, [5, 0]), m, 1, seed=0, replacement=True
    )
    assert ranks.tolist() == [[m + 1, m + 1]]
    assert np.iinfo(ranks.dtype).max >= m + 1


@pytest.mark.parametrize("tie_policy", ["random", "pessimistic", "optimistic", "average"])
def test_ranks_among_sampled_count_the_tied_items_by_their_order(tie_policy):
    """1 + the sampled items scored higher + the tied ones the policy puts above, the
    random order's keys compared item by item (scores of 4 values: many ties)."""
    rng = np.random.default_rng(3)
    users = rng.permutation(50)
    scores = rng.integers(0, 4, size=(50, 30)).astype(np.float32)
    target = rng.integers(0, 4, size=(50, 1)).astype(np.float32)
    items = rng.integers(0, 1000, size=(50, 30))
    test = rng.integers(1000, 2000, size=50)
    got = ranks_among_sampled(scores, target, users, items, test, tie_policy, 11)
    expected = []
    for u in range(50):
        tied = [j for j in range(30) if scores[u, j] == target[u, 0]]
        above = {
            "random": sum(
                int(tie_order_keys(users[u], items[u, j], 11))
                < int(tie_order_keys(users[u], test[u], 11))
                for j in tied
            ),
            "pessimistic": len(tied),
            "optimistic": 0,
            "average": len(tied) / 2,
        }[tie_policy]
        expected.append(1 + np.sum(scores[u] > target[u, 0]) + above)
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == np.float64
