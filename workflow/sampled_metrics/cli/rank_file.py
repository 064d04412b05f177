"""A file of sampled ranks read and checked: csv, tsv (optionally compressed) or
parquet, one sampled-rank column per model, m and n per row or for all rows. Bad input
is an :class:`InputError`, one line naming the file and the row (its line in a csv or
tsv file, header = line 1) or the column.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..estimation.estimators import EvaluationError, SampledEvaluation, sampled_evaluation
from ..estimation.laws import LAWS, WITH_REPLACEMENT, WITHOUT_REPLACEMENT
from ..frameworks.rank_meta import RankMeta, RankMetaError
from .errors import InputError

__all__ = [
    "MissingColumn",
    "RankFile",
    "integers",
    "join_rank_files",
    "read_rank_file",
    "read_table",
    "repeated_user",
]

# The extensions of a file's format (after a compression suffix pandas reads).
SEPARATORS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
PARQUET = (".parquet", ".pq")
COMPRESSIONS = (".gz", ".bz2", ".xz", ".zst", ".zip")
# Integers beyond this are refused (float parsing loses them; no rank is that large).
LARGEST = 2**53


@dataclass(frozen=True)
class RankFile:
    """A file of sampled ranks, read and checked: one evaluation per model.

    Parameters
    ----------
    path : str
        The file, as given.
    evaluations : dict
        {rank column: :class:`~sampled_metrics.estimation.estimators.SampledEvaluation`}, the
        models in the file's column order, all with the same m, n and law.
    users : numpy.ndarray or None
        The user column (as text), when there is one.
    m_source, n_source : str
        Where m and n come from (``column m``, ``--m``, ``protocol ncf``, ``--n``, ...).
    unused_m_rows : int, default 0
        With one m for all rows: the rows where the file's column ``m`` (not used)
        holds another value.
    lines : numpy.ndarray, optional
        Each row's line in the file (header = line 1), or its 1-based row number in a
        parquet file (``row_word`` "row").
    row_word : str, default "line"

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "ranks.csv"
    >>> _ = path.write_text("user,sampled_rank,m,n\\n1,1,99,3706\\n2,17,99,3706\\n")
    >>> ranks = read_rank_file(path, law="hypergeometric")
    >>> list(ranks.evaluations), ranks.evaluations["sampled_rank"].ranks.tolist()
    (['sampled_rank'], [1, 17])
    """

    path: str
    evaluations: dict
    users: np.ndarray | None
    m_source: str
    n_source: str
    unused_m_rows: int = 0
    lines: np.ndarray | None = None
    row_word: str = "line"

    @property
    def first(self) -> SampledEvaluation:
        """The first model's evaluation (every model shares its m, n and law)."""
        return next(iter(self.evaluations.values()))


