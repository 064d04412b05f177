"""``correct``'s report: its records (each kind with only the fields it has a value
for) and their text tables or JSON.

Record kinds: ``estimate`` (model, metric, estimator, estimate), ``comparison``
(first, second, metric, estimator, difference), ``range`` (model, metric, low, high),
``range_difference`` (first, second, metric, low, high, verdict) for sampled ranks;
``exact`` (model, metric, value) and ``exact_difference`` (first, second, metric,
difference, low, high, p_value, verdict: the paired t-test over the rows) for a full
ranking's.
"""

from __future__ import annotations

import json
import math
import sys
from itertools import combinations
from pathlib import Path

import numpy as np

from ..estimation.decisions import interval_verdict
from ..estimation.estimators import (
    difference_interval,
    identification_intervals,
    point_estimates,
)
from ..estimation.metrics import metric_by_name
from .arguments import NO_INTERVAL, PROG
from .paired import paired_fields
from .rank_file import RankFile

__all__ = ["exact_records", "print_report", "sampled_records"]


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


def _number(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def sampled_records(
    ranks: RankFile, metrics, estimators, with_range: bool, confidence: float, quiet: bool
) -> list[dict]:
    """Every model's estimates and ranges, every pair's differences (the module's kinds)."""
    models = list(ranks.evaluations)
    pairs = list(combinations(models, 2))
    estimators = list(dict.fromkeys(estimators))
    show = not quiet and sys.stderr.isatty()
    points, estimates = {}, []
    with _progress(len(models) * (1 + with_range), not show) as bar:
        for model in models:
            bar.set_postfix_str(model)
            data = ranks.evaluations[model]
            points[model] = point_estimates(data, metrics, estimators) if estimators else {}
            estimates += [
                {"kind": "estimate", "model": model, "metric": metric, "estimator": name,
                 "estimate": _number(points[model][metric, name])}
                for metric in metrics
                for name in estimators
            ]  # fmt: skip
            bar.update()
        comparisons = [
            {"kind": "comparison", "first": first, "second": second, "metric": metric,
             "estimator": name,
             "difference": _number(points[first][metric, name] - points[second][metric, name])}
            for first, second in pairs
            for metric in metrics
            for name in estimators
        ]  # fmt: skip
        ranges = _ranges(ranks, models, pairs, metrics, confidence, bar) if with_range else []
    return estimates + comparisons + ranges


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
    """Which model the interval of first - second says is the better, by name."""
    return interval_verdict(low, high).label(first, second)


def exact_records(ranks: RankFile, metrics, confidence: float) -> list[dict]:
    """A full ranking's metrics: the mean over the rows of each metric of the exact
    ranks, and every pair's difference with its paired test (:mod:`.paired`)."""
    values = {
        (model, name): float(np.mean(metric_by_name(name)(data.ranks, data.n)))
        for model, data in ranks.evaluations.items()
        for name in metrics
    }
    models = list(ranks.evaluations)
    records = [
        {"kind": "exact", "model": model, "metric": name, "value": values[model, name]}
        for model in models
        for name in metrics
    ]
    for first, second in combinations(models, 2):
        for name in metrics:
            test = paired_fields(
                ranks.evaluations[first], ranks.evaluations[second], name, confidence
            )
            verdict = _verdict(first, second, test["low"] or 0.0, test["high"] or 0.0)
            records.append(
                {"kind": "exact_difference", "first": first, "second": second, "metric": name,
                 "difference": values[first, name] - values[second, name], **test,
                 "verdict": verdict}
            )  # fmt: skip
    return records


def _fmt(value: float, digits: int = 4) -> str:
    return "nan" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _p_value(value) -> str:
    return "nan" if value is None else f"{value:.2g}"


def _table(header: list, rows: list, right: set) -> str:
    rows = [header, *rows]
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    return "\n".join(
        "  ".join(
            cell.rjust(width) if k in right else cell.ljust(width)
            for k, (cell, width) in enumerate(zip(row, widths))
        ).rstrip()
        for row in rows
    )


def _span(values) -> str:
    low, high = int(values.min()), int(values.max())
    return f"{low}" if low == high else f"{low}..{high}"


def _heading(how, ranks: RankFile) -> str:
    data = ranks.first
    users = f", {len(set(ranks.users))} users" if ranks.users is not None else ""
    n = f"n = {_span(data.n)} ({ranks.n_source})"
    start = f"{ranks.path}: {data.n_users} rows{users}; "
    sidecar = f" ({Path(how.sidecar).name})" if how.sidecar else ""
    if how.full:
        return f"{start}full ranking{sidecar}, {n}"
    if sidecar:
        start += f"protocol {how.protocol}{sidecar}, "
    return f"{start}m = {_span(data.m)} ({ranks.m_source}), {n}, {how.law} law"


def _of(records, kind) -> list:
    return [r for r in records if r["kind"] == kind]


def _text(how, ranks: RankFile, records, confidence: float, with_range: bool) -> str:
    lines = [_heading(how, ranks)]
    if how.full:
        lines += ["", "exact metrics (a full ranking: nothing to correct):", ""]
        rows = [[r["model"], r["metric"], _fmt(r["value"])] for r in _of(records, "exact")]
        lines.append(_table(["model", "metric", "value"], rows, {2}))
        if differences := _of(records, "exact_difference"):
            level = f"{100 * confidence:g}%"
            lines += [
                "",
                f"paired differences over the users (first - second, {level} "
                "interval and p-value of the paired t-test, for users like these):",
                "",
            ]
            rows = [[r["first"], r["second"], r["metric"], _fmt(r["difference"]), _fmt(r["low"]),
                     _fmt(r["high"]), _p_value(r["p_value"]), r["verdict"]]
                    for r in differences]  # fmt: skip
            header = ["first", "second", "metric", "difference", "low", "high", "p", "verdict"]
            lines.append(_table(header, rows, {3, 4, 5, 6}))
        return "\n".join(lines)
    if estimates := _of(records, "estimate"):
        lines += ["", f"estimates ({NO_INTERVAL}):", ""]
        rows = [[r["model"], r["metric"], r["estimator"], _fmt(r["estimate"])] for r in estimates]
        lines.append(_table(["model", "metric", "estimator", "estimate"], rows, {3}))
    if comparisons := _of(records, "comparison"):
        lines += ["", "paired differences (first - second; no interval, as above):", ""]
        rows = [[r["first"], r["second"], r["metric"], r["estimator"], _fmt(r["difference"])]
                for r in comparisons]  # fmt: skip
        header = ["first", "second", "metric", "estimator", "difference"]
        lines.append(_table(header, rows, {4}))
    level = f"{100 * confidence:g}%"
    if ranges := _of(records, "range"):
        lines += [
            "",
            f"ranges that hold whatever the ranks ({level}, the estimators' bias included; "
            "docs/estimators.md):",
            "",
        ]
        rows = [[r["model"], r["metric"], _fmt(r["low"]), _fmt(r["high"])] for r in ranges]
        lines.append(_table(["model", "metric", "low", "high"], rows, {2, 3}))
    if differences := _of(records, "range_difference"):
        wrong = f"{100 - 100 * confidence:.3g}%"
        lines += [
            "",
            f"ranges of the paired differences (first - second, {level}) and the "
            f"verdict each supports (wrong with probability at most {wrong}):",
            "",
        ]
        rows = [[r["first"], r["second"], r["metric"], _fmt(r["low"]), _fmt(r["high"]),
                 r["verdict"]] for r in differences]  # fmt: skip
        header = ["first", "second", "metric", "low", "high", "verdict"]
        lines.append(_table(header, rows, {3, 4}))
    if not with_range and estimates:
        lines += ["", "no range (--no-range): nothing above carries an interval"]
    return "\n".join(lines)


def print_report(args, how, ranks: RankFile, records: list) -> None:
    """The notes on stderr, then the records as JSON or the text tables on stdout."""
    if ranks.unused_m_rows:
        print(
            f"{PROG} correct: note: {ranks.path}: column m differs from m = {how.m} "
            f"({ranks.m_source}) on {ranks.unused_m_rows} rows and is not used "
            "(--m-column m uses it)",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps(records, indent=1))
    else:
        print(_text(how, ranks, records, args.confidence, not args.no_range))
