"""From ranks to Tables 3-4, Figure 6 and the claims, on hand-computed cases."""

import numpy as np
import pandas as pd
import pytest

from sampled_metrics.estimation.corrections import correction_vectors
from sampled_metrics.estimation.laws import WITH_REPLACEMENT, WITHOUT_REPLACEMENT
from sampled_metrics.estimation.nodes import interpolation_nodes, node_weights
from sampled_metrics.estimation.population import (
    exact_metric,
    expected_sampled_value,
    expected_sampled_values,
    learned_estimates,
    learned_estimates_of,
    sampled_metric_table,
)
from sampled_metrics.reproduction.claims import check_claims, crosscheck_claim
from sampled_metrics.reproduction.curves import order_thresholds, sample_size_curves
from sampled_metrics.reproduction.paper import published
from sampled_metrics.reproduction.tables import pair_agreement, sampling_crosscheck, summary_table

# The sample sizes the paper's text gives for Figure 6 (uncorrected and BV 0.1).
PAPER_THRESHOLDS = dict(
    zip(published("figure6")["method"], published("figure6")["stays_right_from_m"])
)


def test_exact_metric_uses_each_users_ranked_set_for_auc():
    # AUC_n(r) = (n - r) / (n - 1) (eq 7): (10-1)/9 = 1 and (4-4)/3 = 0.
    assert exact_metric("auc", [1, 4], [10, 4]) == pytest.approx(0.5)
    assert exact_metric("recall@10", [1, 11], [20, 20]) == pytest.approx(0.5)
    assert exact_metric("ap", [1, 4], [10, 10]) == pytest.approx((1 + 0.25) / 2)


def test_sampled_metric_table_reads_vector_at_sampled_rank():
    ranks = np.array([[1, 2, 3], [3, 3, 1]])  # 2 repetitions, 3 users
    vectors = {("m", "id"): np.array([1.0, 0.5, 0.0])}
    table = sampled_metric_table(ranks, vectors)
    assert table["value"].tolist() == pytest.approx([1.5 / 3, 1.0 / 3])
    assert table["rep"].tolist() == [0, 1]


def test_sampled_metric_table_per_user_n_calls_each_group_with_its_n():
    ranks = np.array([[1, 2]])
    seen = []

    def vectors(n):
        seen.append(n)
        return {("m", "x"): np.array([float(n), 0.0])}

    table = sampled_metric_table(ranks, vectors, n_per_user=[7, 9])
    assert sorted(seen) == [7, 9]
    assert table["value"].tolist() == pytest.approx([7.0 / 2])


def test_sampled_metric_table_rejects_fractional_and_too_large_ranks():
    with pytest.raises(ValueError, match="integer"):
        sampled_metric_table(np.array([[1.5]]), {("m", "x"): np.ones(2)})
    with pytest.raises(ValueError, match="m \\+ 1"):
        sampled_metric_table(np.array([[3]]), {("m", "x"): np.ones(2)})


@pytest.mark.parametrize("law", [WITH_REPLACEMENT, WITHOUT_REPLACEMENT])
def test_expected_value_of_sampled_auc_is_exact_auc(law):
    """Section 4.4.1 on users with different n: E[AUC_{m+1}(r~)] = AUC_n(r)."""
    m = 5
    auc_on_sample = (m + 1 - np.arange(1, m + 2)) / m
    ranks, n = np.array([1, 7, 30, 12]), np.array([40, 40, 30, 15])
    assert expected_sampled_value(auc_on_sample, ranks, n, law) == pytest.approx(
        exact_metric("auc", ranks, n), abs=1e-12
    )


def test_expected_recall_with_m_1_by_hand():
    # m = 1, n = 5, r = 3: p(r~ = 1) = (n - r)/(n - 1) = 1/2 (section 4.4.4).
    assert expected_sampled_value([1.0, 0.0], [3], [5]) == pytest.approx(0.5)


