"""The command-line tool ``sampled-metrics``: corrected sampled metrics from a file.

``sampled-metrics correct FILE`` reads each held-out item's sampled rank (its rank
among the m items sampled for it, 1..m + 1) from a csv, tsv or parquet file, with
each row's m (sampled items) and n (ranked-set size: the held-out item and every
item it could have been ranked against), and prints every metric corrected by every
estimator of :mod:`sampled_metrics.estimation.estimators`, with a confidence interval; with
several rank columns (several models evaluated on the same sampled items) also the
paired comparison of each pair of models. ``docs/cli.md`` documents the input, every
option and the presets of common frameworks (``--preset ncf``, ``recbole-uni``,
``elliot``, ``daisyrec``), each with the framework's code it was read from.

Bad input stops with one line on stderr naming the file and the row (its line in a
csv or tsv file, header = line 1) or the column, and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import re
import sys
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from .estimation.estimators import (
    ESTIMATOR_DEFAULTS,
    SampledEvaluation,
    compare,
    estimate_table,
    parse_estimator,
    sampled_evaluation,
)
from .estimation.laws import LAWS, WITH_REPLACEMENT, WITHOUT_REPLACEMENT
from .estimation.metrics import metric_by_name

__all__ = [
    "DEFAULT_METHODS",
    "DEFAULT_METRICS",
    "InputError",
    "PRESETS",
    "Preset",
    "RankFile",
    "main",
    "read_rank_file",
]

PROG = "sampled-metrics"
DEFAULT_METRICS = ("recall@10", "ndcg@10")
DEFAULT_METHODS = ("sampled", "bv_0.1", "mn_em", "em")
# The extensions of a file's format (after a compression suffix pandas reads).
SEPARATORS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
PARQUET = (".parquet", ".pq")
COMPRESSIONS = (".gz", ".bz2", ".xz", ".zst", ".zip")
# Integers beyond this are refused (float parsing loses them; no rank is that large).
LARGEST = 2**53


@dataclass(frozen=True)
class Preset:
    """A sampling protocol of a framework: the defaults of m and of the law it implies.

    Parameters
    ----------
    name : str
        The value of ``--preset``.
    m : int or None
        Sampled items per held-out item; None when the protocol has no fixed number
        (then ``--negatives`` gives it).
    law : str
        ``binomial`` (with replacement) or ``hypergeometric`` (without).
    summary : str
        What the framework does, in one sentence.
    source : str
        Where that was read: repository, path and commit.

    Examples
    --------
    >>> PRESETS["ncf"].m, PRESETS["ncf"].law
    (99, 'hypergeometric')
    >>> PRESETS["recbole-uni"].m is None
    True
    """

    name: str
    m: int | None
    law: str
    summary: str
    source: str


PRESETS = {
    preset.name: preset
    for preset in (
        Preset(
            "ncf",
            99,
            WITHOUT_REPLACEMENT,
            "NCF's test.negative: 99 distinct items per user drawn uniformly from the items "
            "the user has no training interaction with, ranked with the held-out item",
            "hexiangnan/neural_collaborative_filtering: Data/ml-1m.test.negative, "
            "Dataset.py, evaluate.py (commit 4aab159)",
        ),
        Preset(
            "recbole-uni",
            None,
            WITH_REPLACEMENT,
            "RecBole's eval mode uniN: N items per held-out item drawn uniformly with "
            "replacement from the items the user never interacted with (give --negatives N)",
            "RUCAIBox/RecBole: recbole/sampler/sampler.py, recbole/config/configurator.py, "
            "recbole/data/dataloader/general_dataloader.py, recbole/trainer/trainer.py "
            "(commit 7b02be5)",
        ),
        Preset(
            "elliot",
            None,
            WITHOUT_REPLACEMENT,
            "Elliot's negative_sampling strategy random: num_items distinct items per user "
            "drawn uniformly from the items outside the user's training and test sets "
            "(give --negatives num_items)",
            "sisinflab/elliot: elliot/negative_sampling/negative_sampling.py, "
            "elliot/dataset/dataset.py (commit fc27efe)",
        ),
        Preset(
            "daisyrec",
            999,
            WITH_REPLACEMENT,
            "DaisyRec's candidate set: cand_num = 1000 items, the user's test items and "
            "1000 - (their number) items drawn uniformly with replacement from the items "
            "outside the user's training and test sets",
            "AmazingDD/daisyRec: daisy/utils/utils.py build_candidates_set, "
            "daisy/assets/basic.yaml (commit 7b46481)",
        ),
    )
}


class InputError(ValueError):
    """Bad input, in one line that names the file and the row or the column.

    Parameters
    ----------
    message : str
        The line.

    Examples
    --------
    >>> str(InputError("ranks.csv: line 3: column m: 'x' is not an integer"))
    "ranks.csv: line 3: column m: 'x' is not an integer"
    """


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
        Where m and n come from (``column m``, ``--m``, ``preset ncf``, ``--n``, ...).
    unused_m_rows : int, default 0
        With one m for all rows: the rows where the file's column ``m`` (not used)
        holds another value.

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

    @property
    def first(self) -> SampledEvaluation:
        """The first model's evaluation (every model shares its m, n and law)."""
        return next(iter(self.evaluations.values()))


