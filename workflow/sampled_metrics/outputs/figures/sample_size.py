"""Figure 6: the expected metric (Recall@10 in the paper) against the sample size m
on real ranks, per recommender, one panel per correction method, beside the exact
values, with the m of Table 3 and the m from which a pair stays ordered marked; the
note names the sample sizes left out (above the data set's n - 1).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from ..labels import metric_label
from .placement import place_labels, vertical_marker
from .style import color_of, law_description, method_title, styled, subtitle

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["sample_size_figure"]


def _nice_floor(value: float) -> float:
    """The largest of 1, 2, 5 x 10^k not above ``value`` (> 0): a labelled bottom tick."""
    decade = 10.0 ** np.floor(np.log10(value))
    return max(f * decade for f in (1, 2, 5) if f * decade <= value)


def _value_at(group: pd.DataFrame, m: float) -> float:
    """The curve at m (log-linear interpolation between grid points)."""
    group = group.sort_values("m")
    return float(np.interp(np.log(m), np.log(group["m"]), group["expected"]))


@styled
def sample_size_figure(
    curves: pd.DataFrame,
    exact: dict,
    metric: str,
    orders: pd.DataFrame,
    *,
    dataset: str | None = None,
    law: str | None = None,
    marked_m: int | None = None,
    marked_label: str = "Table 3",
    log_methods: Iterable[str] = ("sampled",),
    note: str | None = None,
) -> Figure:
    """Figure 6: expected metric against m per recommender, one panel per method.

    Solid lines: the expected metric; dashed: the exact values (named with
    their value in the legend). A vertical line marks ``marked_m`` (the sample
    size of Table 3) with each curve's value there, another the smallest m from
    which the pair of ``orders`` stays ordered as on the exact metric. Panels of
    ``log_methods`` have a log y axis with ticks at 1, 2, 5 x 10^k, the others a
    linear one from 0. With no curve (every sample size left out), a figure that says so.

    Parameters
    ----------
    curves : pandas.DataFrame
        Columns m, method, recommender, expected (a fraction).
    exact : dict
        The exact metric (a fraction) per recommender.
    metric : str
        The metric's name.
    orders : pandas.DataFrame
        Columns method, pair, stays_right_from_m (``reproduction.curves.order_thresholds``).
    dataset : str, optional
        The data set, for the subtitle.
    law : str, optional
        The sampling law of the curves, for the subtitle.
    marked_m : int, optional
        A sample size to mark (Table 3's m).
    marked_label : str, default "Table 3"
        What ``marked_m`` is.
    log_methods : iterable of str, default ("sampled",)
        Methods whose panel has a log y axis.
    note : str, optional
        More lines of the subtitle.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> curves = pd.DataFrame(
    ...     {"m": [10, 100, 10, 100], "method": "sampled", "recommender": ["X", "X", "Y", "Y"],
    ...      "expected": [0.9, 0.5, 0.8, 0.6]}
    ... )
    >>> orders = pd.DataFrame({"method": ["sampled"], "pair": ["X<Y"], "stays_right_from_m": [100]})
    >>> fig = sample_size_figure(curves, {"X": 0.1, "Y": 0.2}, "recall@10", orders, marked_m=50)
    >>> fig.axes[0].get_title()
    'Uncorrected (sampled metric)'
    >>> [t.get_text() for t in fig.legends[0].get_texts()][:2]
    ['X: expected', 'X: exact (10.00 %)']
    >>> plt.close(fig)
    >>> fig = sample_size_figure(curves.iloc[:0], {}, "recall@10", orders.iloc[:0], note="m > 9")
    >>> fig.axes[0].texts[0].get_text()
    'No sample size to show: every one is left out'
    >>> plt.close(fig)
    """
    if curves.empty:
        fig, ax = plt.subplots(figsize=(6.0, 2.4), layout="constrained")
        ax.axis("off")
        ax.text(0.5, 0.5, "No sample size to show: every one is left out", ha="center",
                va="center")  # fmt: skip
        subtitle(fig, (f"{dataset}: " if dataset else "") + "Figure 6", note or "")
        return fig
    methods = list(dict.fromkeys(curves["method"]))
    names = list(dict.fromkeys(curves["recommender"]))
    fig, axes = plt.subplots(
        1, len(methods), figsize=(5 * len(methods), 3.9), squeeze=False, layout="constrained"
    )
    m_low, m_high = int(curves["m"].min()), int(curves["m"].max())
    show_marked = marked_m is not None and m_low <= marked_m <= m_high
    marked = float(marked_m) if marked_m is not None else math.nan  # read when show_marked
    labels: list = []
    for ax, method in zip(axes[0], methods):
        part = curves[curves["method"] == method]
        values = [100 * part["expected"].to_numpy()]
        at_marked = []
        for i, name in enumerate(names):
            group = part[part["recommender"] == name].sort_values("m")
            color = color_of(name, i)
            ax.plot(group["m"], 100 * group["expected"], color=color, linewidth=1.6)
            if name in exact:
                ax.axhline(100 * exact[name], color=color, linestyle="--", linewidth=1.0)
                values.append([100 * exact[name]])
            if show_marked and len(group):
                value = 100 * _value_at(group, marked)
                ax.plot([marked_m], [value], marker="o", markersize=4, color=color, zorder=4)
                at_marked.append(f"{name} {value:.1f} %")
        ax.set_xscale("log")
        ax.set_xlim(m_low / 1.3, m_high * 1.3)
        shown = np.concatenate(values)
        if method in log_methods:
            ax.set_yscale("log")
            low, high = _nice_floor(shown.min() / 1.1), shown.max() * 1.35
            ax.set_ylim(low, high)
            subs = (1.0, 2.0, 5.0) if high / low >= 10 else (1.0, 2.0, 3.0, 5.0, 7.0)
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
        else:
            ax.set_ylim(0, shown.max() * 1.12)
        ax.set(
            xlabel="number of sampled items m",
            ylabel=f"expected {metric_label(metric)} (%)",
            title=method_title(method),
        )
        if show_marked:
            label = f"m = {marked_m} ({marked_label}):\n" + "\n".join(at_marked)
            vertical_marker(ax, marked, label, labels)
        row = orders[orders["method"] == method]
        if len(row) and not np.isnan(row["stays_right_from_m"].iloc[0]):
            m_right = float(row["stays_right_from_m"].iloc[0])
            pair = row["pair"].iloc[0].replace("<", " < ")
            label = f"order {pair} right\nfrom m = {m_right:,.0f}"
            vertical_marker(ax, m_right, label, labels, linestyle=":")
    handles = []
    for i, name in enumerate(names):
        color = color_of(name, i)
        handles.append(Line2D([], [], color=color, linewidth=1.6, label=f"{name}: expected"))
        if name in exact:
            handles.append(
                Line2D(
                    [],
                    [],
                    color=color,
                    linestyle="--",
                    linewidth=1.0,
                    label=f"{name}: exact ({100 * exact[name]:.2f} %)",
                )
            )
    fig.legend(handles=handles, loc="outside lower center", ncol=len(names))
    subtitle(
        fig,
        (f"{dataset}: " if dataset else "")
        + f"expected {metric_label(metric)} of each recommender over its users' exact ranks, "
        + f"m = {m_low:,} to {m_high:,}"
        + (f", {law_description(law)}" if law else ""),
        note or "",
    )
    place_labels(labels)
    return fig
