"""Known numbers of a data set or a split, asserted when it is loaded."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pandas as pd

from .errors import DataError, require_columns
from .split import Split

__all__ = ["check_facts"]


def _frame_facts(df: pd.DataFrame) -> dict[str, Callable[[], int]]:
    sizes = lambda: df.groupby("user", sort=False).size()  # noqa: E731
    return {
        "n_users": lambda: df["user"].nunique(),
        "n_items": lambda: df["item"].nunique(),
        "n_events": lambda: len(df),
        "min_events_per_user": lambda: sizes().min(),
        "max_events_per_user": lambda: sizes().max(),
        "n_duplicate_pairs": lambda: df.duplicated(["user", "item"]).sum(),
    }


def _split_facts(split: Split) -> dict[str, Callable[[], int]]:
    per_user = lambda: np.diff(split.train.indptr) + 1  # noqa: E731
    return {
        "n_users": lambda: split.n_users,
        "n_items": lambda: split.n_items,
        "n_events": lambda: split.train.nnz + split.n_users,
        "n_train": lambda: split.train.nnz,
        "n_test": lambda: len(split.test_items),
        "min_events_per_user": lambda: per_user().min(),
        "max_events_per_user": lambda: per_user().max(),
        "n_skipped_users": lambda: split.n_skipped_users,
        "unseen_test_items": split.unseen_test_items,
    }


def check_facts(
    df_or_split: pd.DataFrame | Split, facts: Mapping[str, int], source: str
) -> dict[str, int]:
    """Assert known numbers of an events frame or a :class:`Split`.

    Frame facts: ``n_users``, ``n_items``, ``n_events``,
    ``min_events_per_user``, ``max_events_per_user``, ``n_duplicate_pairs``.
    Split facts: the same but ``n_duplicate_pairs``, plus ``n_train``,
    ``n_test``, ``n_skipped_users``, ``unseen_test_items`` (a split's events
    per user count the held-out one). An unknown fact, or any mismatch,
    raises :class:`DataError` naming ``source``, each failed fact, expected
    and actual. Returns the actual values of the checked facts.
    """
    if isinstance(df_or_split, Split):
        known = _split_facts(df_or_split)
    else:
        require_columns(df_or_split, ("user", "item"), source)
        known = _frame_facts(df_or_split)
    unknown = [name for name in facts if name not in known]
    if unknown:
        kind = type(df_or_split).__name__
        raise DataError(f"{source}: unknown fact(s) {unknown} for a {kind}; known: {sorted(known)}")
    actual = {name: int(known[name]()) for name in facts}
    wrong = [
        f"{name}: expected {facts[name]}, got {actual[name]}"
        for name in facts
        if actual[name] != facts[name]
    ]
    if wrong:
        raise DataError(f"{source}: facts do not hold: {'; '.join(wrong)}")
    return actual
