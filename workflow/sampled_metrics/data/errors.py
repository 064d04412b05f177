"""The one error of the data layer, and the checks every reader shares."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd


class DataError(ValueError):
    """Bad input data: a missing, corrupt or malformed file, or a failed fact."""


# The columns of an events frame; ``rating`` is optional.
EVENT_COLUMNS = ("user", "item", "time")


def require_file(path: Path) -> None:
    """Raise DataError naming ``path`` unless it is a file."""
    if not path.is_file():
        raise DataError(f"{path}: file not found")


def require_columns(df: pd.DataFrame, names: Iterable[str], what: str) -> None:
    """Raise DataError naming ``what`` unless ``df`` has every column of ``names``."""
    absent = [c for c in names if c not in df.columns]
    if absent:
        raise DataError(f"{what}: frame lacks column(s) {absent} (has {list(df.columns)})")
