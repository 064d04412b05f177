"""Data sets: download, loaders, binarization and the leave-last-out split.

The evaluation protocol of the paper (section 9, following the Neural
Collaborative Filtering setup) holds out each user's last interaction and ranks
it against the items the user has not interacted with in training. This module
turns raw files into that split:

* :func:`download`  fetch an archive atomically, with retries and an md5 check
* :func:`load_movielens_dat`, :func:`load_delimited`  raw file -> events frame
  with columns ``user``, ``item``, ``time`` (and ``rating`` when mapped)
* :func:`binarize`  ratings -> implicit interactions, one per (user, item)
* :func:`leave_last_out_split`  events -> :class:`Split`
* :func:`check_facts`  assert known numbers of a data set or split
* :func:`save_split`, :func:`load_split`  one ``.npz`` per split

Every problem with the input raises :class:`DataError` with one message that
names the file (and the line where it applies).
"""
from __future__ import annotations

import contextlib
import gzip
import hashlib
import http.client
import io
import os
import re
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Callable, Iterator, Mapping

import numpy as np
import pandas as pd
import scipy.sparse as sp
from tqdm.auto import tqdm

from .io import remove_stale_temporaries

__all__ = [
    "DataError",
    "Split",
    "binarize",
    "check_facts",
    "download",
    "leave_last_out_split",
    "load_delimited",
    "load_movielens_dat",
    "load_split",
    "md5sum",
    "save_split",
]


class DataError(ValueError):
    """Bad input data: a missing, corrupt or malformed file, or a failed fact."""


# Errors raised by the standard library when a compressed file is corrupt.
_CORRUPT = (OSError, EOFError, zlib.error, zipfile.BadZipFile, UnicodeDecodeError)


# --------------------------------------------------------------------------
# Download
# --------------------------------------------------------------------------

def md5sum(path, chunk_size: int = 1 << 20) -> str:
    """Hex md5 digest of the file at ``path``, read in chunks."""
    digest = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()


class _TransientError(Exception):
    """A download attempt failed in a way that a retry may fix."""


def download(url: str, dest, md5: str | None = None, *, timeout: float = 60,
             retries: int = 3, progress: bool = True,
             backoff: float = 1.0) -> Path:
    """Download ``url`` to ``dest`` atomically and return ``Path(dest)``.

    If ``dest`` exists it is used as is when ``md5`` is None or matches (no
    request is made, so an archive placed there by hand works offline); a
    wrong md5 raises :class:`DataError`.

    Otherwise the body is streamed into ``dest.name + ".part-<random>"`` in the
    same directory, checked against the Content-Length (when sent) and
    ``md5``, then moved onto ``dest`` with :func:`os.replace`. On any failure
    the temporary file is removed and ``dest`` is not created.

    Network errors, HTTP 5xx and truncated bodies are retried ``retries``
    times (so at most ``retries + 1`` requests) after sleeping
    ``backoff * 2**k`` seconds; HTTP 4xx and an md5 mismatch are not retried.
    ``timeout`` is the per-request socket timeout in seconds. A tqdm progress
    bar is shown when ``progress`` is true.
    """
    dest = Path(dest)
    if dest.exists():
        check_md5(dest, md5)
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    last_error: Exception | None = None
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(backoff * 2 ** (attempt - 1))
        try:
            _download_once(url, dest, md5, timeout, progress)
            return dest
        except _TransientError as e:
            last_error = e
    raise DataError(f"could not download {url} to {dest} after {retries + 1} "
                    f"attempt(s): {last_error}") from last_error


def check_md5(path, md5: str | None) -> None:
    """Raise DataError naming ``path`` unless its md5 is ``md5`` (None: no check).
    Used on an archive that is already in place, downloaded or put there by hand."""
    if md5 is None:
        return
    actual = md5sum(path)
    if actual != md5.lower():
        raise DataError(f"{path}: existing file has md5 {actual}, expected {md5}; "
                        "delete it to download again")


