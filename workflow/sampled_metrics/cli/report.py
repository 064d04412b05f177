"""``correct``'s report: its typed results (:mod:`.results`) of sampled ranks or of a
full ranking, and their text tables or JSON.

For sampled ranks: :class:`~.results.PointEstimate` and :class:`~.results.PointDifference`
(each estimator's), :class:`~.results.Range` and :class:`~.results.RangeDifference` (the
ranges that hold whatever the ranks); for a full ranking's: :class:`~.results.ExactValue`
and :class:`~.results.ExactDifference` (the paired t-test over the rows).
"""

from __future__ import annotations

import json
import math
import sys
from itertools import combinations
from typing import Any, TypeVar

import numpy as np

from ..estimation.decisions import interval_verdict
from ..estimation.estimators import (
    difference_interval,
    identification_intervals,
    point_estimates,
)
from ..estimation.metrics import metric_by_name
from .arguments import NO_INTERVAL, PROG
from .family import family_text, full_ranking_family
from .inputs import ResolvedRanks
from .paired import paired_fields
from .rank_file import RankFile
from .results import (
    ExactDifference,
    ExactValue,
    PointDifference,
    PointEstimate,
    Range,
    RangeDifference,
    Result,
    records,
)
from .text import heading, number, p_value, table

__all__ = ["exact_results", "print_report", "sampled_results"]

R = TypeVar("R", bound=Result)


def _progress(total: int, disable: bool) -> Any:
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


