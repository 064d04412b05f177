"""The design study summarized: per method, model or pair and metric, over the seeds
(:func:`summarize`), and the study's goals, each measured and said to hold or not
(:func:`goals`).

The rows are :func:`.study.study_seed`'s. A pair's verdict is *right* when it names the
model whose exact metric over these users is higher, *wrong* when it names the other
(or any model when the two are equal), *undecided* otherwise; a point estimate
(``adaptive-em``) always names one.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...estimation.decisions.verdict import EQUAL_WITHIN

__all__ = ["GOALS", "SUMMARY_COLUMNS", "goals", "summarize"]

# Percent points throughout: metrics, widths, errors; shares in percent.
SUMMARY_COLUMNS = [
    "method", "target", "name", "metric", "seeds", "exact", "coverage", "width", "right",
    "wrong", "undecided", "rmse", "cost",
]  # fmt: skip

# The goals of issue 45: (key, what it says, threshold).
GOALS = {
    "cost": ("the design at 25 % of the users costs at most 30 % of full ranking's items", 30.0),
    "coverage": ("the design covers at least 93 % in every model, pair and metric", 93.0),
    "decided": ("pairs 0.8 points apart or more: decided right in at least 90 %", 90.0),
    "wrong": ("wrong verdicts at most 2.5 % in every pair and metric", 2.5),
    "equal": ("pairs of equal metrics: any verdict at most 5 %", 5.0),
    "decisive": ("the design at 10 % of the users decides more than a uniform 25 %", None),
}
# A pair "differs" from this many points of its metric on.
DIFFERS_POINTS = 0.8


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per method, target, name and metric: the exact value, coverage and mean
    width of the interval, verdicts right, wrong and undecided, RMSE of the estimate and
    mean cost, over the seeds (:data:`SUMMARY_COLUMNS`; percent and percent points).

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
    ).reset_index()
    out["rmse"] = np.sqrt(out["rmse"])
    for column in ("exact", "width", "rmse"):
        out[column] *= 100
    for column in ("coverage", "right", "wrong", "undecided", "cost"):
        out[column] *= 100
    return out[SUMMARY_COLUMNS]


def _pairs(summary: pd.DataFrame, method: str) -> pd.DataFrame:
    return summary[(summary["method"] == method) & (summary["target"] == "pair")]


def goals(summary: pd.DataFrame, methods) -> pd.DataFrame:
    """Each goal of :data:`GOALS` measured: goal, method, measured (its worst cell, or
    the share decided), holds (True, False, or None when no cell applies).

    The design's goals are measured at every budget of both designs (one for every model,
    one per pair); ``decisive`` compares each design at 10 % of the users with the uniform
    subset of 25 %, by the share of the pairs decided right (every pair and metric, mean
    over the seeds).

    Examples
    --------
    >>> s = pd.DataFrame({"method": "design-0.25", "target": ["model", "pair"],
    ...     "name": ["A", "A-B"], "metric": "recall@10", "seeds": 10, "exact": [5.0, 2.0],
    ...     "coverage": [95.0, 92.0], "width": 1.0, "right": [np.nan, 95.0],
    ...     "wrong": [np.nan, 0.0], "undecided": [np.nan, 5.0], "rmse": 0.5, "cost": 27.9})
    >>> g = goals(s, ["design-0.25"])
    >>> g[g.goal == "coverage"][["measured", "holds"]].values.tolist()
    [[92.0, False]]
    """
    found = []

    def add(goal, method, measured, holds):
        found.append({"goal": goal, "says": GOALS[goal][0], "method": method,
                      "measured": measured, "holds": holds})  # fmt: skip

    designs = [m for m in methods if m.startswith(("design-", "pair-design-"))]
    for method in designs:
        rows = summary[summary["method"] == method]
        pairs = _pairs(summary, method)
        if method.endswith("design-0.25"):
            cost = float(rows["cost"].mean())
            add("cost", method, cost, cost <= GOALS["cost"][1])
        coverage = float(rows["coverage"].min())
        add("coverage", method, coverage, coverage >= GOALS["coverage"][1])
        apart = pairs[pairs["exact"].abs() >= DIFFERS_POINTS]
        if apart.empty:
            add("decided", method, np.nan, None)
        else:
            worst = float(apart["right"].min())
            add("decided", method, worst, worst >= GOALS["decided"][1])
        is_equal = pairs["exact"].abs() <= 100 * EQUAL_WITHIN  # points
        wrong = float(pairs.loc[~is_equal, "wrong"].max()) if (~is_equal).any() else np.nan
        add("wrong", method, wrong, None if np.isnan(wrong) else wrong <= GOALS["wrong"][1])
        equal = pairs[is_equal]
        if equal.empty:
            add("equal", method, np.nan, None)
        else:
            any_verdict = float(equal["wrong"].max())
            add("equal", method, any_verdict, any_verdict <= GOALS["equal"][1])
    for design in ("design-0.1", "pair-design-0.1"):
        if design in methods and "uniform-0.25" in methods:
            right = float(_pairs(summary, design)["right"].mean())
            uniform = float(_pairs(summary, "uniform-0.25")["right"].mean())
            add("decisive", f"{design} vs uniform-0.25", right - uniform, right > uniform)
    return pd.DataFrame(found, columns=["goal", "says", "method", "measured", "holds"])
