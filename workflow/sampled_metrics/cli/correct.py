"""``sampled-metrics correct FILE``: from a file of sampled ranks, every metric's range
that holds whatever the ranks (the identification interval) and its estimate by every
estimator (a point estimate: no interval), and for several models the paired
differences with the range of each and the verdict it supports; from a full ranking's
ranks, the exact metrics.

How to read the file comes from its sidecar (:mod:`~sampled_metrics.frameworks.rank_meta`)
when it has one, else from the options (:mod:`.reading`); with ``--exact`` and
``--design`` the design's estimates (:mod:`.decide`). The sub-command resolves its
inputs, computes typed results and prints them.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..estimation.decisions import DECISION_DEFAULTS
from ..estimation.estimators import ESTIMATOR_DEFAULTS
from .arguments import (
    DEFAULT_ESTIMATORS,
    DEFAULT_METRICS,
    estimator,
    metric,
    remove_options,
)
from .decide import (
    add_decision_options,
    check_rules,
    decision_results,
    decision_text,
    given_options,
)
from .decision_inputs import resolve_decision
from .errors import InputError
from .family import add_family_option, check_family, family_method
from .inputs import resolve_ranks
from .reading import ReadOptions, add_reading_options
from .report import exact_results, print_report, sampled_results
from .results import records
from .sequential import sequential_results, sequential_text

__all__ = ["add_parser", "run"]

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


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
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
    add_family_option(parser)
    remove_options(parser, REMOVED)
    return parser


def _add_estimate_options(parser: argparse.ArgumentParser) -> None:
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
        help="level of the ranges; with --exact and --design or a full ranking, of the "
        f"intervals and the family-wise level (default: {ESTIMATOR_DEFAULTS['confidence']})",
    )
    output = parser.add_argument_group("output")
    output.add_argument("--json", action="store_true", help="print a JSON list of records")
    output.add_argument(
        "--quiet", action="store_true", help="no progress bar (none either when not on a terminal)"
    )


def run(args: argparse.Namespace) -> int:
    """Resolve the inputs (:mod:`.inputs`, :mod:`.decision_inputs`), compute the results
    and print them (``report``, ``decide``)."""
    check_rules(given_options(args))
    resolved = resolve_ranks(args.files, ReadOptions.from_args(args))
    metrics = args.metrics or list(DEFAULT_METRICS)
    check_family(args, args.exact is not None or resolved.reading.full, resolved.ranks.path)
    family = family_method(args)
    if args.exact is not None:  # and --design: check_rules
        inputs = resolve_decision(resolved, args.exact, args.design, args.allow_unlikely)
        if inputs.design.waves is not None:
            if args.population is not None:
                raise InputError("--population does not go with a sequential design: its "
                                 "intervals are about the file's users", option="--population",
                                 path=inputs.design.path)  # fmt: skip
            planned = ((inputs.design.record or {}).get("sequential") or {}).get("family")
            if args.family is not None and args.family != planned:
                raise InputError(f"--family {args.family} does not go with this sequential "
                                 f"design: its waves were drawn for {planned}",
                                 option="--family", path=inputs.design.path)  # fmt: skip
            results = sequential_results(inputs, metrics)[0]
            text = sequential_text(inputs, results)
            print(json.dumps(records(results), indent=1) if args.json else text)
            return 0
        population = str(args.population or DECISION_DEFAULTS["population"])
        results = decision_results(inputs, metrics, args.confidence, population, family)
        text = decision_text(inputs, results, args.confidence, population)
        print(json.dumps(records(results), indent=1) if args.json else text)
        return 0
    if resolved.reading.full:
        if args.estimators is not None or args.no_range:
            raise InputError(
                "a full ranking's metrics are exact: nothing to estimate (leave out "
                "--estimators and --no-range)",
                path=resolved.ranks.path,
            )
        results = exact_results(resolved.ranks, metrics, args.confidence, family)
    else:
        estimators = DEFAULT_ESTIMATORS if args.estimators is None else args.estimators
        results = sampled_results(
            resolved.ranks,
            metrics,
            list(estimators),
            not args.no_range,
            args.confidence,
            args.quiet,
        )
    print_report(resolved, results, args.confidence, not args.no_range, args.json)
    return 0