def _number(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def sampled_results(
    ranks: RankFile,
    metrics: list[str],
    estimators: list[str],
    with_range: bool,
    confidence: float,
    quiet: bool,
) -> list[Result]:
    """Every model's estimates and ranges, every pair's differences (the module's kinds)."""
    models = list(ranks.evaluations)
    pairs = list(combinations(models, 2))
    estimators = list(dict.fromkeys(estimators))
    show = not quiet and sys.stderr.isatty()
    points: dict = {}
    estimates: list[Result] = []
    with _progress(len(models) * (1 + with_range), not show) as bar:
        for model in models:
            bar.set_postfix_str(model)
            data = ranks.evaluations[model]
            points[model] = point_estimates(data, metrics, estimators) if estimators else {}
            estimates += [
                PointEstimate(model, metric, name, _number(points[model][metric, name]))
                for metric in metrics
                for name in estimators
            ]
            bar.update()
        comparisons: list[Result] = [
            PointDifference(first, second, metric, name,
                            _number(points[first][metric, name] - points[second][metric, name]))
            for first, second in pairs
            for metric in metrics
            for name in estimators
        ]  # fmt: skip
        ranges = _ranges(ranks, models, pairs, metrics, confidence, bar) if with_range else []
    return estimates + comparisons + ranges


def _ranges(
    ranks: RankFile, models: list, pairs: list, metrics: list, confidence: float, bar: Any
) -> list[Result]:
    """The identification intervals (estimation.estimators.bounds): of every model's
    metric, and of every pair's difference with the verdict it supports; they hold
    whatever the ranks."""
    found: list[Result] = []
    for model in models:
        bar.set_postfix_str(f"range {model}")
        found += [
            Range(model, metric, low, high)
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
            found.append(
                RangeDifference(first, second, metric, low, high, interval_verdict(low, high))
            )
    return found


def exact_results(
    ranks: RankFile, metrics: list[str], confidence: float, family: str
) -> list[Result]:
    """A full ranking's metrics: the mean over the rows of each metric of the exact
    ranks, every pair's difference with its paired test (:mod:`.paired`), then each
    metric's family of pairs (``family``, the method of :mod:`.family`)."""
    values = {
        (model, name): float(np.mean(metric_by_name(name)(data.ranks, data.n)))
        for model, data in ranks.evaluations.items()
        for name in metrics
    }
    models = list(ranks.evaluations)
    found: list[Result] = [
        ExactValue(model, name, values[model, name]) for model in models for name in metrics
    ]
    for first, second in combinations(models, 2):
        for name in metrics:
            test = paired_fields(
                ranks.evaluations[first], ranks.evaluations[second], name, confidence
            )
            verdict = interval_verdict(test["low"] or 0.0, test["high"] or 0.0)
            difference = values[first, name] - values[second, name]
            found.append(ExactDifference(first, second, name, difference, test["low"],
                                         test["high"], test["p_value"], verdict))  # fmt: skip
    for name in metrics:
        found += full_ranking_family(ranks, name, family, confidence)
    return found


def _of(results: list[Result], kind: type[R]) -> list[R]:
    return [r for r in results if isinstance(r, kind)]


def _text(resolved: ResolvedRanks, results: list[Result], confidence: float,
          with_range: bool) -> str:  # fmt: skip
    how, ranks = resolved.reading, resolved.ranks
    lines = [heading(how, ranks)]
    if how.full:
        lines += ["", "exact metrics (a full ranking: nothing to correct):", ""]
        rows = [[r.model, r.metric, number(r.value)] for r in _of(results, ExactValue)]
        lines.append(table(["model", "metric", "value"], rows, {2}))
        if differences := _of(results, ExactDifference):
            level = f"{100 * confidence:g}%"
            lines += [
                "",
                f"paired differences over the users (first - second, {level} "
                "interval and p-value of the paired t-test, for users like these):",
                "",
            ]
            rows = [[r.first, r.second, r.metric, number(r.difference), number(r.low),
                     number(r.high), p_value(r.p_value), r.verdict.label(r.first, r.second)]
                    for r in differences]  # fmt: skip
            header = ["first", "second", "metric", "difference", "low", "high", "p", "verdict"]
            lines.append(table(header, rows, {3, 4, 5, 6}))
        return "\n".join(lines + family_text(results))
    if estimates := _of(results, PointEstimate):
        lines += ["", f"estimates ({NO_INTERVAL}):", ""]
        rows = [[r.model, r.metric, r.estimator, number(r.estimate)] for r in estimates]
        lines.append(table(["model", "metric", "estimator", "estimate"], rows, {3}))
    if comparisons := _of(results, PointDifference):
        lines += ["", "paired differences (first - second; no interval, as above):", ""]
        rows = [[r.first, r.second, r.metric, r.estimator, number(r.difference)]
                for r in comparisons]  # fmt: skip
        header = ["first", "second", "metric", "estimator", "difference"]
        lines.append(table(header, rows, {4}))
    level = f"{100 * confidence:g}%"
    if ranges := _of(results, Range):
        lines += [
            "",
            f"ranges that hold whatever the ranks ({level}, the estimators' bias included; "
            "docs/estimators.md):",
            "",
        ]
        rows = [[r.model, r.metric, number(r.low), number(r.high)] for r in ranges]
        lines.append(table(["model", "metric", "low", "high"], rows, {2, 3}))
    if spans := _of(results, RangeDifference):
        wrong = f"{100 - 100 * confidence:.3g}%"
        lines += [
            "",
            f"ranges of the paired differences (first - second, {level}) and the "
            f"verdict each supports (wrong with probability at most {wrong}):",
            "",
        ]
        rows = [[r.first, r.second, r.metric, number(r.low), number(r.high),
                 r.verdict.label(r.first, r.second)] for r in spans]  # fmt: skip
        header = ["first", "second", "metric", "low", "high", "verdict"]
        lines.append(table(header, rows, {3, 4}))
    if not with_range and estimates:
        lines += ["", "no range (--no-range): nothing above carries an interval"]
    return "\n".join(lines)


def print_report(
    resolved: ResolvedRanks, results: list[Result], confidence: float, with_range: bool,
    as_json: bool,
) -> None:  # fmt: skip
    """The notes on stderr, then the results as JSON or the text tables on stdout."""
    how, ranks = resolved.reading, resolved.ranks
    if ranks.unused_m_rows:
        print(
            f"{PROG} correct: note: {ranks.path}: column m differs from m = {how.m} "
            f"({ranks.m_source}) on {ranks.unused_m_rows} rows and is not used "
            "(--m-column m uses it)",
            file=sys.stderr,
        )
    if as_json:
        print(json.dumps(records(results), indent=1))
    else:
        print(_text(resolved, results, confidence, with_range))
