"""The design study's report, decisions.md: what was simulated, per method and metric
its cost, coverage, width and verdicts, per pair the verdicts right and wrong of every
method, and the study's goals, each measured and said to hold or not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ...estimation.decisions.defaults import DECISION_DEFAULTS
from ...io.atomic import write_csv, write_text
from ...outputs.labels import metric_label
from ...outputs.tables import markdown_table

__all__ = [
    "decisions_markdown",
    "method_table",
    "pair_cost_table",
    "pair_table",
    "write_decisions",
]


def method_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per method and metric: mean cost; coverage, worst and mean over the models and
    pairs; mean width of the pairs' intervals; pairs decided right (mean) and wrong (worst
    pair); the seeds with some wrong verdict among every pair judged together (the
    family's row, where the method has one); RMSE of the models' estimates (mean); each
    "value ± standard error" over the seeds: the worst cell's own, and for a mean over
    cells the mean of theirs (at least the mean's, whatever the cells' correlation). The
    cost is the family's row's where there is one: a method whose pairs stop at their
    own cost spends what its last pair needed.

    Examples
    --------
    >>> s = pd.DataFrame({"method": "full", "target": ["model", "pair"], "name": ["A", "A-B"],
    ...     "metric": "recall@10", "seeds": 2, "exact": [5.0, 1.0], "coverage": [100.0, 90.0],
    ...     "width": 0.0, "right": [np.nan, 100.0], "wrong": [np.nan, 0.0],
    ...     "undecided": [np.nan, 0.0], "rmse": 0.0, "cost": 100.0, "coverage_se": [0.0, 3.0],
    ...     "width_se": 0.0, "right_se": [np.nan, 0.0], "wrong_se": [np.nan, 0.0],
    ...     "undecided_se": [np.nan, 0.0], "rmse_se": 0.0, "cost_se": 0.0})
    >>> row = method_table(s).iloc[0]
    >>> row[["method", "metric", "cost %", "coverage % (worst)", "coverage % (mean)"]].tolist()
    ['full', 'Recall@10', '100.00 ± 0.00', '90.00 ± 3.00', '95.00 ± 1.50']
    """
    rows = []
    for (method, metric), every in summary.groupby(["method", "metric"], sort=False):
        family = every[every["target"] == "family"]
        cell = every[every["target"] != "family"]
        pairs = cell[cell["target"] == "pair"]
        models = cell[cell["target"] == "model"]
        rows.append({
            "method": method,
            "metric": metric_label(metric),
            # the whole method's cost: its family's where pairs stop at their own
            "cost %": _mean(family if not family.empty else cell, "cost"),
            "coverage % (worst)": _extreme(cell, "coverage", "idxmin"),
            "coverage % (mean)": _mean(cell, "coverage"),
            "pair width (points)": _mean(pairs, "width"),
            "right % (mean)": _mean(pairs, "right"),
            "wrong % (worst)": _extreme(pairs, "wrong", "idxmax"),
            "undecided % (mean)": _mean(pairs, "undecided"),
            "some wrong % (Holm family)": _mean(family, "wrong"),
            "model RMSE (points)": _mean(models, "rmse"),
            "seeds": int(cell["seeds"].max()),
        })  # fmt: skip
    return pd.DataFrame(rows)


def _with_error(value: float, error: float) -> str:
    """ "value ± error" (two decimals); "" for no value."""
    return "" if np.isnan(value) else f"{value:.2f} ± {error:.2f}"


def _mean(cells: pd.DataFrame, column: str) -> str:
    """The cells' mean and the mean of their standard errors."""
    return _with_error(float(cells[column].mean()), float(cells[f"{column}_se"].mean()))


def _extreme(cells: pd.DataFrame, column: str, which: str) -> str:
    """The worst cell's value and standard error (``which``: idxmin or idxmax)."""
    if cells[column].isna().all():
        return ""
    at = getattr(cells[column], which)()
    return _with_error(float(cells.at[at, column]), float(cells.at[at, f"{column}_se"]))