def _format_of(path: Path, sep: str | None) -> str:
    """The separator of a text file, or "parquet"."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in COMPRESSIONS:
        suffixes = suffixes[:-1]
    last = suffixes[-1] if suffixes else ""
    if last in PARQUET:
        return "parquet"
    if sep is not None:
        return sep
    if last in SEPARATORS:
        return SEPARATORS[last]
    raise InputError(
        f"{path}: cannot tell the format from the extension {last or '(none)'!r}: name it "
        ".csv, .tsv or .parquet (optionally .gz for csv and tsv), or give --sep"
    )


def read_table(path: Path, sep: str | None = None) -> tuple[pd.DataFrame, str]:
    """The file as a table of text (csv, tsv) or values (parquet) and the word for
    its rows in messages; the index is the row's line in the file (header = line 1)
    or its 1-based row number (the one reader of the tables of ranks and designs)."""
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if path.is_dir():
        raise InputError(f"{path}: is a directory, not a file")
    fmt = _format_of(path, sep)
    if fmt == "parquet":
        if importlib.util.find_spec("pyarrow") is None:
            raise InputError(
                f"{path}: reading parquet needs pyarrow, which is not installed: "
                "pip install pyarrow (or convert the file to csv)"
            )
        try:
            table = pd.read_parquet(path)
        except Exception as error:  # pyarrow raises its own types for damaged files
            raise InputError(f"{path}: cannot read as parquet: {_one_line(error)}") from None
        table.index = np.arange(1, len(table) + 1)
        return table, "row"
    try:
        table = pd.read_csv(
            path,
            sep=fmt,
            dtype=str,
            keep_default_na=False,
            skip_blank_lines=False,
            engine="c" if len(fmt) == 1 else "python",  # a longer separator is a regex
        )
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: empty file (no header, no rows)") from None
    except pd.errors.ParserError as error:
        found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(error))
        if found:
            expected, line, saw = found.groups()
            raise InputError(
                f"{path}: line {line}: {saw} fields, the header has {expected}"
            ) from None
        raise InputError(f"{path}: cannot parse: {_one_line(error)}") from None
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as error:
        raise InputError(f"{path}: cannot read: {_one_line(error)}") from None
    table.index = np.arange(2, len(table) + 2)  # the header is line 1
    blank = table.apply(lambda column: column.fillna("").str.strip() == "").all(axis=1)
    return table[~blank.to_numpy()], "line"


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def integers(table: pd.DataFrame, column: str, path: object, what: str) -> np.ndarray:
    """The column as int64, or an InputError naming the first row that is not an
    integer (``path``: the file; ``what``: "line" or "row")."""
    raw = table[column]
    if not pd.api.types.is_numeric_dtype(raw):
        raw = raw.astype(str).str.strip()
    values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~np.isfinite(values) | (values != np.round(values)) | (np.abs(values) > LARGEST)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        text = str(raw.iloc[k]).strip()
        problem = (
            "is empty" if text in ("", "nan", "None", "<NA>") else f"{text!r} is not an integer"
        )
        line = int(table.index[k])
        raise InputError(problem, path=path, line=line, row_word=what, column=column)
    return values.astype(np.int64)


class MissingColumn(InputError):
    """A column the file does not have: ``name``, and the columns it has."""

    def __init__(self, path: object, name: str, option: str, have: list[str]) -> None:
        self.name = name
        self.have = have
        super().__init__(f"no column {name!r} ({option})", path=path, option=option,
                         fix=f"the file has: {', '.join(have)}")  # fmt: skip


def _missing_column(path: Path, name: str, option: str, table: pd.DataFrame) -> MissingColumn:
    return MissingColumn(path, name, option, list(map(str, table.columns)))


def read_rank_file(
    path: str | Path,
    *,
    rank_columns: list[str] | None = None,
    user_column: str | None = None,
    m: int | None = None,
    m_column: str | None = None,
    n: int | None = None,
    n_column: str | None = None,
    law: str = WITH_REPLACEMENT,
    zero_based: bool = False,
    sep: str | None = None,
    m_source: str | None = None,
    full: bool = False,
    meta: RankMeta | None = None,
) -> RankFile:
    """Read a file of sampled ranks and check every value, naming the bad row.

    Columns: the sampled ranks (``rank_columns``, default ``sampled_rank``; several
    columns are several models evaluated on the same sampled items), m (``m`` or
    ``m_column``, default the column ``m``), n (``n`` or ``n_column``, default the
    column ``n``) and optionally the user (``user_column``, default ``user`` when
    present).

    Parameters
    ----------
    path : str or pathlib.Path
        A ``.csv``/``.tsv`` file (``.gz`` and the other compressions pandas reads
        allowed) or ``.parquet`` (needs pyarrow).
    rank_columns : list of str, optional
        The sampled-rank columns; default ``["sampled_rank"]``.
    user_column : str, optional
        The user column; default ``user`` if the file has it.
    m, n : int, optional
        One m (n) for every row, instead of a column.
    m_column, n_column : str, optional
        The m (n) column; default ``m`` (``n``).
    law : {"binomial", "hypergeometric"}, default "binomial"
        Sampling with or without replacement.
    zero_based : bool, default False
        The file counts the sampled items ranked above the held-out item (0..m)
        instead of giving its 1-based rank among them (1..m + 1).
    sep : str, optional
        The separator of a text file whose extension does not tell it.
    m_source : str, optional
        Where a given ``m`` comes from, for messages (default ``--m``).
    full : bool, default False
        The ranks are of a full ranking (1..n): read as m = n - 1 items drawn without
        replacement, which the sampled rank then equals.
    meta : RankMeta, optional
        The file's sidecar: every column it names must be in the file.

    Returns
    -------
    RankFile

    Raises
    ------
    InputError
        One line naming the file and the row (line of a text file, header = line 1;
        row of a parquet file) or the column.
    RankMetaError
        The sidecar names a column the file does not have.

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "ranks.tsv"
    >>> _ = path.write_text("a\\tb\\n0\\t3\\n5\\t0\\n")
    >>> ranks = read_rank_file(path, rank_columns=["a", "b"], m=5, n=50, zero_based=True)
    >>> [e.ranks.tolist() for e in ranks.evaluations.values()]
    [[1, 6], [4, 1]]
    >>> try:
    ...     read_rank_file(path, rank_columns=["a"], m=4, n=50, zero_based=True)
    ... except InputError as error:
    ...     print(str(error).split("ranks.tsv: ")[1])
    line 3: column a: 5 sampled items above, outside 0..m = 4
    """
    path = Path(path)
    table, what = read_table(path, sep)
    if table.empty:
        raise InputError(f"{path}: no rows (only a header)")
    if law not in LAWS:
        raise InputError(f"unknown law {law!r}; choose one of {', '.join(LAWS)}")
    table.columns = [str(c).strip() for c in table.columns]
    if meta is not None:
        try:
            meta.check_columns(list(table.columns))
        except ValueError as error:
            raise RankMetaError(f"{meta.path}: {error}") from None
    if full:
        law, m, m_column, m_source = WITHOUT_REPLACEMENT, None, None, "full ranking"

    if rank_columns is None:
        if "sampled_rank" not in table.columns:
            raise _missing_column(path, "sampled_rank", "give --rank-column", table)
        rank_columns = ["sampled_rank"]
    for name in rank_columns:
        if name not in table.columns:
            raise _missing_column(path, name, "--rank-column", table)
    if len(set(rank_columns)) != len(rank_columns):
        raise InputError(f"{path}: a rank column is named twice: {', '.join(rank_columns)}")

    users = None
    if user_column is not None and user_column not in table.columns:
        raise _missing_column(path, user_column, "--user-column", table)
    if user_column is None and "user" in table.columns:
        user_column = "user"
    if user_column is not None:
        users = table[user_column].astype(str).to_numpy()

    sizes: dict[str, tuple[np.ndarray, str | None]] = {}
    wanted = (
        [("n", n, n_column, "n")] if full else [("m", m, m_column, "m"), ("n", n, n_column, "n")]
    )
    for name, given, column, default in wanted:
        if given is not None:
            sizes[name] = (np.full(len(table), given, dtype=np.int64), None)
            continue
        column = column or default
        if column not in table.columns:
            option = f"give --{name} or --{name}-column" + (", or --protocol" * (name == "m"))
            if name == "m" and m_source:  # a protocol that reads each row's m
                option = f"{m_source} reads each row's m from it; name another with --m-column"
            raise _missing_column(path, column, option, table)
        sizes[name] = (integers(table, column, path, what), column)
    n_values, n_col = sizes["n"]
    m_values, m_col = sizes["m"] if not full else (n_values - 1, None)

    evaluations = {}
    for column in rank_columns:
        ranks = integers(table, column, path, what)
        if zero_based:
            bad = np.flatnonzero((ranks < 0) | (ranks > m_values))
            if bad.size:
                k = bad[0]
                raise InputError(
                    f"{path}: {what} {table.index[k]}: column {column}: {ranks[k]} sampled items "
                    f"above, outside 0..m = {m_values[k]}"
                )
            ranks = ranks + 1
        try:
            evaluations[column] = sampled_evaluation(ranks, m_values, n_values, law)
        except EvaluationError as error:
            if full and error.field == "sampled rank":  # the bound is n, not m + 1
                k = error.user
                raise InputError(f"exact rank {error.value} is outside 1..n = {n_values[k]}",
                                 path=path, line=int(table.index[k]), row_word=what,
                                 column=column) from None  # fmt: skip
            sources = (f"column {m_col}", f"column {n_col}")
            if full:
                sources = (f"column {n_col}" if n is None else f"n = {n} (--n)",) * 2
            elif m is not None:
                sources = (f"m = {m} ({m_source or '--m'})", sources[1])
            if n is not None:
                sources = (sources[0], f"n = {n} (--n)")
            raise _located(error, table, path, what, column, *sources) from None
    unused = 0
    if m is not None and m_column is None and "m" in table.columns and not full:
        column = pd.to_numeric(table["m"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        unused = int(np.sum(column != m))
    m_text = (m_source or "--m") if m is not None or full else f"column {m_col}"
    n_text = "--n" if n is not None else f"column {n_col}"
    lines = table.index.to_numpy()
    return RankFile(str(path), evaluations, users, m_text, n_text, unused, lines, what)


def _located(
    error: EvaluationError,
    table: pd.DataFrame,
    path: Path,
    what: str,
    rank_column: str,
    m_source: str,
    n_source: str,
) -> InputError:
    """The library's refusal located in the file: its row, and the column or option
    the refused field came from."""
    line = int(table.index[error.user])
    if error.field == "sampled rank":
        return InputError(error.problem, path=path, line=line, row_word=what, column=rank_column)
    source = m_source if error.field == "m" else n_source
    return InputError(f"{source}: {error.problem}", path=path, line=line, row_word=what)


def join_rank_files(files: list[RankFile]) -> RankFile:
    """Several rank files of the same users as one, their models side by side: e.g. two
    RecBole checkpoints, each evaluated on its own (its own sampled items: each model's
    sampled rank is then drawn independently, as the corrections' law assumes).

    Each file needs a user column with one row per user, every file the same users, the
    same law, and each user the same n (and m) in every file; the rows follow the first
    file's. A model (rank column) may be in one file only.

    Raises
    ------
    InputError
        Naming the file and the user, model or law that does not match.

    Examples
    --------
    >>> a = RankFile("a.csv", {"A": sampled_evaluation([1, 3], 9, 100)}, np.array(["u", "v"]),
    ...              "--m", "--n")
    >>> b = RankFile("b.csv", {"B": sampled_evaluation([2, 1], 9, 100)}, np.array(["v", "u"]),
    ...              "--m", "--n")
    >>> joined = join_rank_files([a, b])
    >>> joined.path, list(joined.evaluations), joined.evaluations["B"].ranks.tolist()
    ('a.csv + b.csv', ['A', 'B'], [1, 2])
    """
    if len(files) == 1:
        return files[0]
    users = [_unique_users(ranks) for ranks in files]
    first, first_users = files[0], users[0]
    evaluations = dict(first.evaluations)
    for ranks, own in zip(files[1:], users[1:]):
        row_of = {user: row for row, user in enumerate(own)}
        missing = [user for user in first_users if user not in row_of]
        if missing or len(own) != len(first_users):
            user, where = (
                (missing[0], ranks.path)
                if missing
                else (next(u for u in own if u not in set(first_users)), first.path)
            )
            raise InputError(f"{where}: no row for user {user}, which the other file has: "
                             "joined files must hold the same users")  # fmt: skip
        order = np.array([row_of[user] for user in first_users])
        for model, data in ranks.evaluations.items():
            if model in evaluations:
                other = next(r.path for r in files if model in r.evaluations)
                fix = ("give each file once, and two models of one class two names where "
                       "their ranks are written (sampled-metrics recbole --name NAME; cornac: "
                       "--model \"CLASS(name='NAME')\")")  # fmt: skip
                raise InputError(f"model {model} is in {other} too", path=ranks.path, fix=fix)
            data = data.take(order)
            _same_sizes(first, first_users, ranks, data)
            evaluations[model] = data
    return replace(first, path=" + ".join(r.path for r in files), evaluations=evaluations)


def repeated_user(users: np.ndarray) -> str | None:
    """The first user that has a row before, or None when each has one.

    Examples
    --------
    >>> repeated_user(np.array(["u", "v", "u"])), repeated_user(np.array(["u", "v"]))
    ('u', None)
    """
    twice = np.flatnonzero(pd.Series(users).duplicated().to_numpy())
    return str(users[twice[0]]) if twice.size else None


def _unique_users(ranks: RankFile) -> np.ndarray:
    """The users of a file to join: a user column, one row per user."""
    if ranks.users is None:
        raise InputError(f"{ranks.path}: no user column: joining files needs one")
    twice = repeated_user(ranks.users)
    if twice is not None:
        raise InputError(f"{ranks.path}: user {twice} has several rows: joining files "
                         "needs one per user")  # fmt: skip
    return ranks.users


def _same_sizes(
    first: RankFile, users: np.ndarray, other: RankFile, data: SampledEvaluation
) -> None:
    reference = first.first
    if data.law != reference.law:
        raise InputError(f"{other.path}: law {data.law}, but {first.path} has {reference.law}")
    for name in ("n", "m"):
        differs = np.flatnonzero(getattr(data, name) != getattr(reference, name))
        if differs.size:
            k = differs[0]
            raise InputError(
                f"{other.path}: user {users[k]}: {name} = {getattr(data, name)[k]}, but "
                f"{first.path} has {name} = {getattr(reference, name)[k]}"
            )
