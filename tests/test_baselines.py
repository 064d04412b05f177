"""The baselines (sampled_metrics.recommenders.baselines) against their definitions:
popularity scores are the training counts; EASE's weights satisfy the optimality
conditions of Steck's constrained least squares and equal a direct solve per column;
BPR is reproducible from its seed and learns a planted structure."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import CONFIG_FILE

from sampled_metrics.data import leave_last_out_split
from sampled_metrics.passes.ranking import exact_ranks
from sampled_metrics.recommenders import fit_recommender, validate_spec
from sampled_metrics.recommenders.baselines import BPR_WINDOW, bpr_converged
from sampled_metrics.recommenders.ease import (
    EASE_FLOAT64_MAX_BYTES,
    ease_dtype,
    ease_weights,
    gram_matrix,
    spd_inverse,
)


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
        ({"type": "bpr", "tolerance": -0.1}, "tolerance"),
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

    recommenders = load_config(CONFIG_FILE)["recommenders"]
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
    """Above scipy's 32-bit LAPACK limit EASE inverts by halves (Schur complement), in
    place: at any split depth the result is A^-1 (A A^-1 = I, symmetric), in A's own
    memory, and equals one LAPACK call to rounding."""
    rng = np.random.default_rng(n)
    M = rng.random((n, n))
    A = M @ M.T + n * np.eye(n)
    whole = spd_inverse(A.copy())
    np.testing.assert_allclose(whole, np.linalg.inv(A), rtol=1e-10, atol=1e-15)
    assert np.array_equal(whole, whole.T)  # the lower triangle copied to the upper
    for max_bytes in (8, 8 * n * n // 3, 8 * n * n - 1):
        copy = A.copy()
        halves = spd_inverse(copy, max_bytes=max_bytes)
        assert halves is copy and halves.flags.c_contiguous
        np.testing.assert_allclose(halves @ A, np.eye(n), atol=1e-12)
        np.testing.assert_allclose(halves, halves.T, atol=1e-15 * n)
        np.testing.assert_allclose(halves, whole, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("n", [7, 128])
def test_the_float32_inverse_by_halves_is_the_inverse(n):
    rng = np.random.default_rng(n)
    M = rng.random((n, 3 * n))
    A = M @ M.T + n * np.eye(n)
    for max_bytes in (4 * n * n, 4 * n * n // 3):
        inverse = spd_inverse(A.astype(np.float32), max_bytes=max_bytes)
        assert inverse.dtype == np.float32
        np.testing.assert_allclose(inverse @ A, np.eye(n), atol=1e-4)


def test_spd_inverse_refuses_what_it_cannot_invert():
    with pytest.raises(ValueError, match="C-contiguous"):
        spd_inverse(np.asfortranarray(np.eye(3) + 0.1))
    with pytest.raises(ValueError, match="positive definite"):
        spd_inverse(np.array([[1.0, 2.0], [2.0, 1.0]]))


def test_the_gram_matrix_is_the_exact_co_occurrence_count():
    X = random_train(users=300, items=40, density=0.3, seed=5)
    G = gram_matrix(X, np.float32, add_to_diagonal=2.5)
    expected = (X.T @ X).toarray().astype(np.float64) + 2.5 * np.eye(40)
    assert G.flags.c_contiguous and G.dtype == np.float32
    assert np.array_equal(G, expected)


def test_one_precision_rule_float64_up_to_its_byte_limit():
    largest = int(np.sqrt(EASE_FLOAT64_MAX_BYTES / 8))
    assert ease_dtype(largest) == np.float64
    assert ease_dtype(largest + 1) == np.float32
    assert ease_dtype(3706) == np.float64  # MovieLens 1M: unchanged weights
    assert ease_dtype(26_744) == np.float32  # ml-20m-like: 2.9 GB, not 5.7


def test_float64_ease_weights_are_the_bits_of_scipys_inverse():
    """Up to 16,384 items the in-place Cholesky inverse gives the bits the former
    ``scipy.linalg.inv`` gave (MovieLens 1M's stored weights did not change)."""
    from scipy import linalg

    X = random_train(users=500, items=80, density=0.15, seed=8)
    gram = (X.T @ X).toarray().astype(np.float64)
    gram[np.diag_indices_from(gram)] += 500.0
    P = linalg.inv(gram, overwrite_a=True, check_finite=False)
    before = P / -np.diag(P).copy()[None, :]
    before[np.diag_indices_from(before)] = 0.0
    assert np.array_equal(ease_weights(X, 500.0), before)


def test_float32_ease_weights_are_float64_ones_to_rounding():
    """The float32 path (above 16,384 items) solves the same problem: on a small matrix
    its weights are the float64 ones within float32 rounding, and so are the scores."""
    X = random_train(users=400, items=60, density=0.2, seed=6)
    B64 = ease_weights(X, 5.0)
    B32 = ease_weights(X, 5.0, dtype=np.float32)
    assert B64.dtype == np.float64 and B32.dtype == np.float32
    assert np.abs(B32 - B64).max() < 1e-5 * np.abs(B64).max() * 60
    assert np.array_equal(np.diag(B32), np.zeros(60, dtype=np.float32))


def test_bpr_convergence_rule():
    window = BPR_WINDOW
    flat = [0.6] * (2 * window)
    assert not bpr_converged(flat[:-1], 0.002)  # too few epochs to judge
    assert bpr_converged(flat, 0.002)
    assert not bpr_converged(flat, 0.0)  # 0: never stops
    rising = [0.6 + 0.001 * e for e in range(2 * window)]  # +0.01 per window
    assert not bpr_converged(rising, 0.002)
    assert bpr_converged(rising, 0.02)


def test_bpr_stopped_early_is_the_shorter_fit():
    """The rule ends implicit's loop after an epoch: a fit it stops after 2 windows is,
    bit for bit, the fit of that many epochs; a fit it never stops is the fit without
    the rule."""
    X = random_train(users=80, items=30, density=0.2, seed=7)
    spec = {"type": "bpr", "factors": 4, "learning_rate": 0.05}
    stopped = fit_recommender({**spec, "iterations": 100, "tolerance": 1.0}, X, seed=2)
    assert len(stopped.training_auc) == 2 * BPR_WINDOW
    short = fit_recommender({**spec, "iterations": 2 * BPR_WINDOW, "tolerance": 0}, X, seed=2)
    assert np.array_equal(stopped.user_factors, short.user_factors)
    assert np.array_equal(stopped.item_factors, short.item_factors)
    assert stopped.training_auc == short.training_auc
    full = fit_recommender({**spec, "iterations": 25, "tolerance": 0}, X, seed=2)
    assert len(full.training_auc) == 25
    assert all(0.0 <= auc <= 1.0 for auc in full.training_auc)
