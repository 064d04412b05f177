"""Per-framework pairing and tie orders of the protocol study (issue 26, item 6).

Laws are checked by chi-square at fixed seeds against each test's exact law; every
p-value threshold is 1e-3, a false-alarm rate of 0.1 % per check were the seeds
redrawn (at the fixed seeds the outcome is deterministic)."""

from __future__ import annotations

import heapq
import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from sampled_metrics.frameworks.beaten import beaten_items, tie_order_for
from sampled_metrics.frameworks.protocol_pass import simulate_protocols
from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS, Protocol
from sampled_metrics.frameworks.unpaired import simulate_unpaired
from sampled_metrics.passes.block_pass import SCORE_CHUNK
from sampled_metrics.recommenders import PrecomputedScores


def chi2_pvalue(observed, expected, min_expected=5.0):
    """Chi-square p-value, cells expecting fewer than ``min_expected`` pooled."""
    observed, expected = np.asarray(observed, float), np.asarray(expected, float)
    keep = expected >= min_expected
    o = np.append(observed[keep], observed[~keep].sum())
    e = np.append(expected[keep], expected[~keep].sum())
    if e[-1] < min_expected:
        o, e = o[:-1], e[:-1]
    return stats.chisquare(o, e * o.sum() / e.sum()).pvalue


def block(users=SCORE_CHUNK * 2, items=40, seed=0):
    """Two models' beaten masks and the excluded items of ``users`` users."""
    rng = np.random.default_rng(seed)
    excluded = rng.random((users, items)) < 0.2
    test = np.array([rng.choice(np.flatnonzero(~row)) for row in excluded])
    excluded[np.arange(users), test] = True
    beaten = [(rng.random((users, items)) < rng.uniform(0.05, 0.6, (users, 1))) & ~excluded
              for _ in range(2)]  # fmt: skip
    return beaten, excluded, test


def test_counted_repeats_follow_each_models_binomial():
    """DaisyRec (uniform, repeats counted): rank - 1 ~ Binomial(m, b_u / n_u)."""
    beaten, excluded, test = block()
    daisy = FRAMEWORK_PROTOCOLS["daisyrec"]
    p = Protocol("d", 30, 0.0, True, False, False, "", paired=False)
    assert not daisy.paired and not daisy.collapse
    out = simulate_unpaired(p, beaten, excluded, np.ones(40), test, start=0, repetitions=300,
                            seed=3)  # fmt: skip
    n = (~excluded).sum(axis=1)
    for k, mask in enumerate(beaten):
        b = mask.sum(axis=1)
        observed, expected = np.zeros(31), np.zeros(31)
        for u in range(n.size):
            observed += np.bincount(out.sampled[:, k, u] - 1, minlength=31)
            expected += 300 * stats.binom.pmf(np.arange(31), 30, b[u] / n[u])
        assert chi2_pvalue(observed, expected) > 1e-3
    # a wrong law (m + 5 draws) is told apart at this size
    b = beaten[0].sum(axis=1)
    wrong = sum(300 * stats.binom.pmf(np.arange(31), 35, b[u] / n[u]) for u in range(n.size))
    observed = sum(np.bincount(out.sampled[:, 0, u] - 1, minlength=31) for u in range(n.size))
    assert chi2_pvalue(observed, wrong) < 1e-3


def exact_distinct_law(weights, beaten, m):
    """P(distinct beaten items among m draws with probabilities ~ weights = d), and
    E of the Hansen-Hurwitz estimate, by enumerating every sequence of draws."""
    p = np.asarray(weights, float) / np.sum(weights)
    law = np.zeros(m + 1)
    for seq in itertools.product(range(len(p)), repeat=m):
        law[len({j for j in seq if beaten[j]})] += np.prod(p[list(seq)])
    return law


