"""``sampled-metrics correct FILE``: from a file of sampled ranks, every metric's range
that holds whatever the ranks (the identification interval) and its estimate by every
estimator (a point estimate: no interval), and for several models the paired
differences with the range of each and the verdict it supports; from a full ranking's
ranks, the exact metrics.

How to read the file comes from its sidecar (:mod:`~sampled_metrics.frameworks.rank_meta`)
when it has one, else from the options: ``--protocol`` names a framework's protocol (its
m and the law that reads it), ``--m``/``--m-column``, ``--n``/``--n-column`` and
``--law`` give them one by one. An option that contradicts the sidecar, or the
protocol, is one error naming both.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace

from ..estimation.estimators import ESTIMATOR_DEFAULTS
from ..estimation.laws import LAWS, WITH_REPLACEMENT
from ..frameworks.rank_meta import RankMeta, read_rank_meta
from ..frameworks.registry import FULL, protocol_by_name
from .arguments import (
    DEFAULT_ESTIMATORS,
    DEFAULT_METRICS,
    estimator,
    metric,
    positive_int,
    protocol_name,
    remove_options,
)
from .decide import add_decision_options, run_decision, uses_design
from .rank_file import InputError, RankFile, join_rank_files, read_rank_file
from .report import exact_records, print_report, sampled_records

__all__ = ["Reading", "add_parser", "add_reading_options", "read_ranks", "reading", "run"]

REMOVED = {
    "--preset": "give the protocol with --protocol NAME (e.g. --protocol recbole-uni100)",
    "--negatives": "the number is in the protocol's name: --protocol recbole-uni100, "
    "elliot-50, daisyrec-999",
    "--methods": "give the estimators with --estimators (the range is printed unless --no-range)",
    "--bootstrap": "the estimators print no interval (their bias is not in one); the range "
    "is the interval (docs/cli.md)",
    "--seed": "correct draws nothing any more (the bootstrap is gone; docs/cli.md)",
}


def _confidence(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not between 0 and 1")
    return value


def _separator(text: str) -> str:
    return {"\\t": "\t", "tab": "\t", "comma": ","}.get(text, text)


def add_parser(subparsers) -> argparse.ArgumentParser:
    """The ``correct`` sub-command's parser."""
    parser = subparsers.add_parser(
        "correct",
        help="corrected metrics, and ranges that hold, from a file of sampled ranks",
        description="Read each held-out item's sampled rank (1 + the sampled items the "
        "model scored above it) and print every metric's range that holds whatever the "
        "ranks and its estimate by every estimator (without an interval: their bias is "
        "unknown); with several rank columns also the paired differences of each pair of "
        "models and the verdict their range supports. A file with a sidecar "
        "(FILE.meta.json, written by the adapters) needs no option. See docs/cli.md.",
    )
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="a .csv or .tsv file (optionally compressed, e.g. .csv.gz) or .parquet; "
        "several files of the same users are read as one, their models side by side",
    )
    add_reading_options(parser)
    _add_estimate_options(parser)
    add_decision_options(parser)
    remove_options(parser, REMOVED)
    return parser


def add_reading_options(parser) -> None:
    """How to read a rank file (``correct``'s and ``plan``'s): protocol, law, columns."""
    sampling = parser.add_argument_group("sampling protocol (default: the file's sidecar)")
    sampling.add_argument(
        "--protocol",
        type=protocol_name,
        metavar="NAME",
        help="the framework's protocol, which sets m and the law: ncf, elliot, elliot-N, "
        "recbole-uniN, recbole-popN, recbole-seq-uniN, bert4rec, daisyrec, daisyrec-N "
        "(N sampled items per held-out item), or full (a full ranking's exact ranks)",
    )
    sampling.add_argument(
        "--law",
        choices=LAWS,
        help="binomial: sampled with replacement; hypergeometric: without "
        f"(default: the protocol's, else {WITH_REPLACEMENT})",
    )
    columns = parser.add_argument_group("columns")
    columns.add_argument(
        "--rank-column",
        action="append",
        dest="rank_columns",
        metavar="NAME",
        help="a rank column (repeat for several models; default: the sidecar's, else sampled_rank)",
    )
    columns.add_argument("--user-column", metavar="NAME", help="default: user, if present")
    sizes = columns.add_mutually_exclusive_group()
    sizes.add_argument("--m", type=positive_int, help="sampled items per held-out item, all rows")
    sizes.add_argument("--m-column", metavar="NAME", help="the column of m (default: m)")
    n_sizes = columns.add_mutually_exclusive_group()
    n_sizes.add_argument(
        "--n",
        type=positive_int,
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
        "--sep", type=_separator, help="separator of a text file ('tab' for a tab)"
    )


