"""Exact ranks and tie policies (sampled_metrics.passes.ranking)."""

import numpy as np
import pytest
import scipy.sparse as sp

from sampled_metrics.passes.entries import row_counts, true_entries
from sampled_metrics.passes.ranking import exact_ranks, rank_from_scores
from sampled_metrics.passes.sampling import excluded_items, sampled_ranks
from sampled_metrics.passes.ties import TIE_POLICIES


class FixedScores:
    """A 'model' whose scores are a given matrix."""

    def __init__(self, scores, name="fixed"):
        self.all = np.asarray(scores, dtype=np.float32)
        self.name = name

    def scores(self, users):
        return self.all[users]


# --------------------------------------------------------------------------
# rank_from_scores on hand-made arrays
# --------------------------------------------------------------------------

# target 0 scores 0.5; strictly higher: 0.9 and 0.7 (2); equal: items 2 and 4 (t = 2)
SCORES = np.array([0.5, 0.9, 0.5, 0.1, 0.5, 0.7])


@pytest.mark.parametrize(
    "policy, expected", [("pessimistic", 5.0), ("optimistic", 3.0), ("average", 4.0)]
)
def test_ties_every_policy(policy, expected):
    assert rank_from_scores(SCORES, None, 0, policy) == expected


def test_random_tie_lies_in_range_and_is_seeded():
    draws = {rank_from_scores(SCORES, None, 0, "random", users=0, tie_seed=s) for s in range(50)}
    assert draws == {3.0, 4.0, 5.0}  # uniform on 0..t = 0..2 -> all three occur
    assert rank_from_scores(SCORES, None, 0, "random", users=0, tie_seed=7) == rank_from_scores(
        SCORES, None, 0, "random", users=0, tie_seed=7
    )


def test_random_tie_is_uniform():
    # 4000 users, each with t = 3 ties and nothing higher: ranks 1..4 equally likely
    scores = np.tile([1.0, 1.0, 1.0, 1.0, 0.0], (4000, 1))
    ranks = rank_from_scores(
        scores, None, np.zeros(4000, int), "random", users=np.arange(4000), tie_seed=1
    )
    counts = np.bincount(ranks.astype(int), minlength=5)[1:]
    assert counts.sum() == 4000 and np.all(np.abs(counts - 1000) < 100)


def test_random_ties_follow_the_shared_order_of_exact_and_sampled_ranks():
    rng = np.random.default_rng(8)
    n_users, n_items, history = 40, 12, 3
    dense = np.zeros((n_users, n_items), dtype=np.float32)
    for u in range(n_users):
        dense[u, rng.choice(n_items, history, replace=False)] = 1
    train = sp.csr_matrix(dense)
    test = np.array([rng.choice(np.flatnonzero(row == 0)) for row in dense])
    scores = rng.integers(0, 3, size=(n_users, n_items)).astype(np.float64)  # heavy ties
    users = np.arange(n_users)
    ranks = rank_from_scores(scores, dense == 0, test, "random", users=users, tie_seed=5)
    exact, _ = exact_ranks(FixedScores(scores), train, test, tie_policy="random", seed=5)
    np.testing.assert_array_equal(ranks, exact)
    lo = rank_from_scores(scores, dense == 0, test, "optimistic")
    hi = rank_from_scores(scores, dense == 0, test, "pessimistic")
    assert np.any(lo < ranks) and np.any(ranks < hi)
    # m = every item that can be sampled: the sampled rank is the exact rank, ties alike
    m = n_items - history - 1
    sampled = sampled_ranks(
        scores, test, excluded_items(train, test), m, 1, seed=0, tie_policy="random", tie_seed=5
    )
    np.testing.assert_array_equal(sampled[0], exact)
    # columns in another order (or a subset), named by their item ids: the same order
    perm = rng.permutation(n_items)
    permuted = rank_from_scores(
        scores[:, perm],
        (dense == 0)[:, perm],
        np.argsort(perm)[test],
        "random",
        users=users,
        items=perm,
        tie_seed=5,
    )
    np.testing.assert_array_equal(permuted, exact)
    # a single row is ranked as that user, not as user 0
    for u in (0, 17, 39):
        single = rank_from_scores(scores[u], dense[u] == 0, test[u], "random", users=u, tie_seed=5)
        assert single == exact[u]


def test_candidate_mask_excludes_items():
    mask = np.array([True, False, False, True, True, True])  # drop the 0.9 and one tie
    assert rank_from_scores(SCORES, mask, 0, "pessimistic") == 3.0  # 1 + 1 higher + 1 tie
    assert rank_from_scores(SCORES, mask, 0, "optimistic") == 2.0
    assert rank_from_scores(SCORES, mask, 0, "average") == 2.5
    # scores of non-candidates are ignored, even NaN
    s = SCORES.copy()
    s[1] = np.nan
    assert rank_from_scores(s, mask, 0, "pessimistic") == 3.0