def tidy(values):
    """{(recommender, metric, method): [value per rep]} -> sampling table."""
    return pd.DataFrame(
        [
            {"recommender": r, "metric": m, "method": k, "rep": i, "value": v}
            for (r, m, k), vs in values.items()
            for i, v in enumerate(vs)
        ]
    )


def test_summary_table_mean_std_and_exact_rows():
    exact = pd.DataFrame({"recommender": ["A"], "metric": ["ap"], "value": [5.0]})
    table = summary_table(exact, tidy({("A", "ap", "sampled"): [1.0, 3.0]}))
    rows = table.set_index("method")
    assert rows.loc["exact", "mean"] == 5.0 and np.isnan(rows.loc["exact", "std"])
    assert rows.loc["sampled", "mean"] == 2.0
    assert rows.loc["sampled", "std"] == pytest.approx(np.sqrt(2.0))  # ddof = 1


def test_pair_agreement_counts_repetitions_in_the_exact_order():
    exact = pd.DataFrame({"recommender": ["A", "B"], "metric": ["ap", "ap"], "value": [1.0, 2.0]})
    sampling = tidy(
        {("A", "ap", "sampled"): [3.0, 1.0, 2.0, 0.5], ("B", "ap", "sampled"): [2.0, 2.0, 2.0, 1.0]}
    )
    row = pair_agreement(exact, sampling, [("A", "B")]).iloc[0]
    # exact: A < B; reps: A>B (wrong), A<B, tie (wrong), A<B -> 2 of 4
    assert (row["pair"], row["correct"], row["repetitions"]) == ("A<B", 2, 4)


def test_crosscheck_z_scores_and_claim_verdicts():
    sampling = tidy({("A", "ap", "x"): [1.0, 2.0, 3.0], ("A", "ap", "y"): [4.0, 4.0, 4.0]})
    check = sampling_crosscheck(sampling, {("A", "ap", "x"): 1.0, ("A", "ap", "y"): 4.0})
    z = dict(zip(check["method"], check["z"]))
    assert z["x"] == pytest.approx((2.0 - 1.0) / (1.0 / np.sqrt(3)))
    assert z["y"] == 0.0  # no spread and equal: agreement
    assert crosscheck_claim(check).passed  # |z| = 1.73 <= 4
    assert not crosscheck_claim(check, z_limit=1.5).passed
    check_off = sampling_crosscheck(sampling, {("A", "ap", "x"): 2.0, ("A", "ap", "y"): 5.0})
    assert np.isinf(check_off.set_index("method").loc["y", "z"])
    assert not crosscheck_claim(check_off).passed


def test_order_thresholds_first_and_stays_right():
    curves = pd.DataFrame(
        [
            {"m": m, "method": "s", "recommender": r, "expected": v}
            for m, a, b in [(1, 2, 1), (5, 1, 2), (10, 2, 1), (50, 1, 2), (100, 1, 3)]
            for r, v in (("A", a), ("B", b))
        ]
    )
    row = order_thresholds(curves, {"A": 1.0, "B": 2.0}, "A", "B").iloc[0]
    assert row["first_right_m"] == 5 and row["stays_right_from_m"] == 50


# The exact column of the paper's Table 3 (percent), by metric and recommender.
PAPER_EXACT = (
    published("table3")
    .query("method == 'exact'")
    .pivot(index="metric", columns="recommender", values="mean")
)


