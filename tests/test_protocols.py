"""The frameworks' sampling protocols (sampled_metrics.frameworks), tested from first
principles: the draws against their exact laws (chi-square), the simulated sampled
rank against the paper's laws where they hold, the popularity-weighted rank and the
Hansen-Hurwitz estimate against their definitions, the beaten items against the exact
ranks, the result independent of the blocks, and the estimators exact where they must be."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from conftest import CONFIG_FILE, chi2_pvalue
from scipy import stats

from sampled_metrics.estimation.laws import sampled_rank_pmf
from sampled_metrics.estimation.population import exact_metric
from sampled_metrics.frameworks.draws import draw_items
from sampled_metrics.frameworks.protocol_pass import simulate_protocols
from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS, HANSEN_HURWITZ, Protocol
from sampled_metrics.frameworks.simulate import (
    ProtocolRanks,
    beaten_items,
    interaction_counts,
    simulate,
)
from sampled_metrics.passes.block_pass import SCORE_CHUNK
from sampled_metrics.passes.ranking import block_ranks
from sampled_metrics.pipeline.config import ConfigError
from sampled_metrics.pipeline.intermediates import read_protocol_ranks
from sampled_metrics.pipeline.validation import load_config, validate_config
from sampled_metrics.recommenders import PrecomputedScores
from sampled_metrics.studies.protocols.estimates import protocol_estimates
from sampled_metrics.studies.protocols.files import save_protocol_ranks


def protocol(**changes) -> Protocol:
    fields = dict(
        name="test", m=3, alpha=1.0, replacement=True, collapse=False, target_in_pool=False,
        source="",
    )  # fmt: skip
    return Protocol(**{**fields, **changes})


WEIGHTS = np.array([5.0, 1.0, 3.0, 0.0, 2.0, 4.0])
EXCLUDED = np.array([False, True, False, False, False, False])  # item 1 may not be drawn


def test_independent_draws_follow_the_weights_over_the_allowed_items():
    rows = 20000
    excluded = np.tile(EXCLUDED, (rows, 1))
    items, ranked = draw_items(protocol(m=4), WEIGHTS, excluded, np.random.default_rng(0))
    assert ranked.all()
    allowed = WEIGHTS * ~EXCLUDED
    observed = np.bincount(items.ravel(), minlength=WEIGHTS.size)
    assert observed[1] == 0 and observed[3] == 0  # excluded, and weight 0
    assert (
        chi2_pvalue(observed[allowed > 0], items.size * allowed[allowed > 0] / allowed.sum()) > 1e-3
    )


def test_distinct_draws_are_successive_sampling():
    """P(first a, then b) = p_a p_b / (1 - p_a): numpy's choice(replace=False, p=...)."""
    rows = 40000
    excluded = np.tile(EXCLUDED, (rows, 1))
    items, _ = draw_items(
        protocol(m=2, replacement=False), WEIGHTS, excluded, np.random.default_rng(1)
    )
    assert np.all(items[:, 0] != items[:, 1])
    p = WEIGHTS * ~EXCLUDED / (WEIGHTS * ~EXCLUDED).sum()
    pairs = [(a, b) for a, b in itertools.permutations(range(WEIGHTS.size), 2) if p[a] * p[b] > 0]
    expected = np.array([p[a] * p[b] / (1 - p[a]) for a, b in pairs]) * rows
    code = items[:, 0] * WEIGHTS.size + items[:, 1]
    observed = [np.count_nonzero(code == a * WEIGHTS.size + b) for a, b in pairs]
    assert sum(observed) == rows
    assert chi2_pvalue(observed, expected) > 1e-3


def test_collapsed_draws_rank_each_item_once():
    excluded = np.zeros((500, 4), dtype=bool)
    items, ranked = draw_items(
        protocol(m=6, collapse=True), np.ones(4), excluded, np.random.default_rng(2)
    )
    for row, keep in zip(items.tolist(), ranked.tolist()):
        seen = set()
        assert keep == [not (item in seen or seen.add(item)) for item in row]


def test_too_few_items_to_draw_is_an_error():
    excluded = np.array([[True, True, False, False]])
    with pytest.raises(ValueError, match="row 0 has 2 items to draw from, fewer than 3"):
        draw_items(protocol(replacement=False), np.ones(4), excluded, np.random.default_rng(0))


