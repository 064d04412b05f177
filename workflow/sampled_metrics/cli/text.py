"""The text the sub-commands print: numbers, aligned tables, the heading that says how
a rank file was read. Formatting only: what is printed comes from the typed results
(:mod:`.results`) and the resolved inputs (:mod:`.inputs`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .rank_file import RankFile
from .reading import Reading

__all__ = ["heading", "number", "p_value", "span", "table"]


def number(value: float | None, digits: int = 4) -> str:
    """``value`` with ``digits`` decimals; "nan" for None or a non-finite value.

    Examples
    --------
    >>> number(0.123456), number(None), number(float("inf"))
    ('0.1235', 'nan', 'nan')
    """
    return "nan" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def p_value(value: float | None) -> str:
    """A p-value with two significant digits; "nan" for None."""
    return "nan" if value is None else f"{value:.2g}"


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> str:
    """An aligned table: the columns of ``right`` flush right, the others left.

    Examples
    --------
    >>> print(table(["model", "value"], [["A", "0.5"], ["long", "10.25"]], {1}))
    model  value
    A        0.5
    long   10.25
    """
    lines = [list(header), *map(list, rows)]
    widths = [max(len(row[k]) for row in lines) for k in range(len(lines[0]))]
    return "\n".join(
        "  ".join(
            cell.rjust(width) if k in right else cell.ljust(width)
            for k, (cell, width) in enumerate(zip(row, widths))
        ).rstrip()
        for row in lines
    )


def span(values: np.ndarray) -> str:
    """``low..high`` of the values, or the one value they all have."""
    low, high = int(values.min()), int(values.max())
    return f"{low}" if low == high else f"{low}..{high}"


def heading(how: Reading, ranks: RankFile) -> str:
    """The first line of a report: the file, its rows and users, and how it was read."""
    data = ranks.first
    users = f", {len(set(ranks.users))} users" if ranks.users is not None else ""
    n = f"n = {span(data.n)} ({ranks.n_source})"
    start = f"{ranks.path}: {data.n_users} rows{users}; "
    sidecar = f" ({Path(how.sidecar).name})" if how.sidecar else ""
    if how.full:
        return f"{start}full ranking{sidecar}, {n}"
    if sidecar:
        start += f"protocol {how.protocol}{sidecar}, "
    return f"{start}m = {span(data.m)} ({ranks.m_source}), {n}, {how.law} law"