def test_collapsed_popularity_draws_follow_the_distinct_law_and_hh_is_unbiased():
    """RecBole pop (collapse, weights): the distinct beaten items among m draws by
    weight, enumerated exactly; the Hansen-Hurwitz estimate's mean is the rank."""
    weights = np.array([1.0, 2.0, 3.0, 5.0, 8.0, 13.0])
    beaten_row = np.array([True, False, True, True, False, False])
    m, users, reps = 4, SCORE_CHUNK, 2000
    excluded = np.zeros((users, 7), bool)
    excluded[:, 6] = True  # the held-out item
    weights7 = np.append(weights, 1.0)
    beaten = [np.tile(np.append(beaten_row, False), (users, 1))]
    p = Protocol("pop", m, 1.0, True, True, False, "", paired=False)
    out = simulate_unpaired(p, beaten, excluded, weights7, np.full(users, 6), start=0,
                            repetitions=reps, seed=11)  # fmt: skip
    law = exact_distinct_law(weights, beaten_row, m)
    observed = np.bincount(out.sampled[:, 0].ravel() - 1, minlength=m + 1)
    assert chi2_pvalue(observed, law * observed.sum()) > 1e-3
    # counting repeats instead is a different law, and the test tells
    counted = stats.binom.pmf(np.arange(m + 1), m, weights[beaten_row].sum() / weights.sum())
    assert chi2_pvalue(observed, counted * observed.sum()) < 1e-3
    hh = out.hansen_hurwitz[:, 0].ravel()
    rank = 1 + beaten_row.sum()
    assert abs(hh.mean() - rank) < 4 * hh.std() / np.sqrt(hh.size)
    assert abs(np.median(hh) - hh.mean()) > 0  # not a constant


def test_collapsed_popularity_draws_over_many_items_have_the_closed_form_moments():
    """RecBole pop with m = 100 draws over 60 items: item j is among the distinct beaten
    draws with chance 1 - (1 - a_j)^m (a_j = w_j / T, its share of the pool mass), so
    E D = sum_j that chance and Var D = sum_{j,k} P(j and k) - P(j) P(k), with
    P(j and k) = 1 - (1 - a_j)^m - (1 - a_k)^m + (1 - a_j - a_k)^m; the Hansen-Hurwitz
    mean is the rank. Each user's draws come as sorted uniforms: a law of the order
    statistics with one draw too many or too few is told apart."""
    items, m, users, reps = 60, 100, 2 * SCORE_CHUNK, 1500
    weights = 1000.0 / np.arange(1, items + 2)  # Zipf popularity, item 60 held out
    beaten_row = np.zeros(items + 1, bool)
    beaten_row[[0, 2, 3, 7, 11, 20, 33, 34, 35, 36, 50, 59]] = True
    excluded = np.zeros((users, items + 1), bool)
    excluded[:, items] = True
    p = Protocol("pop", m, 1.0, True, True, False, "", paired=False)
    out = simulate_unpaired(p, [np.tile(beaten_row, (users, 1))], excluded, weights,
                            np.full(users, items), start=0, repetitions=reps, seed=7)  # fmt: skip
    a = weights[beaten_row] / weights[:items].sum()

    def moments(m):
        none = (1 - a) ** m
        both = 1 - none[:, None] - none[None, :] + (1 - a[:, None] - a[None, :]) ** m
        np.fill_diagonal(both, 1 - none)
        return (1 - none).sum(), (both - np.outer(1 - none, 1 - none)).sum()

    distinct = out.sampled[:, 0].ravel() - 1.0
    mean, var = moments(m)
    assert abs(distinct.mean() - mean) < 4 * np.sqrt(var / distinct.size)
    # the variance of a sample variance: (mu4 - var^2) / N, mu4 <= 3 var^2 here
    assert abs(distinct.var() - var) < 4 * np.sqrt(2 * var**2 / distinct.size)
    for wrong in (m - 3, m + 3):
        assert abs(distinct.mean() - moments(wrong)[0]) > 6 * np.sqrt(var / distinct.size)
    hh = out.hansen_hurwitz[:, 0].ravel()
    assert abs(hh.mean() - (1 + beaten_row.sum())) < 4 * hh.std() / np.sqrt(hh.size)