def pair_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per pair and metric: the exact difference (points) and every method's verdicts
    "right/wrong" in percent of the seeds.

    Examples
    --------
    >>> s = pd.DataFrame({"method": ["full", "design-0.1"], "target": "pair",
    ...     "name": "A-B", "metric": "recall@10", "exact": 1.234, "right": [100.0, 87.5],
    ...     "wrong": [0.0, 0.5]})
    >>> pair_table(s).iloc[0].astype(str).tolist()
    ['A-B', 'Recall@10', '1.234', '100/0', '88/0.5']
    """
    pairs = summary[summary["target"] == "pair"]
    methods = list(dict.fromkeys(pairs["method"]))
    rows = []
    for (name, metric), cell in pairs.groupby(["name", "metric"], sort=False):
        by_method = cell.set_index("method")
        row = {"pair": name, "metric": metric_label(metric), "exact A - B": cell["exact"].iloc[0]}
        for method in methods:
            if method not in by_method.index:  # a method that does not judge this metric
                row[method] = ""
                continue
            right, wrong = by_method.loc[method, ["right", "wrong"]]
            row[method] = f"{right:.0f}/{wrong:.2g}"
        rows.append(row)
    families = summary[summary["target"] == "family"]
    for metric, cell in families.groupby("metric", sort=False):
        wrong = cell.set_index("method")["wrong"]
        rows.append({"pair": "some wrong (Holm)", "metric": metric_label(metric),
                     "exact A - B": np.nan} | {
                     method: f"{wrong[method]:.2g}" if method in wrong.index else ""
                     for method in methods})  # fmt: skip
    return pd.DataFrame(rows)


def pair_cost_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Per pair and metric of the methods whose pairs stop at their own cost (the
    sequential design): the exact difference, verdicts right and wrong, coverage and the
    pair's mean cost, each ± its standard error over the seeds.

    Examples
    --------
    >>> s = pd.DataFrame({"method": "sequential", "target": "pair", "name": ["A-B", "A-C"],
    ...     "metric": "recall@10", "seeds": 4, "exact": [1.0, 4.0], "right": [50.0, 100.0],
    ...     "wrong": 0.0, "coverage": 100.0, "cost": [30.0, 5.0], "right_se": [25.0, 0.0],
    ...     "wrong_se": 0.0, "coverage_se": 0.0, "cost_se": [2.0, 0.5]})
    >>> pair_cost_table(s).iloc[1].astype(str).tolist()[1:]
    ['A-C', 'Recall@10', '4.0', '100.00 ± 0.00', '0.00 ± 0.00', '100.00 ± 0.00', '5.00 ± 0.50', '4']
    """
    pairs = summary[summary["target"] == "pair"]
    varying = pairs.groupby("method", sort=False)["cost"].transform("nunique") > 1
    rows = [
        {"method": row.method, "pair": row.name, "metric": metric_label(row.metric),
         "exact A - B": row.exact,
         **{f"{label} %": _with_error(getattr(row, column), getattr(row, f"{column}_se"))
            for label, column in (("right", "right"), ("wrong", "wrong"),
                                  ("coverage", "coverage"), ("cost", "cost"))},
         "seeds": int(row.seeds)}
        for row in pairs[varying].itertuples()
    ]  # fmt: skip
    return pd.DataFrame(rows)


def _goal_lines(goals: pd.DataFrame) -> list:
    words = {True: "holds", False: "does not hold", None: "no cell applies"}
    frame = goals.assign(
        measured=goals["measured"].round(2),
        holds=[
            words[None if h is None or (isinstance(h, float) and np.isnan(h)) else bool(h)]
            for h in goals["holds"]
        ],  # fmt: skip
    )
    return [markdown_table(frame[["says", "method", "measured", "holds"]])]


# Why a kind of method runs on fewer seeds than the others.
_FEWER = {
    "range": "its coverage holds by construction, its pairs stay undecided at its widths, "
    "and its width varies little between seeds",
    "sequential": "its waves cost about what a seed's other methods cost together; its "
    "shares' standard errors are printed",
    "sequential-pair": "fifteen designs a seed: its costs per pair, set beside the family's, "
    "need fewer seeds than its verdicts",
    "adaptive-em": "a point estimate: its pairs decided right and its wrong verdicts need "
    "less precision than the intervals' coverage",
}


def _fewer_seeds(fewer: dict) -> str:
    """Which kinds ran on the first seeds only, and why."""
    return "".join(
        f"{kind} ran on the first {first} seeds only ({_FEWER.get(kind, 'fewer suffice')}). "
        for kind, first in fewer.items()
    )


def _left_out_lines(left_out: dict) -> list:
    if not left_out:
        return []
    return [
        "Left out, as these users cannot support them:",
        "",
        *(f"- {method}: {why}" for method, why in left_out.items()),
        "",
    ]


