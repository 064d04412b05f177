"""One loader per raw file format -> events frame (``user``, ``item``, ``time``,
optional ``rating``).

* :func:`load_movielens_dat`  MovieLens ``user::item::rating::timestamp`` files
* :func:`load_delimited`      csv, tsv (optionally .gz or a zip member)

Ids keep their file text (``_text_ids``). Every problem with the input raises
:class:`~sampled_metrics.data.errors.DataError` with one message that names the
file (and the line where it applies); running out of memory while reading too
(:mod:`.compressed`: the memory needed and available).
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..io.atomic import CORRUPT_FILE_ERRORS
from .compressed import _open_binary, _read_bytes, _within_memory
from .errors import EVENT_COLUMNS, DataError

__all__ = [
    "load_delimited",
    "load_movielens_dat",
]


# --------------------------------------------------------------------------
# MovieLens ratings.dat
# --------------------------------------------------------------------------

_DAT_COLUMNS = ["user", "item", "rating", "time"]
_INT = re.compile(r"[+-]?\d+")


def load_movielens_dat(
    path: str | Path, member: str | None = None, *, max_bytes: int | None = None
) -> pd.DataFrame:
    """Load a MovieLens ``user::item::rating::timestamp`` ratings file.

    ``path`` is a plain ``ratings.dat`` or a ``.zip`` archive; in an archive,
    ``member`` is the path inside it (default: the single member whose name
    ends with ``ratings.dat``, e.g. ``ml-1m/ratings.dat``). A member (or a
    ``.gz`` file) that decompresses to more than ``max_bytes`` bytes raises
    :class:`DataError`, before it is read when its header says so (None: no limit).

    Returns a frame with ``user``, ``item`` (ids, see ``_text_ids``: integers
    written as in ``7``, not ``007`` or ``+7``, become int64), integer ``time``
    (the timestamp) and float ``rating``, one row per line in file order. Empty
    lines are skipped. A line with a wrong field count or a non-integer id or
    timestamp raises :class:`DataError` naming the file and the 1-based line number;
    so does a file larger than the memory available can read, or running out of
    memory while reading it (:mod:`.compressed`).
    """
    path = Path(path)
    label = f"{path}:{member}" if member else str(path)
    return _within_memory(
        path, member, "ratings.dat", lambda: _load_movielens_dat(path, member, label, max_bytes)
    )


def _load_movielens_dat(path: Path, member: str | None, label: str, max_bytes) -> pd.DataFrame:
    text = _read_bytes(path, member, "ratings.dat", max_bytes).decode("latin-1")
    if not text.strip():
        raise DataError(f"{label}: empty file, no ratings")
    try:
        df = pd.read_csv(
            io.StringIO(text.replace("::", "\t")),
            sep="\t",
            header=None,
            dtype={0: str, 1: str, 2: "float64", 3: "int64"},
            keep_default_na=False,
        )
    except (ValueError, pd.errors.ParserError) as e:
        _raise_if_out_of_memory(e)
        _raise_first_bad_dat_line(label, text)
        raise DataError(f"{label}: malformed ratings file ({e})") from e
    if df.shape[1] != 4:
        _raise_first_bad_dat_line(label, text)
        raise DataError(f"{label}: expected 4 '::'-separated fields, found {df.shape[1]}")
    if not np.isfinite(df[2].to_numpy()).all():  # an empty, nan or inf rating
        _raise_first_bad_dat_line(label, text)
    for column in (0, 1):
        df[column] = _text_ids(df[column])
        if df[column].dtype == object and not all(map(_INT.fullmatch, df[column].unique())):
            _raise_first_bad_dat_line(label, text)  # a non-integer id
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
    path: str | Path,
    *,
    sep: str = ",",
    header: bool = True,
    columns: Mapping[str, str | int],
    member: str | None = None,
    max_bytes: int | None = None,
) -> pd.DataFrame:
    """Load a delimited events file into a frame with ``user``, ``item``, ``time``.

    ``columns`` maps ``user``, ``item``, ``time`` (and optionally ``rating``)
    to the file's column names when ``header`` is true, or to 0-based column
    indices otherwise. ``path`` may end in ``.gz`` (gzip) or ``.zip`` (then
    ``member`` names the file inside; it defaults to the single member). One
    that decompresses to more than ``max_bytes`` bytes raises :class:`DataError`,
    before it is read when its header says so (None: no limit).

    Ids keep their file values (ints when numeric, else strings); ``time`` and
    ``rating`` must be numeric. Only the empty field counts as missing. A
    missing column, a missing value, a non-numeric time or rating, or a line
    with too many fields raises :class:`DataError` naming the file (and the
    1-based line; line numbers assume one record per line); so does a file larger
    than the memory available can read, or running out of memory while reading it
    (:mod:`.compressed`).
    """
    path = Path(path)
    label = f"{path}:{member}" if member else str(path)
    keys = _check_column_spec(columns, header, label)
    return _within_memory(
        path,
        member,
        "",
        lambda: _load_delimited(path, sep, header, columns, keys, member, label, max_bytes),
    )


def _load_delimited(
    path: Path, sep: str, header: bool, columns: Mapping, keys: list, member, label: str, max_bytes
) -> pd.DataFrame:
    file_columns = _file_columns(path, member, sep, header, label, max_bytes)
    missing = [f"{k}={columns[k]!r}" for k in keys if columns[k] not in file_columns]
    if missing:
        shown = list(file_columns) if header else f"{len(file_columns)} columns"
        raise DataError(
            f"{label}: column(s) {', '.join(missing)} not in the file (file has {shown})"
        )
    raw = _read_table(path, member, sep, header, [columns[k] for k in keys], label, max_bytes)
    df = pd.DataFrame({k: raw[columns[k]].to_numpy() for k in keys})
    first_line = 2 if header else 1
    _check_no_missing(df, label, first_line)
    for k in ("time", "rating"):
        if k in df:
            df[k] = _numeric_column(df[k], k, label, first_line)
    for k in ("user", "item"):
        df[k] = _text_ids(df[k])
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


def _file_columns(
    path: Path, member, sep: str, header: bool, label: str, max_bytes: int | None
) -> list:
    """The header names, or range(number of fields of the first line)."""
    try:
        with _open_binary(path, member, max_bytes=max_bytes) as f:
            first = pd.read_csv(
                f, sep=sep, header=0 if header else None, nrows=0 if header else 1, dtype=str
            )
    except pd.errors.EmptyDataError as e:
        raise DataError(f"{label}: empty file") from e
    except DataError:
        raise
    except (*CORRUPT_FILE_ERRORS, pd.errors.ParserError) as e:
        _raise_if_out_of_memory(e)
        raise DataError(f"{label}: cannot read ({e})") from e
    return list(first.columns)


def _read_table(
    path: Path, member, sep: str, header: bool, usecols: list, label: str, max_bytes: int | None
) -> pd.DataFrame:
    try:
        with _open_binary(path, member, max_bytes=max_bytes) as f:
            raw = pd.read_csv(
                f,
                sep=sep,
                header=0 if header else None,
                usecols=list(dict.fromkeys(usecols)),
                dtype=dict.fromkeys(usecols[:2], str),  # ids as text (_text_ids)
                skip_blank_lines=False,
                keep_default_na=False,
                na_values=[""],
                low_memory=False,
            )
    except DataError:
        raise
    except (*CORRUPT_FILE_ERRORS, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        _raise_if_out_of_memory(e)
        raise DataError(f"{label}: cannot read ({e})") from e
    if raw.empty:
        raise DataError(f"{label}: no data rows")
    return raw


def _raise_if_out_of_memory(error: Exception) -> None:
    """pandas' C parser reports an allocation that failed as a ParserError ("C error:
    out of memory"): raise it as the MemoryError it is."""
    if isinstance(error, pd.errors.ParserError) and "out of memory" in str(error):
        raise MemoryError(str(error)) from error


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


