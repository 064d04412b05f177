"""The per-recommender jobs and their joins (pipeline.shares, pipeline.vector_builds):
the stored corrections keep every bit, and the joined tables hold, cell by cell, the
definitions they stand for."""

import numpy as np
import pandas as pd
import pytest

from sampled_metrics.estimation.corrections import correction_vectors_by_n
from sampled_metrics.estimation.laws import sampled_rank_pmf
from sampled_metrics.estimation.metrics import metric_vector
from sampled_metrics.estimation.population import expected_sampled_values, sampled_metric_table
from sampled_metrics.pipeline.shares import (
    joined_sampling_table,
    read_curve_share,
    read_sampling_share,
    write_curve_share,
    write_sampling_share,
)
from sampled_metrics.pipeline.vector_builds import read_vector_builds, write_vector_builds
from sampled_metrics.reproduction.curves import (
    curve_corrections,
    curve_nodes,
    curve_values,
    sample_size_curves,
)

METRICS = ["recall@5", "ap"]
METHODS = ["sampled", "cls", "bv_0.1"]
M, REPS = 4, 3


def test_vector_builds_keep_every_bit(tmp_path):
    rng = np.random.default_rng(0)
    builds = {
        (7, 1): {("ap", "cls"): rng.random(5), ("auc", "sampled"): rng.random(5)},
        (9, 0): {("ap", "cls"): rng.random(8) / 3},  # builds may differ in keys and length
    }
    write_vector_builds(builds, tmp_path / "v.npz")
    back = read_vector_builds(tmp_path / "v.npz")
    assert list(back) == list(builds)
    for name, vectors in builds.items():
        assert list(back[name]) == list(vectors)
        assert all(np.array_equal(back[name][key], vectors[key]) for key in vectors)


def test_a_damaged_vector_file_is_named(tmp_path):
    (tmp_path / "v.npz").write_bytes(b"cut")
    with pytest.raises(ValueError, match="v.npz: not a file of correction vectors"):
        read_vector_builds(tmp_path / "v.npz")


@pytest.fixture(scope="module")
def evaluation():
    """Three recommenders' sampled and exact ranks on 40 users of three sizes n_u."""
    rng = np.random.default_rng(1)
    n = rng.choice([20, 25, 30], size=40)
    found = {}
    for name in ("A", "B", "C"):
        exact = rng.integers(1, n + 1)
        sampled = np.stack([1 + rng.binomial(M, (exact - 1) / (n - 1)) for _ in range(REPS)])
        found[name] = (sampled, exact)
    by_n = correction_vectors_by_n(n, METRICS, METHODS, M, "binomial")
    return n, found, by_n


def test_joined_shares_hold_each_cells_definition(evaluation, tmp_path):
    """sampling.csv's value of (recommender, metric, method, rep): 100 times the mean over
    users of M^_{n_u}[r~_u - 1], whichever job computed it; expectations round-trip."""
    n, found, by_n = evaluation
    shares, means = {}, {}
    for name, (sampled, exact) in found.items():
        vectors = by_n.__getitem__
        table = sampled_metric_table(sampled, vectors, n)
        expected = expected_sampled_values(vectors, exact, n, M, "hypergeometric", True)
        write_sampling_share([table], expected, METRICS, METHODS, REPS, tmp_path / f"{name}.npz")
        shares[name], means[name] = read_sampling_share(tmp_path / f"{name}.npz", METRICS, METHODS)
        assert means[name] == expected
    joined = joined_sampling_table("d", shares, METRICS, METHODS)
    rows = [
        [
            "d",
            name,
            metric,
            method,
            rep,
            100
            * float(np.mean([by_n[n_u][metric, method][r - 1] for n_u, r in zip(n, sampled[rep])])),
        ]
        for name, (sampled, _) in found.items()
        for metric in METRICS
        for method in METHODS
        for rep in range(REPS)
    ]
    truth = pd.DataFrame(rows, columns=joined.columns)
    pd.testing.assert_frame_equal(joined[truth.columns[:5]], truth[truth.columns[:5]])
    np.testing.assert_allclose(joined["value"], truth["value"], rtol=1e-12, atol=1e-12)


def test_a_share_missing_a_cell_is_refused(evaluation, tmp_path):
    n, found, by_n = evaluation
    table = sampled_metric_table(found["A"][0], by_n.__getitem__, n)
    with pytest.raises(ValueError, match="every"):
        write_sampling_share([table.iloc[1:]], {}, METRICS, METHODS, REPS, tmp_path / "A.npz")


def test_curve_shares_are_the_expectation_under_each_users_law(evaluation, tmp_path):
    """Figure 6's value of a recommender at m: the mean over users of
    sum_r~ p(r~ | r_u, n_u) M^_u(r~), built at the node of n (the catalogue's n here, so
    M^_u is the same vector for every user); one job per recommender or all at once."""
    n, found, _ = evaluation
    ranks = {name: (exact, n) for name, (_, exact) in found.items()}
    m_values, catalogue = [2, 5], 30
    node_n = curve_nodes(catalogue, n, 5)
    at_by_m = curve_corrections(
        "ap", ["sampled", "bv_0.1"], m_values, node_n, "binomial", "monotone"
    )
    keys = [("ap", "sampled"), ("ap", "bv_0.1")]
    for name, (exact, users_n) in ranks.items():
        values = curve_values(at_by_m, node_n, exact, users_n, "binomial")
        write_curve_share(values, keys, 0.0, tmp_path / f"{name}.npz")
        back, _ = read_curve_share(tmp_path / f"{name}.npz", keys)
        for m in m_values:
            law = sampled_rank_pmf(exact, users_n, m, "binomial")
            for key in keys:
                truth = np.mean(law @ at_by_m[m][0][key])
                assert back[m][key] == pytest.approx(truth, rel=1e-12)
        sampled_ap = np.mean(
            sampled_rank_pmf(exact, users_n, 2, "binomial") @ metric_vector("ap", 3)
        )
        assert back[2]["ap", "sampled"] == pytest.approx(sampled_ap, rel=1e-12)
    together = sample_size_curves(
        ranks, "ap", ["sampled", "bv_0.1"], m_values, catalogue, "binomial"
    )
    for row in together.itertuples():
        one = read_curve_share(tmp_path / f"{row.recommender}.npz", keys)[0]
        assert one[row.m]["ap", row.method] == row.expected  # the same bits
