"""``sampled-metrics correct RANKS --exact EXACT --design chosen.csv``: every model's
metric and every pair's difference estimated from all users' sampled ranks and the
exact ranks of the users a design chose (``sampled-metrics plan``), with an interval
and a verdict that hold (:mod:`sampled_metrics.estimation.decisions`; docs/deciding.md).

Its options (:func:`add_decision_options`) and the rules between them and ``correct``'s
(:data:`RULES`, checked by :func:`check_rules`); the inputs are read and checked by
:mod:`.decision_inputs`; the results are :mod:`.results`' design records.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ..estimation.decisions import (
    POPULATIONS,
    estimate_difference,
    estimate_metric,
    metric_proxy,
)
from .decision_inputs import DecisionInputs
from .errors import InputError
from .family import design_family, family_text
from .results import DesignDifference, DesignEstimate, Result
from .text import heading, number, table

__all__ = [
    "ESTIMATOR",
    "RULES",
    "OptionRule",
    "add_decision_options",
    "check_rules",
    "decision_results",
    "decision_text",
    "given_options",
]

# The records' estimator: the difference estimator of the two-phase design.
ESTIMATOR = "design"
ABOUT = {"finite": "these users", "superpopulation": "users like them"}
# Each option of ``correct`` the rules speak of, and its argparse destination.
DESTINATIONS = {
    "--exact": "exact",
    "--design": "design",
    "--population": "population",
    "--allow-unlikely": "allow_unlikely",
    "--estimators": "estimators",
    "--no-range": "no_range",
}


@dataclass(frozen=True)
class OptionRule:
    """``option``, when given, needs every option of ``needs`` and none of ``excludes``;
    ``reason`` says why, after the error."""

    option: str
    needs: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    reason: str = ""


DESIGN_OPTIONS = ("--exact", "--design")
RULES = (
    OptionRule(
        "--exact", needs=("--design",), reason="the exact ranks and the design that chose them"
    ),
    OptionRule(
        "--design",
        needs=("--exact",),
        reason="the design and the exact ranks of the users it chose",
    ),
    OptionRule(
        "--population", needs=DESIGN_OPTIONS, reason="it says whom the design's intervals are about"
    ),
    OptionRule(
        "--allow-unlikely",
        needs=DESIGN_OPTIONS,
        reason="it lets exact ranks that do not explain the sampled ranks through",
    ),
    OptionRule(
        "--estimators",
        excludes=DESIGN_OPTIONS,
        reason="--exact and --design print the design's estimates",
    ),
    OptionRule(
        "--no-range",
        excludes=DESIGN_OPTIONS,
        reason="--exact and --design print the design's estimates",
    ),
)


def given_options(args: argparse.Namespace) -> set[str]:
    """The options of :data:`DESTINATIONS` given on the command line."""
    return {
        option
        for option, dest in DESTINATIONS.items()
        if getattr(args, dest, None) not in (None, False)
    }


def check_rules(given: set[str], rules: tuple[OptionRule, ...] = RULES) -> None:
    """An InputError for the first rule the ``given`` options break.

    Examples
    --------
    >>> check_rules({"--exact", "--design"})
    >>> try:
    ...     check_rules({"--exact"})
    ... except InputError as error:
    ...     print(error)
    --exact needs --design: the exact ranks and the design that chose them
    >>> try:
    ...     check_rules({"--exact", "--design", "--no-range"})
    ... except InputError as error:
    ...     print(error)
    --no-range does not go with --exact, --design: --exact and --design print the design's estimates
    """
    for rule in rules:
        if rule.option not in given:
            continue
        missing = [option for option in rule.needs if option not in given]
        if missing:
            raise InputError(
                f"{rule.option} needs {' and '.join(missing)}: {rule.reason}", option=rule.option
            )
        clashing = [option for option in rule.excludes if option in given]
        if clashing:
            raise InputError(
                f"{rule.option} does not go with {', '.join(clashing)}: {rule.reason}",
                option=rule.option,
            )


def add_decision_options(parser: argparse.ArgumentParser) -> None:
    """``correct``'s options of a two-phase design (docs/deciding.md)."""
    group = parser.add_argument_group("deciding with a few users ranked exactly (docs/deciding.md)")
    group.add_argument(
        "--exact",
        nargs="+",
        metavar="EXACT",
        help="the exact ranks of the users the design chose: user, a column per model "
        "named as in FILE, n (a full ranking's file), or one file per model (each named "
        "by its sidecar); with --design",
    )
    group.add_argument(
        "--design", metavar="CHOSEN", help="the design sampled-metrics plan wrote (chosen.csv)"
    )
    group.add_argument(
        "--population",
        choices=POPULATIONS,
        help="finite: the intervals are about the file's users (the default); "
        "superpopulation: about users like them",
    )
    group.add_argument(
        "--allow-unlikely",
        action="store_true",
        help="go on when the exact ranks are far less likely to have produced the sampled "
        "ranks than they should be (by default an error: another model's or checkpoint's "
        "ranks, other sampled items, swapped columns); impossible pairs stay an error",
    )


