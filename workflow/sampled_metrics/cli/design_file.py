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
     "seed": 7,
     "strata_chosen": [205, 20, 9, ...],
     "chosen_digest": "sha256:9f2c..."
    }

A sequential design (``plan --sequential``) adds a column ``wave`` (the wave, 1, 2, ...,
each user was chosen in; ``probability`` is then n_h / N_h of every wave so far) and a
key ``sequential``: the users ranked by each planned look (``totals``), the first wave's
share and the growth, the confidence, the spending function, the users of each wave
drawn (``wave_users``) and ``waves_digest``, the sha256 of the rows ``user,wave``.

``strata_chosen`` and ``chosen_digest`` pin the chosen users: each stratum's count, and
the sha256 of the chosen users' canonical rows (:func:`chosen_digest`). ``plan`` writes
both files (atomically, :class:`DesignRecord` the sidecar); ``correct --design`` reads
them back (:func:`read_design`) against the rank file: the same number of users, every
chosen user in it, the strata its sampled ranks give (:func:`design_strata` with the
recorded edges and cells: the design was drawn from this file), each probability n_h /
N_h of its stratum, and the chosen users the record pins (an edit of ``chosen.csv`` after
``plan`` wrote it is one error).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..estimation.decisions import Design, design_from_table, design_strata, design_table
from ..io.atomic import write_csv, write_text
from .errors import InputError
from .rank_file import RankFile, integers, read_table

__all__ = [
    "DESIGN_COLUMNS",
    "DesignFile",
    "DesignRecord",
    "DesignSettings",
    "chosen_digest",
    "design_record",
    "design_sidecar",
    "read_chosen_users",
    "read_design",
    "waves_digest",
    "write_design",
]

DESIGN_COLUMNS = ("user", "probability", "stratum")
WAVE_COLUMN = "wave"
SIDECAR_SUFFIX = ".design.json"
FORMAT_KEY, FORMAT = "sampled_metrics_design", 1
# The keys correct --design reads from the record, and what each holds.
RECORD_KEYS = {
    "users": "a count",
    "rank_columns": "a list of texts",
    "edges": "a list of counts",
    "cells": "a text",
    "strata_sizes": "a list of counts",
    "strata_chosen": "a list of counts",
    "chosen_digest": "a text",
}


# The keys of a sequential design's record, and what each holds.
SEQUENTIAL_KEYS = {
    "totals": "a list of counts",
    "wave_users": "a list of counts",
    "waves_digest": "a text",
    "spending": "a text",
}