def test_rank_from_scores_rows_match_single_calls():
    rng = np.random.default_rng(0)
    S = rng.integers(0, 4, size=(7, 9)).astype(float)  # many ties
    targets = rng.integers(0, 9, size=7)
    for policy in ("pessimistic", "optimistic", "average"):
        batch = rank_from_scores(S, None, targets, policy)
        single = [rank_from_scores(S[u], None, targets[u], policy) for u in range(7)]
        np.testing.assert_array_equal(batch, single)
    np.testing.assert_array_equal(
        rank_from_scores(S, None, targets, "average"),
        (
            rank_from_scores(S, None, targets, "pessimistic")
            + rank_from_scores(S, None, targets, "optimistic")
        )
        / 2,
    )


def test_rank_from_scores_errors():
    with pytest.raises(ValueError, match="NaN or inf"):
        rank_from_scores(np.array([0.1, np.nan]), None, 0)
    with pytest.raises(ValueError, match="NaN or inf"):
        rank_from_scores(np.array([0.1, np.inf]), None, 0)
    with pytest.raises(ValueError, match="not a candidate"):
        rank_from_scores(SCORES, np.array([False, True, True, True, True, True]), 0)
    with pytest.raises(ValueError, match="tie_policy"):
        rank_from_scores(SCORES, None, 0, "median")
    with pytest.raises(ValueError, match="users"):
        rank_from_scores(SCORES, None, 0, "random")
    with pytest.raises(ValueError, match="tie_seed"):
        rank_from_scores(SCORES, None, 0, "random", users=0)
    with pytest.raises(ValueError, match="one id per row"):
        rank_from_scores(SCORES, None, 0, "random", users=[0, 1], tie_seed=0)
    with pytest.raises(ValueError, match="one id per column"):
        rank_from_scores(SCORES, None, 0, "random", users=0, items=[0, 1], tie_seed=0)
    with pytest.raises(ValueError, match="non-negative"):
        rank_from_scores(SCORES, None, 0, "random", users=-1, tie_seed=0)
    with pytest.raises(TypeError):  # no private random order: only the shared one
        rank_from_scores(SCORES, None, 0, "random", rng=0)


# --------------------------------------------------------------------------
# exact_ranks
# --------------------------------------------------------------------------


def _toy():
    # 3 users x 6 items; user 0 trains on items 1, 2, which outscore its test item 0
    train = sp.csr_matrix(
        np.array(
            [
                [0, 1, 1, 0, 0, 0],
                [1, 0, 0, 0, 0, 0],
                [0, 0, 0, 0, 0, 0],
            ],
            dtype=np.float32,
        )
    )
    scores = np.array(
        [
            [
                0.5,
                0.9,
                0.8,
                0.5,
                0.1,
                0.6,
            ],  # test 0: higher among candidates {0,3,4,5}: 0.6 -> 1; tie 0.5 -> 1
            [
                0.9,
                0.1,
                0.2,
                0.3,
                0.4,
                0.4,
            ],  # test 4: higher {0.9 is train} -> none besides... see below
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # test 3: all tied
        ]
    )
    test = np.array([0, 4, 3])
    return train, FixedScores(scores), test


def test_exact_ranks_excludes_training_items():
    train, model, test = _toy()
    pess, n = exact_ranks(model, train, test, tie_policy="pessimistic")
    opt, _ = exact_ranks(model, train, test, tie_policy="optimistic")
    avg, _ = exact_ranks(model, train, test, tie_policy="average")
    # user 0: candidates {0,3,4,5}: 0.6 higher, 0.5 tie -> pess 3, opt 2
    # user 1: candidates {1..5} (item 0 = 0.9 is training): 0.4 tie (item 5) -> pess 2, opt 1
    # user 2: candidates all 6, 5 ties -> pess 6, opt 1
    np.testing.assert_array_equal(pess, [3, 2, 6])
    np.testing.assert_array_equal(opt, [2, 1, 1])
    np.testing.assert_array_equal(avg, [2.5, 1.5, 3.5])
    np.testing.assert_array_equal(n, [4, 5, 6])
    assert pess.dtype == np.float64 and n.dtype == np.int64