def _add_estimate_options(parser) -> None:
    estimates = parser.add_argument_group("estimates")
    estimates.add_argument(
        "--metrics",
        nargs="+",
        type=metric,
        metavar="METRIC",
        help=f"recall@k, ndcg@k, ap, mrr, auc, ... (default: {' '.join(DEFAULT_METRICS)})",
    )
    estimates.add_argument(
        "--estimators",
        nargs="*",
        type=estimator,
        metavar="NAME",
        help="sampled, rank_estimate, ls, cls, bv_<gamma>, em, maxent, bv_em_<gamma>, "
        "bv_maxent_<gamma>, mn_em, mn_maxent: point estimates, no interval; none: the "
        f"ranges alone (default: {' '.join(DEFAULT_ESTIMATORS)})",
    )
    estimates.add_argument(
        "--no-range",
        action="store_true",
        help="leave out the ranges that hold whatever the ranks (the identification intervals)",
    )
    estimates.add_argument(
        "--confidence",
        type=_confidence,
        default=ESTIMATOR_DEFAULTS["confidence"],
        help=f"level of the ranges (default: {ESTIMATOR_DEFAULTS['confidence']})",
    )
    output = parser.add_argument_group("output")
    output.add_argument("--json", action="store_true", help="print a JSON list of records")
    output.add_argument(
        "--quiet", action="store_true", help="no progress bar (none either when not on a terminal)"
    )


@dataclass(frozen=True)
class Reading:
    """How to read the file: what :func:`read_rank_file` gets, and where it came from.

    ``protocol`` is None without one; ``full``: the ranks are a full ranking's.
    """

    protocol: str | None
    full: bool
    law: str
    m: int | None
    m_column: str | None
    m_source: str | None
    n_column: str | None
    rank_columns: list | None
    largest_m: int | None = None
    sidecar: str | None = None


def _clash(option: str, given, source: str, recorded) -> InputError:
    return InputError(f"{option} {given} contradicts {source}, which says {recorded}")


def _from_sidecar(args, meta: RankMeta) -> Reading:
    """The sidecar's reading; an option may repeat it, and is an error if it contradicts it."""
    if args.protocol is not None and args.protocol != meta.protocol:
        raise _clash("--protocol", args.protocol, meta.path, f"protocol {meta.protocol}")
    if args.zero_based:
        raise _clash("--zero-based", "", meta.path, "rank_base 1")
    if args.n is not None or (args.n_column not in (None, meta.n_column)):
        given = args.n if args.n is not None else args.n_column
        raise _clash("--n" if args.n is not None else "--n-column", given, meta.path,
                     f"n_column {meta.n_column}")  # fmt: skip
    unknown = [c for c in args.rank_columns or [] if c not in meta.rank_columns]
    if unknown:
        raise _clash("--rank-column", unknown[0], meta.path,
                     f"rank_columns {', '.join(meta.rank_columns)}")  # fmt: skip
    columns = args.rank_columns or list(meta.rank_columns)
    if meta.full:
        _no_sizes(args, meta.path)
        return Reading(FULL, True, "", None, None, None, meta.n_column, columns, sidecar=meta.path)
    if args.m is not None and args.m != meta.m:
        recorded = f"m {meta.m}" if meta.m is not None else f"m_column {meta.m_column}"
        raise _clash("--m", args.m, meta.path, recorded)
    if args.m_column is not None and args.m_column != meta.m_column:
        recorded = f"m {meta.m}" if meta.m is not None else f"m_column {meta.m_column}"
        raise _clash("--m-column", args.m_column, meta.path, recorded)
    law = meta.law
    if law is None and args.law is None:
        raise InputError(
            f"{meta.path}: {meta.law_reason}; give --law to read the ranks as uniform draws"
        )
    if law is not None and args.law not in (None, law):
        raise _clash("--law", args.law, meta.path, f"law {law}")
    source = f"protocol {meta.protocol}"
    return Reading(meta.protocol, False, law or args.law, meta.m, meta.m_column, source,
                   meta.n_column, columns, meta.largest_m, meta.path)  # fmt: skip


def _no_sizes(args, source: str) -> None:
    for option, value in (("--m", args.m), ("--m-column", args.m_column), ("--law", args.law)):
        if value is not None:
            raise InputError(
                f"{option} does not apply to a full ranking ({source}): every item is ranked"
            )