def design_sidecar(path: str | Path) -> Path:
    """The sidecar of a design file: its name + ``.design.json``.

    Examples
    --------
    >>> str(design_sidecar("out/chosen.csv"))
    'out/chosen.csv.design.json'
    """
    path = Path(path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


def chosen_digest(
    users: Sequence[str] | np.ndarray, probability: np.ndarray, stratum: np.ndarray
) -> str:
    """The sha256 of the chosen users' canonical rows: ``user,probability,stratum`` per
    user, the user as text, the probability with every digit (``repr``), sorted by user
    (the rows' order in the file does not matter; any value does).

    Examples
    --------
    >>> a = chosen_digest(["u2", "u1"], np.array([0.5, 1.0]), np.array([0, 1]))
    >>> a == chosen_digest(["u1", "u2"], np.array([1.0, 0.5]), np.array([1, 0]))
    True
    >>> a == chosen_digest(["u1", "u2"], np.array([1.0, 0.25]), np.array([1, 0]))
    False
    """
    rows = sorted(zip(map(str, users), map(float, probability), map(int, stratum)))
    text = "".join(f"{user},{p!r},{h}\n" for user, p, h in rows)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def waves_digest(users: Sequence[str] | np.ndarray, waves: np.ndarray) -> str:
    """The sha256 of the rows ``user,wave``, sorted by user.

    Examples
    --------
    >>> waves_digest(["u2", "u1"], np.array([2, 1])) == waves_digest(["u1", "u2"], np.array([1, 2]))
    True
    """
    rows = sorted(zip(map(str, users), map(int, waves)))
    text = "".join(f"{user},{wave}\n" for user, wave in rows)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class DesignSettings:
    """What ``plan`` draws a design with: the settings of
    :func:`~sampled_metrics.estimation.decisions.draw_design` and the seed."""

    budget: float
    unit: str
    metric: str
    edges: tuple[int, ...]
    cells: str
    floor: int
    seed: int


@dataclass(frozen=True)
class DesignRecord:
    """A design's sidecar: what the design was drawn from and with, and what pins its
    chosen users (the module's docstring has the format; :meth:`to_json` its one form)."""

    rank_files: tuple[str, ...]
    rank_columns: tuple[str, ...]
    law: str
    settings: DesignSettings
    users: int
    strata_sizes: tuple[int, ...]
    strata_chosen: tuple[int, ...]
    chosen_digest: str
    sequential: dict | None = None

    def to_json(self) -> dict:
        """The sidecar's JSON object: the settings among the other keys, tuples as lists;
        ``sequential`` only for a sequential design."""
        fields = asdict(self)
        if fields["sequential"] is None:
            del fields["sequential"]
        settings = fields.pop("settings")
        drawn_from = {key: fields.pop(key) for key in ("rank_files", "rank_columns", "law")}
        flat = {**drawn_from, **settings, **fields}
        return {FORMAT_KEY: FORMAT, **{k: list(v) if isinstance(v, tuple) else v
                                       for k, v in flat.items()}}  # fmt: skip


def design_record(
    design: Design,
    user_ids: np.ndarray,
    drawn_from: RankFile,
    rank_files: tuple[str, ...],
    settings: DesignSettings,
    sequential: dict | None = None,
) -> DesignRecord:
    """The sidecar of ``design``, drawn with ``settings`` from the ranks ``drawn_from``
    (the files ``rank_files`` joined); ``sequential``, a sequential design's key."""
    _, probability, stratum = design_table(design)
    ids = np.asarray(user_ids)[design.chosen]
    return DesignRecord(
        rank_files=rank_files,
        rank_columns=tuple(drawn_from.evaluations),
        law=drawn_from.first.law,
        settings=settings,
        users=design.n_users,
        strata_sizes=tuple(design.stratum_sizes.tolist()),
        strata_chosen=tuple(design.stratum_chosen.tolist()),
        chosen_digest=chosen_digest(ids, probability, stratum),
        sequential=sequential,
    )


def write_design(
    path: str,
    design: Design,
    user_ids: np.ndarray,
    record: DesignRecord,
    waves: np.ndarray | None = None,
) -> None:
    """Write the chosen users (ids from ``user_ids``, one per user of the design) and
    the sidecar ``record`` (:func:`design_record` of the same design); ``waves``, each
    user's wave (0: not chosen) of a sequential design, as the column ``wave``."""
    rows, probability, stratum = design_table(design)
    frame = pd.DataFrame(
        {"user": np.asarray(user_ids)[rows], "probability": probability, "stratum": stratum}
    )
    if waves is not None:
        frame[WAVE_COLUMN] = waves[rows]
    if Path(path).is_dir():
        raise InputError("is a directory: --out names the design's csv file", path=path)
    try:
        # every digit: the stratum sizes n_h / pi_h come back exactly
        write_csv(frame, path, float_format="%.17g")
        write_text(json.dumps(record.to_json(), indent=1) + "\n", design_sidecar(path))
    except OSError as error:  # its message names the temporary file written first
        raise InputError(f"cannot write: {error.strerror or error}", path=path) from None


def read_chosen_users(path: str | Path) -> list[str]:
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
    table, what = read_table(path)
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
    fix = f"run sampled-metrics plan again to write {path.name} and it"
    for key, kind in RECORD_KEYS.items():
        if key not in meta:
            raise InputError(f"missing key {key!r}", path=sidecar, fix=fix)
        if not _is(meta[key], kind):
            raise InputError(f"{key} is {meta[key]!r}, not {kind}", path=sidecar, fix=fix)
    return meta


def _is(value: object, kind: str) -> bool:
    """Whether a record's value is of its kind (:data:`RECORD_KEYS`)."""
    if kind == "a count":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if kind == "a text":
        return isinstance(value, str)
    item = "a count" if kind == "a list of counts" else "a text"
    return isinstance(value, list) and all(_is(v, item) for v in value)


def _probabilities(table: pd.DataFrame, path: Path, what: str) -> np.ndarray:
    raw = table["probability"]
    text = raw.astype(str).str.strip() if not pd.api.types.is_numeric_dtype(raw) else raw
    values = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~((values > 0) & (values <= 1))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{path}: {what} {table.index[k]}: column probability: {str(raw.iloc[k]).strip()!r} "
            "is not a probability in (0, 1]"
        )
    return values


@dataclass(frozen=True)
class DesignFile:
    """A design read back (:func:`read_design`): the design (its user u is the rank
    file's row u) and the strata it was drawn with (``edges``, ``cells``); a sequential
    design's ``waves`` (each row's wave, 0: not chosen) and the sidecar (``record``)."""

    path: str
    design: Design
    edges: tuple[int, ...]
    cells: str
    waves: np.ndarray | None = None
    record: dict | None = None


