"""How to read a file of ranks, shared by ``correct`` and ``plan``: the reading options
(:func:`add_reading_options`), their values (:class:`ReadOptions`, taken from the parsed
arguments once), and the reading they resolve to with the file's sidecar
(:func:`resolve_reading`: the sidecar's, or the options'; an option that contradicts the
sidecar, or the protocol, is one error naming both).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from ..estimation.laws import LAWS, WITH_REPLACEMENT
from ..frameworks.rank_meta import RankMeta, read_rank_meta
from ..frameworks.registry import FULL, protocol_by_name
from .arguments import positive_int, protocol_name
from .errors import InputError

__all__ = ["ReadOptions", "Reading", "add_reading_options", "resolve_reading"]


def _separator(text: str) -> str:
    return {"\\t": "\t", "tab": "\t", "comma": ","}.get(text, text)


def add_reading_options(parser: argparse.ArgumentParser) -> None:
    """How to read a rank file: protocol, law, columns (``correct``'s and ``plan``'s)."""
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


@dataclass(frozen=True)
class ReadOptions:
    """The reading options' values (:func:`add_reading_options`), None where not given."""

    protocol: str | None = None
    law: str | None = None
    rank_columns: tuple[str, ...] | None = None
    user_column: str | None = None
    m: int | None = None
    m_column: str | None = None
    n: int | None = None
    n_column: str | None = None
    zero_based: bool = False
    sep: str | None = None

    def command_line(self) -> list[str]:
        """The options given, as the command line takes them (to repeat them in the next
        command a user runs on the same files).

        Examples
        --------
        >>> ReadOptions(law="hypergeometric", rank_columns=("A", "B"), m=99).command_line()
        ['--law', 'hypergeometric', '--rank-column', 'A', '--rank-column', 'B', '--m', '99']
        """
        words: list[str] = []
        for flag, value in (("--protocol", self.protocol), ("--law", self.law)):
            words += [flag, value] if value is not None else []
        for column in self.rank_columns or ():
            words += ["--rank-column", column]
        given = (("--user-column", self.user_column), ("--m", self.m),
                 ("--m-column", self.m_column), ("--n", self.n), ("--n-column", self.n_column),
                 ("--sep", self.sep))  # fmt: skip
        for flag, option in given:
            words += [flag, str(option)] if option is not None else []
        return words + ["--zero-based"] * self.zero_based

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ReadOptions:
        """The options of the parsed arguments (the one place that reads them)."""
        columns = tuple(args.rank_columns) if args.rank_columns else None
        return cls(
            args.protocol,
            args.law,
            columns,
            args.user_column,
            args.m,
            args.m_column,
            args.n,
            args.n_column,
            args.zero_based,
            args.sep,
        )


@dataclass(frozen=True)
class Reading:
    """How to read a file: what :func:`~.rank_file.read_rank_file` gets, and where it came
    from. ``protocol`` is None without one; ``full``: the ranks are a full ranking's;
    ``meta``: the file's sidecar, if it has one."""

    protocol: str | None
    full: bool
    law: str
    m: int | None
    m_column: str | None
    m_source: str | None
    n_column: str | None
    rank_columns: tuple[str, ...] | None
    largest_m: int | None = None
    meta: RankMeta | None = None

    @property
    def sidecar(self) -> str | None:
        """The sidecar's path, if the file has one."""
        return None if self.meta is None else self.meta.path


def _clash(option: str, given: object, source: str, recorded: str) -> InputError:
    return InputError(
        f"{option} {given} contradicts {source}, which says {recorded}", option=option
    )


