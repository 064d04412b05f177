"""Baselines that sampled-metric studies compare with: popularity, EASE and BPR.

* ``popularity``: every user gets the items' training counts as scores (the
  most-popular list; ties broken by the configured tie policy).
* ``ease`` (Steck, "Embarrassingly Shallow Autoencoders for Sparse Data", WWW
  2019): B = argmin ||X - X B||^2 + lambda ||B||^2 subject to diag(B) = 0, in
  closed form B = I - P diag(1 / diag(P)), P = (X^T X + lambda I)^-1; scores X_u B.
* ``bpr``: Bayesian personalized ranking (Rendle et al., UAI 2009) through
  ``implicit`` (its CPU implementation), scores W V^T with implicit's item bias.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy import linalg

from .hyperparameters import binary_train, hyperparameters, positive_number
from .ials import IALSModel

__all__ = [
    "BPR_DEFAULTS",
    "EASE_DEFAULTS",
    "EASEModel",
    "POPULARITY_DEFAULTS",
    "PopularityModel",
    "build_bpr",
    "build_ease",
    "build_popularity",
    "ease_weights",
    "spd_inverse",
    "validate_bpr",
    "validate_ease",
    "validate_popularity",
]

POPULARITY_DEFAULTS: dict = {}
# Steck's EASE: the L2 weight (he reports 200-1000 as good for MovieLens-size data).
EASE_DEFAULTS = {"regularization": 500.0}
# implicit's own defaults for BPR (implicit.cpu.bpr.BayesianPersonalizedRanking).
BPR_DEFAULTS = {"factors": 100, "learning_rate": 0.01, "regularization": 0.01, "iterations": 100}


class PopularityModel:
    """Scores every item by its training count, the same for every user."""

    def __init__(self, counts, name="popularity"):
        self.counts = np.asarray(counts, dtype=np.float32)
        self.name = name

    @property
    def n_items(self) -> int:
        return self.counts.size

    def scores(self, users) -> np.ndarray:
        return np.broadcast_to(self.counts, (len(users), self.counts.size)).copy()


def validate_popularity(spec: dict) -> dict:
    """A popularity spec has no hyperparameters.

    Parameters
    ----------
    spec : dict
        ``{"type": "popularity"}`` (and an optional ``name``).

    Returns
    -------
    dict

    Examples
    --------
    >>> validate_popularity({"type": "popularity"})
    {}
    """
    return hyperparameters(spec, POPULARITY_DEFAULTS)[1]


def build_popularity(spec: dict, train, seed) -> PopularityModel:  # noqa: ARG001 - no randomness
    """The popularity baseline of ``train`` (binarized).

    Parameters
    ----------
    spec : dict
    train : scipy.sparse matrix (users x items)
    seed : int
        Unused.

    Returns
    -------
    PopularityModel

    Examples
    --------
    >>> X = sp.csr_matrix(np.array([[1, 0, 1], [1, 1, 0]]))
    >>> build_popularity({"type": "popularity"}, X, 0).scores([0]).tolist()
    [[2.0, 1.0, 1.0]]
    """
    name, _ = hyperparameters(spec, POPULARITY_DEFAULTS)
    X = binary_train(train)
    return PopularityModel(np.asarray(X.sum(axis=0)).ravel(), name=name)


def ease_weights(train, regularization: float) -> np.ndarray:
    """Steck's closed form: B = I - P diag(1/diag(P)), P = (X^T X + lambda I)^-1.

    Parameters
    ----------
    train : scipy.sparse matrix
        Binary users x items.
    regularization : float
        lambda.

    Returns
    -------
    numpy.ndarray
        B (items x items), zero diagonal, float64.

    Examples
    --------
    >>> B = ease_weights(sp.csr_matrix(np.array([[1.0, 1.0], [1.0, 0.0]])), 1.0)
    >>> np.round(B, 4).tolist()
    [[0.0, 0.3333], [0.5, 0.0]]
    """
    X = binary_train(train).astype(np.float64)
    gram = (X.T @ X).toarray()
    gram[np.diag_indices_from(gram)] += regularization
    B = spd_inverse(gram)
    B /= -np.diag(B).copy()[None, :]  # in place: one items x items array less
    B[np.diag_indices_from(B)] = 0.0
    return B


# scipy's LAPACK takes 32-bit sizes: inverting a matrix of more bytes than this crashes
# it (a segfault from n = 23,200 doubles on this machine), so larger ones go by halves.
LAPACK_MAX_BYTES = 2**31


def spd_inverse(A: np.ndarray, max_bytes: int = LAPACK_MAX_BYTES) -> np.ndarray:
    """The inverse of a symmetric positive definite matrix, overwriting ``A``.

    Up to ``max_bytes`` one LAPACK call; above, by halves with the Schur complement
    S = A22 - A21 A11^-1 A12 (SPD too): with X = A11^-1 A12,
    A^-1 = [[A11^-1 + X S^-1 X^T, -X S^-1], [-S^-1 X^T, S^-1]], the products in numpy's
    64-bit BLAS.

    Parameters
    ----------
    A : numpy.ndarray (n, n), float64
        Symmetric positive definite; overwritten (the result may be it).
    max_bytes : int, default LAPACK_MAX_BYTES
        The largest matrix inverted by one LAPACK call.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> A = np.array([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]])
    >>> np.allclose(spd_inverse(A.copy(), max_bytes=8) @ A, np.eye(3))
    True
    """
    if A.nbytes <= max_bytes or A.shape[0] < 2:
        return linalg.inv(A, overwrite_a=True, check_finite=False)
    h = A.shape[0] // 2
    inverse_11 = spd_inverse(A[:h, :h].copy(), max_bytes)
    X = inverse_11 @ A[:h, h:]
    S = A[h:, h:] - A[:h, h:].T @ X
    P22 = spd_inverse(S, max_bytes)
    del S
    P12 = -(X @ P22)
    A[:h, :h] = inverse_11 - P12 @ X.T
    del inverse_11, X
    A[:h, h:] = P12
    A[h:, :h] = P12.T
    A[h:, h:] = P22
    return A


class EASEModel:
    """scores = X_u B, X the training matrix, B :func:`ease_weights`."""

    def __init__(self, train, weights, name="ease"):
        self.train = sp.csr_matrix(train, dtype=np.float32)
        self.weights = np.asarray(weights, dtype=np.float32)
        self.name = name

    @property
    def n_items(self) -> int:
        return self.weights.shape[0]

    def scores(self, users) -> np.ndarray:
        rows = self.train[np.asarray(users, dtype=np.int64)]
        return np.asarray(rows @ self.weights, dtype=np.float32)


def validate_ease(spec: dict) -> dict:
    """Check an EASE spec: ``regularization`` a number > 0.

    Parameters
    ----------
    spec : dict

    Returns
    -------
    dict
        The hyperparameters, defaults filled in.

    Examples
    --------
    >>> validate_ease({"type": "ease", "regularization": 200})
    {'regularization': 200.0}
    """
    name, params = hyperparameters(spec, EASE_DEFAULTS)
    params["regularization"] = positive_number(name, "regularization", params["regularization"])
    return params


def build_ease(spec: dict, train, seed) -> EASEModel:  # noqa: ARG001 - closed form
    """Fit EASE on ``train``.

    Parameters
    ----------
    spec : dict
    train : scipy.sparse matrix
    seed : int
        Unused (closed form).

    Returns
    -------
    EASEModel

    Examples
    --------
    >>> X = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1]]))
    >>> build_ease({"type": "ease", "regularization": 1.0}, X, 0).scores([0]).shape
    (1, 3)
    """
    params = validate_ease(spec)
    name = str(spec.get("name", spec["type"]))
    X = binary_train(train)
    return EASEModel(X, ease_weights(X, params["regularization"]), name=name)


class BPRModel(IALSModel):
    """A fitted BPR model: a factor model like iALS, scores W V^T (implicit's factors,
    the item bias among them)."""


def validate_bpr(spec: dict) -> dict:
    """Check a BPR spec: ``factors`` and ``iterations`` integers > 0,
    ``learning_rate`` > 0, ``regularization`` >= 0.

    Parameters
    ----------
    spec : dict

    Returns
    -------
    dict

    Examples
    --------
    >>> validate_bpr({"type": "bpr", "factors": 8})["factors"]
    8
    """
    name, params = hyperparameters(spec, BPR_DEFAULTS)
    for key in ("factors", "iterations"):
        params[key] = positive_number(name, key, params[key], integer=True)
    params["learning_rate"] = positive_number(name, "learning_rate", params["learning_rate"])
    params["regularization"] = positive_number(
        name, "regularization", params["regularization"], allow_zero=True
    )
    return params


def build_bpr(spec: dict, train, seed) -> BPRModel:
    """Fit BPR with implicit's CPU implementation, seeded.

    Parameters
    ----------
    spec : dict
    train : scipy.sparse matrix
    seed : int

    Returns
    -------
    BPRModel

    Examples
    --------
    >>> X = sp.csr_matrix(np.eye(4)[[0, 1, 2, 3, 0, 1]])
    >>> model = build_bpr({"type": "bpr", "factors": 2, "iterations": 2}, X, seed=0)
    >>> model.scores([0]).shape
    (1, 4)
    """
    from implicit.cpu.bpr import BayesianPersonalizedRanking
    from threadpoolctl import threadpool_limits

    params = validate_bpr(spec)
    name = str(spec.get("name", spec["type"]))
    model = BayesianPersonalizedRanking(
        factors=params["factors"],
        learning_rate=params["learning_rate"],
        regularization=params["regularization"],
        iterations=params["iterations"],
        random_state=seed,
        num_threads=1,  # implicit's BPR is not deterministic with several threads
    )
    with threadpool_limits(1):
        model.fit(binary_train(train), show_progress=False)
    return BPRModel(
        np.asarray(model.user_factors, dtype=np.float32),
        np.asarray(model.item_factors, dtype=np.float32),
        name=name,
        hyperparameters=params,
    )
