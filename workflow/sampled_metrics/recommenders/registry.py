"""The recommender types by name: build and check a recommender from its
config entry (``{"type": ..., **hyperparameters}``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import scipy.sparse as sp

from .baselines import (
    BPR_DEFAULTS,
    POPULARITY_DEFAULTS,
    build_bpr,
    build_popularity,
    validate_bpr,
    validate_popularity,
)
from .ease import EASE_DEFAULTS, build_ease, validate_ease
from .ials import IALS_DEFAULTS, build_ials, validate_ials
from .item_knn import ITEM_KNN_DEFAULTS, build_item_knn, validate_item_knn

if TYPE_CHECKING:
    from ..passes.scorer import Scorer

__all__ = [
    "PAPER_RECOMMENDERS",
    "fit_recommender",
    "hyperparameter_defaults",
    "recommender_types",
    "register_recommender",
    "validate_spec",
]

# The three recommenders of section 9: the hyperparameters not given here are
# the defaults of their type (IALS_DEFAULTS, ITEM_KNN_DEFAULTS).
PAPER_RECOMMENDERS = {
    "X": {"type": "ials", "name": "X"},
    "Y": {"type": "item_knn", "name": "Y", "q": 3.0},
    "Z": {"type": "item_knn", "name": "Z", "k_prime": 10},
}


@dataclass(frozen=True)
class _Type:
    build: Callable
    validate: Callable | None
    defaults: dict


_REGISTRY: dict[str, _Type] = {
    "ials": _Type(build_ials, validate_ials, IALS_DEFAULTS),
    "item_knn": _Type(build_item_knn, validate_item_knn, ITEM_KNN_DEFAULTS),
    "popularity": _Type(build_popularity, validate_popularity, POPULARITY_DEFAULTS),
    "ease": _Type(build_ease, validate_ease, EASE_DEFAULTS),
    "bpr": _Type(build_bpr, validate_bpr, BPR_DEFAULTS),
}


def register_recommender(
    type_name: str,
    builder: Callable,
    validate: Callable | None = None,
    defaults: dict | None = None,
) -> None:
    """Add a recommender type.

    ``builder(spec, train, seed)`` must return an object with
    ``scores(users) -> float32 array (len(users), n_items)`` and should raise
    ``ValueError`` naming any bad key of ``spec``; ``validate(spec)``, if given,
    checks a spec without training (used by :func:`validate_spec`);
    ``defaults`` are the hyperparameters a spec may leave out.
    """
    if not isinstance(type_name, str) or not type_name:
        raise ValueError("type_name must be a non-empty string")
    _REGISTRY[type_name] = _Type(builder, validate, dict(defaults or {}))


def hyperparameter_defaults(type_name: str) -> dict:
    """The hyperparameters a spec of this type may leave out, with their values."""
    return dict(_REGISTRY[type_name].defaults)


def recommender_types() -> list[str]:
    """The registered type names, sorted."""
    return sorted(_REGISTRY)


def validate_spec(spec: dict) -> dict:
    """Check a recommender spec without fitting anything.

    Returns the hyperparameters with defaults filled in and values normalized
    (for registered types without a validator: the spec itself). Raises
    ``ValueError`` naming the offending key.
    """
    if not isinstance(spec, dict):
        raise ValueError(f"recommender spec must be a dict, got {type(spec).__name__}")
    if "type" not in spec:
        raise ValueError("recommender spec needs the key 'type'")
    kind = spec["type"]
    if kind not in _REGISTRY:
        raise ValueError(
            f"unknown recommender 'type' {kind!r}; known: {', '.join(recommender_types())}"
        )
    validate = _REGISTRY[kind].validate
    return validate(spec) if validate is not None else dict(spec)


def fit_recommender(spec: dict, train: sp.spmatrix, seed: int = 0) -> Scorer:
    """Fit the recommender described by ``spec`` on ``train``.

    ``spec = {"type": "ials" | "item_knn" | <registered>, "name": optional, **hyperparameters}``;
    missing hyperparameters take the defaults (:data:`IALS_DEFAULTS`,
    :data:`ITEM_KNN_DEFAULTS`). The returned model has ``scores(users)`` and
    ``name``. Raises ``ValueError`` naming the offending key of ``spec``.
    """
    validate_spec(spec)
    model = _REGISTRY[spec["type"]].build(spec, train, seed)
    if not hasattr(model, "name"):
        model.name = str(spec.get("name", spec["type"]))
    return model