@pytest.mark.parametrize("tie_policy", ["random", "pessimistic", "optimistic"])
def test_beaten_items_count_the_exact_rank(tie_policy):
    rng = np.random.default_rng(3)
    S = rng.integers(0, 4, size=(50, 30)).astype(float)  # many ties
    S[rng.random(S.shape) < 0.2] = -np.inf  # training items
    test = rng.integers(0, 30, 50)
    S[np.arange(50), test] = rng.integers(0, 4, 50)
    users = np.arange(100, 150)
    beaten = beaten_items(S, test, users, tie_policy, 7)
    rank, _ = block_ranks(S, test, users, tie_policy, 7)
    np.testing.assert_array_equal(1 + beaten.sum(axis=1), rank)
    assert not beaten[np.arange(50), test].any() and not beaten[np.isinf(S)].any()


def planted(n_users=2 * SCORE_CHUNK, n_items=60, seed=4):
    """A training matrix, held-out items, two models' scores, their beaten items."""
    rng = np.random.default_rng(seed)
    train = sp.csr_matrix((rng.random((n_users, n_items)) < 0.15).astype(np.float32))
    test = np.array([rng.choice(np.flatnonzero(row == 0)) for row in train.toarray()])
    scores = [rng.normal(size=(n_users, n_items)) for _ in range(2)]
    beaten = []
    for S in scores:
        masked = np.where(train.toarray() > 0, -np.inf, S)
        beaten.append(beaten_items(masked, test, np.arange(n_users), "random", 0))
    excluded = train.toarray() > 0
    excluded[np.arange(n_users), test] = True
    return train, test, scores, beaten, excluded


def test_uniform_sampled_ranks_follow_the_papers_laws():
    """alpha = 0: distinct draws give the hypergeometric law of eq 14 and independent
    draws the binomial of eq 15, given each user's rank (pooled over users)."""
    _, test, _, beaten, excluded = planted()
    ranks = 1 + beaten[0].sum(axis=1)
    n = (~excluded).sum(axis=1) + 1
    for replacement, law in ((False, "hypergeometric"), (True, "binomial")):
        p = protocol(m=8, alpha=0.0, replacement=replacement)
        out = simulate(p, beaten, excluded, np.ones(60), test, start=0, repetitions=400, seed=1)
        np.testing.assert_array_equal(out.weighted_rank[0], ranks)  # R^pi = r at alpha = 0
        observed = np.zeros(9)
        expected = np.zeros(9)
        for u in range(ranks.size):
            observed += np.bincount(out.sampled[:, 0, u] - 1, minlength=9)
            expected += 400 * np.ravel(sampled_rank_pmf(int(ranks[u]), int(n[u]), 8, law))
        assert chi2_pvalue(observed, expected) > 1e-3


def test_popularity_sampled_ranks_are_binomial_in_the_beaten_mass():
    """With replacement, r~ - 1 ~ Binomial(m, q): q = (R^pi - 1) / (n - 1)."""
    _, test, _, beaten, excluded = planted()
    counts = np.arange(1.0, 61.0) ** 1.5
    out = simulate(protocol(m=10), beaten, excluded, counts, test, start=0, repetitions=400, seed=2)
    n = (~excluded).sum(axis=1) + 1
    q = (out.weighted_rank[1] - 1) / (n - 1)
    mass = (beaten[1] * counts).sum(axis=1) / (~excluded * counts).sum(axis=1)
    np.testing.assert_allclose(q, mass)
    observed = sum(np.bincount(out.sampled[:, 1, u] - 1, minlength=11) for u in range(n.size))
    expected = 400 * sum(stats.binom.pmf(np.arange(11), 10, qu) for qu in q)
    assert chi2_pvalue(observed, expected) > 1e-3


