"""The design study summarized: per method, model or pair and metric, over the seeds
(:func:`summarize`), and the study's goals (:class:`Goals`, the ``decisions.goals``
section of the configuration), each measured and said to hold or not (:func:`goals`).

The rows are :func:`.study.study_seed`'s. A pair's verdict is *right* when it names the
model whose exact metric over these users is higher, *wrong* when it names the other
(or any model when the two are equal), *undecided* otherwise; a point estimate
(``adaptive-em``) always names one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...estimation.decisions.verdict import EQUAL_WITHIN
from .registry import Method

__all__ = ["GOAL_COLUMNS", "MEASURED", "SUMMARY_COLUMNS", "Goals", "goals", "summarize"]

# Percent points throughout: metrics, widths, errors; shares in percent. Each measured
# column has its standard error over the seeds in <column>_se.
MEASURED = ["coverage", "width", "right", "wrong", "undecided", "rmse", "cost"]
SUMMARY_COLUMNS = [
    "method", "target", "name", "metric", "seeds", "exact", *MEASURED,
    *(f"{column}_se" for column in MEASURED),
]  # fmt: skip

GOAL_COLUMNS = ["goal", "says", "method", "measured", "holds"]


@dataclass(frozen=True)
class Goals:
    """The study's goals: the thresholds of the ``decisions.goals`` section (shares of
    the users as fractions, everything else in percent or percent points).

    Parameters
    ----------
    cost_budget, cost_at_most : float
        The design at ``cost_budget`` of the users costs at most ``cost_at_most`` % of
        full ranking's scored items.
    coverage_at_least : float
        Every design covers at least this (%) in every model, pair and metric.
    decided_apart, decided_at_least : float
        Pairs ``decided_apart`` points apart or more are decided right in at least
        ``decided_at_least`` % of the seeds.
    wrong_at_most : float
        Wrong verdicts (%) in every pair and metric.
    equal_at_most : float
        Any verdict (%) on pairs of equal metrics.
    decisive_budget, decisive_uniform : float
        The design at ``decisive_budget`` decides more pairs right than a uniform subset
        of ``decisive_uniform`` of the users.
    sequential_apart, sequential_at_least, sequential_cost_at_most : float
        The sequential design decides pairs ``sequential_apart`` points apart or more
        right in at least ``sequential_at_least`` % of the seeds at a mean cost of at
        most ``sequential_cost_at_most`` % ...
    sequential_far_apart, sequential_far_cost_at_most : float
        ... and pairs ``sequential_far_apart`` points apart or more at a mean cost of at
        most ``sequential_far_cost_at_most`` %.
    family_at_most : float
        Some wrong verdict among every pair judged together (%), each method's family.

    Examples
    --------
    >>> Goals.from_config({"cost": {"budget": 0.25, "at_most": 30}}).cost_at_most
    30.0
    """

    cost_budget: float = math.nan
    cost_at_most: float = math.nan
    coverage_at_least: float = math.nan
    decided_apart: float = math.nan
    decided_at_least: float = math.nan
    wrong_at_most: float = math.nan
    equal_at_most: float = math.nan
    decisive_budget: float = math.nan
    decisive_uniform: float = math.nan
    sequential_apart: float = math.nan
    sequential_at_least: float = math.nan
    sequential_cost_at_most: float = math.nan
    sequential_far_apart: float = math.nan
    sequential_far_cost_at_most: float = math.nan
    family_at_most: float = math.nan

    @classmethod
    def from_config(cls, section: dict) -> Goals:
        """The goals of a ``decisions.goals`` section, {goal: {key: value}}; a goal it
        leaves out is never met by a cell (NaN thresholds)."""
        return cls(**{
            f"{goal}_{'uniform' if key == 'uniform_budget' else key}": float(value)
            for goal, keys in section.items()
            for key, value in keys.items()
        })  # fmt: skip

    def says(self, goal: str) -> str:
        """What ``goal`` says, with its thresholds."""
        return {
            "cost": f"the design at {100 * self.cost_budget:g} % of the users costs at most "
            f"{self.cost_at_most:g} % of full ranking's items",
            "coverage": f"the design covers at least {self.coverage_at_least:g} % in every "
            "model, pair and metric",
            "decided": f"pairs {self.decided_apart:g} points apart or more: decided right in "
            f"at least {self.decided_at_least:g} %",
            "wrong": f"wrong verdicts at most {self.wrong_at_most:g} % in every pair and metric",
            "equal": f"pairs of equal metrics: any verdict at most {self.equal_at_most:g} %",
            "decisive": f"the design at {100 * self.decisive_budget:g} % of the users decides "
            f"more than a uniform {100 * self.decisive_uniform:g} %",
            "sequential": f"sequential: pairs {self.sequential_apart:g} points apart or more "
            f"decided right in at least {self.sequential_at_least:g} %",
            "sequential cost": f"sequential: pairs {self.sequential_apart:g} points apart or "
            f"more at a mean cost of at most {self.sequential_cost_at_most:g} %",
            "sequential far cost": f"sequential: pairs {self.sequential_far_apart:g} points "
            f"apart or more at a mean cost of at most {self.sequential_far_cost_at_most:g} %",
            "family": f"every pair judged together (Holm): some wrong verdict in at most "
            f"{self.family_at_most:g} % of the seeds",
        }[goal]


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per method, target, name and metric: the exact value, coverage and mean
    width of the interval, verdicts right, wrong and undecided, RMSE of the estimate and
    mean cost, over the seeds (:data:`SUMMARY_COLUMNS`; percent and percent points),
    each with its standard error over the S seeds (independent): sqrt(p (1 - p) / S) of
    a share p, s / sqrt(S) of a mean (s the seeds' standard deviation), s_e / (2 RMSE
    sqrt(S)) of the RMSE (the delta method, s_e that of the squared errors).

    Examples
    --------
    >>> rows = pd.DataFrame({"seed": [0, 1], "method": "design-0.1", "target": "pair",
    ...     "name": "A-B", "metric": "recall@10", "exact": 0.02, "estimate": [0.01, 0.03],
    ...     "low": [0.0, 0.025], "high": [0.02, 0.035], "covered": [1.0, 0.0],
    ...     "width": [0.02, 0.01], "verdict": ["undecided", "A better"], "right": [0.0, 1.0],
    ...     "wrong": [0.0, 0.0], "cost": 0.13})
    >>> s = summarize(rows).iloc[0]
    >>> float(s.coverage), float(s.width), float(s.right), float(s.undecided), float(s.rmse)
    (50.0, 1.5, 50.0, 50.0, 1.0)
    >>> float(s.coverage_se), float(s.width_se), float(s.rmse_se)
    (35.35533905932738, 0.5, 0.0)
    """
    frame = rows.assign(
        error2=(rows["estimate"] - rows["exact"]) ** 2,
        undecided=np.where(rows["target"] == "pair", 1.0 - rows["right"] - rows["wrong"], np.nan),
    )
    keys = ["method", "target", "name", "metric"]
    grouped = frame.groupby(keys, sort=False)
    out = grouped.agg(
        seeds=("seed", "size"),
        exact=("exact", "first"),
        coverage=("covered", "mean"),
        width=("width", "mean"),
        right=("right", "mean"),
        wrong=("wrong", "mean"),
        undecided=("undecided", "mean"),
        rmse=("error2", "mean"),
        cost=("cost", "mean"),
        width_se=("width", "sem"),
        error2_se=("error2", "sem"),
        cost_se=("cost", "sem"),
    ).reset_index()
    out["rmse"] = np.sqrt(out["rmse"])
    with np.errstate(divide="ignore", invalid="ignore"):
        for column, of in (("coverage", "covered"), ("right", "right"), ("wrong", "wrong"),
                           ("undecided", "undecided")):  # fmt: skip
            seeds = grouped[of].count().to_numpy()  # those with a value
            out[f"{column}_se"] = np.sqrt(out[column] * (1.0 - out[column]) / seeds)
        out["rmse_se"] = np.where(out["rmse"] > 0, out["error2_se"] / (2.0 * out["rmse"]), 0.0)
    for column in ("exact", *MEASURED, *(f"{column}_se" for column in MEASURED)):
        out[column] *= 100
    return out[SUMMARY_COLUMNS]


