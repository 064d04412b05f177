"""The design study's figure: per metric, the share of recommender pairs each method
decides right against its cost (scored items as a share of full ranking's), the worst
pair's wrong verdicts beside each point where they pass the study's bound."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import pandas as pd

from ..labels import metric_label
from .style import MARKERS, styled, subtitle

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["decisions_figure"]


def _point_label(label: str, wrong: float, wrong_above: float) -> str:
    """A point's label: the method's (its budget), and its worst pair's wrong verdicts
    where they pass ``wrong_above``."""
    if wrong > wrong_above:
        label += f"{chr(10) if label else ''}wrong up to {wrong:.0f} %"
    return label


@styled
def decisions_figure(
    summary: pd.DataFrame,
    *,
    kinds: Sequence[str],
    hollow: Collection[str] = (),
    wrong_above: float = math.inf,
    dataset: str = "",
    note: str = "",
) -> Figure:
    """Pairs decided right against cost (``results/<dataset>/decisions.csv``): one panel
    per metric, a point per method at its mean cost and mean share of the pairs decided
    right, the methods of one kind joined, each labelled with its label and, above
    ``wrong_above``, the worst pair's wrong verdicts.

    Parameters
    ----------
    summary : pandas.DataFrame
        method, kind, label, target, metric, right, wrong, cost (percent).
    kinds : sequence of str
        Every kind of method, in the legend's order (a kind keeps its colour and marker
        whichever ran).
    hollow : collection of str
        The kinds of point estimates: hollow markers, an interval's verdicts filled.
    wrong_above : float, optional
        The worst pair's wrong verdicts (%) above which a point names them.
    dataset : str, optional
    note : str, optional
        More lines of the subtitle.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> s = pd.DataFrame({"method": ["full", "design-0.1"], "kind": ["full", "design"],
    ...     "label": ["", "10 %"], "target": "pair", "metric": "recall@10",
    ...     "right": [90.0, 70.0], "wrong": [0.0, 1.0], "cost": [100.0, 13.0]})
    >>> fig = decisions_figure(s, kinds=["full", "design"], dataset="toy")
    >>> len(fig.axes)
    1
    >>> plt.close(fig)
    """
    pairs = summary[summary["target"] == "pair"]
    metrics = list(dict.fromkeys(pairs["metric"]))
    cells = pairs.groupby(["metric", "method"], sort=False).agg(
        right=("right", "mean"), wrong=("wrong", "max"), cost=("cost", "mean"),
        kind=("kind", "first"), label=("label", "first"),
    )  # fmt: skip
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.6 * len(metrics), 3.4), squeeze=False)
    for ax, metric in zip(axes[0], metrics):
        points = cells.loc[metric]
        for k, kind in enumerate(kinds):
            mine = points[points["kind"] == kind]
            if mine.empty:
                continue
            face = "none" if kind in hollow else f"C{k}"
            ax.plot(mine["cost"], mine["right"], "-" + MARKERS[k % len(MARKERS)], color=f"C{k}",
                    markerfacecolor=face, label=kind)  # fmt: skip
            for _, row in mine.iterrows():
                ax.annotate(_point_label(row["label"], row["wrong"], wrong_above),
                            (row["cost"], row["right"]), textcoords="offset points",
                            xytext=(4, -9), fontsize=6.5)  # fmt: skip
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
