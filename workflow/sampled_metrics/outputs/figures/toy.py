"""Figures 1-4: the metrics themselves and the toy example. Figure 1: each metric of
one held-out item against its exact rank; Figure 2: the expected sampled metric of
the toy recommenders against m (eq 16); Figure 3: the expected sampled metric against
the exact rank for several m; Figure 4: corrected AP on the sampled rank and its
expectation over the sampling beside the exact AP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..labels import method_label, metric_label
from .placement import corners, place_labels, vertical_marker
from .style import (
    CLS_CONSTRAINT_WORDS,
    LINESTYLES,
    TOY_COLORS,
    color_of,
    law_description,
    method_color_of,
    styled,
    subtitle,
)

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "corrected_ap_figure",
    "expected_vs_sample_size_figure",
    "expected_vs_true_rank_figure",
    "metric_curves_figure",
]


def _m_range(values) -> str:
    values = sorted({int(v) for v in values})
    if len(values) == 1:
        return f"m = {values[0]:,}"
    if len(values) <= 4:
        return "m = " + ", ".join(f"{v:,}" for v in values)
    return f"m = {values[0]:,} to {values[-1]:,} ({len(values)} values)"


def _sci(value: float) -> str:
    """A number for a label: 0.25, 1,500 or -8.5×10^8 (mathtext)."""
    if value == 0 or 1e-3 <= abs(value) < 1e5:
        return f"{value:,.3g}"
    exponent = int(np.floor(np.log10(abs(value))))
    return rf"${value / 10**exponent:.2g}\times10^{{{exponent}}}$"


@styled
def metric_curves_figure(curves: pd.DataFrame, top: int = 100) -> Figure:
    """Figure 1: each metric of one held-out item against its rank r = 1..n.

    Parameters
    ----------
    curves : pandas.DataFrame
        Column ``rank`` (1..n) and one column per metric name.
    top : int, default 100
        Ranks shown in the right panel.

    Returns
    -------
    matplotlib.figure.Figure
        Left: all n ranks; right: the top ``top`` ranks.

    Examples
    --------
    >>> curves = pd.DataFrame({"rank": [1, 2, 3, 4], "auc": [1, 2 / 3, 1 / 3, 0]})
    >>> fig = metric_curves_figure(curves, top=2)
    >>> fig.get_suptitle()
    'n = 4 items: the metric of a single held-out item at exact rank r (no sampling)'
    >>> plt.close(fig)
    """
    fig, (whole, head) = plt.subplots(1, 2, figsize=(10, 3.4), layout="constrained")
    metrics = [c for c in curves.columns if c != "rank"]
    first = curves[curves["rank"] <= top]
    for i, metric in enumerate(metrics):
        style = {"color": f"C{i}", "linestyle": LINESTYLES[i % 4]}
        whole.plot(curves["rank"], curves[metric], label=metric_label(metric), **style)
        head.plot(first["rank"], first[metric], label=metric_label(metric), **style)
    n = int(curves["rank"].max())
    whole.set(xlabel="exact rank $r$", ylabel="metric $M(r)$", title=f"all {n:,} ranks")
    head.set(xlabel="exact rank $r$", ylabel="metric $M(r)$", title=f"top {top} ranks")
    fig.legend(*head.get_legend_handles_labels(), loc="outside right center", title="metric")
    subtitle(
        fig, f"n = {n:,} items: the metric of a single held-out item at exact rank r (no sampling)"
    )
    return fig


def _panel_row(panels: int):
    """A row of toy-figure panels, room for a legend on the right."""
    size = (2.6 * panels + 0.8, 3.0)
    return plt.subplots(1, panels, figsize=size, squeeze=False, layout="constrained")[1][0]


@styled
def expected_vs_sample_size_figure(
    curves: pd.DataFrame, n: int | None = None, law: str | None = None, marked_m: int | None = None
) -> Figure:
    """Figure 2: expected sampled metric of each toy recommender against m (eq 16).

    Parameters
    ----------
    curves : pandas.DataFrame
        Columns m, metric, recommender, expected.
    n : int, optional
        Items of the toy catalogue, for the subtitle.
    law : str, optional
        The sampling law of the expectation, for the subtitle.
    marked_m : int, optional
        A sample size marked by a vertical line (Table 2's m).

    Returns
    -------
    matplotlib.figure.Figure
        One panel per metric, m on a log axis.

    Examples
    --------
    >>> curves = pd.DataFrame(
    ...     {"m": [1, 10], "metric": "auc", "recommender": "A", "expected": [0.9, 0.9]}
    ... )
    >>> fig = expected_vs_sample_size_figure(curves, n=100, law="binomial")
    >>> fig.axes[0].get_xlabel()
    'number of sampled items m'
    >>> plt.close(fig)
    """
    metrics = list(dict.fromkeys(curves["metric"]))
    axes = _panel_row(len(metrics))
    fig = axes[0].figure
    for ax, metric in zip(axes, metrics):
        part = curves[curves["metric"] == metric]
        for i, (name, group) in enumerate(part.groupby("recommender", sort=True)):
            ax.plot(group["m"], group["expected"], label=name, color=color_of(name, i, TOY_COLORS))
        ax.set(xscale="log", xlabel="number of sampled items m", title=metric_label(metric))
        ax.set_ylim(-0.03, 1.03)
    labels: list = []
    if marked_m is not None:
        for i, ax in enumerate(axes):
            vertical_marker(ax, marked_m, "" if i else f"m = {marked_m}\n(Table 2)", labels)
    axes[0].set_ylabel(r"expected sampled metric $E[M(\tilde{r})]$")
    fig.legend(
        *axes[0].get_legend_handles_labels(), title="toy\nrecommender", loc="outside right center"
    )
    subtitle(
        fig,
        "Toy example of Table 1 (recommenders A, B, C; 5 held-out items each): "
        + (f"n = {n:,} items, " if n else "")
        + _m_range(curves["m"])
        + (f", {law_description(law)}" if law else ""),
    )
    place_labels(labels)
    return fig


@styled
def expected_vs_true_rank_figure(curves: pd.DataFrame, n: int, law: str | None = None) -> Figure:
    """Figure 3: expected sampled metric against the exact rank r, for several m.

    The exact metric (rows with m = n) is a wide grey band under the sampled
    curves, which are drawn with distinct dash patterns: where they coincide
    with it (AUC is unbiased for every m) each stays visible, and the panel
    says so.

    Parameters
    ----------
    curves : pandas.DataFrame
        Columns m, metric, rank, expected; m = n marks the exact metric.
    n : int
        Items of the catalogue.
    law : str, optional
        The sampling law, for the subtitle.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per metric.

    Examples
    --------
    >>> curves = pd.DataFrame(
    ...     {"m": [10, 10, 100, 100], "metric": "auc", "rank": [1, 2] * 2, "expected": [1, 0.9] * 2}
    ... )
    >>> fig = expected_vs_true_rank_figure(curves, n=100)
    >>> [t.get_text() for t in fig.legends[0].get_texts()]
    ['m = 10', 'exact (m = n)']
    >>> plt.close(fig)
    """
    metrics = list(dict.fromkeys(curves["metric"]))
    axes = _panel_row(len(metrics))
    fig = axes[0].figure
    sampled_m = sorted(m for m in set(curves["m"]) if m != n)
    notes = []
    for ax, metric in zip(axes, metrics):
        part = curves[curves["metric"] == metric]
        exact = part[part["m"] == n]
        ax.plot(
            exact["rank"],
            exact["expected"],
            color="0.6",
            linewidth=5,
            alpha=0.55,
            solid_capstyle="butt",
            label="exact (m = n)",
            zorder=1,
        )
        coincide = len(exact) > 0
        for i, m in enumerate(sampled_m):
            group = part[part["m"] == m]
            ax.plot(
                group["rank"],
                group["expected"],
                label=f"m = {m:,}",
                color=f"C{i}",
                linestyle=("-", (0, (5, 3)), (0, (1.5, 2)), "-.")[i % 4],
                linewidth=1.4,
                zorder=2,
            )
            if coincide:
                merged = group.merge(exact, on="rank", suffixes=("", "_exact"))
                coincide = len(merged) == len(group) and np.allclose(
                    merged["expected"], merged["expected_exact"], atol=1e-9
                )
        if coincide and sampled_m:
            text = "every m equals the exact\nmetric (unbiased)"
            notes.append((ax, text, corners(), {"fontsize": 7.5, "color": "0.25"}))
        ax.set(xlabel="exact rank $r$", title=metric_label(metric))
    axes[0].set_ylabel(r"expected sampled metric $E[M(\tilde{r})\,|\,r]$")
    handles, labels = axes[0].get_legend_handles_labels()
    order = [*range(1, len(handles)), 0]  # the sampled m first, exact last
    fig.legend([handles[i] for i in order], [labels[i] for i in order], loc="outside right center")
    max_rank = int(curves["rank"].max())
    subtitle(
        fig,
        f"Toy setting: n = {n:,} items, "
        + _m_range(sampled_m)
        + (f", {law_description(law)}" if law else "")
        + f"; the top {max_rank:,} of {n:,} ranks",
    )
    place_labels(notes)
    return fig


@styled
def corrected_ap_figure(
    on_sample: pd.DataFrame,
    expected: pd.DataFrame,
    n: int,
    m: int,
    law: str | None = None,
    cls_constraint: str | None = None,
) -> Figure:
    """Figure 4: corrected AP on the sampled rank (left) and its expectation over
    the sampling against the exact rank, beside the exact AP (right).

    A method whose values on the sample leave the range of the others by far
    (least squares oscillates by orders of magnitude) is left out of the left
    panel, which states its range instead; its expectation is drawn on the right.

    Parameters
    ----------
    on_sample : pandas.DataFrame
        Columns method, sampled_rank (1..m+1), value.
    expected : pandas.DataFrame
        Columns method, rank, value; method "exact" is the exact AP.
    n : int
        Items of the catalogue.
    m : int
        Sampled items.
    law : str, optional
        The sampling law, for the subtitle.
    cls_constraint : str, optional
        The CLS constraint, for the subtitle.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> on_sample = pd.DataFrame({"method": "ls", "sampled_rank": [1, 2], "value": [1.0, 0.0]})
    >>> expected = pd.DataFrame({"method": ["ls", "exact"], "rank": [1, 1], "value": [0.9, 1.0]})
    >>> fig = corrected_ap_figure(on_sample, expected, n=10, m=1)
    >>> [t.get_text() for t in fig.legends[0].get_texts()]
    ['LS', 'Exact']
    >>> fig.axes[0].get_xlabel()
    'sampled rank $\\\\tilde{r}$ (m = 1)'
    >>> plt.close(fig)
    """
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6), layout="constrained")
    ranges = on_sample.groupby("method", sort=False)["value"].agg(["min", "max"])
    scale = max(1.0, float(expected["value"].abs().max()))
    off_scale = ranges[(ranges["min"] < -10 * scale) | (ranges["max"] > 10 * scale)]
    if len(off_scale) == len(ranges):
        off_scale = off_scale.iloc[:0]  # all alike: draw them all
    in_scale = ranges.drop(off_scale.index)
    for i, (method, group) in enumerate(on_sample.groupby("method", sort=False)):
        if method in off_scale.index:
            continue  # stated in a note instead: it would cover the panel with vertical strokes
        left.plot(
            group["sampled_rank"],
            group["value"],
            label=method_label(method),
            color=method_color_of(method, i),
            linewidth=1.2,
        )
    for i, (method, group) in enumerate(expected.groupby("method", sort=False)):
        exact = method == "exact"
        right.plot(
            group["rank"],
            group["value"],
            label=method_label(method),
            linewidth=1.6 if exact else 1.2,
            color=method_color_of(method, i),
            linestyle="--" if exact else "-",
            zorder=3 if exact else 2,
        )
    low, high = float(in_scale["min"].min()), float(in_scale["max"].max())
    pad = 0.05 * (high - low or 1.0)
    left.set_ylim(low - pad, high + pad)
    left.set(
        xlabel=rf"sampled rank $\tilde{{r}}$ (m = {m})",
        ylabel=r"sampled or corrected AP $\widehat{\mathrm{AP}}(\tilde{r})$",
        xscale="log",
        title="correction on the sample",
    )
    right.set(
        xlabel=rf"exact rank $r$ (n = {n:,})",
        ylabel=r"$E[\widehat{\mathrm{AP}}(\tilde{r})\,|\,r]$, and exact AP$(r)$",
        xscale="log",
        title="expectation over the sampling",
    )
    notes = [
        (
            left,
            f"{method_label(method)} not drawn: it oscillates between\n"
            f"{_sci(row['min'])} and {_sci(row['max'])} (right: its mean)",
            corners(),
            {"fontsize": 7.5, "color": method_color_of(method, 0)},
        )
        for method, row in off_scale.iterrows()
    ]
    handles, labels = right.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", title="method")
    subtitle(
        fig,
        f"Toy setting: n = {n:,} items, m = {m} sampled items"
        + (f", {law_description(law)}" if law else "")
        + "; uniform prior p(r) = 1/n"
        + (
            f"; CLS: {CLS_CONSTRAINT_WORDS.get(cls_constraint, cls_constraint)}"
            if cls_constraint
            else ""
        ),
    )
    place_labels(notes)
    return fig
