"""Baselines that sampled-metric studies compare with: popularity, EASE and BPR.

* ``popularity``: every user gets the items' training counts as scores (the
  most-popular list; ties broken by the configured tie policy).
* ``ease`` (Steck 2019): in :mod:`.ease`, its names re-exported here (stored
  models unpickle from either module).
* ``bpr``: Bayesian personalized ranking (Rendle et al., UAI 2009) through
  ``implicit`` (its CPU implementation, one thread: seeded runs repeat bit for bit),
  scores W V^T with implicit's item bias; it stops before ``iterations`` epochs once its
  training AUC has stopped rising (:func:`bpr_converged`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..io.optional import optional_import
from .ease import (
    EASE_DEFAULTS,
    EASEModel,
    build_ease,
    ease_weights,
    spd_inverse,
    validate_ease,
)
from .hyperparameters import binary_train, hyperparameters, positive_number
from .ials import IALSModel

__all__ = [
    "BPR_DEFAULTS",
    "BPR_WINDOW",
    "EASE_DEFAULTS",
    "EASEModel",
    "POPULARITY_DEFAULTS",
    "PopularityModel",
    "build_bpr",
    "build_ease",
    "build_popularity",
    "bpr_converged",
    "ease_weights",
    "spd_inverse",
    "validate_bpr",
    "validate_ease",
    "validate_popularity",
]

POPULARITY_DEFAULTS: dict = {}
# implicit's own defaults for BPR (implicit.cpu.bpr.BayesianPersonalizedRanking), and the
# convergence tolerance of bpr_converged (0: always run all iterations).
BPR_DEFAULTS: dict[str, Any] = {
    "factors": 100,
    "learning_rate": 0.01,
    "regularization": 0.01,
    "iterations": 100,
    "tolerance": 0.002,
}
# Epochs per window of bpr_converged: the training AUC of one epoch is an estimate from
# one sample per training event, and its rise stalls for a few epochs at the start.
BPR_WINDOW = 10


class PopularityModel:
    """Scores every item by its training count, the same for every user."""

    def __init__(self, counts: ArrayLike, name: str = "popularity") -> None:
        self.counts = np.asarray(counts, dtype=np.float32)
        self.name = name

    @property
    def n_items(self) -> int:
        return self.counts.size

    def scores(self, users: ArrayLike) -> np.ndarray:
        return np.broadcast_to(self.counts, (np.size(users), self.counts.size)).copy()


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


def build_popularity(spec: dict, train: sp.spmatrix, seed: int) -> PopularityModel:  # noqa: ARG001 - no randomness
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
    >>> import scipy.sparse as sp
    >>> X = sp.csr_matrix(np.array([[1, 0, 1], [1, 1, 0]]))
    >>> build_popularity({"type": "popularity"}, X, 0).scores([0]).tolist()
    [[2.0, 1.0, 1.0]]
    """
    name, _ = hyperparameters(spec, POPULARITY_DEFAULTS)
    X = binary_train(train)
    return PopularityModel(np.asarray(X.sum(axis=0)).ravel(), name=name)


class BPRModel(IALSModel):
    """A fitted BPR model: a factor model like iALS, scores W V^T (implicit's factors,
    the item bias among them). ``training_auc`` holds the training AUC of every epoch
    run (its length is the number of epochs)."""

    training_auc: tuple = ()


