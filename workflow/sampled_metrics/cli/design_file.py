"""A two-phase design as files: ``chosen.csv``, the users to rank exactly (``user``,
``probability``, ``stratum``: :func:`~sampled_metrics.estimation.decisions.design_table`'s
columns, one row per chosen user), and its sidecar ``chosen.csv.design.json``, what the
design was drawn from and with::

    {
     "sampled_metrics_design": 1,
     "rank_files": ["ranks.csv"],
     "rank_columns": ["A", "B"],
     "users": 3000,
     "strata_sizes": [205, 71, 37, ...],
     "edges": [1, 2, 3, 5, 10],
     "cells": "min",
     "metric": "recall@10",
     "budget": 0.25,
     "unit": "users",
     "floor": 5,
     "seed": 7
    }

``plan`` writes both (atomically); ``correct --design`` reads them back
(:func:`read_design`) against the rank file: the same number of users, every chosen user
in it, and the strata its sampled ranks give (:func:`design_strata` with the recorded
edges and cells): the design was drawn from this file.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..estimation.decisions import Design, design_from_table, design_strata, design_table
from ..io.atomic import write_csv, write_text
from .rank_file import InputError, RankFile, _integers, _read_table

__all__ = ["DESIGN_COLUMNS", "design_sidecar", "read_chosen_users", "read_design", "write_design"]

DESIGN_COLUMNS = ("user", "probability", "stratum")
SIDECAR_SUFFIX = ".design.json"
FORMAT_KEY, FORMAT = "sampled_metrics_design", 1


def design_sidecar(path) -> Path:
    """The sidecar of a design file: its name + ``.design.json``.

    Examples
    --------
    >>> str(design_sidecar("out/chosen.csv"))
    'out/chosen.csv.design.json'
    """
    path = Path(path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


def write_design(path, design: Design, user_ids, record: dict) -> None:
    """Write the chosen users (ids from ``user_ids``, one per user of the design) and
    the sidecar (``record`` with the population size and the strata sizes added)."""
    rows, probability, stratum = design_table(design)
    frame = pd.DataFrame(
        {"user": np.asarray(user_ids)[rows], "probability": probability, "stratum": stratum}
    )
    meta = {FORMAT_KEY: FORMAT, **record, "users": design.n_users}
    meta["strata_sizes"] = design.stratum_sizes.tolist()
    # every digit: the stratum sizes n_h / pi_h come back exactly
    write_csv(frame, path, float_format="%.17g")
    write_text(json.dumps(meta, indent=1) + "\n", design_sidecar(path))


def read_chosen_users(path) -> list[str]:
    """The users of a design file's column ``user`` (``--users chosen.csv`` of the
    adapters' commands, which rank exactly only them), in the file's order.

    Raises
    ------
    InputError
        One line naming the file: no such file, no column ``user``, no row, a user twice.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "chosen.csv"
    >>> _ = path.write_text("user,probability,stratum\\nu7,0.5,0\\n u2 ,1,1\\n")
    >>> read_chosen_users(path)
    ['u7', 'u2']
    >>> _ = path.write_text("user\\nu7\\nu7\\n")
    >>> try:
    ...     read_chosen_users(path)
    ... except InputError as error:
    ...     print(str(error).split("chosen.csv: ")[1])
    line 3: user u7 is there twice
    """
    path = Path(path)
    table, what = _read_table(path, None)
    table.columns = [str(c).strip() for c in table.columns]
    if "user" not in table.columns:
        have = ", ".join(map(str, table.columns))
        raise InputError(f"{path}: no column 'user'; the file has: {have}")
    users = table["user"].astype(str).str.strip()
    if users.empty:
        raise InputError(f"{path}: no user: nothing to rank")
    twice = users.duplicated()
    if twice.any():
        k = int(np.flatnonzero(twice.to_numpy())[0])
        raise InputError(f"{path}: {what} {table.index[k]}: user {users.iloc[k]} is there twice")
    return users.tolist()


def _sidecar(path: Path) -> dict:
    sidecar = design_sidecar(path)
    if not sidecar.exists():
        raise InputError(
            f"{sidecar}: no such file (sampled-metrics plan writes it beside {path.name})"
        )
    try:
        meta = json.loads(sidecar.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InputError(f"{sidecar}: not JSON: {' '.join(str(error).split())}") from None
    if not isinstance(meta, dict) or meta.get(FORMAT_KEY) != FORMAT:
        raise InputError(f"{sidecar}: not a design's sidecar (no {FORMAT_KEY}: {FORMAT})")
    missing = [k for k in ("users", "rank_columns", "edges", "cells") if k not in meta]
    if missing:
        raise InputError(f"{sidecar}: missing key {missing[0]!r}")
    return meta


def _probabilities(table: pd.DataFrame, where: str, what: str) -> np.ndarray:
    raw = table["probability"]
    text = raw.astype(str).str.strip() if not pd.api.types.is_numeric_dtype(raw) else raw
    values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~((values > 0) & (values <= 1))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{where}{what} {table.index[k]}: column probability: {str(raw.iloc[k]).strip()!r} "
            "is not a probability in (0, 1]"
        )
    return values


def read_design(path, ranks: RankFile) -> Design:
    """The design of ``path`` (and its sidecar), checked against the rank file it was
    drawn from: the design's user u is the rank file's row u.

    Raises
    ------
    InputError
        One line naming the file and the line or column: a missing column or sidecar,
        a probability outside (0, 1], a user twice or not in the rank file, a rank file
        of another size, or strata the rank file's sampled ranks do not give.
    """
    path = Path(path)
    table, what = _read_table(path, None)
    table.columns = [str(c).strip() for c in table.columns]
    where = f"{path}: "
    for column in DESIGN_COLUMNS:
        if column not in table.columns:
            have = ", ".join(map(str, table.columns))
            raise InputError(f"{path}: no column {column!r}; the file has: {have}")
    meta = _sidecar(path)
    users = len(ranks.first.ranks)
    if meta["users"] != users:
        raise InputError(
            f"{design_sidecar(path)}: drawn from {meta['users']} users, "
            f"{ranks.path} has {users} rows"
        )
    if ranks.users is None:
        raise InputError(f"{ranks.path}: no user column: the design names its users")
    row_of = {user: row for row, user in enumerate(ranks.users)}
    ids = table["user"].astype(str).str.strip().to_numpy()
    rows = np.empty(ids.size, dtype=np.int64)
    seen = set()
    for k, user in enumerate(ids):
        if user not in row_of:
            raise InputError(f"{where}{what} {table.index[k]}: user {user} is not in {ranks.path}")
        if user in seen:
            raise InputError(f"{where}{what} {table.index[k]}: user {user} is there twice")
        seen.add(user)
        rows[k] = row_of[user]
    probability = _probabilities(table, where, what)
    stratum = _integers(table, "stratum", where, what)
    _check_strata(path, meta, ranks, rows, stratum, ids)
    try:
        return design_from_table(rows, probability, stratum, n_users=users)
    except ValueError as error:
        raise InputError(f"{path}: {error}") from None


def _check_strata(path: Path, meta: dict, ranks: RankFile, rows, stratum, ids) -> None:
    """The strata the rank file's sampled ranks give are the design's: the same file."""
    columns = list(meta["rank_columns"])
    missing = [c for c in columns if c not in ranks.evaluations]
    if missing:
        raise InputError(
            f"{design_sidecar(path)}: the design was drawn from rank columns "
            f"{', '.join(columns)}; read {ranks.path} with --rank-column {missing[0]}"
        )
    sampled = np.stack([ranks.evaluations[c].ranks for c in columns])
    try:
        strata, count = design_strata(sampled, edges=tuple(meta["edges"]), cells=meta["cells"])
    except ValueError as error:
        raise InputError(f"{design_sidecar(path)}: {error}") from None
    sizes = np.bincount(strata, minlength=count)
    recorded = np.asarray(meta.get("strata_sizes", sizes), dtype=np.int64)
    if recorded.shape != sizes.shape or np.any(sizes != recorded):
        raise InputError(
            f"{path}: the sampled ranks of {ranks.path} give strata of {sizes.tolist()} "
            f"users, the design's were {recorded.tolist()}: not the file it was drawn from"
        )
    wrong = np.flatnonzero(strata[rows] != stratum)
    if wrong.size:
        k = wrong[0]
        raise InputError(
            f"{path}: user {ids[k]} is in stratum {stratum[k]}, but the sampled ranks of "
            f"{ranks.path} put it in {strata[rows[k]]}: not the file the design was drawn from"
        )