def paper_like_tables(sampled_x_y):
    """Tables with the paper's qualitative pattern: its exact values, made-up
    sampled ones (sampled X/Y recall given) and corrections near the exact."""
    rows = []
    exact = {
        metric: tuple(PAPER_EXACT.loc[metric, list("XYZ")])
        for metric in ("recall@10", "ndcg@10", "ap", "auc")
    }
    for metric, values in exact.items():
        for rec, value in zip("XYZ", values):
            sampled = value if metric == "auc" else {"X": 60.0, "Y": 50.0, "Z": 40.0}[rec]
            if metric == "recall@10" and rec in "XY":
                sampled = sampled_x_y[rec]
            rows += [
                {"recommender": rec, "metric": metric, "method": "exact", "mean": value},
                {"recommender": rec, "metric": metric, "method": "sampled", "mean": sampled},
                {"recommender": rec, "metric": metric, "method": "cls", "mean": value * 1.01},
            ]
    table3 = pd.DataFrame(rows)
    table4 = pd.DataFrame(
        [
            {"pair": p, "metric": m, "method": k, "correct": c, "repetitions": 100}
            for p in ("X<Y", "X<Z", "Y<Z")
            for m in exact
            for k, c in (("sampled", 0), ("rank_estimate", 50))
        ]
    )
    # the reproduction's thresholds as the paper's
    thresholds = pd.DataFrame(
        {"method": list(PAPER_THRESHOLDS), "stays_right_from_m": list(PAPER_THRESHOLDS.values())}
    )
    return table3, table4, thresholds, PAPER_THRESHOLDS


def verdicts(claims):
    return {c.statement: c.passed for c in claims}


def test_claims_pass_on_paper_pattern_and_fail_when_the_reversal_is_gone():
    held = verdicts(check_claims(*paper_like_tables({"X": 66.0, "Y": 56.0})))
    assert held["Sampled Recall@10 reverses the exact order of X and Y"]
    assert held["Sampled AUC keeps the exact order of every pair"]
    assert held["On the exact AUC, X > Y > Z"]
    gone = verdicts(check_claims(*paper_like_tables({"X": 50.0, "Y": 56.0})))
    assert not gone["Sampled Recall@10 reverses the exact order of X and Y"]


def test_sample_size_claim_fails_outside_a_factor_of_two():
    table3, table4, thresholds, paper = paper_like_tables({"X": 66.0, "Y": 56.0})
    target = paper["bv_0.1"]  # m = 60 in the paper's text
    key = f"BV 0.1 Recall@10 needs about m = {target:g} to order X and Y (within a factor of 2)"
    assert verdicts(check_claims(table3, table4, thresholds, paper))[key] is True
    thresholds.loc[thresholds["method"] == "bv_0.1", "stays_right_from_m"] = 500  # > 2 x 60
    claims = verdicts(check_claims(table3, table4, thresholds, paper))
    assert claims[key] is False


# --------------------------------------------------------------------------
# Corrections built with each user's own n
# --------------------------------------------------------------------------


def _users(seed=0, size=60):
    rng = np.random.default_rng(seed)
    n = rng.integers(40, 52, size=size)
    ranks = np.array([rng.integers(1, k + 1) for k in n])
    return ranks, n


@pytest.mark.parametrize("law", [WITH_REPLACEMENT, WITHOUT_REPLACEMENT])
def test_expected_values_per_user_equal_a_loop_over_users(law):
    ranks, n = _users()
    m, methods = 6, ["sampled", "cls", "bv_0.1"]

    def vectors(k):
        return correction_vectors(["ndcg@10", "ap"], methods, k, m, law)

    values = expected_sampled_values(vectors, ranks, n, m, law, per_user=True)
    for key, value in values.items():
        by_user = [expected_sampled_value(vectors(k)[key], [r], [k], law) for r, k in zip(ranks, n)]
        assert value == pytest.approx(np.mean(by_user), rel=1e-12), key


def test_per_user_least_squares_is_unbiased_with_a_uniform_prior():
    """With p(r) = 1/n_u and m = n_u - 1 (no sampling), the per-user correction is exact."""
    rng = np.random.default_rng(1)
    n = rng.integers(8, 12, size=40)
    ranks = np.array([rng.integers(1, k + 1) for k in n])
    # m = n_u - 1 differs per user here, so test one n at a time, each with its own m.
    for k in np.unique(n):
        users = n == k
        vectors = correction_vectors(["ap"], ["ls"], int(k), int(k) - 1, WITHOUT_REPLACEMENT)
        value = expected_sampled_values(vectors, ranks[users], n[users], int(k) - 1)
        assert value["ap", "ls"] == pytest.approx(exact_metric("ap", ranks[users], k))


