"""Checks shared by every recommender type: the training matrix and the
hyperparameters of a spec, each bad value named in one ``ValueError``."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import scipy.sparse as sp

META_KEYS = ("type", "name")


def binary_train(train: sp.spmatrix) -> sp.csr_matrix:
    if not sp.issparse(train):
        raise ValueError("train must be a scipy.sparse matrix (n_users x n_items)")
    X = sp.csr_matrix(train, copy=True)
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    X.data = np.ones_like(X.data, dtype=np.float32)  # binary, as in the paper
    return X.astype(np.float32)


def positive_number(
    spec_name: str, key: str, value: Any, *, integer: bool = False, allow_zero: bool = False
) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if ok:
        ok = math.isfinite(float(value)) and (value >= 0 if allow_zero else value > 0)
    if ok and integer:
        ok = float(value) == int(value)
    if not ok:
        kind = "integer" if integer else "number"
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(
            f"{spec_name}: hyperparameter {key!r} must be a finite {kind} {bound}, got {value!r}"
        )
    return int(value) if integer else float(value)


def neighbourhood_size(spec_name: str, key: str, value: Any) -> int | None:
    """None, inf or the strings 'inf'/'none' mean no cut; otherwise an integer >= 1."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("inf", "none")):
        return None
    if isinstance(value, (float, np.floating)) and math.isinf(value) and value > 0:
        return None
    return int(positive_number(spec_name, key, value, integer=True))


def choice(spec_name: str, key: str, value: Any, allowed: Iterable[str]) -> str:
    if isinstance(value, str) and value.lower() in allowed:
        return value.lower()
    raise ValueError(
        f"{spec_name}: hyperparameter {key!r} must be one of {list(allowed)}, got {value!r}"
    )


def boolean(spec_name: str, key: str, value: Any) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{spec_name}: hyperparameter {key!r} must be true or false, got {value!r}")


def hyperparameters(spec: dict, defaults: dict) -> tuple[str, dict]:
    name = str(spec.get("name", spec["type"]))
    unknown = [k for k in spec if k not in defaults and k not in META_KEYS]
    if unknown:
        raise ValueError(
            f"{name}: unknown hyperparameter {unknown[0]!r} for type "
            f"{spec['type']!r}; known: {', '.join(sorted(defaults))}"
        )
    params = dict(defaults)
    params.update({k: v for k, v in spec.items() if k not in META_KEYS})
    return name, params