def bpr_converged(
    training_auc: Sequence[float], tolerance: float, window: int = BPR_WINDOW
) -> bool:
    """Has BPR's training AUC stopped rising? True when at least ``2 window`` epochs
    have run and the mean of the last ``window`` epochs' training AUC exceeds the mean
    of the ``window`` before by less than ``tolerance``; never when ``tolerance`` is 0.

    The training AUC of an epoch is implicit's share of correctly ordered pairs among
    the (user, liked item, other item) triples that epoch drew, each scored just before
    its update. On MovieLens 1M it still rises by 0.0057 per window of 10 at epoch 100
    (tolerance 0.002: all 100 epochs run, the same model as before the rule); on
    ``ml-20m-like``, whose synthetic users share one popularity law, by 0.0005 at epoch
    20, where the fit stops on a plateau, before it memorizes the training pairs
    (docs/baselines.md: Recall@10 9.6 there, 5.3 after 100 epochs).

    Parameters
    ----------
    training_auc : sequence of float
        One value per epoch run, in order.
    tolerance : float
        The smallest rise between two windows that keeps the fit going.
    window : int, default BPR_WINDOW

    Returns
    -------
    bool

    Examples
    --------
    >>> rising = [0.5 + 0.01 * e for e in range(20)]
    >>> bpr_converged(rising, 0.002), bpr_converged([0.6] * 20, 0.002)
    (False, True)
    >>> bpr_converged([0.6] * 19, 0.002), bpr_converged([0.6] * 20, 0.0)
    (False, False)
    """
    if tolerance <= 0 or len(training_auc) < 2 * window:
        return False
    last = np.mean(training_auc[-window:])
    before = np.mean(training_auc[-2 * window : -window])
    return bool(last - before < tolerance)


def validate_bpr(spec: dict) -> dict:
    """Check a BPR spec: ``factors`` and ``iterations`` integers > 0,
    ``learning_rate`` > 0, ``regularization`` and ``tolerance`` >= 0.

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
    for key in ("regularization", "tolerance"):
        params[key] = positive_number(name, key, params[key], allow_zero=True)
    return params


class _Converged(Exception):
    """Raised by the epoch callback to end implicit's loop of epochs."""


def build_bpr(spec: dict, train: sp.spmatrix, seed: int) -> BPRModel:
    """Fit BPR with implicit's CPU implementation, seeded, on one thread.

    implicit runs up to ``iterations`` epochs; after each, its callback adds the epoch's
    training AUC and, once :func:`bpr_converged` says so, ends the loop (an exception
    out of the callback: the factors are those of the last epoch, and every epoch run
    is the same as in a fit without the rule, so a fit that never converges is the
    same model as before). Several threads would make it faster and irreproducible
    (implicit updates the shared factors without locks).

    Parameters
    ----------
    spec : dict
    train : scipy.sparse matrix
    seed : int

    Returns
    -------
    BPRModel

    Raises
    ------
    ValueError
        If the factors are not finite (a learning rate too large).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> X = sp.csr_matrix(np.eye(4)[[0, 1, 2, 3, 0, 1]])
    >>> model = build_bpr({"type": "bpr", "factors": 2, "iterations": 2}, X, seed=0)
    >>> model.scores([0]).shape, len(model.training_auc)
    ((1, 4), 2)
    """
    from threadpoolctl import threadpool_limits

    implicit_bpr = optional_import("implicit.cpu.bpr", "the BPR recommender")
    BayesianPersonalizedRanking = implicit_bpr.BayesianPersonalizedRanking

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
    X = binary_train(train)
    training_auc = []

    def after_epoch(epoch, elapsed, correct, skipped):  # noqa: ARG001 - implicit's signature
        drawn = X.nnz - skipped
        training_auc.append(correct / drawn if drawn > 0 else 0.0)
        if bpr_converged(training_auc, params["tolerance"]):
            raise _Converged

    with threadpool_limits(1):
        try:
            model.fit(X, show_progress=False, callback=after_epoch)
        except _Converged:
            pass
    user_factors = np.asarray(model.user_factors, dtype=np.float32)
    item_factors = np.asarray(model.item_factors, dtype=np.float32)
    if not (np.isfinite(user_factors).all() and np.isfinite(item_factors).all()):
        raise ValueError(
            f"{name}: BPR's factors are not finite after {len(training_auc)} epochs; "
            "lower its learning_rate"
        )
    fitted = BPRModel(user_factors, item_factors, name=name, hyperparameters=params)
    fitted.training_auc = tuple(training_auc)
    return fitted