@pytest.mark.parametrize("weighing", ["popularity", "equal, not 1"])
def test_hansen_hurwitz_is_unbiased_for_the_rank(weighing):
    """Over many draws the estimate's mean is the rank (all users pooled, and each), and
    its variance (sum over the beaten items of 1 / pi - |A|^2) / m; also where every
    item has the same count, other than 1 (a uniform draw by a popularity protocol)."""
    _, test, _, beaten, excluded = planted()
    counts = np.sqrt(np.arange(1.0, 61.0)) if weighing == "popularity" else np.full(60, 2.0)
    reps, m = 4000, 5
    out = simulate(
        protocol(m=m, collapse=True), beaten, excluded, counts, test, start=0,
        repetitions=reps, seed=3,
    )  # fmt: skip
    ranks = 1 + beaten[0].sum(axis=1)
    estimates = out.hansen_hurwitz[:, 0, :]
    pi = ~excluded * counts / (~excluded * counts).sum(axis=1, keepdims=True)
    variance = (
        np.where(beaten[0], 1 / np.where(pi > 0, pi, 1), 0).sum(axis=1) - (ranks - 1) ** 2
    ) / m
    np.testing.assert_array_equal(estimates[:, ranks == 1], 1.0)  # nothing to beat
    some = ranks > 1
    z = (estimates.mean(axis=0) - ranks)[some] / np.sqrt(variance[some] / reps)
    assert np.abs(z).max() < 5 and abs(z.sum() / np.sqrt(z.size)) < 4
    np.testing.assert_allclose(estimates.var(axis=0)[some], variance[some], rtol=0.25)


def test_ncf_keeps_the_held_out_item_in_its_pool():
    """NCF draws 99 items from the n items outside the training items, the held-out
    one included: the beaten count is hypergeometric over n items, not n - 1."""
    _, test, _, beaten, excluded = planted()
    training = excluded.copy()
    training[np.arange(test.size), test] = False
    p = protocol(m=20, alpha=0.0, replacement=False, target_in_pool=True)
    out = simulate(p, beaten, training, np.ones(60), test, start=0, repetitions=1000, seed=4)
    ranks = 1 + beaten[0].sum(axis=1)
    n = (~training).sum(axis=1)
    np.testing.assert_array_equal(out.weighted_rank[0], ranks)
    expected = 1 + 20 * (ranks - 1) / n  # E of Hypergeometric(n, r - 1, 20), + 1
    se = out.sampled[:, 0, :].std(axis=0, ddof=1) / np.sqrt(1000) + 1e-9
    z = (out.sampled[:, 0, :].mean(axis=0) - expected) / se
    assert np.abs(z[se > 1e-6]).max() < 4.5


def test_draws_do_not_depend_on_the_blocks():
    _, test, _, beaten, excluded = planted()
    counts = np.arange(1.0, 61.0)
    p = Protocol("bert-small", 10, 1.0, False, False, False, "")
    whole = simulate(p, beaten, excluded, counts, test, start=0, repetitions=3, seed=9)
    half = SCORE_CHUNK
    parts = [
        simulate(p, [b[s] for b in beaten], excluded[s], counts, test[s], start=s.start,
                 repetitions=3, seed=9)
        for s in (slice(0, half), slice(half, 2 * half))
    ]  # fmt: skip
    np.testing.assert_array_equal(whole.sampled, np.concatenate([r.sampled for r in parts], axis=2))


def test_simulate_protocols_over_models_and_blocks():
    train, test, scores, beaten, _ = planted()
    models = [PrecomputedScores(S) for S in scores]
    ranks = [1 + b.sum(axis=1) for b in beaten]
    protocols = [
        FRAMEWORK_PROTOCOLS["recbole-pop100"],
        Protocol("e", 30, 0, False, False, False, ""),
    ]
    kwargs = dict(repetitions=4, seed=5, tie_policy="random", tie_seed=0, exact_ranks=ranks)
    small = simulate_protocols(models, train, test, protocols, memory_mb=0.01, **kwargs)
    large = simulate_protocols(models, train, test, protocols, memory_mb=64, **kwargs)
    forked = simulate_protocols(models, train, test, protocols, memory_mb=64, workers=2, **kwargs)
    for name in ("recbole-pop100", "e"):
        for other in (small, forked):  # blocks of any size, in one process or two
            np.testing.assert_array_equal(other[name].sampled, large[name].sampled)
            np.testing.assert_array_equal(other[name].hansen_hurwitz, large[name].hansen_hurwitz)
            np.testing.assert_array_equal(other[name].weighted_rank, large[name].weighted_rank)
    # a paired protocol gives both models the same items: a model scoring like the first
    # ranks like it; an unpaired one (RecBole redraws per model) gives them their own
    paired = Protocol("p", 20, 1.0, False, False, False, "")
    twin = simulate_protocols(
        [models[0], PrecomputedScores(scores[0] * 2)], train, test, [paired, protocols[0]],
        memory_mb=64, repetitions=4, seed=5, tie_policy="random", tie_seed=0,
    )  # fmt: skip
    np.testing.assert_array_equal(twin["p"].sampled[:, 0], twin["p"].sampled[:, 1])
    unpaired = twin["recbole-pop100"].sampled
    assert np.mean(unpaired[:, 0] != unpaired[:, 1]) > 0.5
    for workers in (1, 2):  # the check holds in the workers too
        with pytest.raises(ValueError, match="disagree with the exact ranks, first user 0"):
            simulate_protocols(
                models, train, test, protocols, memory_mb=64, workers=workers,
                **{**kwargs, "exact_ranks": [r + 1 for r in ranks]},
            )  # fmt: skip


