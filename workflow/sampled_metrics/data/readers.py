"""Raw files -> events frames (``user``, ``item``, ``time``, optional ``rating``),
and binarization into implicit interactions.

* :func:`load_movielens_dat`, :func:`load_delimited`  one loader per format
* :func:`binarize`  ratings -> one interaction per (user, item)
* :func:`read_events`  a data set of config.yaml as its file holds it (or
  generated, ``format: synthetic``); :func:`load_events` then binarizes it

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

from ..io.atomic import CORRUPT_FILE_ERRORS
from .errors import EVENT_COLUMNS, DataError, require_columns, require_file
from .synthetic import SYNTHETIC_KEYS, synthetic_events

__all__ = [
    "as_interactions",
    "binarize",
    "load_delimited",
    "load_events",
    "load_movielens_dat",
    "read_events",
]


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


# The config key of the limit on decompressed sizes, named by the error messages.
_LIMIT_KEY = "limits.decompressed_mb"


def _too_large(label: str, what: str, limit: int) -> DataError:
    return DataError(
        f"{label}: {what} than the limit of {limit} bytes ({_LIMIT_KEY} in "
        "config.yaml; raise it if the file is genuine)"
    )


class _CappedStream(io.RawIOBase):
    """The decompressed bytes of ``stream``, raising DataError as soon as more
    than ``limit`` of them came out (a lying zip header, a gzip bomb)."""

    def __init__(self, stream: IO[bytes], limit: int, label: str):
        self._stream, self._limit, self._label = stream, limit, label
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        # never more than one byte past the limit is decompressed
        data = self._stream.read(min(len(buffer), self._limit + 1 - self._count))
        self._count += len(data)
        if self._count > self._limit:
            raise _too_large(self._label, "decompresses to more", self._limit)
        buffer[: len(data)] = data
        return len(data)


def _capped(stream: IO[bytes], limit: int | None, label: str) -> IO[bytes]:
    return stream if limit is None else io.BufferedReader(_CappedStream(stream, limit, label))


def _gzip_declared_size(path: Path) -> int | None:
    """The ISIZE trailer of a gzip file: the size of its last member modulo 2**32
    (a cheap early refusal only; the stream itself is counted too)."""
    with open(path, "rb") as f:
        if f.seek(0, io.SEEK_END) < 18:  # header + trailer: a corrupt file, gzip says so
            return None
        f.seek(-4, io.SEEK_END)
        return int.from_bytes(f.read(4), "little")


@contextlib.contextmanager
def _open_binary(
    path: Path, member: str | None, suffix: str = "", max_bytes: int | None = None
) -> Iterator[IO[bytes]]:
    """Open a plain file, a .gz file, or a member of a .zip file for reading.

    A compressed input is refused with DataError when its declared size (the
    zip header's, the gzip ISIZE trailer) exceeds ``max_bytes``, before it is
    read, and its decompressed stream raises DataError once more than
    ``max_bytes`` came out (None: no limit). A plain file is read as it is."""
    require_file(path)
    if member is not None or path.suffix.lower() == ".zip":
        try:
            zf = zipfile.ZipFile(path)
        except CORRUPT_FILE_ERRORS as e:
            raise DataError(f"{path}: not a readable zip archive ({e})") from e
        with zf:
            name = _zip_member(zf, path, member, suffix)
            label = f"{path}:{name}"
            size = zf.getinfo(name).file_size
            if max_bytes is not None and size > max_bytes:
                raise _too_large(label, f"declares {size} bytes decompressed, more", max_bytes)
            with zf.open(name) as f:
                yield _capped(f, max_bytes, label)
    elif path.suffix.lower() == ".gz":
        if max_bytes is not None:
            size = _gzip_declared_size(path)
            if size is not None and size > max_bytes:
                raise _too_large(
                    str(path), f"declares {size} bytes decompressed (gzip ISIZE), more", max_bytes
                )
        with gzip.open(path, "rb") as f:
            yield _capped(f, max_bytes, str(path))
    else:
        with open(path, "rb") as f:
            yield f


def _read_bytes(path: Path, member: str | None, suffix: str, max_bytes: int | None) -> bytes:
    try:
        with _open_binary(path, member, suffix, max_bytes) as f:
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


def load_movielens_dat(
    path, member: str | None = None, *, max_bytes: int | None = None
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
    timestamp raises :class:`DataError` naming the file and the 1-based line number.
    """
    path = Path(path)
    label = f"{path}:{member}" if member else str(path)
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
    path,
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
    1-based line; line numbers assume one record per line).
    """
    path = Path(path)
    label = f"{path}:{member}" if member else str(path)
    keys = _check_column_spec(columns, header, label)
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


# --------------------------------------------------------------------------
# Binarization
# --------------------------------------------------------------------------


def binarize(df: pd.DataFrame, threshold: float | None = None) -> pd.DataFrame:
    """Turn events into implicit interactions, one row per (user, item).

    With ``threshold`` None every row is an interaction. With a threshold only
    rows with ``rating >= threshold`` are kept; a threshold on a frame without
    a ``rating`` column raises :class:`DataError` (it cannot be applied), and so
    does a threshold that keeps no row.
    For a repeated (user, item) pair the earliest event is kept (smallest
    ``time``; equal times are broken by row order). Returns ``user``,
    ``item``, ``time`` with a fresh index, the kept rows in input order.
    """
    require_columns(df, EVENT_COLUMNS, "binarize")
    if threshold is not None:
        require_columns(df, ["rating"], f"binarize(threshold={threshold})")
        ratings = df["rating"].to_numpy()
        df = df[ratings >= threshold]
        if df.empty:
            raise DataError(
                f"binarize(threshold={threshold}): no rating reaches the threshold "
                f"(ratings run from {ratings.min()} to {ratings.max()}), no interaction left"
            )
    events = df[list(EVENT_COLUMNS)].reset_index(drop=True)
    by_time = events.sort_values("time", kind="stable")
    first = by_time.drop_duplicates(["user", "item"], keep="first")
    return first.sort_index().reset_index(drop=True)


# --------------------------------------------------------------------------
# A data set as configured
# --------------------------------------------------------------------------


def read_events(path, entry: Mapping, *, max_bytes: int | None = None) -> pd.DataFrame:
    """The events of one data set of config.yaml as its file holds them, before
    binarization (so that its ``facts`` count the file's rows and repeated pairs).

    ``entry`` is a validated entry of ``datasets`` (``sampled_metrics.pipeline.config``
    fills its defaults): ``format`` picks the loader, ``movielens_dat`` (with
    ``member`` inside a zip) or ``delimited`` (``sep``, ``header``, ``columns``,
    ``member``). A ``synthetic`` entry reads no file (``path`` is ignored, may be
    None): its events are generated by
    :func:`~sampled_metrics.data.synthetic.synthetic_events` from the entry's keys
    (``SYNTHETIC_KEYS``).

    Parameters
    ----------
    path : str or Path or None
        The data set's file (None for a synthetic entry).
    entry : Mapping
        Its validated entry of config.yaml's ``datasets``.
    max_bytes : int or None
        A compressed file (``.gz``, a ``.zip`` member) that decompresses to more
        bytes raises :class:`DataError`, before it is read when its header says
        so; None: no limit (the workflow passes config ``limits.decompressed_mb``).

    Returns
    -------
    pandas.DataFrame
        ``user``, ``item``, ``time`` (and ``rating`` when the file has one).

    Examples
    --------
    >>> entry = {"format": "synthetic", "users": 30, "items": 40, "interactions": 300,
    ...          "popularity_exponent": 1.0, "activity_exponent": 0.3,
    ...          "min_events_per_user": 5, "max_events_per_user": 20, "seed": 1}
    >>> len(read_events(None, entry))
    300
    """
    fmt = entry["format"]
    if fmt == "synthetic":
        return synthetic_events(**{key: entry[key] for key in SYNTHETIC_KEYS})
    if fmt == "movielens_dat":
        return load_movielens_dat(path, member=entry["member"], max_bytes=max_bytes)
    if fmt == "delimited":
        return load_delimited(
            path,
            sep=entry["sep"],
            header=entry["header"],
            columns=entry["columns"],
            member=entry["member"],
            max_bytes=max_bytes,
        )
    raise DataError(f"{path}: unknown format {fmt!r} (movielens_dat, delimited or synthetic)")


def load_events(path, entry: Mapping, *, max_bytes: int | None = None) -> pd.DataFrame:
    """Load and binarize the events of one data set of config.yaml:
    :func:`read_events`, then :func:`binarize` with the entry's
    ``binarize_threshold`` (absent for a synthetic entry, whose events are
    already one per (user, item)).

    Parameters
    ----------
    path : str or Path or None
        The data set's file (None for a synthetic entry).
    entry : Mapping
        Its validated entry of config.yaml's ``datasets``.
    max_bytes : int or None
        The limit on the decompressed size of the file, see :func:`read_events`.

    Returns
    -------
    pandas.DataFrame
        ``user``, ``item``, ``time``: one row per (user, item).

    Examples
    --------
    >>> entry = {"format": "synthetic", "users": 30, "items": 40, "interactions": 300,
    ...          "popularity_exponent": 1.0, "activity_exponent": 0.3,
    ...          "min_events_per_user": 5, "max_events_per_user": 20, "seed": 1}
    >>> list(load_events(None, entry).columns)
    ['user', 'item', 'time']
    """
    return as_interactions(read_events(path, entry, max_bytes=max_bytes), entry)


def as_interactions(events: pd.DataFrame, entry: Mapping) -> pd.DataFrame:
    """The events of a data set as implicit interactions: :func:`binarize` with
    the entry's ``binarize_threshold``; a synthetic entry's events are returned as
    they are (generated one per (user, item), no rating).

    Parameters
    ----------
    events : pandas.DataFrame
        What :func:`read_events` returned for ``entry``.
    entry : Mapping
        The data set's validated entry of config.yaml's ``datasets``.

    Returns
    -------
    pandas.DataFrame
        ``user``, ``item``, ``time``: one row per (user, item).

    Examples
    --------
    >>> events = pd.DataFrame({"user": [1, 1], "item": [5, 5], "time": [2, 1], "rating": [4, 3]})
    >>> as_interactions(events, {"format": "delimited", "binarize_threshold": None}).values.tolist()
    [[1, 5, 1]]
    """
    if entry["format"] == "synthetic":
        return events
    return binarize(events, entry["binarize_threshold"])