def _pairs(summary: pd.DataFrame, method: str) -> pd.DataFrame:
    return summary[(summary["method"] == method) & (summary["target"] == "pair")]


def goals(summary: pd.DataFrame, methods: Sequence[Method], targets: Goals) -> pd.DataFrame:
    """Each goal of ``targets`` measured: goal, what it says, method, measured (its worst
    cell, or the share decided), holds (True, False, or None when no cell applies)
    (:data:`GOAL_COLUMNS`).

    The design's goals are measured at every budget of both stratified designs (one for
    every model, one per pair); ``decisive`` compares each design at
    ``targets.decisive_budget`` with the uniform subset at ``targets.decisive_uniform``,
    by the share of the pairs decided right (every pair and metric, mean over the seeds).
    ``sequential`` is measured on each sequential design: the worst pair far enough apart
    decided right, and the mean cost of those pairs and of the pairs further apart;
    ``family`` on every method and metric with a family's rows (target ``family``).

    Examples
    --------
    >>> from sampled_metrics.studies.decisions.registry import study_methods
    >>> s = pd.DataFrame({"method": "design-0.25", "target": ["model", "pair"],
    ...     "name": ["A", "A-B"], "metric": "recall@10", "seeds": 10, "exact": [5.0, 2.0],
    ...     "coverage": [95.0, 92.0], "width": 1.0, "right": [np.nan, 95.0],
    ...     "wrong": [np.nan, 0.0], "undecided": [np.nan, 5.0], "rmse": 0.5, "cost": 27.9})
    >>> g = goals(s, study_methods(["design"], [0.25], []), Goals(coverage_at_least=93))
    >>> g[g.goal == "coverage"][["measured", "holds"]].values.tolist()
    [[92.0, False]]
    """
    found = []

    def add(goal: str, method: str, measured: float, holds: bool | None, part: str = "") -> None:
        found.append({"goal": goal, "says": targets.says(part or goal), "method": method,
                      "measured": measured, "holds": holds})  # fmt: skip

    designs = [m for m in methods if m.kind.stratified]
    for method in designs:
        rows = summary[(summary["method"] == method.name) & (summary["target"] != "family")]
        pairs = _pairs(summary, method.name)
        if _at(method, targets.cost_budget):
            cost = float(rows["cost"].mean())
            add("cost", method.name, cost, cost <= targets.cost_at_most)
        coverage = float(rows["coverage"].min())
        add("coverage", method.name, coverage, coverage >= targets.coverage_at_least)
        apart = pairs[pairs["exact"].abs() >= targets.decided_apart]
        if apart.empty:
            add("decided", method.name, np.nan, None)
        else:
            worst = float(apart["right"].min())
            add("decided", method.name, worst, worst >= targets.decided_at_least)
        is_equal = pairs["exact"].abs() <= 100 * EQUAL_WITHIN  # points
        wrong = float(pairs.loc[~is_equal, "wrong"].max()) if (~is_equal).any() else np.nan
        holds = None if np.isnan(wrong) else wrong <= targets.wrong_at_most
        add("wrong", method.name, wrong, holds)
        equal = pairs[is_equal]
        if equal.empty:
            add("equal", method.name, np.nan, None)
        else:
            any_verdict = float(equal["wrong"].max())
            add("equal", method.name, any_verdict, any_verdict <= targets.equal_at_most)
    uniform = [m for m in methods if m.kind.name == "uniform" and _at(m, targets.decisive_uniform)]
    for design in [m for m in designs if _at(m, targets.decisive_budget)] if uniform else []:
        right = float(_pairs(summary, design.name)["right"].mean())
        base = float(_pairs(summary, uniform[0].name)["right"].mean())
        add("decisive", f"{design.name} vs {uniform[0].name}", right - base, right > base)
    for method in [m for m in methods if m.kind.name.startswith("sequential")]:
        pairs = _pairs(summary, method.name)
        apart = pairs[pairs["exact"].abs() >= targets.sequential_apart]
        far = pairs[pairs["exact"].abs() >= targets.sequential_far_apart]
        for part, cells, measured, bound, at_most in (
            ("sequential", apart, "right", targets.sequential_at_least, False),
            ("sequential cost", apart, "cost", targets.sequential_cost_at_most, True),
            ("sequential far cost", far, "cost", targets.sequential_far_cost_at_most, True),
        ):
            value = np.nan if cells.empty else float(
                cells[measured].mean() if at_most else cells[measured].min())  # fmt: skip
            holds = None if cells.empty else (value <= bound if at_most else value >= bound)
            add("sequential", method.name, value, holds, part)
    families = summary[summary["target"] == "family"]
    for (method, metric), cell in families.groupby(["method", "metric"], sort=False):
        wrong = float(cell["wrong"].iloc[0])
        add("family", f"{method} ({metric})", wrong, wrong <= targets.family_at_most)
    if families.empty:
        add("family", "", np.nan, None)
    return pd.DataFrame(found, columns=GOAL_COLUMNS)


def _at(method: Method, budget: float) -> bool:
    """Whether ``method`` runs at ``budget``."""
    return method.budget is not None and math.isclose(method.budget, budget)