def decision_results(
    inputs: DecisionInputs, metrics: list[str], confidence: float, population: str,
    family: str,
) -> list[Result]:  # fmt: skip
    """Every model's estimate and every pair's difference with interval and verdict,
    by model (pair), then metric; then each metric's family of pairs (``family``, the
    method of :mod:`.family`)."""
    ranks = inputs.ranks.ranks
    models = inputs.models
    data = ranks.first
    design, exact = inputs.design.design, inputs.exact.values
    estimates: dict[tuple[int, str], Result] = {}
    differences: dict[tuple[int, int, str], Result] = {}
    families: list[Result] = []
    for metric in metrics:
        proxy = {
            model: metric_proxy(
                ranks.evaluations[model].ranks, data.m, data.n, metric, law=data.law
            )
            for model in models
        }
        for k, model in enumerate(models):
            e = estimate_metric(
                design,
                exact[k],
                ranks.evaluations[model].ranks,
                data.m,
                data.n,
                metric,
                law=data.law,
                proxy=proxy[model],
                confidence=confidence,
                population=population,
            )
            estimates[k, metric] = DesignEstimate(
                model, metric, ESTIMATOR, e.value, e.low, e.high, e.standard_error, population
            )
        pairs = []
        for (i, first), (j, second) in combinations(enumerate(models), 2):
            sampled = [ranks.evaluations[first].ranks, ranks.evaluations[second].ranks]
            pair = [proxy[first], proxy[second]]
            e = estimate_difference(
                design,
                exact[[i, j]],
                sampled,
                data.m,
                data.n,
                metric,
                law=data.law,
                proxy=pair,
                confidence=confidence,
                population=population,
            )
            pairs.append(e)
            differences[i, j, metric] = DesignDifference(
                first,
                second,
                metric,
                ESTIMATOR,
                e.value,
                e.low,
                e.high,
                e.standard_error,
                population,
                e.verdict,
            )
        families += design_family(models, metric, pairs, family, confidence)
    by_model = [estimates[key] for key in sorted(estimates, key=lambda key: key[0])]
    by_pair = [differences[key] for key in sorted(differences, key=lambda key: key[:2])]
    return by_model + by_pair + families


def decision_text(
    inputs: DecisionInputs, results: list[Result], confidence: float, population: str
) -> str:
    """The text tables of :func:`decision_results`."""
    resolved, design = inputs.ranks, inputs.design.design
    level = f"{100 * confidence:g}%"
    about = ABOUT[population]
    lines = [
        heading(resolved.reading, resolved.ranks),
        f"design {inputs.design.path}: {design.n_chosen} of {design.n_users} users ranked "
        f"exactly ({', '.join(inputs.exact.files)}), "
        f"{int(np.count_nonzero(design.stratum_sizes))} strata",
        "",
        f"estimates from every user's sampled rank and the chosen users' exact ranks "
        f"({level} intervals about {about}; docs/deciding.md):",
        "",
    ]
    rows = [
        [r.model, r.metric, number(r.estimate), number(r.low), number(r.high)]
        for r in results
        if isinstance(r, DesignEstimate)
    ]
    lines.append(table(["model", "metric", "estimate", "low", "high"], rows, {2, 3, 4}))
    pairs = [r for r in results if isinstance(r, DesignDifference)]
    if pairs:
        wrong = f"{100 - 100 * confidence:.3g}%"
        lines += [
            "",
            f"paired differences (first - second, {level}, about {about}) and the verdict "
            f"each supports (wrong with probability at most {wrong}):",
            "",
        ]
        rows = [
            [
                r.first,
                r.second,
                r.metric,
                number(r.difference),
                number(r.low),
                number(r.high),
                r.verdict.label(r.first, r.second),
            ]
            for r in pairs
        ]
        header = ["first", "second", "metric", "difference", "low", "high", "verdict"]
        lines.append(table(header, rows, {3, 4, 5}))
    return "\n".join(lines + family_text(results))