def test_equal_weights_other_than_one_give_the_same_hh():
    beaten, excluded, test = block()
    p = Protocol("u", 20, 0.0, True, True, False, "", paired=False)
    one = simulate_unpaired(p, beaten, excluded, np.ones(40), test, start=0, repetitions=5,
                            seed=2)  # fmt: skip
    two = simulate_unpaired(p, beaten, excluded, np.full(40, 2.0), test, start=0,
                            repetitions=5, seed=2)  # fmt: skip
    np.testing.assert_array_equal(one.sampled, two.sampled)
    np.testing.assert_allclose(one.hansen_hurwitz, two.hansen_hurwitz, rtol=1e-12)


def test_unpaired_protocols_draw_independently_per_model_and_paired_ones_jointly():
    """Two models with the same scores: paired protocols give them the same sampled
    ranks, unpaired ones independent ranks (correlation of the rank noise ~ 0)."""
    rng = np.random.default_rng(5)
    users, items = 4 * SCORE_CHUNK, 300
    train = sp.csr_matrix((rng.random((users, items)) < 0.1).astype(np.float32))
    test = np.array([rng.choice(np.flatnonzero(row == 0)) for row in train.toarray()])
    scores = rng.normal(size=(users, items))
    models = [PrecomputedScores(scores), PrecomputedScores(scores * 3)]
    names = ["ncf", "elliot", "recbole-uni100", "recbole-pop100", "bert4rec", "daisyrec"]
    out = simulate_protocols(models, train, test, [FRAMEWORK_PROTOCOLS[n] for n in names],
                             repetitions=20, seed=1, tie_policy="random", tie_seed=0,
                             memory_mb=64)  # fmt: skip
    for name in names:
        r = out[name].sampled.astype(float)
        noise = r - r.mean(axis=0)  # each user's rank noise over repetitions
        corr = np.corrcoef(noise[:, 0].ravel(), noise[:, 1].ravel())[0, 1]
        if FRAMEWORK_PROTOCOLS[name].paired:
            assert corr > 0.99, name
        else:
            assert abs(corr) < 4 / np.sqrt(noise[:, 0].size), name


def test_unpaired_draws_do_not_depend_on_the_blocks():
    beaten, excluded, test = block(users=3 * SCORE_CHUNK + 5)
    p = FRAMEWORK_PROTOCOLS["recbole-pop100"]
    weights = np.arange(1.0, 41.0)
    kwargs = dict(repetitions=3, seed=4)
    whole = simulate_unpaired(p, beaten, excluded, weights, test, start=0, **kwargs)
    cut = 2 * SCORE_CHUNK
    parts = [
        simulate_unpaired(p, [b[s] for b in beaten], excluded[s], weights, test[s], start=s.start,
                          **kwargs)
        for s in (slice(0, cut), slice(cut, None))
    ]  # fmt: skip
    np.testing.assert_array_equal(whole.sampled, np.concatenate([q.sampled for q in parts], 2))
    np.testing.assert_array_equal(
        whole.hansen_hurwitz, np.concatenate([q.hansen_hurwitz for q in parts], 2)
    )


def ncf_rank(scores, gt):
    """NCF's evaluate.py under Python 3: a dict item -> score, the held-out item
    inserted last, heapq.nlargest over it; the rank is the held-out item's place."""
    negatives = [j for j in range(len(scores)) if j != gt]
    items = negatives + [gt]
    map_item_score = {item: scores[item] for item in items}
    ranklist = heapq.nlargest(len(items), map_item_score, key=map_item_score.get)
    return ranklist.index(gt) + 1


def top_k_rank(scores, gt):
    """tf.nn.top_k's order: descending scores, the lower index first among equals."""
    order = np.lexsort((np.arange(len(scores)), -np.asarray(scores)))
    return int(np.flatnonzero(order == gt)[0]) + 1