def _download_once(url: str, dest: Path, md5: str | None, timeout: float,
                   progress: bool) -> None:
    remove_stale_temporaries(dest, dest.name + ".part-")   # left by a killed download
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".part-", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            actual_md5 = _stream(url, out, dest.name, timeout, progress)
        if md5 is not None and actual_md5 != md5.lower():
            raise DataError(f"{dest}: downloaded from {url} with md5 {actual_md5}, "
                            f"expected {md5}")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def _stream(url: str, out: IO[bytes], label: str, timeout: float,
            progress: bool) -> str:
    """Write the body of ``url`` to ``out``; return its md5. Checks the size."""
    request = urllib.request.Request(url, headers={"User-Agent": "sampled-metrics"})
    digest = hashlib.md5()
    written = 0
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            expected = int(length) if length is not None else None
            with tqdm(total=expected, unit="B", unit_scale=True, desc=label,
                      disable=not progress, leave=False) as bar:
                for chunk in iter(lambda: response.read(1 << 16), b""):
                    out.write(chunk)
                    digest.update(chunk)
                    written += len(chunk)
                    bar.update(len(chunk))
    except urllib.error.HTTPError as e:
        if 400 <= e.code < 500:
            raise DataError(f"{url}: HTTP {e.code} {e.reason}") from e
        raise _TransientError(f"HTTP {e.code} {e.reason}") from e
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError,
            TimeoutError) as e:
        raise _TransientError(f"{type(e).__name__}: {e}") from e
    if expected is not None and written != expected:
        raise _TransientError(f"truncated body: got {written} of {expected} bytes")
    return digest.hexdigest()


# --------------------------------------------------------------------------
# Opening files (plain, .gz, member of a .zip)
# --------------------------------------------------------------------------

def _require_file(path: Path) -> None:
    if not path.is_file():
        raise DataError(f"{path}: file not found")


def _zip_member(zf: zipfile.ZipFile, path: Path, member: str | None,
                suffix: str) -> str:
    """The requested member, or the single member whose name ends with suffix."""
    names = [n for n in zf.namelist() if not n.endswith("/")]
    if member is not None:
        if member not in names:
            raise DataError(f"{path}: no member {member!r} in the archive "
                            f"(members: {names})")
        return member
    matches = [n for n in names if n.endswith(suffix)]
    if len(matches) != 1:
        raise DataError(f"{path}: expected exactly one member ending with "
                        f"{suffix!r}, found {matches}; pass member=")
    return matches[0]


@contextlib.contextmanager
def _open_binary(path: Path, member: str | None, suffix: str = "") -> Iterator[IO[bytes]]:
    """Open a plain file, a .gz file, or a member of a .zip file for reading."""
    _require_file(path)
    if member is not None or path.suffix.lower() == ".zip":
        try:
            zf = zipfile.ZipFile(path)
        except _CORRUPT as e:
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
    except _CORRUPT as e:
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
        df = pd.read_csv(io.StringIO(text.replace("::", "\t")), sep="\t",
                         header=None, dtype={0: "int64", 1: "int64",
                                             2: "float64", 3: "int64"})
    except (ValueError, pd.errors.ParserError) as e:
        _raise_first_bad_dat_line(label, text)
        raise DataError(f"{label}: malformed ratings file ({e})") from e
    if df.shape[1] != 4:
        _raise_first_bad_dat_line(label, text)
        raise DataError(f"{label}: expected 4 '::'-separated fields, "
                        f"found {df.shape[1]}")
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
                float(value)
            except ValueError:
                return f"rating {value!r} is not a number"
        elif not _INT.fullmatch(value):
            return f"{name} {value!r} is not an integer"
    return None


# --------------------------------------------------------------------------
# Delimited files (csv, tsv, optionally .gz or a zip member)
# --------------------------------------------------------------------------

_REQUIRED = ("user", "item", "time")
_OPTIONAL = ("rating",)