def test_a_population_simulated_block_by_block_is_simulated_as_a_whole():
    """Users start.. given alone with ``start`` and the population's popularity keep
    their draws and tie order: the blocks' ranks are the whole's, ties included."""
    train, test, scores, _, _ = planted(n_users=3 * SCORE_CHUNK)
    tied = [np.round(S) for S in scores]  # a few distinct scores: ties everywhere
    ranks = [
        1 + beaten_items(np.where(train.toarray() > 0, -np.inf, S), test,
                         np.arange(test.size), "random", 0).sum(axis=1)
        for S in tied
    ]  # fmt: skip
    protocols = [
        FRAMEWORK_PROTOCOLS["recbole-pop100"],  # unpaired, by popularity
        Protocol("e", 30, 0, False, False, False, ""),  # paired, uniform
        Protocol("b", 10, 1.0, False, False, False, ""),  # paired, by popularity
    ]
    kwargs = dict(repetitions=3, seed=5, tie_policy="random", tie_seed=0, memory_mb=64)
    whole = simulate_protocols([PrecomputedScores(S) for S in tied], train, test, protocols,
                               exact_ranks=ranks, **kwargs)  # fmt: skip
    popularity = interaction_counts(train, test)
    for cut in ((0, SCORE_CHUNK), (SCORE_CHUNK, 3 * SCORE_CHUNK)):
        rows = slice(*cut)
        part = simulate_protocols(
            [PrecomputedScores(S[rows]) for S in tied], train[rows], test[rows], protocols,
            exact_ranks=[r[rows] for r in ranks], start=cut[0], popularity=popularity,
            **kwargs,
        )  # fmt: skip
        for p in protocols:
            assert part[p.name].start == cut[0]
            np.testing.assert_array_equal(part[p.name].sampled, whole[p.name].sampled[..., rows])
            np.testing.assert_array_equal(
                part[p.name].weighted_rank, whole[p.name].weighted_rank[..., rows]
            )
    with pytest.raises(ValueError, match="start must be a multiple of 32 users, not 5"):
        simulate_protocols([PrecomputedScores(tied[0])], train, test, protocols, start=5,
                           **kwargs)  # fmt: skip


def test_interaction_counts_hold_training_and_held_out_items():
    train = sp.csr_matrix(np.array([[1, 1, 0], [0, 1, 0]]))
    assert interaction_counts(train, [2, 0]).tolist() == [2.0, 2.0, 1.0]


def test_estimators_are_exact_when_every_item_is_drawn():
    """m = n - 1 distinct draws: every correction and EM give the exact metric."""
    rng = np.random.default_rng(6)
    n, users = 12, 40
    ranks = rng.integers(1, n + 1, users)
    sampled = np.broadcast_to(ranks, (3, 1, users)).astype(np.int16)
    data = ProtocolRanks(0, sampled, np.empty((0, 1, users)), ranks[None].astype(float))
    p = protocol(m=n - 1, alpha=0.0, replacement=False)
    methods = ["sampled", "cls", "bv_0.1", "em", "mn_em"]
    table = protocol_estimates(
        data, p, np.full(users, n), ["A"], ["ndcg@10", "auc"], methods, nodes=5
    )
    for metric in ("ndcg@10", "auc"):
        truth = exact_metric(metric, ranks, n)
        values = table[(table["metric"] == metric)]["value"]
        np.testing.assert_allclose(values, truth, atol=1e-6)


