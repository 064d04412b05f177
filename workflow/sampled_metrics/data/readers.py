"""Raw files -> events frames (``user``, ``item``, ``time``, optional ``rating``),
and binarization into implicit interactions.

* :func:`load_movielens_dat`, :func:`load_delimited`  one loader per format
* :func:`binarize`  ratings -> one interaction per (user, item)
* :func:`load_events`  a data set of config.yaml, loaded and binarized (or
  generated, ``format: synthetic``)

Every problem with the input raises :class:`DataError` with one message that
names the file (and the line where it applies).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import re
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from ..atomic import CORRUPT_FILE_ERRORS
from .errors import EVENT_COLUMNS, DataError, require_columns, require_file
from .synthetic import SYNTHETIC_KEYS, synthetic_events

__all__ = ["binarize", "load_delimited", "load_events", "load_movielens_dat"]


# --------------------------------------------------------------------------
# Opening files (plain, .gz, member of a .zip)
# --------------------------------------------------------------------------


def _zip_member(zf: zipfile.ZipFile, path: Path, member: str | None, suffix: str) -> str:
    """The requested member, or the single member whose name ends with suffix."""
    names = [n for n in zf.namelist() if not n.endswith("/")]
    if member is not None:
        if member not in names:
            raise DataError(f"{path}: no member {member!r} in the archive (members: {names})")
        return member
    matches = [n for n in names if n.endswith(suffix)]
    if len(matches) != 1:
        raise DataError(
            f"{path}: expected exactly one member ending with "
            f"{suffix!r}, found {matches}; pass member="
        )
    return matches[0]


@contextlib.contextmanager
def _open_binary(path: Path, member: str | None, suffix: str = "") -> Iterator[IO[bytes]]:
    """Open a plain file, a .gz file, or a member of a .zip file for reading."""
    require_file(path)
    if member is not None or path.suffix.lower() == ".zip":
        try:
            zf = zipfile.ZipFile(path)
        except CORRUPT_FILE_ERRORS as e:
            raise DataError(f"{path}: not a readable zip archive ({e})") from e
        with zf, zf.open(_zip_member(zf, path, member, suffix)) as f:
            yield f
    elif path.suffix.lower() == ".gz":
        with gzip.open(path, "rb") as f:
            yield f
    else:
        with open(path, "rb") as f:
            yield f


def _read_bytes(path: Path, member: str | None, suffix: str) -> bytes:
    try:
        with _open_binary(path, member, suffix) as f:
            return f.read()
    except DataError:
        raise
    except CORRUPT_FILE_ERRORS as e:
        raise DataError(f"{path}: cannot read, corrupt or truncated ({e})") from e


# --------------------------------------------------------------------------
# MovieLens ratings.dat
# --------------------------------------------------------------------------

_DAT_COLUMNS = ["user", "item", "rating", "time"]
_INT = re.compile(r"[+-]?\d+")


def load_movielens_dat(path, member: str | None = None) -> pd.DataFrame:
    """Load a MovieLens ``user::item::rating::timestamp`` ratings file.

    ``path`` is a plain ``ratings.dat`` or a ``.zip`` archive; in an archive,
    ``member`` is the path inside it (default: the single member whose name
    ends with ``ratings.dat``, e.g. ``ml-1m/ratings.dat``).

    Returns a frame with integer ``user``, ``item``, ``time`` (the timestamp)
    and float ``rating``, one row per line in file order. Empty lines are
    skipped. A line with a wrong field count or a non-integer id or timestamp
    raises :class:`DataError` naming the file and the 1-based line number.
    """
    path = Path(path)
    label = f"{path}:{member}" if member else str(path)
    text = _read_bytes(path, member, "ratings.dat").decode("latin-1")
    if not text.strip():
        raise DataError(f"{label}: empty file, no ratings")
    try:
        df = pd.read_csv(
            io.StringIO(text.replace("::", "\t")),
            sep="\t",
            header=None,
            dtype={0: "int64", 1: "int64", 2: "float64", 3: "int64"},
        )
    except (ValueError, pd.errors.ParserError) as e:
        _raise_first_bad_dat_line(label, text)
        raise DataError(f"{label}: malformed ratings file ({e})") from e
    if df.shape[1] != 4:
        _raise_first_bad_dat_line(label, text)
        raise DataError(f"{label}: expected 4 '::'-separated fields, found {df.shape[1]}")
    if not np.isfinite(df[2].to_numpy()).all():  # an empty, nan or inf rating
        _raise_first_bad_dat_line(label, text)
    df.columns = _DAT_COLUMNS
    return df[["user", "item", "time", "rating"]]


def _raise_first_bad_dat_line(label: str, text: str) -> None:
    """Raise DataError for the first malformed line of a ratings.dat text."""
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if line:
            problem = _dat_line_problem(line)
            if problem:
                raise DataError(f"{label}, line {number}: {problem}: {line!r}")


def _dat_line_problem(line: str) -> str | None:
    fields = line.split("::")
    if len(fields) != 4:
        return f"expected 4 '::'-separated fields, found {len(fields)}"
    for name, value in zip(_DAT_COLUMNS, fields):
        if name == "rating":
            try:
                finite = np.isfinite(float(value))
            except ValueError:
                return f"rating {value!r} is not a number"
            if not finite:
                return f"rating {value!r} is not a finite number"
        elif not _INT.fullmatch(value):
            return f"{name} {value!r} is not an integer"
    return None


# --------------------------------------------------------------------------
# Delimited files (csv, tsv, optionally .gz or a zip member)
# --------------------------------------------------------------------------

_OPTIONAL = ("rating",)


def load_delimited(
    path,
    *,
    sep: str = ",",
    header: bool = True,
    columns: Mapping[str, str | int],
    member: str | None = None,
) -> pd.DataFrame:
    """Load a delimited events file into a frame with ``user``, ``item``, ``time``.

    ``columns`` maps ``user``, ``item``, ``time`` (and optionally ``rating``)
    to the file's column names when ``header`` is true, or to 0-based column
    indices otherwise. ``path`` may end in ``.gz`` (gzip) or ``.zip`` (then
    ``member`` names the file inside; it defaults to the single member).

    Ids keep their file values (ints when numeric, else strings); ``time`` and
    ``rating`` must be numeric. Only the empty field counts as missing. A
    missing column, a missing value, a non-numeric time or rating, or a line
    with too many fields raises :class:`DataError` naming the file (and the
    1-based line; line numbers assume one record per line).
    """
    path = Path(path)
    label = f"{path}:{member}" if member else str(path)
    keys = _check_column_spec(columns, header, label)
    file_columns = _file_columns(path, member, sep, header, label)
    missing = [f"{k}={columns[k]!r}" for k in keys if columns[k] not in file_columns]
    if missing:
        shown = list(file_columns) if header else f"{len(file_columns)} columns"
        raise DataError(
            f"{label}: column(s) {', '.join(missing)} not in the file (file has {shown})"
        )
    raw = _read_table(path, member, sep, header, [columns[k] for k in keys], label)
    df = pd.DataFrame({k: raw[columns[k]].to_numpy() for k in keys})
    first_line = 2 if header else 1
    _check_no_missing(df, label, first_line)
    for k in ("time", "rating"):
        if k in df:
            df[k] = _numeric_column(df[k], k, label, first_line)
    for k in ("user", "item"):
        df[k] = _ints_if_integral(df[k])
    return df


def _check_column_spec(columns: Mapping, header: bool, label: str) -> list[str]:
    unknown = set(columns) - set(EVENT_COLUMNS) - set(_OPTIONAL)
    absent = [k for k in EVENT_COLUMNS if k not in columns]
    if unknown or absent:
        raise DataError(
            f"{label}: columns= must map {EVENT_COLUMNS} (and optionally "
            f"'rating'); unknown {sorted(unknown)}, missing {absent}"
        )
    wanted = str if header else int
    bad = {k: v for k, v in columns.items() if not isinstance(v, wanted) or isinstance(v, bool)}
    if bad:
        kind = "column names (header=True)" if header else "0-based indices (header=False)"
        raise DataError(f"{label}: columns= values must be {kind}, got {bad}")
    return [k for k in (*EVENT_COLUMNS, *_OPTIONAL) if k in columns]


def _file_columns(path: Path, member, sep: str, header: bool, label: str) -> list:
    """The header names, or range(number of fields of the first line)."""
    try:
        with _open_binary(path, member) as f:
            first = pd.read_csv(
                f, sep=sep, header=0 if header else None, nrows=0 if header else 1, dtype=str
            )
    except pd.errors.EmptyDataError as e:
        raise DataError(f"{label}: empty file") from e
    except DataError:
        raise
    except (*CORRUPT_FILE_ERRORS, pd.errors.ParserError) as e:
        raise DataError(f"{label}: cannot read ({e})") from e
    return list(first.columns)


def _read_table(
    path: Path, member, sep: str, header: bool, usecols: list, label: str
) -> pd.DataFrame:
    try:
        with _open_binary(path, member) as f:
            raw = pd.read_csv(
                f,
                sep=sep,
                header=0 if header else None,
                usecols=list(dict.fromkeys(usecols)),
                skip_blank_lines=False,
                keep_default_na=False,
                na_values=[""],
                low_memory=False,
            )
    except DataError:
        raise
    except (*CORRUPT_FILE_ERRORS, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        raise DataError(f"{label}: cannot read ({e})") from e
    if raw.empty:
        raise DataError(f"{label}: no data rows")
    return raw


def _check_no_missing(df: pd.DataFrame, label: str, first_line: int) -> None:
    missing = df.isna()
    if missing.to_numpy().any():
        row = int(np.flatnonzero(missing.any(axis=1).to_numpy())[0])
        names = [c for c in df.columns if missing[c].iat[row]]
        raise DataError(f"{label}, line {row + first_line}: missing value in column(s) {names}")


def _numeric_column(values: pd.Series, name: str, label: str, first_line: int) -> pd.Series:
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values
    numbers = pd.to_numeric(values, errors="coerce")
    bad = np.flatnonzero(numbers.isna().to_numpy())
    if len(bad):
        row = int(bad[0])
        raise DataError(
            f"{label}, line {row + first_line}: {name} {values.iat[row]!r} is not a number"
        )
    return numbers


def _ints_if_integral(values: pd.Series) -> pd.Series:
    """Float ids such as 3.0 become int64; anything else is left as is."""
    if pd.api.types.is_float_dtype(values):
        as_int = values.astype("int64")
        if (as_int == values).all():
            return as_int
    return values


# --------------------------------------------------------------------------
# Binarization
# --------------------------------------------------------------------------


def binarize(df: pd.DataFrame, threshold: float | None = None) -> pd.DataFrame:
    """Turn events into implicit interactions, one row per (user, item).

    With ``threshold`` None every row is an interaction. With a threshold only
    rows with ``rating >= threshold`` are kept; a threshold on a frame without
    a ``rating`` column raises :class:`DataError` (it cannot be applied).
    For a repeated (user, item) pair the earliest event is kept (smallest
    ``time``; equal times are broken by row order). Returns ``user``,
    ``item``, ``time`` with a fresh index, the kept rows in input order.
    """
    require_columns(df, EVENT_COLUMNS, "binarize")
    if threshold is not None:
        require_columns(df, ["rating"], f"binarize(threshold={threshold})")
        df = df[df["rating"].to_numpy() >= threshold]
    events = df[list(EVENT_COLUMNS)].reset_index(drop=True)
    by_time = events.sort_values("time", kind="stable")
    first = by_time.drop_duplicates(["user", "item"], keep="first")
    return first.sort_index().reset_index(drop=True)


# --------------------------------------------------------------------------
# A data set as configured
# --------------------------------------------------------------------------


def load_events(path, entry: Mapping) -> pd.DataFrame:
    """Load and binarize the events of one data set of config.yaml.

    ``entry`` is a validated entry of ``datasets`` (``sampled_metrics.config``
    fills its defaults): ``format`` picks the loader, ``movielens_dat`` (with
    ``member`` inside a zip) or ``delimited`` (``sep``, ``header``, ``columns``,
    ``member``); ``binarize_threshold`` is passed to :func:`binarize`. A
    ``synthetic`` entry reads no file (``path`` is ignored, may be None): its
    events are generated by :func:`~sampled_metrics.data.synthetic.synthetic_events`
    from the entry's keys (``SYNTHETIC_KEYS``), already one per (user, item).
    """
    fmt = entry["format"]
    if fmt == "synthetic":
        return synthetic_events(**{key: entry[key] for key in SYNTHETIC_KEYS})
    if fmt == "movielens_dat":
        events = load_movielens_dat(path, member=entry["member"])
    elif fmt == "delimited":
        events = load_delimited(
            path,
            sep=entry["sep"],
            header=entry["header"],
            columns=entry["columns"],
            member=entry["member"],
        )
    else:
        raise DataError(f"{path}: unknown format {fmt!r} (movielens_dat, delimited or synthetic)")
    return binarize(events, entry["binarize_threshold"])