def _pair_cost_lines(summary: pd.DataFrame) -> list:
    table = pair_cost_table(summary)
    if table.empty:
        return []
    return [
        "## Per pair at its own cost: the sequential designs",
        "",
        f"The waves rank {100 * DECISION_DEFAULTS['first_wave']:g} % of the users, then "
        f"{DECISION_DEFAULTS['growth']:g} times as many at each look, up to "
        f"{100 * DECISION_DEFAULTS['sequential_budget']:g} % of them; every pair is judged "
        "at each look with the family's error recycled "
        "(Holm), and a pair stops at the first look whose repeated confidence interval "
        "excludes 0. A pair's cost is phase 1 and the users ranked by the look it stopped "
        "at (the method's cost above: every wave's); coverage is that of its interval at "
        "that look. The design's metric alone (the first) stops the waves and is judged. "
        "`sequential-pair` runs each pair alone in its own design, its whole error its own "
        "(no family): the cost a comparison of two models would pay.",
        "",
        markdown_table(table, digits=2),
    ]


def decisions_markdown(
    summary: pd.DataFrame, goals: pd.DataFrame, *, dataset: str, setup: dict
) -> str:
    """decisions.md.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`sampled_metrics.studies.decisions.summary.summarize`'s.
    goals : pandas.DataFrame
        :func:`sampled_metrics.studies.decisions.summary.goals`'s.
    dataset : str
    setup : dict
        users, models, m, law, seeds, fewer_seeds ({kind: the first seeds it ran on}),
        confidence, steps; optionally
        left_out, {method: why} of the methods the data set cannot support.

    Returns
    -------
    str
    """
    s = setup
    lines = [
        f"# Deciding between models: the design study on {dataset}",
        "",
        f"{s['users']:,} users, the models {', '.join(s['models'])}; phase 1 simulated "
        f"{s['seeds']} times from the exact ranks: each model's sampled rank among m = {s['m']} "
        f"sampled items ({s['law']}), drawn given its exact rank, **independently of the "
        "other models** (the law the corrections assume; a real paired protocol scores one "
        "shared draw under every model, which the exact ranks alone cannot simulate). "
        f"Intervals at {100 * s['confidence']:g} % about these users (finite population). "
        f"{_fewer_seeds(s['fewer_seeds'])}adaptive-em: Li et al. (AAAI 2023), a user whose "
        f"held-out item beats every sampled item gets up to {', '.join(map(str, s['steps']))} "
        "more sampled items until one ranks above it, then EM over the sampled ranks with "
        "their own m_u: a point estimate, no interval; its pairs ordered by the sign.",
        "",
        "Cost: scored items as a share of full ranking's (sum of n_u): phase 1 scores m + 1 "
        "items a user, an exact ranking n_u; the design's cost includes its phase 1, a "
        "uniform subset ranks its users and nothing else. Verdicts of a pair A-B: right (it "
        "names the model whose exact metric over these users is higher), wrong (the other, "
        "or any verdict on equal metrics), undecided; `full` reads the paired t-test's "
        "interval (about users like these), so it leaves close pairs undecided but is "
        "never wrong. Metrics and widths in percent points, shares in percent.",
        "",
        "Each number is given ± its standard error over the seeds (independent): a share p "
        "over S seeds has sqrt(p (1 - p) / S), "
        f"{100 * np.sqrt(0.95 * 0.05 / s['seeds']):.1f} points for a coverage of 95 % at "
        f"{s['seeds']} seeds; a share of 0 or 100 % has 0, the truth then within about 3/S "
        "of it (the rule of three); a worst cell's error is its own, a mean's over cells "
        "the mean of theirs (at least the mean's own).",
        "",
        *_left_out_lines(s.get("left_out", {})),
        "## Per method",
        "",
        markdown_table(method_table(summary), digits=2),
        "## Per pair: verdicts right/wrong, % of the seeds",
        "",
        f"A share over {s['seeds']} seeds has a standard error of at most "
        f"{50 / np.sqrt(s['seeds']):.1f} points (at 50 %), "
        f"{100 * np.sqrt(0.1 * 0.9 / s['seeds']):.1f} at 10 or 90 %; over fewer seeds (the "
        "per-method table's), sqrt(p (1 - p) / S).",
        "",
        markdown_table(pair_table(summary), digits=2),
        *_pair_cost_lines(summary),
        "## Goals",
        "",
        *_goal_lines(goals),
    ]
    return "\n".join(lines)


def write_decisions(
    summary: pd.DataFrame,
    goals: pd.DataFrame,
    csv_path: str | Path,
    md_path: str | Path,
    *,
    dataset: str,
    setup: dict,
) -> None:
    """decisions.csv (the summary and its data set) and decisions.md, each written
    atomically, and only once both are rendered: a failure leaves neither half-written.

    Parameters
    ----------
    summary, goals : pandas.DataFrame
    csv_path, md_path : str or Path
    dataset : str
    setup : dict
        As :func:`decisions_markdown`'s.
    """
    text = decisions_markdown(summary, goals, dataset=dataset, setup=setup)
    write_csv(summary.assign(dataset=dataset), csv_path)
    write_text(text, md_path)