def test_exact_ranks_random_is_reproducible_and_bounded():
    rng = np.random.default_rng(3)
    n_users, n_items = 200, 40
    train = sp.random(n_users, n_items, density=0.2, format="csr", random_state=4, dtype=np.float32)
    train.data[:] = 1
    test = np.array(
        [rng.choice(np.flatnonzero(train[u].toarray().ravel() == 0)) for u in range(n_users)]
    )
    model = FixedScores(rng.integers(0, 3, size=(n_users, n_items)))  # heavy ties
    a, _ = exact_ranks(model, train, test, tie_policy="random", seed=11)
    b, _ = exact_ranks(model, train, test, tie_policy="random", seed=11)
    c, _ = exact_ranks(model, train, test, tie_policy="random", seed=12)
    lo, _ = exact_ranks(model, train, test, tie_policy="optimistic")
    hi, _ = exact_ranks(model, train, test, tie_policy="pessimistic")
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert np.all(lo <= a) and np.all(a <= hi) and np.any(lo < a) and np.any(a < hi)
    assert np.all(a == np.round(a))


@pytest.mark.parametrize("policy", TIE_POLICIES)
def test_exact_ranks_block_size_invariance_and_brute_force(policy):
    rng = np.random.default_rng(5)
    n_users, n_items = 57, 23
    dense = (rng.random((n_users, n_items)) < 0.25).astype(np.float32)
    test = np.array([rng.choice(np.flatnonzero(row == 0)) for row in dense])
    train = sp.csr_matrix(dense)
    model = FixedScores(np.round(rng.random((n_users, n_items)), 1))  # ties
    results = [
        exact_ranks(model, train, test, tie_policy=policy, block_size=bs, seed=2)[0]
        for bs in (1, 7, 512)
    ]
    for r in results[1:]:
        np.testing.assert_array_equal(results[0], r)
    if policy != "random":  # brute force, one user at a time
        for u in range(n_users):
            cand = np.flatnonzero(dense[u] == 0)
            s = model.all[u, cand]
            t = model.all[u, test[u]]
            higher, ties = np.sum(s > t), np.sum(s == t) - 1
            extra = {"pessimistic": ties, "optimistic": 0, "average": ties / 2}[policy]
            assert results[0][u] == 1 + higher + extra


def test_exact_ranks_nan_names_recommender_and_user():
    train, model, test = _toy()
    model.all[1, 3] = np.nan
    model.name = "Z"
    with pytest.raises(ValueError, match=r"'Z'.*user 1"):
        exact_ranks(model, train, test)
    model.all[1, 3] = np.inf
    with pytest.raises(ValueError, match="user 1"):
        exact_ranks(model, train, test, block_size=1)


def test_exact_ranks_rejects_test_item_in_training():
    train, model, _ = _toy()
    with pytest.raises(ValueError, match="user 0"):
        exact_ranks(model, train, np.array([1, 4, 3]))
    with pytest.raises(ValueError, match="tie_policy"):
        exact_ranks(model, train, np.array([0, 4, 3]), tie_policy="worst")
    with pytest.raises(ValueError, match="one item per user"):
        exact_ranks(model, train, np.array([0, 4]))


def test_tie_term_refuses_an_unknown_policy_instead_of_averaging():
    from sampled_metrics.passes.ties import tie_term

    with pytest.raises(ValueError, match="unknown tie_policy 'fair'"):
        tie_term(np.array([[True, False]]), "fair")


@pytest.mark.parametrize("shape", [(0, 5), (3, 0), (1, 1), (7, 40), (64, 300), (5, 3000)])
@pytest.mark.parametrize("density", [0.0, 0.05, 0.5, 1.0])
def test_true_entries_are_numpys_nonzero(shape, density):
    mask = np.random.default_rng(shape[0] * 1000 + shape[1]).random(shape) < density
    for view in (mask, mask[::2], mask[:, 1:]):  # contiguous, strided and offset rows
        rows, columns = true_entries(view)
        expected = np.nonzero(view)
        np.testing.assert_array_equal(rows, expected[0])
        np.testing.assert_array_equal(columns, expected[1])


@pytest.mark.parametrize(
    "shape", [(0, 5), (0, 5000), (3, 0), (1, 1), (40, 2047), (9, 2048), (6, 26744)]
)
@pytest.mark.parametrize("density", [0.0, 0.1, 1.0])
def test_row_counts_are_numpys_count_nonzero(shape, density):
    # rows shorter and longer than the length from which they are counted one by one
    mask = np.random.default_rng(shape[1]).random(shape) < density
    for view in (mask, mask[::2], mask[:, 1:]):  # contiguous, strided and offset rows
        counts = row_counts(view)
        assert counts.dtype == np.intp
        np.testing.assert_array_equal(counts, np.count_nonzero(view, axis=1))
        np.testing.assert_array_equal(counts, [sum(map(bool, row)) for row in view.tolist()])