def load_delimited(path, *, sep: str = ",", header: bool = True,
                   columns: Mapping[str, str | int], member: str | None = None
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
        raise DataError(f"{label}: column(s) {', '.join(missing)} not in the file "
                        f"(file has {shown})")
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
    unknown = set(columns) - set(_REQUIRED) - set(_OPTIONAL)
    absent = [k for k in _REQUIRED if k not in columns]
    if unknown or absent:
        raise DataError(f"{label}: columns= must map {_REQUIRED} (and optionally "
                        f"'rating'); unknown {sorted(unknown)}, missing {absent}")
    wanted = str if header else int
    bad = {k: v for k, v in columns.items()
           if not isinstance(v, wanted) or isinstance(v, bool)}
    if bad:
        kind = "column names (header=True)" if header else "0-based indices (header=False)"
        raise DataError(f"{label}: columns= values must be {kind}, got {bad}")
    return [k for k in (*_REQUIRED, *_OPTIONAL) if k in columns]


def _file_columns(path: Path, member, sep: str, header: bool, label: str) -> list:
    """The header names, or range(number of fields of the first line)."""
    try:
        with _open_binary(path, member) as f:
            first = pd.read_csv(f, sep=sep, header=0 if header else None,
                                nrows=0 if header else 1, dtype=str)
    except pd.errors.EmptyDataError as e:
        raise DataError(f"{label}: empty file") from e
    except DataError:
        raise
    except (*_CORRUPT, pd.errors.ParserError) as e:
        raise DataError(f"{label}: cannot read ({e})") from e
    return list(first.columns)


def _read_table(path: Path, member, sep: str, header: bool, usecols: list,
                label: str) -> pd.DataFrame:
    try:
        with _open_binary(path, member) as f:
            raw = pd.read_csv(f, sep=sep, header=0 if header else None,
                              usecols=list(dict.fromkeys(usecols)),
                              skip_blank_lines=False, keep_default_na=False,
                              na_values=[""], low_memory=False)
    except DataError:
        raise
    except (*_CORRUPT, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        raise DataError(f"{label}: cannot read ({e})") from e
    if raw.empty:
        raise DataError(f"{label}: no data rows")
    return raw


def _check_no_missing(df: pd.DataFrame, label: str, first_line: int) -> None:
    missing = df.isna()
    if missing.to_numpy().any():
        row = int(np.flatnonzero(missing.any(axis=1).to_numpy())[0])
        names = [c for c in df.columns if missing[c].iat[row]]
        raise DataError(f"{label}, line {row + first_line}: missing value in "
                        f"column(s) {names}")


def _numeric_column(values: pd.Series, name: str, label: str,
                    first_line: int) -> pd.Series:
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        return values
    numbers = pd.to_numeric(values, errors="coerce")
    bad = np.flatnonzero(numbers.isna().to_numpy())
    if len(bad):
        row = int(bad[0])
        raise DataError(f"{label}, line {row + first_line}: {name} "
                        f"{values.iat[row]!r} is not a number")
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

def _require_columns(df: pd.DataFrame, names, what: str) -> None:
    absent = [c for c in names if c not in df.columns]
    if absent:
        raise DataError(f"{what}: frame lacks column(s) {absent} "
                        f"(has {list(df.columns)})")


def binarize(df: pd.DataFrame, threshold: float | None = None) -> pd.DataFrame:
    """Turn events into implicit interactions, one row per (user, item).

    With ``threshold`` None every row is an interaction. With a threshold only
    rows with ``rating >= threshold`` are kept; a threshold on a frame without
    a ``rating`` column raises :class:`DataError` (it cannot be applied).
    For a repeated (user, item) pair the earliest event is kept (smallest
    ``time``; equal times are broken by row order). Returns ``user``,
    ``item``, ``time`` with a fresh index, the kept rows in input order.
    """
    _require_columns(df, _REQUIRED, "binarize")
    if threshold is not None:
        _require_columns(df, ["rating"], f"binarize(threshold={threshold})")
        df = df[df["rating"].to_numpy() >= threshold]
    events = df[list(_REQUIRED)].reset_index(drop=True)
    by_time = events.sort_values("time", kind="stable")
    first = by_time.drop_duplicates(["user", "item"], keep="first")
    return first.sort_index().reset_index(drop=True)


# --------------------------------------------------------------------------
# Leave-last-out split
# --------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Split:
    """A leave-last-out split: training matrix and one held-out item per user.

    ``train`` is a binary float32 CSR matrix (users x items, sorted indices);
    ``test_items[u]`` is the column of user ``u``'s held-out item, never among
    the user's training items. ``user_ids`` / ``item_ids`` give the original
    ids of rows / columns, sorted. ``n_skipped_users`` counts users dropped
    for having too few events.
    """

    train: sp.csr_matrix
    test_items: np.ndarray
    user_ids: np.ndarray
    item_ids: np.ndarray
    n_skipped_users: int = 0

    def __post_init__(self):
        n_users, n_items = self.train.shape
        if len(self.user_ids) != n_users or len(self.item_ids) != n_items:
            raise DataError(f"Split: train is {n_users}x{n_items} but there are "
                            f"{len(self.user_ids)} user ids, {len(self.item_ids)} item ids")
        if self.test_items.shape != (n_users,):
            raise DataError(f"Split: {self.test_items.shape} test items for "
                            f"{n_users} users")
        if n_users and (self.test_items.min() < 0 or self.test_items.max() >= n_items):
            raise DataError(f"Split: test item index outside 0..{n_items - 1}")

    @property
    def n_users(self) -> int:
        """Number of users (rows), each with exactly one held-out item."""
        return self.train.shape[0]

    @property
    def n_items(self) -> int:
        """Number of items (columns): every item of the train or test data."""
        return self.train.shape[1]

    def candidate_counts(self) -> np.ndarray:
        """Per user, n_items minus the user's training items (int64).

        This is the size of the set the held-out item is ranked in (the
        held-out item included).
        """
        return (self.n_items - np.diff(self.train.indptr)).astype(np.int64)

    def unseen_test_items(self) -> int:
        """Number of users whose held-out item no user has in training."""
        item_counts = np.bincount(self.train.indices, minlength=self.n_items)
        return int(np.count_nonzero(item_counts[self.test_items] == 0))


def leave_last_out_split(df: pd.DataFrame, *, min_events: int = 2,
                         on_short_users: str = "skip") -> Split:
    """Hold out each user's last event; the user's other events are training.

    The last event is the one with the largest ``time``. Ties are broken by
    the row order of ``df``: events are stably sorted by time, so among equal
    times the LAST row is the latest and becomes the test item.

    Users with fewer than ``min_events`` events are dropped with
    ``on_short_users="skip"`` (counted in ``Split.n_skipped_users``) or raise
    :class:`DataError` with ``"error"``. Users and items get indices in sorted
    order of their ids; the items are those of the kept users (train or
    test). ``df`` must have one row per (user, item); see :func:`binarize`.
    """
    _require_columns(df, _REQUIRED, "leave_last_out_split")
    if on_short_users not in ("skip", "error"):
        raise ValueError(f"on_short_users must be 'skip' or 'error', got {on_short_users!r}")
    if min_events < 1:
        raise ValueError(f"min_events must be >= 1, got {min_events}")
    _check_split_input(df)
    df, n_skipped = _drop_short_users(df, min_events, on_short_users)
    user_codes, user_ids = _factorize_sorted(df["user"], "user")
    item_codes, item_ids = _factorize_sorted(df["item"], "item")
    order = np.argsort(df["time"].to_numpy(), kind="stable")
    order = order[np.argsort(user_codes[order], kind="stable")]
    is_test = np.zeros(len(order), dtype=bool)
    is_test[np.cumsum(np.bincount(user_codes, minlength=len(user_ids))) - 1] = True
    rows, cols = user_codes[order], item_codes[order]
    train = _binary_csr(rows[~is_test], cols[~is_test], (len(user_ids), len(item_ids)))
    return Split(train=train, test_items=cols[is_test].astype(np.int64),
                 user_ids=user_ids, item_ids=item_ids, n_skipped_users=n_skipped)


def _check_split_input(df: pd.DataFrame) -> None:
    if df[list(_REQUIRED)].isna().to_numpy().any():
        raise DataError("leave_last_out_split: missing values in user/item/time")
    n_dup = int(df.duplicated(["user", "item"]).sum())
    if n_dup:
        raise DataError(f"leave_last_out_split: {n_dup} repeated (user, item) "
                        "pairs; call binarize() first")


def _drop_short_users(df: pd.DataFrame, min_events: int, on_short_users: str):
    counts = df.groupby("user", sort=False)["user"].transform("size").to_numpy()
    short = counts < min_events
    if not short.any():
        return df, 0
    short_users = pd.unique(df["user"].to_numpy()[short])
    if on_short_users == "error":
        example = short_users[0]
        example = example.item() if isinstance(example, np.generic) else example
        raise DataError(f"{len(short_users)} user(s) have fewer than {min_events} "
                        f"events, e.g. user {example!r}")
    return df[~short], len(short_users)


def _factorize_sorted(values: pd.Series, name: str) -> tuple[np.ndarray, np.ndarray]:
    try:
        codes, uniques = pd.factorize(values, sort=True)
    except TypeError as e:
        raise DataError(f"{name} ids cannot be sorted (mixed types?): {e}") from e
    return codes.astype(np.int64), np.asarray(uniques)


def _binary_csr(rows: np.ndarray, cols: np.ndarray, shape) -> sp.csr_matrix:
    data = np.ones(len(rows), dtype=np.float32)
    matrix = sp.csr_matrix((data, (rows, cols)), shape=shape, dtype=np.float32)
    matrix.sort_indices()
    return matrix


# --------------------------------------------------------------------------
# Facts
# --------------------------------------------------------------------------

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


def check_facts(df_or_split: pd.DataFrame | Split, facts: Mapping[str, int],
                source: str) -> dict[str, int]:
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
        _require_columns(df_or_split, ("user", "item"), source)
        known = _frame_facts(df_or_split)
    unknown = [name for name in facts if name not in known]
    if unknown:
        kind = type(df_or_split).__name__
        raise DataError(f"{source}: unknown fact(s) {unknown} for a {kind}; "
                        f"known: {sorted(known)}")
    actual = {name: int(known[name]()) for name in facts}
    wrong = [f"{name}: expected {facts[name]}, got {actual[name]}"
             for name in facts if actual[name] != facts[name]]
    if wrong:
        raise DataError(f"{source}: facts do not hold: {'; '.join(wrong)}")
    return actual


# --------------------------------------------------------------------------
# Saving and loading a split
# --------------------------------------------------------------------------

_SPLIT_KEYS = ("train_indptr", "train_indices", "train_shape", "test_items",
               "user_ids", "item_ids", "n_skipped_users")


def _plain_ids(ids: np.ndarray, name: str) -> np.ndarray:
    """Ids as an array numpy can store without pickle (numbers or strings)."""
    ids = np.asarray(ids)
    if ids.dtype.kind in "iuf" or ids.dtype.kind == "U":
        return ids
    if all(isinstance(x, str) for x in ids):
        return ids.astype(str)
    raise DataError(f"save_split: {name} ids must be all numbers or all strings")


def save_split(split: Split, path) -> None:
    """Write ``split`` to one ``.npz`` file, atomically (temp file + rename)."""
    path = Path(path)
    arrays = {
        "train_indptr": split.train.indptr,
        "train_indices": split.train.indices,
        "train_shape": np.asarray(split.train.shape, dtype=np.int64),
        "test_items": np.asarray(split.test_items, dtype=np.int64),
        "user_ids": _plain_ids(split.user_ids, "user"),
        "item_ids": _plain_ids(split.item_ids, "item"),
        "n_skipped_users": np.int64(split.n_skipped_users),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path, path.name + ".part-")   # left by a killed write
    fd, tmp_name = tempfile.mkstemp(prefix=path.name + ".part-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(f, **arrays)
        os.replace(tmp_name, path)
    finally:
        Path(tmp_name).unlink(missing_ok=True)


def load_split(path) -> Split:
    """Read a split written by :func:`save_split`.

    A missing file, missing keys or corrupt content raise :class:`DataError`
    naming the file.
    """
    path = Path(path)
    _require_file(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            absent = [k for k in _SPLIT_KEYS if k not in npz.files]
            if absent:
                raise DataError(f"{path}: not a saved split, missing key(s) {absent}")
            arrays = {k: npz[k] for k in _SPLIT_KEYS}
        return _split_from_arrays(arrays)
    except DataError as e:
        if str(path) in str(e):
            raise
        raise DataError(f"{path}: inconsistent split ({e})") from e
    except (*_CORRUPT, ValueError) as e:
        raise DataError(f"{path}: corrupt split file ({type(e).__name__}: {e})") from e


def _split_from_arrays(a: Mapping[str, np.ndarray]) -> Split:
    indices = a["train_indices"]
    shape = tuple(int(x) for x in a["train_shape"])
    train = sp.csr_matrix((np.ones(len(indices), dtype=np.float32), indices,
                           a["train_indptr"]), shape=shape)
    train.check_format(full_check=True)
    return Split(train=train, test_items=a["test_items"].astype(np.int64),
                 user_ids=a["user_ids"], item_ids=a["item_ids"],
                 n_skipped_users=int(a["n_skipped_users"]))


# --------------------------------------------------------------------------
# A data set as configured
# --------------------------------------------------------------------------

def load_events(path, entry: Mapping) -> pd.DataFrame:
    """Load and binarize the events of one data set of config.yaml.

    ``entry["format"]`` picks the loader: ``movielens_dat`` (with an optional
    ``member`` inside a zip) or ``delimited`` (``sep``, ``header``,
    ``columns``, ``member``); ``binarize_threshold`` is passed to
    :func:`binarize`.
    """
    fmt = entry["format"]
    if fmt == "movielens_dat":
        events = load_movielens_dat(path, member=entry.get("member"))
    elif fmt == "delimited":
        events = load_delimited(path, sep=entry.get("sep", ","), header=entry.get("header", True),
                                columns=entry["columns"], member=entry.get("member"))
    else:
        raise DataError(f"{path}: unknown format {fmt!r} (movielens_dat or delimited)")
    return binarize(events, entry.get("binarize_threshold"))
