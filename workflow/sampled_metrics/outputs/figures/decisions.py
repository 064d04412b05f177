"""The design study's figure: per metric, the share of recommender pairs each method
decides right against its cost (scored items as a share of full ranking's), the worst
pair's wrong verdicts beside each point."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import pandas as pd

from ..labels import metric_label
from .style import MARKERS, styled, subtitle

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["decisions_figure"]

# The methods' kinds in the figure's legend order; an interval's verdicts are filled
# markers, a point estimate's (adaptive-em) hollow.
_KINDS = ("full", "uniform", "design", "pair-design", "range", "adaptive-em")


def _kind(method: str) -> str:
    return next(kind for kind in _KINDS if method == kind or method.startswith(f"{kind}-"))


def _point_label(method: str, wrong: float) -> str:
    """A point's label: its budget (a share of the users), and its worst pair's wrong
    verdicts where they pass the study's bound of 2.5 %."""
    budget = method.rsplit("-", 1)[-1]
    label = f"{100 * float(budget):g} %" if budget and budget[0].isdigit() else ""
    if wrong > 2.5:
        label += f"{chr(10) if label else ''}wrong up to {wrong:.0f} %"
    return label


@styled
def decisions_figure(summary: pd.DataFrame, *, dataset: str = "", note: str = "") -> Figure:
    """Pairs decided right against cost (``results/<dataset>/decisions.csv``): one panel
    per metric, a point per method at its mean cost and mean share of the pairs decided
    right, the budgets of one kind joined, labelled with the budget and, above 2.5 %,
    the worst pair's wrong verdicts.

    Parameters
    ----------
    summary : pandas.DataFrame
        method, target, metric, right, wrong, cost (percent).
    dataset : str, optional
    note : str, optional
        More lines of the subtitle.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> s = pd.DataFrame({"method": ["full", "design-0.1"], "target": "pair",
    ...     "metric": "recall@10", "right": [90.0, 70.0], "wrong": [0.0, 1.0],
    ...     "cost": [100.0, 13.0]})
    >>> fig = decisions_figure(s, dataset="toy")
    >>> len(fig.axes)
    1
    >>> plt.close(fig)
    """
    pairs = summary[summary["target"] == "pair"]
    metrics = list(dict.fromkeys(pairs["metric"]))
    cells = pairs.groupby(["metric", "method"], sort=False).agg(
        right=("right", "mean"), wrong=("wrong", "max"), cost=("cost", "mean")
    )
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.6 * len(metrics), 3.4), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        points = cells.loc[metric]
        for k, kind in enumerate(_KINDS):
            mine = points[[_kind(method) == kind for method in points.index]]
            if mine.empty:
                continue
            hollow = kind == "adaptive-em"
            ax.plot(mine["cost"], mine["right"], "-" + MARKERS[k % len(MARKERS)], color=f"C{k}",
                    markerfacecolor="none" if hollow else f"C{k}", label=kind)  # fmt: skip
            for method, row in mine.iterrows():
                ax.annotate(_point_label(method, row["wrong"]), (row["cost"], row["right"]),
                            textcoords="offset points", xytext=(4, -9), fontsize=6.5)  # fmt: skip
        ax.set_xscale("log")
        ax.set_xlabel("cost: scored items, % of full ranking")
        ax.set_ylabel("pairs decided right, %")
        ax.set_ylim(0, 105)
        ax.set_title(metric_label(metric))
        ax.legend(loc="lower right")
    subtitle(
        fig, f"{dataset}: deciding between recommenders, pairs decided right against cost", note
    )
    fig.tight_layout()
    return fig