@pytest.mark.parametrize("seed", range(5))
def test_tie_orders_reproduce_the_frameworks_sorts(seed):
    rng = np.random.default_rng(seed)
    S = rng.integers(0, 4, size=(30, 12)).astype(float)  # many ties
    test = rng.integers(0, 12, size=30)
    users = np.arange(30)
    pessimistic = beaten_items(S, test, users, tie_order_for("pessimistic", "random"), 0)
    index = beaten_items(S, test, users, tie_order_for("index", "random"), 0)
    for u in range(30):
        assert 1 + pessimistic[u].sum() == ncf_rank(list(S[u]), int(test[u]))
        assert 1 + index[u].sum() == top_k_rank(S[u], int(test[u]))
    # the two orders differ on these rows (the check above can fail)
    assert not np.array_equal(pessimistic, index)
    assert FRAMEWORK_PROTOCOLS["ncf"].ties == "pessimistic"
    assert FRAMEWORK_PROTOCOLS["elliot"].ties == "index"
    assert tie_order_for("random", "optimistic") == "optimistic"


def test_the_exact_ranks_are_checked_under_the_pipelines_tie_policy():
    """Protocols with their own tie orders on scores full of ties: the check against
    the exact ranks (pipeline's order) passes, and the pessimistic protocol ranks the
    held-out item no better than the pipeline's random order does."""
    rng = np.random.default_rng(2)
    users, items = SCORE_CHUNK, 200
    train = sp.csr_matrix((rng.random((users, items)) < 0.1).astype(np.float32))
    test = np.array([rng.choice(np.flatnonzero(row == 0)) for row in train.toarray()])
    scores = rng.integers(0, 3, size=(users, items)).astype(float)
    masked = np.where(train.toarray() > 0, -np.inf, scores)
    exact = 1 + beaten_items(masked, test, np.arange(users), "random", 9).sum(axis=1)
    protocols = [FRAMEWORK_PROTOCOLS[n] for n in ("ncf", "elliot")]
    out = simulate_protocols([PrecomputedScores(scores)], train, test, protocols,
                             repetitions=10, seed=0, tie_policy="random", tie_seed=9,
                             memory_mb=64, exact_ranks=[exact])  # fmt: skip
    assert out["ncf"].sampled.mean() > out["elliot"].sampled.mean()
    pessimistic = 1 + beaten_items(masked, test, np.arange(users), "pessimistic", 0).sum(axis=1)
    np.testing.assert_array_equal(out["ncf"].weighted_rank[0], pessimistic)


def test_sequential_pool_draws_the_history_as_scored():
    """RecBole's sequential models: the history is in the pool with its raw scores."""
    users, items = SCORE_CHUNK, 50
    train = sp.csr_matrix(np.eye(users, items, k=10, dtype=np.float32))  # item u + 10
    test = np.arange(users)  # item u, held out
    scores = np.zeros((users, items))
    scores[np.arange(users), np.arange(users) + 10] = 5.0  # the history item scores highest
    scores[np.arange(users), test] = 1.0
    seq = FRAMEWORK_PROTOCOLS["recbole-seq-uni100"]
    assert seq.history_in_pool and not seq.paired
    out = simulate_protocols([PrecomputedScores(scores)], train, test,
                             [seq, FRAMEWORK_PROTOCOLS["recbole-uni100"]], repetitions=50,
                             seed=0, tie_policy="random", tie_seed=0, memory_mb=64)  # fmt: skip
    np.testing.assert_array_equal(out["recbole-uni100"].sampled, 1)  # history excluded
    # 100 uniform draws over 49 items: the history item drawn with prob 1 - (48/49)^100
    hit = (out["recbole-seq-uni100"].sampled == 2).mean()
    assert abs(hit - (1 - (48 / 49) ** 100)) < 0.035  # 4 standard errors
    np.testing.assert_array_equal(out["recbole-seq-uni100"].weighted_rank, 2.0)
