"""Every fitted model keeps the arrays its scores read in the layout the product reads:
C-contiguous rows (factors, weights, similarities), CSR training rows, after the fit and
after a save and a load. A Fortran-ordered EASE weight matrix made each product read a
row across n_items x 4 bytes of stride (benchmarks/bench_scoring.py)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from sampled_metrics.recommenders import (
    fit_recommender,
    load_model,
    recommender_types,
    save_model,
)
from sampled_metrics.recommenders.ease import EASEModel

SPECS = {
    "ials": {"type": "ials", "factors": 4, "iterations": 2},
    "item_knn": {"type": "item_knn", "q": 3.0},
    "item_knn_cut": {"type": "item_knn", "k_prime": 3},
    "popularity": {"type": "popularity"},
    "ease": {"type": "ease", "regularization": 5.0},
    "bpr": {"type": "bpr", "factors": 4, "iterations": 2},
}


def random_train(users=50, items=30, seed=0):
    rng = np.random.default_rng(seed)
    return sp.csr_matrix((rng.random((users, items)) < 0.2).astype(np.float32))


def check_layout(model) -> int:
    """Assert the layout of every array and sparse matrix the model holds; return how
    many 2-d arrays it checked."""
    checked = 0
    for key, value in vars(model).items():
        if isinstance(value, np.ndarray):
            assert value.flags.c_contiguous, f"{model.name}.{key} is not C-contiguous"
            if value.ndim == 2:
                assert value.strides == (value.shape[1] * value.itemsize, value.itemsize), key
                checked += 1
        elif sp.issparse(value):
            assert value.format == "csr", f"{model.name}.{key} is {value.format}, not CSR"
    return checked


def test_every_registered_type_is_covered():
    assert {spec["type"] for spec in SPECS.values()} == set(recommender_types())


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_stored_arrays_are_c_contiguous_after_fit_and_after_save_and_load(kind, tmp_path):
    train = random_train()
    model = fit_recommender(SPECS[kind], train, seed=0)
    before = model.scores(np.arange(5))
    expected_2d = {"popularity": 0, "item_knn_cut": 0}.get(kind, 1)  # Z's s' is sparse
    assert check_layout(model) >= expected_2d
    save_model(model, tmp_path / "model.pkl")
    loaded = load_model(tmp_path / "model.pkl")
    assert check_layout(loaded) >= expected_2d
    assert np.array_equal(loaded.scores(np.arange(5)), before)


def test_ease_weights_are_float32_rows():
    model = fit_recommender(SPECS["ease"], random_train(), seed=0)
    n = model.n_items
    assert model.weights.dtype == np.float32
    assert model.weights.strides == (4 * n, 4)


def test_a_fortran_ordered_model_loads_c_contiguous():
    """A model pickled with Fortran-ordered arrays (EASE before its weights were made
    C-contiguous; any factor model) is C-contiguous once loaded, with the same scores."""
    train = random_train()
    ease = fit_recommender(SPECS["ease"], train, seed=0)
    scores = ease.scores(np.arange(4))
    ease.weights = np.asfortranarray(ease.weights)
    loaded = pickle.loads(pickle.dumps(ease, protocol=5))
    assert isinstance(loaded, EASEModel)
    assert loaded.weights.flags.c_contiguous
    assert np.array_equal(loaded.scores(np.arange(4)), scores)
    for kind in ("ials", "bpr", "item_knn"):
        model = fit_recommender(SPECS[kind], train, seed=0)
        scores = model.scores(np.arange(4))
        for key, value in vars(model).items():
            if isinstance(value, np.ndarray) and value.ndim == 2:
                setattr(model, key, np.asfortranarray(value))
        loaded = pickle.loads(pickle.dumps(model, protocol=5))
        check_layout(loaded)
        assert np.array_equal(loaded.scores(np.arange(4)), scores)
