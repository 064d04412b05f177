"""A claim of the paper and its verdict (PASS, FAIL or N/A), the recommenders the
claims are about, and the reproduced numbers the checks of Tables 3-4 and Figure 6
read, with the small helpers that format the evidence.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pandas as pd

from ...recommenders import PAPER_RECOMMENDERS

__all__ = ["VERDICTS", "Claim", "paper_trio"]


# The three verdicts, in the order the report counts them.
VERDICTS = ("PASS", "FAIL", "N/A")


@dataclass(frozen=True)
class Claim:
    """One claim of the paper and its verdict on the reproduced numbers.

    ``passed`` is True (PASS), False (FAIL) or None (N/A: the run has no numbers
    to check the claim on; ``evidence`` says why).

    Examples
    --------
    >>> Claim("6.2", "On the exact AUC, X > Y > Z", None, "not in this run: metric auc").verdict
    'N/A'
    >>> Claim("6.2", "On the exact AUC, X > Y > Z", True, "X 89.22, Y 85.48, Z 74.31").verdict
    'PASS'
    """

    section: str
    statement: str
    passed: bool | None
    evidence: str

    @property
    def verdict(self) -> str:
        """ "PASS", "FAIL" or "N/A"."""
        return "N/A" if self.passed is None else "PASS" if self.passed else "FAIL"


def _means(table3: pd.DataFrame, metric: str, method: str) -> dict[str, float]:
    rows = table3[(table3["metric"] == metric) & (table3["method"] == method)]
    return dict(zip(rows["recommender"], rows["mean"]))


def _order(values: dict[str, float]) -> str:
    return " > ".join(sorted(values, key=lambda name: values[name], reverse=True))


def _fmt(values: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in values.items())


def _yes_no(checks: dict[str, bool]) -> str:
    return ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in checks.items())


def _within_factor(value, target: float, factor: float = 2.0) -> bool:
    return bool(pd.notna(value) and target / factor <= value <= target * factor)


@dataclass(frozen=True)
class _Run:
    """The reproduced numbers the claims are checked on (see :func:`.table_claims.check_claims`)."""

    table3: pd.DataFrame
    table4: pd.DataFrame
    thresholds: pd.DataFrame
    paper_thresholds: dict
    recommenders: tuple
    fig6_metric: str
    fig6_pair: tuple
    methods: list  # the corrections of the run

    def values(self, metric: str, method: str) -> dict[str, float] | None:
        """The mean of every recommender of the claims, in their order; None
        unless Table 3 has one for each."""
        means = _means(self.table3, metric, method)
        if not set(self.recommenders) <= set(means):
            return None
        return {rec: means[rec] for rec in self.recommenders}

    def known(self, metric: str, method: str) -> dict[str, float]:
        """:meth:`values` of a metric and method that :meth:`metrics_with` vouched for."""
        values = self.values(metric, method)
        if values is None:
            raise KeyError(f"Table 3 has no {method} {metric} of every recommender")
        return values

    def metrics_with(self, metrics, *methods: str) -> list[str]:
        """The ``metrics`` with values of every one of ``methods`` for every recommender."""
        return [m for m in metrics if all(self.values(m, k) is not None for k in methods)]

    def absent(self, metrics=(), methods=()) -> str:
        """What of ``metrics``, ``methods`` and the recommenders Table 3 lacks ("" if nothing)."""
        parts = []
        for kind, wanted in (
            ("metric", metrics),
            ("method", methods),
            ("recommender", self.recommenders),
        ):
            missing = [w for w in wanted if w not in set(self.table3[kind])]
            if missing:
                parts.append(f"{kind}{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        return "not in this run: " + "; ".join(parts) if parts else ""


def _not_applicable(section: str, statement: str, reason: str) -> Claim:
    return Claim(section, statement, None, reason or "Table 3 has no values to check it on")


def _partly(evidence: str, absent: str) -> str:
    """The evidence, and what part of the claim the run could not check."""
    return f"{evidence}; {absent}" if absent else evidence


def paper_trio(recommenders: Iterable[str]) -> tuple[str, str, str] | None:
    """The recommenders the paper's claims are about: X, Y and Z when the run
    has all three (other recommenders may run beside them), else None."""
    x, y, z = PAPER_RECOMMENDERS
    trio = (x, y, z)
    return trio if set(trio) <= set(recommenders) else None
