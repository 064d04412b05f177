"""``correct --family``: with three models or more, every pair's verdict with the
family-wise error controlled (Holm's step-down by default, or Bonferroni's
simultaneous intervals) and the set of models that may be best, for the design's
estimates (``--exact --design``) and a full ranking's paired tests over the users
(:mod:`sampled_metrics.estimation.decisions.family`; docs/deciding.md).

One family per metric: its pairs are every pair of models. With two models the one
pair's verdict is already the family's, and nothing is added.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from itertools import combinations

from ..estimation.decisions import (
    DECISION_DEFAULTS,
    FAMILY_METHODS,
    Estimate,
    FamilyVerdicts,
    family_verdicts,
    may_be_best,
    paired_family,
)
from ..estimation.metrics import metric_by_name
from .errors import InputError
from .rank_file import RankFile
from .results import FamilyDifference, MayBeBest, Result
from .text import number, p_value, table

__all__ = [
    "NO_FAMILY",
    "add_family_option",
    "check_family",
    "design_family",
    "family_method",
    "family_text",
    "full_ranking_family",
]

NO_FAMILY = "none"
# The fewest models whose pairs make a family (with two, the one pair is its own).
FEWEST_MODELS = 3
NAMES = {"holm": "Holm's step-down", "bonferroni": "Bonferroni's correction"}
# What the intervals of each method are (the module estimation.decisions.family says why).
INTERVALS = {
    "holm": "intervals at the last step's level, holding 0 exactly where undecided",
    "bonferroni": "the intervals simultaneous",
}


def add_family_option(parser: argparse.ArgumentParser) -> None:
    """``correct``'s ``--family``."""
    parser.add_argument(
        "--family",
        choices=(*FAMILY_METHODS, NO_FAMILY),
        help="with three models or more, decide every pair with the family-wise error "
        "controlled and name the models that may be best (default: "
        f"{DECISION_DEFAULTS['family']}; bonferroni: simultaneous intervals; none: each "
        "pair alone); with --exact and --design, or a full ranking's file",
    )


def family_method(args: argparse.Namespace) -> str:
    """The method ``--family`` names, or the default."""
    return str(args.family or DECISION_DEFAULTS["family"])


def check_family(args: argparse.Namespace, decides: bool, path: str) -> None:
    """An InputError when ``--family`` is given where no test decides: sampled ranks
    alone give ranges, not estimates with a standard error."""
    if args.family is not None and not decides:
        raise InputError(
            "--family needs --exact and --design, or a full ranking's file (--protocol "
            "full): the ranges of sampled ranks alone carry no test to correct",
            path=path,
            option="--family",
        )


def _records(models: Sequence[str], metric: str, found: FamilyVerdicts) -> list[Result]:
    """The family's records: one per pair (in :func:`itertools.combinations`' order),
    then the models that may be best."""
    pairs = list(combinations(range(len(models)), 2))
    records: list[Result] = [
        FamilyDifference(models[i], models[j], metric, found.method, d, low, high,
                         found.level, p, adjusted, verdict)
        for (i, j), d, low, high, p, adjusted, verdict in zip(
            pairs, found.difference, found.low, found.high, found.p_value,
            found.adjusted_p_value, found.verdicts,
        )
    ]  # fmt: skip
    best = tuple(may_be_best(models, pairs, found.verdicts))
    return [*records, MayBeBest(metric, found.method, found.confidence, best)]


def design_family(
    models: Sequence[str],
    metric: str,
    differences: Sequence[Estimate],
    method: str,
    confidence: float,
) -> list[Result]:
    """The family of the design's paired differences (one per pair, in
    :func:`itertools.combinations`' order), each with its standard error and
    Satterthwaite's degrees of freedom; none for two models or ``--family none``."""
    if method == NO_FAMILY or len(models) < FEWEST_MODELS:
        return []
    found = family_verdicts(
        [e.value for e in differences],
        [e.standard_error for e in differences],
        [e.degrees_of_freedom for e in differences],
        confidence=confidence,
        method=method,
    )
    return _records(models, metric, found)


def full_ranking_family(
    ranks: RankFile, metric: str, method: str, confidence: float
) -> list[Result]:
    """The family of a full ranking's paired t-tests over the users; none for two
    models, one user or ``--family none``."""
    models = list(ranks.evaluations)
    if method == NO_FAMILY or len(models) < FEWEST_MODELS or ranks.first.n_users < 2:
        return []
    fn = metric_by_name(metric)
    values = [fn(data.ranks, data.n) for data in ranks.evaluations.values()]
    _, found = paired_family(values, confidence=confidence, method=method)
    return _records(models, metric, found)


def family_text(results: Sequence[Result]) -> list[str]:
    """The lines of the family's tables (none without a family)."""
    pairs = [r for r in results if isinstance(r, FamilyDifference)]
    best = [r for r in results if isinstance(r, MayBeBest)]
    if not pairs:
        return []
    wrong = f"{100 - 100 * best[0].confidence:.3g}%"
    count = len(pairs) // len(best)
    lines = [
        "",
        f"every pair at once ({NAMES[pairs[0].method]} over each metric's {count} pairs: "
        f"some verdict wrong with probability at most {wrong}; "
        f"{INTERVALS[pairs[0].method]}; docs/deciding.md):",
        "",
    ]
    rows = [
        [r.first, r.second, r.metric, number(r.difference), number(r.low), number(r.high),
         f"{100 * r.level:.3g}%", p_value(r.p_value), p_value(r.adjusted_p_value),
         r.verdict.label(r.first, r.second)]
        for r in pairs
    ]  # fmt: skip
    header = ["first", "second", "metric", "difference", "low", "high", "level", "p",
              "adjusted p", "verdict"]  # fmt: skip
    lines.append(table(header, rows, {3, 4, 5, 6, 7, 8}))
    level = f"{100 * best[0].confidence:g}%"
    lines += [
        "",
        f"the models that may be best (no verdict above says another beats them; every "
        f"best model is among them with probability at least {level}):",
        "",
        table(["metric", "may be best"], [[r.metric, ", ".join(r.models)] for r in best], set()),
    ]
    return lines
