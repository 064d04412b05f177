"""The paper's published numbers (Krichene & Rendle, KDD 2020), for comparison only.

They live in one file, ``published.csv`` (package data beside this module, described
in ``published.md``), one number a row: ``source`` (table1..table4, figure5, figure6),
the keys that apply (``recommender``, ``pair``, ``metric``, ``method``), the
``statistic`` (mean, std, value, correct, ...) and its ``value``. Tables, claims, benchmarks and
tests read it through :func:`published`; nothing computes a result from it.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = ["PAPER_REPETITIONS", "PUBLISHED_FILE", "published"]

PUBLISHED_FILE = files(__package__) / "published.csv"
_KEYS = ("recommender", "pair", "metric", "method")
# Repetitions behind the paper's means and stds: Table 2 "repeated 1000 times"
# (section 4.2), Tables 3 and 4 "repeated the sampling experiment 100 times" (footnote 5).
PAPER_REPETITIONS = {"table2": 1000, "table3": 100, "table4": 100}


def published(source: str, path: Traversable | str | Path = PUBLISHED_FILE) -> pd.DataFrame:
    """The numbers of one ``source`` ("table3", "figure6", ...) as a frame: the
    keys that source uses, then one column per statistic (NaN where the paper
    gives none, e.g. the std of an exact value).

    Examples
    --------
    >>> table3 = published("table3").set_index(["recommender", "metric", "method"])
    >>> float(table3.loc[("X", "recall@10", "exact"), "mean"])
    7.6
    """
    frame = pd.read_csv(
        path, dtype={key: str for key in _KEYS}, keep_default_na=False, na_values={"value": [""]}
    )
    rows = frame[frame["source"] == source]
    if rows.empty:
        known = ", ".join(dict.fromkeys(frame["source"]))
        raise ValueError(f"{path}: no numbers for {source!r} (sources: {known})")
    keys = [key for key in _KEYS if (rows[key] != "").any()]
    wide = rows.pivot_table(index=keys, columns="statistic", values="value", sort=False)
    wide.columns.name = None
    return wide.reset_index()