def test_interpolation_nodes_and_weights():
    assert interpolation_nodes([7, 7, 9], 5).tolist() == [7, 9]
    assert interpolation_nodes(np.arange(10, 31), 3).tolist() == [10, 20, 30]
    weights = node_weights([10, 12, 20, 30], [10, 20, 30])
    np.testing.assert_allclose(weights.sum(axis=1), 1)
    np.testing.assert_allclose(weights[1], [0.8, 0.2, 0.0])
    with pytest.raises(ValueError, match="at least 2"):
        interpolation_nodes([1, 2, 3], 1)


@pytest.mark.parametrize("law", [WITH_REPLACEMENT, WITHOUT_REPLACEMENT])
def test_figure6_per_user_with_a_node_per_n_is_exact(law):
    """With as many nodes as distinct n, the curves equal the per-user expected values."""
    ranks, n = _users(2)
    curves = sample_size_curves(
        {"A": (ranks, n)}, "recall@10", ["sampled", "bv_0.1"], [5, 9], None, law, nodes=100
    )
    for m in (5, 9):

        def vectors(k, m=m):
            return correction_vectors(["recall@10"], ["sampled", "bv_0.1"], k, m, law)

        truth = expected_sampled_values(vectors, ranks, n, m, law, per_user=True)
        for method in ("sampled", "bv_0.1"):
            row = curves[(curves["m"] == m) & (curves["method"] == method)]
            assert row["expected"].item() == pytest.approx(truth["recall@10", method], rel=1e-10)


def test_figure6_catalogue_n_builds_every_correction_with_it():
    ranks, n = _users(3)
    curves = sample_size_curves(
        {"A": (ranks, n)}, "ap", ["bv_0.1"], [4], 60, WITH_REPLACEMENT, WITHOUT_REPLACEMENT
    )
    vector = correction_vectors(["ap"], ["bv_0.1"], 60, 4, WITHOUT_REPLACEMENT)["ap", "bv_0.1"]
    truth = expected_sampled_value(vector, ranks, n, WITH_REPLACEMENT)
    assert curves["expected"].item() == pytest.approx(truth, rel=1e-12)


def test_expected_values_in_blocks_of_users_equal_one_block(monkeypatch):
    """Figure 6's per-user laws are taken block by block (bounded memory): same values."""
    import sampled_metrics.reproduction.curves as E

    ranks, n = _users(4, size=50)
    at_nodes = [correction_vectors(["ap"], ["sampled", "bv_0.1"], int(k), 7) for k in (40, 51)]
    whole = E.expected_at_nodes(at_nodes, [40, 51], ranks, n, 7, WITH_REPLACEMENT)
    monkeypatch.setattr(E, "_LAW_BLOCK_BYTES", 8 * 8 * 3)  # 3 users per block
    blocked = E.expected_at_nodes(at_nodes, [40, 51], ranks, n, 7, WITH_REPLACEMENT)
    assert blocked.keys() == whole.keys()
    for key, value in whole.items():
        assert blocked[key] == pytest.approx(value, rel=1e-13)