def _text_ids(text: pd.Series) -> pd.Series:
    """Ids as read from a file: two ids are the same id exactly when their text is
    the same, whatever else the column holds (``7``, ``007``, ``+7`` and ``7.0`` are
    four ids; so are ``1000`` and ``1e3``).

    When every distinct id is an integer written canonically (``0``, ``7``,
    ``-12``: no sign ``+``, no leading zero, within int64) the column becomes
    int64, which keeps the same ids apart; otherwise it stays text.

    Parameters
    ----------
    text : pandas.Series
        The ids as strings.

    Returns
    -------
    pandas.Series
        int64 ids, or the strings unchanged.

    Examples
    --------
    >>> _text_ids(pd.Series(["7", "12", "7"])).tolist()
    [7, 12, 7]
    >>> _text_ids(pd.Series(["7", "007", "1e3"])).tolist()
    ['7', '007', '1e3']
    """
    codes, uniques = pd.factorize(text)
    values = []
    for value in uniques:
        if not _CANONICAL_INT.fullmatch(value) or value == "-0":
            return text.astype(object)
        number = int(value)
        if not -(2**63) <= number < 2**63:
            return text.astype(object)
        values.append(number)
    return pd.Series(np.asarray(values, dtype=np.int64)[codes], index=text.index)


_CANONICAL_INT = re.compile(r"-?(0|[1-9][0-9]*)")