def _from_options(args) -> Reading:
    """The options' reading: a protocol's m and law, unless given one by one."""
    columns = args.rank_columns
    if args.protocol is None:
        law = args.law or WITH_REPLACEMENT
        return Reading(None, False, law, args.m, args.m_column, None, args.n_column, columns)
    if args.protocol == FULL:
        _no_sizes(args, "--protocol full")
        return Reading(FULL, True, "", None, None, None, args.n_column, columns)
    protocol = protocol_by_name(args.protocol)
    if args.m is not None and args.m != protocol.m:
        raise _clash("--m", args.m, f"--protocol {protocol.name}", f"m = {protocol.m}")
    # RecBole's collapsed draws are read in each row's distinct items (column m)
    m_column = args.m_column or ("m" if protocol.collapse and args.m is None else None)
    law, reason = protocol.file_law(distinct_m=m_column is not None)
    if law is None and args.law is None:
        raise InputError(
            f"--protocol {protocol.name}: {reason}; give --law to read the ranks as uniform draws"
        )
    if law is not None and args.law not in (None, law):
        raise _clash("--law", args.law, f"--protocol {protocol.name}", f"the {law} law")
    m = None if m_column is not None else protocol.m
    source = f"protocol {protocol.name}"
    return Reading(protocol.name, False, law or args.law, m, m_column, source, args.n_column,
                   columns, largest_m=protocol.m)  # fmt: skip


def reading(args, path) -> tuple[Reading, RankMeta | None]:
    """How to read the file ``path``: by its sidecar when it has one, else by the options."""
    meta = read_rank_meta(path)
    return (_from_sidecar(args, meta) if meta is not None else _from_options(args)), meta


def read_files(args) -> tuple[Reading, RankFile]:
    """Every file of ``args.files`` read as :func:`reading` says, joined by user
    (:func:`.rank_file.join_rank_files`); the first file's reading."""
    if len(args.files) > 1 and args.rank_columns:
        raise InputError("--rank-column picks columns of one file; with several files, "
                         "each brings all its models")  # fmt: skip
    readings, files = [], []
    for path in args.files:
        how, meta = reading(args, path)
        readings.append(how)
        files.append(read_ranks(args, how, meta, path))
    first = readings[0]
    for path, how in zip(args.files[1:], readings[1:]):
        if (how.full, how.protocol, how.law) != (first.full, first.protocol, first.law):
            said = how.protocol or f"the {how.law} law"
            raise InputError(f"{path}: {said}, but {args.files[0]} has "
                             f"{first.protocol or f'the {first.law} law'}")  # fmt: skip
    return first, join_rank_files(files)


def _check_largest_m(how: Reading, ranks) -> None:
    """With a protocol and a column of m, each row's m is at most the protocol's (RecBole
    ranks the distinct items of its N draws; NCF's row that drew the held-out item 98)."""
    if how.largest_m is None or how.m_column is None:
        return
    largest = max(int(data.m.max()) for data in ranks.evaluations.values())
    if largest > how.largest_m:
        raise InputError(
            f"{ranks.path}: column {how.m_column!r} has m = {largest}, more than the "
            f"{how.largest_m} items protocol {how.protocol} draws per held-out item"
        )


def _named_by_model(ranks, meta: RankMeta | None):
    """The rank columns named by the models the sidecar gives them (the pipeline's
    column ``rank`` is its recommender's), where each model has one column."""
    if meta is None:
        return ranks
    models = [meta.rank_columns[column] for column in ranks.evaluations]
    if len(set(models)) < len(models):  # e.g. cornac's BPR and BPR_pessimistic
        return ranks
    evaluations = dict(zip(models, ranks.evaluations.values()))
    return replace(ranks, evaluations=evaluations)


def run(args) -> int:
    """Read the file as :func:`reading` says and print the report (``report``)."""
    how, ranks = read_files(args)
    if how.full and (args.estimators is not None or args.no_range):
        raise InputError(
            f"{ranks.path}: a full ranking's metrics are exact: nothing to estimate "
            "(leave out --estimators and --no-range)"
        )
    if uses_design(args):
        return run_decision(args, how, ranks)
    metrics = args.metrics or list(DEFAULT_METRICS)
    if how.full:
        records = exact_records(ranks, metrics, args.confidence)
    else:
        estimators = DEFAULT_ESTIMATORS if args.estimators is None else args.estimators
        records = sampled_records(
            ranks, metrics, list(estimators), not args.no_range, args.confidence, args.quiet
        )
    print_report(args, how, ranks, records)
    return 0


def read_ranks(args, how: Reading, meta: RankMeta | None, path) -> RankFile:
    """``path`` read as ``how`` says (:func:`reading`), its m checked."""
    ranks = read_rank_file(
        path,
        rank_columns=how.rank_columns,
        user_column=args.user_column,
        m=how.m,
        m_column=how.m_column,
        n=args.n,
        n_column=how.n_column,
        law=how.law or WITH_REPLACEMENT,
        zero_based=args.zero_based,
        sep=args.sep,
        m_source=how.m_source,
        full=how.full,
        meta=meta,
    )
    _check_largest_m(how, ranks)
    return _named_by_model(ranks, meta)
