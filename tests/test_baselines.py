"""The baselines (sampled_metrics.recommenders.baselines) against their definitions:
popularity scores are the training counts; EASE's weights satisfy the optimality
conditions of Steck's constrained least squares and equal a direct solve per column;
BPR is reproducible from its seed and learns a planted structure."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sampled_metrics.data import leave_last_out_split
from sampled_metrics.passes.ranking import exact_ranks
from sampled_metrics.recommenders import fit_recommender, validate_spec
from sampled_metrics.recommenders.baselines import ease_weights, spd_inverse


def random_train(users=60, items=25, density=0.2, seed=0):
    rng = np.random.default_rng(seed)
    return sp.csr_matrix((rng.random((users, items)) < density).astype(np.float32))


def clustered_events(users=200, items=40, per_user=8, seed=1):
    """Two groups of users, each drawing its items from its own half of the catalogue."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    for u in range(users):
        half = np.arange(items // 2) + (items // 2) * (u % 2)
        chosen = rng.choice(half, size=per_user, replace=False)
        rows += [(u, int(i), t) for t, i in enumerate(chosen)]
    return pd.DataFrame(rows, columns=["user", "item", "time"])


def test_popularity_scores_are_the_training_counts():
    X = random_train()
    model = fit_recommender({"type": "popularity"}, X)
    counts = np.asarray(X.sum(axis=0)).ravel()
    assert np.array_equal(model.scores(np.arange(3)), np.tile(counts, (3, 1)))


def test_ease_weights_solve_the_constrained_least_squares():
    """min ||X - XB||^2 + lambda ||B||^2, diag(B) = 0: stationarity says the
    off-diagonal of (X^T X + lambda I) B - X^T X vanishes; and column j equals the
    unconstrained ridge solve on the other items."""
    X = random_train(seed=2)
    lam = 3.0
    B = ease_weights(X, lam)
    G = (X.T @ X).toarray().astype(float)
    assert np.allclose(np.diag(B), 0.0)
    residual = (G + lam * np.eye(G.shape[0])) @ B - G
    off = residual - np.diag(np.diag(residual))
    assert np.abs(off).max() < 1e-9
    j = 7
    others = np.delete(np.arange(G.shape[0]), j)
    direct = np.linalg.solve(G[np.ix_(others, others)] + lam * np.eye(others.size), G[others, j])
    assert np.allclose(B[others, j], direct)


def test_ease_scores_are_the_users_rows_times_b():
    X = random_train(seed=3)
    model = fit_recommender({"type": "ease", "regularization": 10.0}, X)
    B = ease_weights(X, 10.0)
    assert np.allclose(model.scores([0, 5]), (X[[0, 5]] @ B), atol=1e-4)


@pytest.mark.parametrize(
    "spec, key",
    [
        ({"type": "ease", "regularization": 0}, "regularization"),
        ({"type": "bpr", "factors": 0}, "factors"),
        ({"type": "bpr", "learning_rate": -1}, "learning_rate"),
        ({"type": "popularity", "alpha": 1}, "alpha"),
    ],
)
def test_bad_hyperparameters_are_named(spec, key):
    with pytest.raises(ValueError, match=key):
        validate_spec(spec)


def test_bpr_is_reproducible_from_its_seed_and_learns_a_planted_structure():
    split = leave_last_out_split(clustered_events())
    spec = {"type": "bpr", "factors": 8, "iterations": 50, "learning_rate": 0.05}
    first = fit_recommender(spec, split.train, seed=3)
    again = fit_recommender(spec, split.train, seed=3)
    assert np.array_equal(first.scores(np.arange(10)), again.scores(np.arange(10)))
    ranks, n = exact_ranks(first, split.train, split.test_items, tie_policy="pessimistic")
    auc = np.mean((n - ranks) / (n - 1))
    assert auc > 0.7  # the held-out item lies in the user's half of the catalogue


def test_the_baselines_are_entries_of_the_shipped_configuration():
    """config.yaml evaluates Pop, EASE and BPR beside X, Y, Z, one entry each, with
    their types' defaults."""
    from sampled_metrics.pipeline.validation import load_config

    recommenders = load_config()["recommenders"]
    assert list(recommenders) == ["X", "Y", "Z", "Pop", "EASE", "BPR"]
    assert [recommenders[r]["type"] for r in ("Pop", "EASE", "BPR")] == [
        "popularity",
        "ease",
        "bpr",
    ]
    assert recommenders["EASE"]["regularization"] == 500.0
    assert recommenders["BPR"]["iterations"] == 100


@pytest.mark.parametrize("n", [2, 9, 64, 301])
def test_the_inverse_by_halves_is_the_inverse(n):
    """Above scipy's 32-bit LAPACK limit EASE inverts by halves (Schur complement): at
    any split depth the result is A^-1 (A A^-1 = I, symmetric) and equals one LAPACK
    call to rounding."""
    rng = np.random.default_rng(n)
    M = rng.random((n, n))
    A = M @ M.T + n * np.eye(n)
    whole = spd_inverse(A.copy())
    for max_bytes in (8, 8 * n * n // 3, 8 * n * n - 1):
        halves = spd_inverse(A.copy(), max_bytes=max_bytes)
        np.testing.assert_allclose(halves @ A, np.eye(n), atol=1e-12)
        np.testing.assert_allclose(halves, halves.T, atol=1e-15 * n)
        np.testing.assert_allclose(halves, whole, rtol=1e-10, atol=1e-15)
