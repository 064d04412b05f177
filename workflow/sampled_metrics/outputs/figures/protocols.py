"""The protocol study's figure: per metric, the RMSE of every estimator against the
exact metric under every framework's sampling protocol, and the share of recommender
pairs it orders as the exact metric does; a note names the protocols left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..labels import method_label, metric_label
from .style import MARKERS, method_color_of, styled, subtitle

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["protocols_figure"]


@styled
def protocols_figure(
    errors: pd.DataFrame, pairs: pd.DataFrame, *, dataset: str = "", note: str | None = None
) -> Figure:
    """The protocol study (``results/<dataset>/protocols.csv``): for each metric, the
    RMSE of every estimator against the exact metric under every framework's
    protocol (mean over the recommenders, log scale), and the share of recommender
    pairs it orders as the exact metric does. With no protocol in ``errors`` (every one
    left out), a figure that says so.

    Parameters
    ----------
    errors : pandas.DataFrame
        protocol, target, recommender, metric, method, rmse (percent points).
    pairs : pandas.DataFrame
        protocol, pair, metric, method, correct, repetitions.
    dataset : str, optional
        Named in the subtitle.
    note : str, optional
        More lines of the subtitle (the protocols left out, and why).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> errors = pd.DataFrame({"protocol": ["ncf", "ncf"], "target": "rank",
    ...     "recommender": "X", "metric": "ap", "method": ["sampled", "cls"],
    ...     "rmse": [30.0, 1.0]})
    >>> pairs = pd.DataFrame({"protocol": ["ncf", "ncf"], "pair": "X<Y", "metric": "ap",
    ...     "method": ["sampled", "cls"], "correct": [100, 90], "repetitions": 100})
    >>> fig = protocols_figure(errors, pairs, dataset="toy")
    >>> len(fig.axes)
    2
    >>> plt.close(fig)
    >>> fig = protocols_figure(errors.iloc[:0], pairs.iloc[:0], note="ncf left out")
    >>> fig.axes[0].texts[0].get_text()
    'No protocol to show: every protocol of protocols.run is left out'
    >>> plt.close(fig)
    """
    rank = errors[errors["target"] == "rank"]
    if rank.empty:
        fig, ax = plt.subplots(figsize=(6.0, 2.4))
        ax.axis("off")
        ax.text(0.5, 0.5, "No protocol to show: every protocol of protocols.run is left out",
                ha="center", va="center")  # fmt: skip
        subtitle(fig, f"{dataset}: frameworks' sampling protocols", note or "")
        fig.tight_layout()
        return fig
    metrics = list(dict.fromkeys(rank["metric"]))
    protocols = list(dict.fromkeys(rank["protocol"]))
    methods = list(dict.fromkeys(rank["method"]))
    rmse = rank.groupby(["metric", "method", "protocol"])["rmse"].mean()
    right = pairs.groupby(["metric", "method", "protocol"])[["correct", "repetitions"]].sum()
    share = 100 * right["correct"] / right["repetitions"]
    fig, axes = plt.subplots(
        2, len(metrics), figsize=(2.9 * len(metrics), 5.6), squeeze=False, sharex=True
    )
    x = np.arange(len(protocols))
    offsets = (np.arange(len(methods)) - (len(methods) - 1) / 2) * 0.8 / max(len(methods), 1)
    for j, metric in enumerate(metrics):
        for k, method in enumerate(methods):
            style = {
                "color": method_color_of(method, k),
                "marker": MARKERS[k % len(MARKERS)],
                "linestyle": "none",
                "markersize": 5,
                "label": method_label(method),
            }
            for row, table in ((0, rmse), (1, share)):
                values = [table.get((metric, method, p), np.nan) for p in protocols]
                axes[row, j].plot(x + offsets[k], values, **style)
        axes[0, j].set_yscale("log")
        axes[0, j].set_title(metric_label(metric))
        axes[1, j].set_ylim(-5, 105)
        axes[1, j].set_xticks(x, protocols, rotation=60, ha="right")
    axes[0, 0].set_ylabel("RMSE (points)")
    axes[1, 0].set_ylabel("pairs ordered right (%)")
    fig.align_ylabels(axes[:, 0])
    axes[0, -1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), title="estimator")
    n_models = rank["recommender"].nunique()
    subtitle(
        fig,
        f"{dataset}: frameworks' sampling protocols simulated on {n_models} recommenders' "
        "real scores. Top: RMSE against the exact metric, mean over the recommenders; "
        "bottom: recommender pairs ordered as the exact metric orders them. Every "
        "estimator with the law the protocol implies.",
        note or "",
    )
    fig.tight_layout()
    return fig