def test_hansen_hurwitz_estimates_join_the_protocols_with_replacement():
    users = 5
    data = ProtocolRanks(
        0, np.ones((2, 1, users), np.int16), np.full((2, 1, users), 3.0), np.ones((1, users))
    )
    table = protocol_estimates(
        data, protocol(m=4), np.full(users, 10), ["A"], ["recall@2"], ["sampled"], nodes=2
    )
    assert set(table["method"]) == {"sampled", HANSEN_HURWITZ}
    assert table[table["method"] == HANSEN_HURWITZ]["value"].tolist() == [0.0, 0.0]  # r^ = 3


def test_damaged_protocol_ranks_are_refused(tmp_path):
    good = ProtocolRanks(0, np.ones((2, 1, 3), np.int16), np.ones((2, 1, 3)), np.ones((1, 3)))
    p = FRAMEWORK_PROTOCOLS["recbole-uni100"]
    path = tmp_path / "p.npz"
    save_protocol_ranks(good, path)
    assert read_protocol_ranks(path, p, 3, 2, 1).sampled.shape == (2, 1, 3)
    with pytest.raises(ValueError, match=r"shape \(2, 1, 3\), expected \(3, 1, 3\)"):
        read_protocol_ranks(path, p, 3, 3, 1)
    for bad, match in (
        (ProtocolRanks(0, np.full((2, 1, 3), 102, np.int16), good.hansen_hurwitz,
                       good.weighted_rank), "outside 1..101"),
        (ProtocolRanks(0, good.sampled, np.full((2, 1, 3), np.nan), good.weighted_rank),
         "Hansen-Hurwitz estimates not finite"),
        (ProtocolRanks(0, good.sampled.astype(float), good.hansen_hurwitz, good.weighted_rank),
         "expected integers"),
    ):  # fmt: skip
        save_protocol_ranks(bad, path)
        with pytest.raises(ValueError, match=match):
            read_protocol_ranks(path, p, 3, 2, 1)
    path.write_bytes(b"cut")
    with pytest.raises(ValueError, match="not a file of ranks"):
        read_protocol_ranks(path, p, 3, 2, 1)


def test_a_recommender_set_to_null_is_left_out():
    config = load_config(CONFIG_FILE)
    config["recommenders"]["EASE"] = None
    assert "EASE" not in validate_config(config)["recommenders"]
    config = load_config(CONFIG_FILE)
    config["recommenders"] = {name: None for name in config["recommenders"]}
    with pytest.raises(ConfigError, match="every entry is null"):
        validate_config(config)


def test_the_configuration_of_the_study_is_checked():
    for change, match in (
        ({"run": ["ncf", "nope"]}, "unknown protocol 'nope'"),
        ({"estimators": ["sampled", "hansen_hurwitz"]}, "added by itself"),
        ({"estimators": ["sampled", "bv_x"]}, "protocols.estimators"),
        ({"run": ["ncf", "ncf"]}, "listed twice"),
    ):
        config = load_config(CONFIG_FILE)
        config["protocols"].update(change)
        with pytest.raises(ConfigError, match=match):
            validate_config(config)


def test_a_protocol_larger_than_the_pool_is_left_out_not_an_error():
    """The sizes that only the study needs stop nothing (data_checks.check_data_sizes);
    rule protocol_ranks leaves out what left_out_reason names (tests/test_small_data.py)."""
    from sampled_metrics.pipeline.data_checks import check_data_sizes
    from sampled_metrics.studies.protocols.files import left_out_reason

    config = load_config(CONFIG_FILE)
    check_data_sizes(config, "ml-1m", 3706, 1391, "split")
    config["sampling"]["m"] = 5
    check_data_sizes(config, "ml-1m", 300, 98, "split")  # ncf's 99, fig6's 3705: left out
    assert left_out_reason(FRAMEWORK_PROTOCOLS["ncf"], 98) == (
        "draws 99 distinct items per user, more than the smallest candidate pool, 98 items"
    )
    assert left_out_reason(FRAMEWORK_PROTOCOLS["ncf"], 99) is None
    assert left_out_reason(FRAMEWORK_PROTOCOLS["daisyrec"], 1) is None  # with replacement
    assert left_out_reason(FRAMEWORK_PROTOCOLS["daisyrec"], 0) is not None
    assert all(left_out_reason(p, 1391) is None for p in FRAMEWORK_PROTOCOLS.values())


