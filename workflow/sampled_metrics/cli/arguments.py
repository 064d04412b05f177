"""The command line's arguments: the ``sampled-metrics`` parser, its ``correct``
command's options and their types (an error is one line on stderr, exit status 2).
"""

from __future__ import annotations

import argparse

from ..estimation.estimators import ESTIMATOR_DEFAULTS, parse_estimator
from ..estimation.laws import LAWS
from ..estimation.metrics import metric_by_name
from .presets import PRESETS

__all__ = ["DEFAULT_METHODS", "DEFAULT_METRICS", "NO_INTERVAL", "PROG", "RANGE"]

PROG = "sampled-metrics"
DEFAULT_METRICS = ("recall@10", "ndcg@10")
# ``range``: the identification interval (estimation.estimators.bounds), the one interval
# the command prints: it covers the exact metric with the stated probability whatever the
# ranks. The estimators print a point estimate without an interval (NO_INTERVAL says why).
RANGE = "range"
DEFAULT_METHODS = (RANGE, "sampled", "mn_em", "em")
NO_INTERVAL = (
    "no interval: an estimator's bias depends on the unknown distribution of the ranks "
    "and is not in an interval of its sampling noise, which missed the exact metric in up "
    'to 100 % of simulated evaluations (docs/estimators.md, "Which intervals hold")'
)


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
    if text == RANGE:
        return text
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
        help="corrected metrics, and ranges that hold, from a file of sampled ranks",
        description="Read each held-out item's sampled rank (1 + the sampled items the "
        "model scored above it) and print every metric's range that holds whatever the "
        "ranks (method range) and its estimate by every estimator (without an interval: "
        "their bias is unknown); with several rank columns also the paired differences of "
        "each pair of models and the verdict their range supports. See docs/cli.md.",
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
        help="a sampled-rank column (repeat for several models, on the same or on their own "
        "sampled items; default: sampled_rank)",
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
        help="range (the interval that holds whatever the ranks), and the estimators "
        "sampled, rank_estimate, ls, cls, bv_<gamma>, em, maxent, bv_em_<gamma>, "
        "bv_maxent_<gamma>, mn_em, mn_maxent (point estimates, no interval) "
        f"(default: {' '.join(DEFAULT_METHODS)})",
    )
    estimates.add_argument(
        "--confidence",
        type=_confidence,
        default=ESTIMATOR_DEFAULTS["confidence"],
        help=f"level of the ranges (default: {ESTIMATOR_DEFAULTS['confidence']})",
    )
    estimates.add_argument(
        "--bootstrap",
        type=_count,
        default=None,
        metavar="B",
        help="not used any more (the learned estimators' bootstrap intervals left out "
        "their bias and are no longer printed); accepted, with a note on stderr",
    )
    estimates.add_argument(
        "--seed", type=int, default=None, help="not used any more (as --bootstrap)"
    )
    output = correct.add_argument_group("output")
    output.add_argument("--json", action="store_true", help="print a JSON list of records")
    output.add_argument(
        "--quiet", action="store_true", help="no progress bar (none either when not on a terminal)"
    )
    return parser
