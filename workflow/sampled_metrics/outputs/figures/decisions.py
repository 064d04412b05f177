"""The design study's figure: per metric, the share of recommender pairs each method
decides right against its cost (scored items as a share of full ranking's), the worst
pair's wrong verdicts beside each point where they pass the study's bound; and, for the
first metric, each pair's mean cost against its distance, the pairs some seed decided
wrongly marked."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import FuncFormatter

from ..labels import metric_label
from .style import LINESTYLES, MARKERS, styled, subtitle

if TYPE_CHECKING:
    from matplotlib.axes import Axes
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
    ``wrong_above``, the worst pair's wrong verdicts; where the sequential design or the
    fixed designs ran, a last panel of each pair's mean cost against its distance in
    the first metric.

    Parameters
    ----------
    summary : pandas.DataFrame
        method, kind, label, target, name, metric, exact, right, wrong, cost (percent,
    points), a row of target "family" a method's whole cost.
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
    ...     "name": "A-B", "exact": 1.5, "right": [90.0, 70.0], "wrong": [0.0, 1.0],
    ...     "cost": [100.0, 13.0]})
    >>> fig = decisions_figure(s, kinds=["full", "design"], dataset="toy")
    >>> len(fig.axes)  # the metric's panel, each pair's cost against its distance
    2
    >>> plt.close(fig)
    """
    pairs = summary[summary["target"] == "pair"]
    metrics = list(dict.fromkeys(pairs["metric"]))
    cells = pairs.groupby(["metric", "method"], sort=False).agg(
        right=("right", "mean"), wrong=("wrong", "max"), cost=("cost", "mean"),
        kind=("kind", "first"), label=("label", "first"),
    )  # fmt: skip
    # a method whose pairs stop at their own cost costs what its family spent
    families = summary[summary["target"] == "family"].set_index(["metric", "method"])["cost"]
    cells.loc[families.index.intersection(cells.index), "cost"] = families
    shown = ("sequential", "sequential-pair", "design")
    spread = [kind for kind in shown if kind in set(pairs["kind"])]
    panels = len(metrics) + bool(spread)
    fig, axes = plt.subplots(1, panels, figsize=(3.6 * panels, 3.4), squeeze=False)
    if spread:
        _cost_by_distance(axes[0][-1], pairs[pairs["metric"] == metrics[0]], kinds, spread)
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


def _cost_by_distance(
    ax: Axes, pairs: pd.DataFrame, kinds: Sequence[str], shown: Sequence[str]
) -> None:
    """Each pair's mean cost against |its exact difference| (points) for the methods of
    the kinds ``shown``, a method's pairs joined, ringed where some seed decided the
    pair wrongly."""
    seen: dict[str, int] = {}  # a kind's methods (its budgets) told apart by line style
    for _, mine in pairs[pairs["kind"].isin(shown)].groupby("method", sort=False):
        kind = mine["kind"].iloc[0]
        k, style = list(kinds).index(kind), LINESTYLES[seen.get(kind, 0) % len(LINESTYLES)]
        seen[kind] = seen.get(kind, 0) + 1
        mine = mine.assign(distance=mine["exact"].abs()).sort_values("distance")
        label = f"{kind} {mine['label'].iloc[0]}".strip()
        ax.plot(mine["distance"], mine["cost"], MARKERS[k % len(MARKERS)], color=f"C{k}",
                linestyle=style, markersize=3.5, linewidth=0.8, label=label)  # fmt: skip
        wrong = mine[mine["wrong"] > 0]
        ax.plot(wrong["distance"], wrong["cost"], "o", markersize=9, markerfacecolor="none",
                markeredgecolor="red", linestyle="none")  # fmt: skip
    ax.plot([], [], "o", markerfacecolor="none", markeredgecolor="red", linestyle="none",
            label="some seed wrong")  # fmt: skip
    ax.set_yscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.set_xlabel(f"|A - B|, {metric_label(pairs['metric'].iloc[0])} points")
    ax.set_ylabel("pair's mean cost, % of full ranking")
    ax.set_title("cost per pair")
    ax.legend(loc="upper right", fontsize=6)
