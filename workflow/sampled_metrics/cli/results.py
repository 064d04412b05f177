"""What ``correct`` computes, as typed records with one JSON form each
(:meth:`Result.to_record`: ``kind`` and the fields in order, a verdict in the models'
names): the sub-commands' text tables and ``--json`` read the same objects.

Kinds: ``estimate`` (:class:`PointEstimate`, :class:`DesignEstimate`), ``comparison``
(:class:`PointDifference`, :class:`DesignDifference`), ``range`` (:class:`Range`),
``range_difference`` (:class:`RangeDifference`), ``exact`` (:class:`ExactValue`),
``exact_difference`` (:class:`ExactDifference`), and with many models
``family_comparison`` (:class:`FamilyDifference`) and ``may_be_best`` (:class:`MayBeBest`);
from a sequential design ``sequential_comparison`` (:class:`SequentialDifference`) and
``waves`` (:class:`WaveCost`); from a one-command decision also ``decision_cost``
(:class:`DecisionCost`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

from ..estimation.decisions import Verdict

__all__ = [
    "DecisionCost",
    "DesignDifference",
    "DesignEstimate",
    "ExactDifference",
    "ExactValue",
    "FamilyDifference",
    "MayBeBest",
    "PointDifference",
    "PointEstimate",
    "Range",
    "RangeDifference",
    "Result",
    "SequentialDifference",
    "WaveCost",
    "records",
]


@dataclass(frozen=True)
class Result:
    """A record of ``correct``'s report; ``KIND`` names its kind in JSON."""

    KIND: ClassVar[str] = ""

    def to_record(self) -> dict:
        """The JSON record: ``kind``, then every field in order; a :class:`Verdict` is
        said in the models' names (``first``, ``second``).

        Examples
        --------
        >>> record = RangeDifference("A", "B", "ndcg@10", 0.01, 0.03, Verdict.FIRST).to_record()
        >>> list(record), record["verdict"]
        (['kind', 'first', 'second', 'metric', 'low', 'high', 'verdict'], 'A better')
        """
        record: dict = {"kind": self.KIND, **{f.name: getattr(self, f.name) for f in fields(self)}}
        if isinstance(record.get("verdict"), Verdict):
            record["verdict"] = record["verdict"].label(record["first"], record["second"])
        return record


@dataclass(frozen=True)
class PointEstimate(Result):
    """An estimator's point estimate of a model's metric (None: not finite)."""

    KIND: ClassVar[str] = "estimate"
    model: str
    metric: str
    estimator: str
    estimate: float | None


@dataclass(frozen=True)
class PointDifference(Result):
    """The difference first - second of two models' point estimates."""

    KIND: ClassVar[str] = "comparison"
    first: str
    second: str
    metric: str
    estimator: str
    difference: float | None


@dataclass(frozen=True)
class Range(Result):
    """A model's range that holds whatever the ranks (the identification interval)."""

    KIND: ClassVar[str] = "range"
    model: str
    metric: str
    low: float
    high: float


@dataclass(frozen=True)
class RangeDifference(Result):
    """The range of first - second, and the verdict it supports."""

    KIND: ClassVar[str] = "range_difference"
    first: str
    second: str
    metric: str
    low: float
    high: float
    verdict: Verdict


@dataclass(frozen=True)
class ExactValue(Result):
    """A full ranking's exact metric."""

    KIND: ClassVar[str] = "exact"
    model: str
    metric: str
    value: float


@dataclass(frozen=True)
class ExactDifference(Result):
    """A full ranking's difference first - second, its paired t-test (None: one row)
    and the verdict the test's interval supports."""

    KIND: ClassVar[str] = "exact_difference"
    first: str
    second: str
    metric: str
    difference: float
    low: float | None
    high: float | None
    p_value: float | None
    verdict: Verdict


@dataclass(frozen=True)
class DesignEstimate(Result):
    """A model's metric estimated from a two-phase design, with its interval."""

    KIND: ClassVar[str] = "estimate"
    model: str
    metric: str
    estimator: str
    estimate: float
    low: float
    high: float
    standard_error: float
    population: str


@dataclass(frozen=True)
class DesignDifference(Result):
    """first - second estimated from a two-phase design, its interval and verdict."""

    KIND: ClassVar[str] = "comparison"
    first: str
    second: str
    metric: str
    estimator: str
    difference: float
    low: float
    high: float
    standard_error: float
    population: str
    verdict: Verdict


@dataclass(frozen=True)
class FamilyDifference(Result):
    """first - second decided with the family-wise error controlled (``method``): its
    interval at ``level``, its p-value and the family's adjusted p-value, its verdict."""

    KIND: ClassVar[str] = "family_comparison"
    first: str
    second: str
    metric: str
    method: str
    difference: float
    low: float
    high: float
    level: float
    p_value: float
    adjusted_p_value: float
    verdict: Verdict


@dataclass(frozen=True)
class MayBeBest(Result):
    """The models no verdict of a metric's family says another beats: every best model
    is among them with probability at least ``confidence``."""

    KIND: ClassVar[str] = "may_be_best"
    metric: str
    method: str
    confidence: float
    models: tuple[str, ...]


@dataclass(frozen=True)
class SequentialDifference(Result):
    """first - second at the look ``wave`` of a sequential design (the pair's last: where
    it stopped, or the latest): the estimate, its repeated confidence interval d +- c se
    (``boundary`` c), the users ranked by then, the verdict; ``family``, how the pairs
    share the family's error 1 - ``confidence`` (bonferroni: the intervals at every look
    cover together at ``confidence``; holm: the verdicts are wrong together at most at 1 -
    ``confidence``, the intervals not simultaneous)."""

    KIND: ClassVar[str] = "sequential_comparison"
    first: str
    second: str
    metric: str
    wave: int
    users: int
    difference: float
    low: float
    high: float
    standard_error: float
    boundary: float | None
    confidence: float
    family: str
    verdict: Verdict


@dataclass(frozen=True)
class WaveCost(Result):
    """A sequential design's waves so far: the users ranked by each wave, their share of
    the users and of a full ranking's scored items, the budget, and the state:
    ``"open"`` (a next wave is due), ``"decided"`` (every pair done) or ``"budget
    spent"``."""

    KIND: ClassVar[str] = "waves"
    users: tuple[int, ...]
    share_of_users: float
    share_of_items: float
    budget: float
    state: str


@dataclass(frozen=True)
class DecisionCost(Result):
    """What a one-command decision cost: the users ranked exactly by each model, their
    share of the users and of a full ranking's scored items, the wall time of each step
    (loading, the sampled evaluation, the exact waves; seconds) and their total, beside
    ``full_ranking_estimate``: ranking every user exactly by every model, estimated by a
    line through the exact waves' times, a set-up per pass plus a time per user (loads
    not included)."""

    KIND: ClassVar[str] = "decision_cost"
    users: int
    share_of_users: float
    share_of_items: float
    load_seconds: float
    sampled_seconds: float
    exact_seconds: float
    total_seconds: float
    full_ranking_estimate: float


def records(results: list[Result]) -> list[dict]:
    """The JSON records of ``results``, in order."""
    return [result.to_record() for result in results]