def read_design(path: str | Path, ranks: RankFile) -> DesignFile:
    """The design of ``path`` (and its sidecar), checked against the rank file it was
    drawn from and against the record that pins its chosen users.

    Raises
    ------
    InputError
        One line naming the file and the line or column: a missing column or sidecar,
        a probability outside (0, 1], a user twice or not in the rank file, a rank file
        of another size, strata the rank file's sampled ranks do not give, or chosen
        users edited after ``plan`` wrote them.
    """
    path = Path(path)
    table, what = read_table(path)
    table.columns = [str(c).strip() for c in table.columns]
    if table.empty:
        raise InputError("no chosen user (only a header): not a design plan wrote",
                         path=path, fix="run sampled-metrics plan again")  # fmt: skip
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
            raise InputError(f"user {user} is not in {ranks.path}", path=path,
                             line=int(table.index[k]), row_word=what)  # fmt: skip
        if user in seen:
            raise InputError(f"user {user} is there twice", path=path,
                             line=int(table.index[k]), row_word=what)  # fmt: skip
        seen.add(user)
        rows[k] = row_of[user]
    probability = _probabilities(table, path, what)
    stratum = integers(table, "stratum", path, what)
    _check_strata(path, meta, ranks, rows, stratum, ids)
    _check_pinned(path, meta, table, ids, probability, stratum)
    try:
        design = design_from_table(rows, probability, stratum, n_users=users)
    except ValueError as error:
        raise InputError(f"{path}: {error}") from None
    waves = _waves(path, meta, table, what, ids, rows, users)
    return DesignFile(str(path), design, tuple(meta["edges"]), str(meta["cells"]), waves, meta)


def _waves(path: Path, meta: dict, table: pd.DataFrame, what: str, ids: np.ndarray,
           rows: np.ndarray, users: int) -> np.ndarray | None:  # fmt: skip
    """A sequential design's wave of every row (0: not chosen), checked against the
    record: the users of each wave and the digest of the rows ``user,wave``."""
    record = meta.get("sequential")
    if record is None:
        return None
    fix = "use the file plan wrote, or run sampled-metrics plan --sequential again"
    if WAVE_COLUMN not in table.columns:
        raise InputError(f"no column {WAVE_COLUMN!r}: its sidecar says it is a sequential "
                         "design", path=path, fix=fix)  # fmt: skip
    if not isinstance(record, dict) or not all(
        _is(record.get(key), kind) for key, kind in SEQUENTIAL_KEYS.items()
    ):
        raise InputError("its key 'sequential' is not a sequential design's record",
                         path=design_sidecar(path), fix=fix)  # fmt: skip
    wave = integers(table, WAVE_COLUMN, path, what)
    counts = np.bincount(wave, minlength=len(record["wave_users"]) + 1)[1:]
    if (
        np.any(wave < 1)
        or counts.size != len(record["wave_users"])
        or np.any(counts != record["wave_users"])
    ):
        raise InputError(f"edited after plan wrote it: its waves hold {counts.tolist()} users, "
                         f"the design drew {record['wave_users']}", path=path, fix=fix)  # fmt: skip
    if waves_digest(ids, wave) != record["waves_digest"]:
        raise InputError("edited after plan wrote it: its users' waves are not the ones plan "
                         "drew (their digest differs)", path=path, fix=fix)  # fmt: skip
    waves = np.zeros(users, dtype=np.int64)
    waves[rows] = wave
    return waves


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


def _check_pinned(path: Path, meta: dict, table: pd.DataFrame, ids: np.ndarray,
                  probability: np.ndarray, stratum: np.ndarray) -> None:  # fmt: skip
    """The chosen users are those ``plan`` wrote: each stratum's count, each probability
    n_h / N_h of its stratum, and the digest of their rows (:func:`chosen_digest`)."""
    edited = f"edited after plan wrote it ({design_sidecar(path).name} pins its users)"
    fix = "use the file plan wrote, or run sampled-metrics plan again"
    sizes = np.asarray(meta["strata_sizes"], dtype=np.int64)
    recorded = np.asarray(meta["strata_chosen"], dtype=np.int64)
    if recorded.shape != sizes.shape or np.any(recorded > sizes):
        raise InputError("strata_chosen does not fit strata_sizes (a count per stratum, "
                         "at most its size)", path=design_sidecar(path), fix=fix)  # fmt: skip
    if np.any(stratum >= sizes.size):
        k = int(np.flatnonzero(stratum >= sizes.size)[0])
        raise InputError(f"stratum {stratum[k]} is not one of the design's 0..{sizes.size - 1}",
                         path=path, line=int(table.index[k]), fix=fix)  # fmt: skip
    counts = np.bincount(stratum, minlength=sizes.size)
    if np.any(counts != recorded):
        h = int(np.flatnonzero(counts != recorded)[0])
        raise InputError(f"{edited}: stratum {h} has {counts[h]} chosen users, the design "
                         f"chose {recorded[h]}", path=path, fix=fix)  # fmt: skip
    expected = recorded[stratum] / np.maximum(sizes[stratum], 1)
    wrong = np.flatnonzero(np.abs(probability - expected) > 1e-12 * expected)
    if wrong.size:
        k, h = int(wrong[0]), int(stratum[wrong[0]])
        raise InputError(f"{edited}: probability {float(probability[k]):.17g} of user "
                         f"{ids[k]} is not n_h / N_h = {recorded[h]} / {sizes[h]} of its "
                         f"stratum {h}",
                         path=path, line=int(table.index[k]), fix=fix)  # fmt: skip
    if chosen_digest(ids, probability, stratum) != meta["chosen_digest"]:
        raise InputError(f"{edited}: its users are not the ones plan chose (their digest "
                         "differs)", path=path, fix=fix)  # fmt: skip
