"""The ``correct`` command: from a file of sampled ranks, every metric's range that
holds whatever the ranks (the identification interval, method ``range``) and its
estimate by every estimator (a point estimate: no interval, see ``NO_INTERVAL``), and
for several models the paired differences with the range of each and the verdict it
supports, printed as a text report or as JSON records; and :func:`main`, the
``sampled-metrics`` command itself.
"""

from __future__ import annotations

import json
import math
import sys
from itertools import combinations

from ..estimation.estimators import (
    difference_interval,
    identification_intervals,
    point_estimates,
)
from ..estimation.laws import WITH_REPLACEMENT, WITHOUT_REPLACEMENT
from .arguments import NO_INTERVAL, PROG, RANGE, _parser
from .presets import PRESETS
from .rank_file import InputError, RankFile, read_rank_file

__all__ = ["main"]


def _protocol(args) -> tuple[int | None, str | None, str]:
    """(m, the name of its source, law) from the options and the preset."""
    preset = PRESETS.get(args.preset) if args.preset else None
    law = args.law or (preset.law if preset else WITH_REPLACEMENT)
    if args.negatives is not None and preset is None:
        raise InputError("--negatives needs --preset; give the sampled items with --m")
    if args.negatives is not None and args.m is not None:
        raise InputError("--negatives and --m both give m: give one")
    if args.m is not None or args.m_column is not None or preset is None:
        return args.m, None, law  # a column of m: each row's own (checked <= --negatives)
    if args.negatives is not None:
        return args.negatives, f"preset {preset.name}, --negatives", law
    if preset.m is None:
        raise InputError(
            f"--preset {preset.name} needs --negatives N (the sampled items per held-out "
            "item), or --m / --m-column"
        )
    return preset.m, f"preset {preset.name}", law


def _check_negatives(args, ranks: RankFile) -> None:
    """With --negatives N and --m-column, each row's m is what the framework ranked of
    its N draws (RecBole collapses an item drawn twice to one column): at most N."""
    if args.negatives is None or args.m_column is None:
        return
    largest = max(int(data.m.max()) for data in ranks.evaluations.values())
    if largest > args.negatives:
        raise InputError(
            f"{ranks.path}: column {args.m_column!r} has m = {largest}, more than the "
            f"--negatives {args.negatives} drawn per held-out item"
        )


def _range_left_out(args, law: str) -> str | None:
    """Why the range is not printed, or None. A preset whose framework ranks an item drawn
    twice once (RecBole) has sampled ranks whose law is hypergeometric in each row's
    number of distinct items drawn; the binomial law in the draws gives a range that
    does not hold (it missed AUC in 8 of 20 simulated evaluations of a popularity model)."""
    preset = PRESETS.get(args.preset) if args.preset else None
    if preset is None or not preset.collapse:
        return None
    if args.m_column is not None and law == WITHOUT_REPLACEMENT:
        return None
    return (
        f"no range: {preset.name} ranks an item drawn twice once, so the sampled ranks "
        "follow the hypergeometric law in each row's number of distinct items drawn; give "
        f"it with --m-column and --law {WITHOUT_REPLACEMENT} (the RecBole adapter writes "
        "column m, docs/recbole.md) for a range that holds"
    )


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
    _check_negatives(args, ranks)
    if ranks.unused_m_rows:
        print(
            f"{PROG}: note: {ranks.path}: column m differs from m = {m} ({ranks.m_source}) "
            f"on {ranks.unused_m_rows} rows and is not used (--m-column m uses it)",
            file=sys.stderr,
        )
    if args.bootstrap is not None or args.seed is not None:
        print(
            f"{PROG}: note: --bootstrap and --seed are not used any more: the estimators "
            "print no interval (their bias is not in one); method range prints the one "
            "that holds",
            file=sys.stderr,
        )
    models = list(ranks.evaluations)
    pairs = list(combinations(models, 2))
    estimators = list(dict.fromkeys(x for x in args.methods if x != RANGE))
    show = not args.quiet and sys.stderr.isatty()
    points, estimates, comparisons = {}, [], []
    with _progress(len(models) * (1 + (RANGE in args.methods)), not show) as bar:
        for model in models:
            bar.set_postfix_str(model)
            points[model] = (
                point_estimates(ranks.evaluations[model], args.metrics, estimators)
                if estimators
                else {}
            )
            estimates += [
                {"kind": "estimate", "model": model, "metric": metric, "method": method,
                 "estimate": _number(points[model][metric, method]), "low": None,
                 "high": None, "standard_error": None}
                for metric in args.metrics
                for method in estimators
            ]  # fmt: skip
            bar.update()
        comparisons = [
            {"kind": "comparison", "first": first, "second": second, "metric": metric,
             "method": method,
             "difference": _number(points[first][metric, method] - points[second][metric, method]),
             "low": None, "high": None, "standard_error": None,
             "probability_order_right": None}
            for first, second in pairs
            for metric in args.metrics
            for method in estimators
        ]  # fmt: skip
        left_out = _range_left_out(args, law) if RANGE in args.methods else None
        ranges = (
            _ranges(ranks, models, pairs, args.metrics, args.confidence, bar)
            if RANGE in args.methods and left_out is None
            else []
        )
    if left_out and args.json:  # the text report says it in the ranges' place
        print(f"{PROG}: note: {left_out}", file=sys.stderr)
    if args.json:
        print(json.dumps(estimates + comparisons + ranges, indent=1))
    else:
        print(_report(args, ranks, law, estimates, comparisons, ranges))
    return 0