def test_a_left_out_record_must_be_what_the_split_calls_for(tmp_path):
    """Read back with the split's smallest pool: a left-out record of a protocol the pool
    supports, ranks of one it does not, or another reason, are refused."""
    from sampled_metrics.studies.protocols.files import left_out_reason, save_left_out

    elliot = FRAMEWORK_PROTOCOLS["elliot"]
    path = tmp_path / "elliot.npz"
    save_left_out(left_out_reason(elliot, 60), 60, path)
    assert read_protocol_ranks(path, elliot, 3, 2, 1, smallest_pool=60).startswith("draws 100")
    with pytest.raises(ValueError, match="smallest pool, 100 items, supports it"):
        read_protocol_ranks(path, elliot, 3, 2, 1, smallest_pool=100)
    with pytest.raises(ValueError, match="leaves it out for: draws 100 .* 70 items"):
        read_protocol_ranks(path, elliot, 3, 2, 1, smallest_pool=70)
    good = ProtocolRanks(0, np.ones((2, 1, 3), np.int16), np.ones((0, 1, 3)), np.ones((1, 3)))
    save_protocol_ranks(good, path)
    assert read_protocol_ranks(path, elliot, 3, 2, 1, smallest_pool=100).sampled.shape == (
        2, 1, 3
    )  # fmt: skip
    with pytest.raises(ValueError, match="ranks of a protocol the split leaves out"):
        read_protocol_ranks(path, elliot, 3, 2, 1, smallest_pool=60)


def test_the_studys_standard_errors_are_the_spread_of_its_numbers_over_studies():
    """Simulated studies with a known law of the errors, one a method: each number's
    standard error (studies.protocols.precision) is, on average over studies, the
    standard deviation of that number from study to study (bias, share of pairs right;
    RMSE and the mean RMSE of two paired recommenders through the delta method, first
    order: within 15 % at 50 repetitions)."""
    from sampled_metrics.studies.protocols.precision import error_precision, mean_rmse, pair_share

    rng = np.random.default_rng(7)
    studies, reps = 600, 50
    shared = rng.normal(0.0, 0.3, (studies, reps))  # paired draws: errors correlated
    errors = {"A": 0.2 + shared + rng.normal(0.0, 0.2, (studies, reps)),
              "B": -0.1 + shared + rng.normal(0.0, 0.3, (studies, reps))}  # fmt: skip
    truth = {"A": 1.0, "B": 1.3}
    exact = pd.DataFrame({"recommender": ["A", "B"], "metric": "ap", "value": [1.0, 1.3]})
    values = pd.DataFrame(
        {
            "recommender": np.repeat(["A", "B"], studies * reps),
            "metric": "ap",
            "method": np.tile(np.repeat([f"s{k}" for k in range(studies)], reps), 2),
            "rep": np.tile(np.arange(reps), 2 * studies),
            "value": np.concatenate([truth[r] + errors[r].ravel() for r in "AB"]),
        }
    )
    se = error_precision(exact, values)
    se = se[se["recommender"] == "A"]
    means, shares = mean_rmse(exact, values), pair_share(exact, values, [("A", "B")])
    rmse = {r: np.sqrt(np.mean(errors[r] ** 2, axis=1)) for r in "AB"}
    for found, se_of, tolerance in (
        (errors["A"].mean(axis=1), se["bias_se"], 0.1),
        (rmse["A"], se["rmse_se"], 0.15),
        ((rmse["A"] + rmse["B"]) / 2, means["rmse_se"], 0.15),
        (shares["share"].to_numpy(), shares["share_se"], 0.1),
    ):
        spread, predicted = np.std(found, ddof=1), np.mean(se_of)
        assert abs(predicted / spread - 1) < tolerance, (predicted, spread)