def test_expected_values_of_several_builds_equal_each_build_alone():
    """The readings of protocol_sensitivity share each user's law of r~: the values of
    every build (catalogue n, nodes of per-user n) are those it gives alone, to the
    rounding of the same sums in another order."""
    import sampled_metrics.reproduction.curves as E

    ranks, n = _users(5, size=50)
    builds = [
        ([correction_vectors(["ap"], ["sampled", "bv_0.1"], int(k), 7) for k in nodes], nodes)
        for nodes in ([60], [40, 51])
    ]
    together = E.expected_at_nodes_each(builds, ranks, n, 7, WITHOUT_REPLACEMENT)
    alone = [E.expected_at_nodes(*build, ranks, n, 7, WITHOUT_REPLACEMENT) for build in builds]
    assert [list(d) for d in together] == [list(d) for d in alone]
    for shared, own in zip(together, alone):  # the same sums in another order
        assert list(shared.values()) == pytest.approx(list(own.values()), rel=1e-12)


def test_protocol_sensitivity_in_two_processes_equals_one():
    """The readings' builds and the recommenders spread over forked workers give the
    table of one process, bit for bit, every reading in its own rows."""
    from sampled_metrics.reproduction.sensitivity import protocol_sensitivity

    ranks = {name: _users(seed) for name, seed in (("A", 1), ("B", 2), ("C", 3))}
    args = (ranks, ["ap", "recall@5"], ["sampled", "cls", "bv_0.1"], 52, 6)
    args += (WITHOUT_REPLACEMENT, "monotone_in_range", 3)
    one = protocol_sensitivity(*args)
    two = protocol_sensitivity(*args, workers=2)
    pd.testing.assert_frame_equal(one, two, check_exact=True)
    assert len(one.groupby(["n", "law", "cls_constraint"])) == 6
    # each reading holds its own build: the catalogue ones, computed here directly
    import sampled_metrics.reproduction.curves as E

    for law in (WITH_REPLACEMENT, WITHOUT_REPLACEMENT):
        vectors = correction_vectors(*args[1:3], 52, 6, law)
        for name, (r, n) in ranks.items():
            direct = E.expected_at_nodes([vectors], [52], r, n, 6, WITHOUT_REPLACEMENT)
            rows = two[
                (two["n"] == "catalogue") & (two["law"] == law) & (two["recommender"] == name)
            ]
            found = dict(zip(zip(rows["metric"], rows["method"]), rows["expected"]))
            assert list(found) == list(direct)
            assert list(found.values()) == pytest.approx(list(direct.values()), rel=1e-12)


def test_learned_estimates_in_a_pool_equal_each_evaluation_alone():
    """The pool over every (evaluation, repetition) of several evaluations gives, bit for
    bit, what each evaluation gives alone and serially."""
    rng = np.random.default_rng(7)
    n = rng.integers(150, 200, size=80)
    m = 20
    evaluations = [(1 + rng.binomial(m, rng.beta(a, 5, size=(3, n.size))), n) for a in (0.3, 1.0)]
    methods = ["em", "maxent", "bv_em_0.1", "mn_em"]
    pooled = learned_estimates_of(
        evaluations, m, WITH_REPLACEMENT, ["recall@10", "auc"], methods, workers=2
    )
    for (ranks, users_n), table in zip(evaluations, pooled):
        alone = learned_estimates(
            ranks, users_n, m, WITH_REPLACEMENT, ["recall@10", "auc"], methods
        )
        pd.testing.assert_frame_equal(table, alone, check_exact=True)
        assert len(table) == 3 * 2 * len(methods)
    assert not pooled[0]["value"].equals(pooled[1]["value"])


def test_figure6_curves_in_forked_processes_equal_one_process():
    """The sample sizes spread over two processes (largest first) give the same rows, in
    the order of m_values, bit for bit."""
    ranks, n = _users(4)
    args = ({"A": (ranks, n), "B": (ranks[::-1], n[::-1])}, "ndcg@10", ["sampled", "bv_0.1"])
    m_values = [3, 20, 7, 40]
    one = sample_size_curves(*args, m_values, None, WITH_REPLACEMENT)
    two = sample_size_curves(*args, m_values, None, WITH_REPLACEMENT, workers=2)
    pd.testing.assert_frame_equal(one, two, check_exact=True)
    assert one["m"].drop_duplicates().tolist() == m_values