def _from_sidecar(options: ReadOptions, meta: RankMeta) -> Reading:
    """The sidecar's reading; an option may repeat it, and is an error if it contradicts it."""
    if options.protocol is not None and options.protocol != meta.protocol:
        raise _clash("--protocol", options.protocol, meta.path, f"protocol {meta.protocol}")
    if options.zero_based:
        raise _clash("--zero-based", "", meta.path, "rank_base 1")
    if options.n is not None or (options.n_column not in (None, meta.n_column)):
        given = options.n if options.n is not None else options.n_column
        raise _clash(
            "--n" if options.n is not None else "--n-column",
            given,
            meta.path,
            f"n_column {meta.n_column}",
        )
    unknown = [c for c in options.rank_columns or () if c not in meta.rank_columns]
    if unknown:
        raise _clash(
            "--rank-column", unknown[0], meta.path, f"rank_columns {', '.join(meta.rank_columns)}"
        )
    columns = options.rank_columns or tuple(meta.rank_columns)
    if meta.full:
        _no_sizes(options, meta.path)
        return Reading(FULL, True, "", None, None, None, meta.n_column, columns, meta=meta)
    recorded = f"m {meta.m}" if meta.m is not None else f"m_column {meta.m_column}"
    if options.m is not None and options.m != meta.m:
        raise _clash("--m", options.m, meta.path, recorded)
    if options.m_column is not None and options.m_column != meta.m_column:
        raise _clash("--m-column", options.m_column, meta.path, recorded)
    law = meta.law
    if law is None and options.law is None:
        raise InputError(
            meta.law_reason,
            path=meta.path,
            option="--law",
            fix="give --law to read the ranks as uniform draws",
        )
    if law is not None and options.law not in (None, law):
        raise _clash("--law", options.law, meta.path, f"law {law}")
    source = f"protocol {meta.protocol}"
    return Reading(
        meta.protocol,
        False,
        law or options.law or WITH_REPLACEMENT,
        meta.m,
        meta.m_column,
        source,
        meta.n_column,
        columns,
        largest_m=meta.largest_m,
        meta=meta,
    )


def _no_sizes(options: ReadOptions, source: str) -> None:
    given = (("--m", options.m), ("--m-column", options.m_column), ("--law", options.law))
    for option, value in given:
        if value is not None:
            raise InputError(
                f"{option} does not apply to a full ranking ({source}): every item is ranked",
                option=option,
            )


def _from_options(options: ReadOptions) -> Reading:
    """The options' reading: a protocol's m and law, unless given one by one."""
    columns = options.rank_columns
    if options.protocol is None:
        law = options.law or WITH_REPLACEMENT
        return Reading(
            None, False, law, options.m, options.m_column, None, options.n_column, columns
        )
    protocol = protocol_by_name(options.protocol)
    if protocol is None:  # FULL
        _no_sizes(options, "--protocol full")
        return Reading(FULL, True, "", None, None, None, options.n_column, columns)
    if options.m is not None and options.m != protocol.m:
        raise _clash("--m", options.m, f"--protocol {protocol.name}", f"m = {protocol.m}")
    # RecBole's collapsed draws are read in each row's distinct items (column m)
    m_column = options.m_column or ("m" if protocol.collapse and options.m is None else None)
    known, reason = protocol.file_law(distinct_m=m_column is not None)
    if known is None and options.law is None:
        raise InputError(
            f"--protocol {protocol.name}: {reason}",
            option="--law",
            fix="give --law to read the ranks as uniform draws",
        )
    if known is not None and options.law not in (None, known):
        raise _clash("--law", options.law, f"--protocol {protocol.name}", f"the {known} law")
    m = None if m_column is not None else protocol.m
    source = f"protocol {protocol.name}"
    return Reading(
        protocol.name,
        False,
        known or options.law or WITH_REPLACEMENT,
        m,
        m_column,
        source,
        options.n_column,
        columns,
        largest_m=protocol.m,
    )


def resolve_reading(options: ReadOptions, path: str) -> Reading:
    """How to read the file ``path``: by its sidecar when it has one, else by the options."""
    meta = read_rank_meta(path)
    return _from_sidecar(options, meta) if meta is not None else _from_options(options)
