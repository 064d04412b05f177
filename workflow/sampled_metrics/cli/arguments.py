"""What the sub-commands share: the parser class (an error is one line on stderr, exit
status 2), the option types, the defaults, and the removed options (each one error
naming what replaced it).
"""

from __future__ import annotations

import argparse
from typing import NoReturn

from ..estimation.estimators import parse_estimator
from ..estimation.metrics import metric_by_name
from ..frameworks.registry import protocol_by_name

__all__ = [
    "DEFAULT_ESTIMATORS",
    "DEFAULT_METRICS",
    "NO_INTERVAL",
    "PROG",
    "Parser",
    "estimator",
    "metric",
    "non_negative_int",
    "positive_int",
    "protocol_name",
    "remove_options",
    "share",
]

PROG = "sampled-metrics"
DEFAULT_METRICS = ("recall@10", "ndcg@10")
DEFAULT_ESTIMATORS = ("sampled", "mn_em", "em")
# The estimators print a point estimate without an interval; the one interval the
# command prints is the range (the identification interval, estimation.estimators.bounds).
NO_INTERVAL = (
    "no interval: an estimator's bias depends on the unknown distribution of the ranks "
    "and is not in an interval of its sampling noise, which missed the exact metric in up "
    'to 100 % of simulated evaluations (docs/estimators.md, "Which intervals hold")'
)


class Parser(argparse.ArgumentParser):
    """argparse, but an error is one line on stderr (exit status 2)."""

    def error(self, message: str) -> NoReturn:
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


positive_int = _integer_from(1)
non_negative_int = _integer_from(0)


def _checked_by(check):
    """An argparse type: the text, if ``check(text)`` raises no ValueError."""

    def parse(text: str) -> str:
        try:
            check(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        return text

    return parse


def share(text: str) -> float:
    """An argparse type: a number in (0, 1] (a budget, a confidence)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{value} is not in (0, 1]")
    return value


metric = _checked_by(metric_by_name)
protocol_name = _checked_by(protocol_by_name)


def _estimator_name(text: str) -> None:
    if text == "range":
        raise ValueError(
            "range is not an estimator: the range is printed unless --no-range is given"
        )
    parse_estimator(text)


estimator = _checked_by(_estimator_name)


class _Removed(argparse.Action):
    """An option that is gone: using it is one error naming what replaced it."""

    def __init__(self, option_strings, dest, replacement: str, **kwargs):
        super().__init__(option_strings, dest, nargs="*", help=argparse.SUPPRESS, **kwargs)
        self.replacement = replacement

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string} is gone: {self.replacement}")


def remove_options(parser: argparse.ArgumentParser, removed: dict) -> None:
    """Register the removed options {option: what replaced it} on ``parser``."""
    for option, replacement in removed.items():
        parser.add_argument(
            option, action=_Removed, replacement=replacement, dest=f"removed_{option[2:]}"
        )