def _ranges(ranks: RankFile, models, pairs, metrics, confidence, bar) -> list:
    """The identification intervals (estimation.estimators.bounds): of every model's
    metric, and of every pair's difference with the verdict it supports; they hold
    whatever the ranks."""
    records = []
    for model in models:
        bar.set_postfix_str(f"range {model}")
        records += [
            {"kind": "range", "model": model, "metric": metric, "low": low, "high": high}
            for metric, (low, high) in identification_intervals(
                ranks.evaluations[model], metrics, confidence
            ).items()
        ]
        bar.update()
    for first, second in pairs:
        for metric in metrics:
            low, high = difference_interval(
                ranks.evaluations[first], ranks.evaluations[second], metric, confidence
            )
            records.append(
                {"kind": "range_difference", "first": first, "second": second,
                 "metric": metric, "low": low, "high": high,
                 "verdict": _verdict(first, second, low, high)}
            )  # fmt: skip
    return records


def _verdict(first: str, second: str, low: float, high: float) -> str:
    """Which model the range of first - second says is the better (every metric here is
    higher for a better model), or ``undecided`` when it holds 0."""
    if low > 0:
        return f"{first} better"
    if high < 0:
        return f"{second} better"
    return "undecided"


def _number(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _report(args, ranks: RankFile, law: str, estimates, comparisons, ranges) -> str:
    data = ranks.first
    n_range = (
        f"{data.n.min()}" if data.n.min() == data.n.max() else f"{data.n.min()}..{data.n.max()}"
    )
    m_range = (
        f"{data.m.min()}" if data.m.min() == data.m.max() else f"{data.m.min()}..{data.m.max()}"
    )
    users = f", {len(set(ranks.users))} users" if ranks.users is not None else ""
    level = f"{100 * args.confidence:g}%"
    lines = [
        f"{ranks.path}: {data.n_users} rows{users}; m = {m_range} ({ranks.m_source}), "
        f"n = {n_range} ({ranks.n_source}), {law} law",
    ]
    if estimates:
        lines += ["", f"estimates ({NO_INTERVAL}):", ""]
        rows = [["model", "metric", "method", "estimate"]] + [
            [r["model"], r["metric"], r["method"], _fmt(r["estimate"])] for r in estimates
        ]
        lines.append(_table(rows, right={3}))
    if comparisons:
        lines += ["", "paired differences (first - second; no interval, as above):", ""]
        rows = [["first", "second", "metric", "method", "difference"]] + [
            [r["first"], r["second"], r["metric"], r["method"], _fmt(r["difference"])]
            for r in comparisons
        ]
        lines.append(_table(rows, right={4}))
    if ranges:
        lines += [
            "",
            f"ranges that hold whatever the ranks ({level}, the estimators' bias included; "
            "docs/estimators.md):",
            "",
        ]
        rows = [["model", "metric", "low", "high"]] + [
            [r["model"], r["metric"], _fmt(r["low"]), _fmt(r["high"])]
            for r in ranges
            if r["kind"] == "range"
        ]
        lines.append(_table(rows, right={2, 3}))
        differences = [r for r in ranges if r["kind"] == "range_difference"]
        wrong = f"{100 - 100 * args.confidence:.3g}%"
        if differences:
            lines += [
                "",
                f"ranges of the paired differences (first - second, {level}) and the "
                f"verdict each supports (wrong with probability at most {wrong}):",
                "",
            ]
            rows = [["first", "second", "metric", "low", "high", "verdict"]] + [
                [r["first"], r["second"], r["metric"], _fmt(r["low"]), _fmt(r["high"]),
                 r["verdict"]]
                for r in differences
            ]  # fmt: skip
            lines.append(_table(rows, right={3, 4}))
    elif RANGE in args.methods:
        lines += ["", _range_left_out(args, law)]
    elif estimates:
        lines += ["", f"no range (add method {RANGE}): nothing above carries an interval"]
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
    >>> from pathlib import Path
    >>> path = Path(tempfile.mkdtemp()) / "ranks.csv"
    >>> _ = path.write_text("user,sampled_rank\\n1,1\\n2,3\\n3,60\\n4,2\\n")
    >>> import contextlib, io
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     status = main(["correct", str(path), "--m", "99", "--n", "3706", "--law",
    ...                    "hypergeometric", "--metrics", "recall@10", "--methods", "range",
    ...                    "sampled", "bv_0.1", "--quiet"])
    >>> status
    0
    >>> text = out.getvalue()
    >>> text.splitlines()[2][:51]
    "estimates (no interval: an estimator's bias depends"
    >>> print(text[text.index("model "):])
    model         metric     method   estimate
    sampled_rank  recall@10  sampled    0.7500
    sampled_rank  recall@10  bv_0.1     0.0510
    <BLANKLINE>
    ranges that hold whatever the ranks (95%, the estimators' bias included; docs/estimators.md):
    <BLANKLINE>
    model         metric        low    high
    sampled_rank  recall@10  0.0000  0.9028
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