# --------------------------------------------------------------------------
# Reading and checking the file
# --------------------------------------------------------------------------


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


def _read_table(path: Path, sep: str | None) -> tuple[pd.DataFrame, str]:
    """The file as a table of text (csv, tsv) or values (parquet) and the word for
    its rows in messages; the index is the row's line in the file (header = line 1)
    or its 1-based row number."""
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


def _integers(table: pd.DataFrame, column: str, where: str, what: str) -> np.ndarray:
    """The column as int64, or an InputError naming the first row that is not an
    integer (``where``: "<file>: " ; ``what``: "line" or "row")."""
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
        raise InputError(f"{where}{what} {table.index[k]}: column {column}: {problem}")
    return values.astype(np.int64)


def _missing_column(path, name: str, option: str, table: pd.DataFrame) -> InputError:
    columns = ", ".join(map(str, table.columns))
    return InputError(f"{path}: no column {name!r} ({option}); the file has: {columns}")


def read_rank_file(
    path,
    *,
    rank_columns=None,
    user_column: str | None = None,
    m: int | None = None,
    m_column: str | None = None,
    n: int | None = None,
    n_column: str | None = None,
    law: str = WITH_REPLACEMENT,
    zero_based: bool = False,
    sep: str | None = None,
    m_source: str | None = None,
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

    Returns
    -------
    RankFile

    Raises
    ------
    InputError
        One line naming the file and the row (line of a text file, header = line 1;
        row of a parquet file) or the column.

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
    table, what = _read_table(path, sep)
    where = f"{path}: "
    if table.empty:
        raise InputError(f"{path}: no rows (only a header)")
    if law not in LAWS:
        raise InputError(f"unknown law {law!r}; choose one of {', '.join(LAWS)}")
    table.columns = [str(c).strip() for c in table.columns]

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

    sizes = {}
    for name, given, column, default in (("m", m, m_column, "m"), ("n", n, n_column, "n")):
        if given is not None:
            sizes[name] = (np.full(len(table), given, dtype=np.int64), None)
            continue
        column = column or default
        if column not in table.columns:
            option = f"give --{name} or --{name}-column" + (", or --preset" if name == "m" else "")
            raise _missing_column(path, column, option, table)
        sizes[name] = (_integers(table, column, where, what), column)
    (m_values, m_col), (n_values, n_col) = sizes["m"], sizes["n"]

    evaluations = {}
    for column in rank_columns:
        ranks = _integers(table, column, where, what)
        if zero_based:
            bad = np.flatnonzero((ranks < 0) | (ranks > m_values))
            if bad.size:
                k = bad[0]
                raise InputError(
                    f"{where}{what} {table.index[k]}: column {column}: {ranks[k]} sampled items "
                    f"above, outside 0..m = {m_values[k]}"
                )
            ranks = ranks + 1
        try:
            evaluations[column] = sampled_evaluation(ranks, m_values, n_values, law)
        except ValueError as error:
            sources = (f"column {m_col}", f"column {n_col}")
            if m is not None:
                sources = (f"m = {m} ({m_source or '--m'})", sources[1])
            if n is not None:
                sources = (sources[0], f"n = {n} (--n)")
            raise _located(error, table, where, what, column, *sources) from None
    unused = 0
    if m is not None and m_column is None and "m" in table.columns:
        column = pd.to_numeric(table["m"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        unused = int(np.sum(column != m))
    m_text = (m_source or "--m") if m is not None else f"column {m_col}"
    n_text = "--n" if n is not None else f"column {n_col}"
    return RankFile(str(path), evaluations, users, m_text, n_text, unused)


def _located(error, table, where, what, rank_column, m_source, n_source) -> InputError:
    """The library's message ("... of user 3 is ...") located in the file."""
    message = str(error)
    found = re.search(r" of user (\d+)", message)
    if not found:
        return InputError(f"{where}{message}")
    row = table.index[int(found.group(1))]
    message = message.replace(found.group(0), "", 1)
    if message.startswith("sampled rank"):
        subject = f"column {rank_column}"
    elif message.startswith("m "):
        subject = m_source
    else:
        subject = n_source
    return InputError(f"{where}{what} {row}: {subject}: {message}")


# --------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """argparse, but an error is one line on stderr (exit status 2)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _integer_from(low: int):
    """An argparse type: an integer >= ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}")
        return value

    return parse


_positive_int, _count = _integer_from(1), _integer_from(0)


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not between 0 and 1")
    return value


def _metric(text: str) -> str:
    try:
        metric_by_name(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _method(text: str) -> str:
    try:
        parse_estimator(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def _separator(text: str) -> str:
    return {"\\t": "\t", "tab": "\t", "comma": ","}.get(text, text)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description="Corrected sampled metrics for item recommendation (Krichene & Rendle, "
        "KDD 2020, and later estimators), from a file of sampled ranks.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    correct = commands.add_parser(
        "correct",
        help="corrected metrics with confidence intervals from a file of sampled ranks",
        description="Read each held-out item's sampled rank (1 + the sampled items the "
        "model scored above it) and print every metric corrected by every estimator, with "
        "a confidence interval; with several rank columns also the paired comparison of "
        "each pair of models. See docs/cli.md.",
    )
    correct.add_argument(
        "file", help="a .csv or .tsv file (optionally compressed, e.g. .csv.gz) or .parquet"
    )
    columns = correct.add_argument_group("columns")
    columns.add_argument(
        "--rank-column",
        action="append",
        dest="rank_columns",
        metavar="NAME",
        help="a sampled-rank column (repeat for several models on the same sampled items; "
        "default: sampled_rank)",
    )
    columns.add_argument("--user-column", metavar="NAME", help="default: user, if present")
    sizes = columns.add_mutually_exclusive_group()
    sizes.add_argument(
        "--m", type=_positive_int, help="sampled items per held-out item, for all rows"
    )
    sizes.add_argument("--m-column", metavar="NAME", help="the column of m (default: m)")
    n_sizes = columns.add_mutually_exclusive_group()
    n_sizes.add_argument(
        "--n",
        type=_positive_int,
        help="ranked-set size for all rows: the held-out item and every item it competes "
        "with (the catalogue, or the catalogue minus the user's training items)",
    )
    n_sizes.add_argument("--n-column", metavar="NAME", help="the column of n (default: n)")
    columns.add_argument(
        "--zero-based",
        action="store_true",
        help="the file counts the sampled items above the held-out item (0..m) instead "
        "of its 1-based rank among them (1..m + 1)",
    )
    columns.add_argument(
        "--sep",
        type=_separator,
        help="separator of a text file ('tab' for a tab; default: by the extension)",
    )
    protocol = correct.add_argument_group("sampling protocol")
    protocol.add_argument(
        "--law",
        choices=LAWS,
        help="binomial: sampled with replacement; hypergeometric: without "
        "(default: the preset's, else binomial)",
    )
    protocol.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        help="a framework's protocol: sets m and the law unless given (see docs/cli.md)",
    )
    protocol.add_argument(
        "--negatives",
        type=_positive_int,
        metavar="N",
        help="with --preset: the sampled items per held-out item (RecBole's uniN, "
        "Elliot's num_items, DaisyRec's cand_num - 1, NCF's 99)",
    )
    estimates = correct.add_argument_group("estimates")
    estimates.add_argument(
        "--metrics",
        nargs="+",
        type=_metric,
        default=list(DEFAULT_METRICS),
        metavar="METRIC",
        help=f"recall@k, ndcg@k, ap, mrr, auc, ... (default: {' '.join(DEFAULT_METRICS)})",
    )
    estimates.add_argument(
        "--methods",
        nargs="+",
        type=_method,
        default=list(DEFAULT_METHODS),
        metavar="METHOD",
        help="sampled, rank_estimate, ls, cls, bv_<gamma>, em, maxent, bv_em_<gamma>, "
        f"bv_maxent_<gamma>, mn_em, mn_maxent (default: {' '.join(DEFAULT_METHODS)})",
    )
    estimates.add_argument(
        "--confidence",
        type=_confidence,
        default=ESTIMATOR_DEFAULTS["confidence"],
        help=f"level of the intervals (default: {ESTIMATOR_DEFAULTS['confidence']})",
    )
    estimates.add_argument(
        "--bootstrap",
        type=_count,
        default=ESTIMATOR_DEFAULTS["bootstrap"],
        metavar="B",
        help="resamples of the rows for the learned estimators' intervals (0: none; "
        f"default: {ESTIMATOR_DEFAULTS['bootstrap']})",
    )
    estimates.add_argument(
        "--seed", type=int, default=0, help="seed of the bootstrap's resamples (default: 0)"
    )
    output = correct.add_argument_group("output")
    output.add_argument("--json", action="store_true", help="print a JSON list of records")
    output.add_argument(
        "--quiet", action="store_true", help="no progress bar (none either when not on a terminal)"
    )
    return parser


def _protocol(args) -> tuple[int | None, str | None, str]:
    """(m, the name of its source, law) from the options and the preset."""
    preset = PRESETS.get(args.preset) if args.preset else None
    law = args.law or (preset.law if preset else WITH_REPLACEMENT)
    if args.negatives is not None and preset is None:
        raise InputError("--negatives needs --preset; give the sampled items with --m")
    if args.negatives is not None and (args.m is not None or args.m_column is not None):
        raise InputError("--negatives and --m / --m-column both give m: give one")
    if args.m is not None or args.m_column is not None or preset is None:
        return args.m, None, law
    if args.negatives is not None:
        return args.negatives, f"preset {preset.name}, --negatives", law
    if preset.m is None:
        raise InputError(
            f"--preset {preset.name} needs --negatives N (the sampled items per held-out "
            "item), or --m / --m-column"
        )
    return preset.m, f"preset {preset.name}", law


def _fmt(value: float, digits: int = 4) -> str:
    return "nan" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _table(rows: list[list[str]], right: set[int]) -> str:
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    lines = [
        "  ".join(
            cell.rjust(width) if k in right else cell.ljust(width)
            for k, (cell, width) in enumerate(zip(row, widths))
        ).rstrip()
        for row in rows
    ]
    return "\n".join(lines)


def _progress(total: int, disable: bool):
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        disable=disable,
        file=sys.stderr,
        delay=0.5,
        desc="correcting",
        unit="step",
        leave=False,
    )


def _correct(args) -> int:
    m, m_source, law = _protocol(args)
    ranks = read_rank_file(
        args.file,
        rank_columns=args.rank_columns,
        user_column=args.user_column,
        m=m,
        m_column=args.m_column,
        n=args.n,
        n_column=args.n_column,
        law=law,
        zero_based=args.zero_based,
        sep=args.sep,
        m_source=m_source,
    )
    if ranks.unused_m_rows:
        print(
            f"{PROG}: note: {ranks.path}: column m differs from m = {m} ({ranks.m_source}) "
            f"on {ranks.unused_m_rows} rows and is not used (--m-column m uses it)",
            file=sys.stderr,
        )
    models = list(ranks.evaluations)
    pairs = list(combinations(models, 2))
    cells = [(metric, method) for metric in args.metrics for method in args.methods]
    show = not args.quiet and sys.stderr.isatty()
    options = {
        "confidence": args.confidence,
        "bootstrap": args.bootstrap,
        "seed": args.seed,
        "progress": show,
    }
    estimates, comparisons = [], []
    with _progress(len(models) + len(pairs) * len(cells), not show) as bar:
        for model in models:
            bar.set_postfix_str(model)
            table = estimate_table(ranks.evaluations[model], args.metrics, args.methods, **options)
            estimates += [
                {"kind": "estimate", "model": model, **_record(row)} for _, row in table.iterrows()
            ]
            bar.update()
        for first, second in pairs:
            bar.set_postfix_str(f"{first} - {second}")
            for metric, method in cells:
                result = compare(
                    metric, method, ranks.evaluations[first], ranks.evaluations[second], **options
                )
                comparisons.append(
                    {
                        "kind": "comparison",
                        "first": first,
                        "second": second,
                        "metric": metric,
                        "method": method,
                        **{key: _number(value) for key, value in result.items()},
                    }
                )
                bar.update()
    if args.json:
        print(json.dumps(estimates + comparisons, indent=1))
    else:
        print(_report(args, ranks, law, estimates, comparisons))
    return 0


def _number(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _record(row) -> dict:
    return {
        "metric": row["metric"],
        "method": row["method"],
        **{key: _number(row[key]) for key in ("estimate", "low", "high", "standard_error")},
    }


def _report(args, ranks: RankFile, law: str, estimates, comparisons) -> str:
    data = ranks.first
    n_range = (
        f"{data.n.min()}" if data.n.min() == data.n.max() else f"{data.n.min()}..{data.n.max()}"
    )
    m_range = (
        f"{data.m.min()}" if data.m.min() == data.m.max() else f"{data.m.min()}..{data.m.max()}"
    )
    users = f", {len(set(ranks.users))} users" if ranks.users is not None else ""
    lines = [
        f"{ranks.path}: {data.n_users} rows{users}; m = {m_range} ({ranks.m_source}), "
        f"n = {n_range} ({ranks.n_source}), {law} law",
        f"{100 * args.confidence:g}% intervals; bootstrap {args.bootstrap}, seed {args.seed}",
        "",
    ]
    header = ["model", "metric", "method", "estimate", "low", "high"]
    rows = [header] + [
        [r["model"], r["metric"], r["method"]] + [_fmt(r[k]) for k in ("estimate", "low", "high")]
        for r in estimates
    ]
    lines.append(_table(rows, right={3, 4, 5}))
    if comparisons:
        lines += ["", "paired comparisons (first - second, on the same sampled items):", ""]
        header = ["first", "second", "metric", "method", "difference", "low", "high", "P(order)"]
        rows = [header] + [
            [r["first"], r["second"], r["metric"], r["method"]]
            + [_fmt(r[k]) for k in ("difference", "low", "high")]
            + [_fmt(r["probability_order_right"], 3)]
            for r in comparisons
        ]
        lines.append(_table(rows, right={4, 5, 6, 7}))
        lines += [
            "",
            "P(order): probability that the sign of the difference is the true one.",
        ]
    return "\n".join(lines)


def main(argv=None) -> int:
    """The ``sampled-metrics`` command: parse ``argv`` and run its sub-command.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program's name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The exit status: 0, or 2 on bad input (one line on stderr naming the file
        and the row or column, or the option).

    Examples
    --------
    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "ranks.csv"
    >>> _ = path.write_text("user,sampled_rank\\n1,1\\n2,3\\n3,60\\n4,2\\n")
    >>> import contextlib, io
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     status = main(["correct", str(path), "--m", "99", "--n", "3706", "--law",
    ...                    "hypergeometric", "--metrics", "recall@10", "--methods", "sampled",
    ...                    "bv_0.1", "--quiet"])
    >>> status
    0
    >>> print(out.getvalue().split("ranks.csv: ")[1])
    4 rows, 4 users; m = 99 (--m), n = 3706 (--n), hypergeometric law
    95% intervals; bootstrap 200, seed 0
    <BLANKLINE>
    model         metric     method   estimate      low    high
    sampled_rank  recall@10  sampled    0.7500   0.2600  1.2400
    sampled_rank  recall@10  bv_0.1     0.0510  -0.2919  0.3939
    <BLANKLINE>
    """
    try:
        args = _parser().parse_args(argv)
    except SystemExit as stop:  # --help, or a bad option (one line on stderr already)
        return stop.code if isinstance(stop.code, int) else 2
    try:
        if args.command == "correct":
            return _correct(args)
    except InputError as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    raise AssertionError(f"no sub-command {args.command!r}")  # argparse rules this out


if __name__ == "__main__":
    sys.exit(main())
