"""Figures of the paper, drawn from result tables (no metric is computed here
other than through the library's own functions).

Every figure is drawn and saved inside :data:`STYLE` (a ``matplotlib``
``rc_context``): importing this module changes no global setting.
"""

from __future__ import annotations

import functools
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .atomic import atomic_path

# One style for every figure; svg.hashsalt makes SVG ids the same in every run.
STYLE = {"font.size": 10, "axes.grid": True, "grid.alpha": 0.3, "svg.hashsalt": "sampled-metrics"}


def styled(draw):
    """Run a figure-drawing function inside the figures' style."""

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with plt.rc_context(STYLE):
            return draw(*args, **kwargs)

    return wrapper


@styled
def save_figure(figure, *paths) -> None:
    """Save a matplotlib figure to each path (format from the suffix), atomically,
    in the figures' style (ticks drawn at save time follow it too). PDF metadata
    carries no date, so the same data gives the same bytes."""
    for path in paths:
        suffix = Path(path).suffix.lstrip(".")
        metadata = {"CreationDate": None} if suffix == "pdf" else {"Software": None}
        with atomic_path(path) as tmp:
            figure.savefig(tmp, format=suffix, metadata=metadata, dpi=150, bbox_inches="tight")


COLORS = {"X": "tab:blue", "Y": "tab:orange", "Z": "tab:green"}


def _color(name: str, index: int) -> str:
    return COLORS.get(name, f"C{index % 10}")


# --------------------------------------------------------------------------
# Figure 5: distribution of exact ranks
# --------------------------------------------------------------------------


def rank_buckets(n_items: int, width: int) -> np.ndarray:
    """Bucket edges 0.5, width + 0.5, ... covering ranks 1..n_items."""
    return np.arange(0, n_items + width, width) + 0.5


@styled
def rank_distribution_figure(
    ranks: dict[str, pd.DataFrame], width: int = 100, top: int = 100, top_width: int = 10
):
    """Figure 5: histogram of exact ranks per recommender over all ranks
    (buckets of ``width``) and over the top ``top`` ranks (buckets of ``top_width``)."""
    n_items = max(int(frame["n_candidates"].max()) for frame in ranks.values())
    fig, (whole, head) = plt.subplots(1, 2, figsize=(10, 3.6))
    for i, (name, frame) in enumerate(ranks.items()):
        style = dict(histtype="step", linewidth=1.6, color=_color(name, i), label=name)
        whole.hist(frame["rank"], bins=rank_buckets(n_items, width), **style)
        head.hist(frame["rank"][frame["rank"] <= top], bins=rank_buckets(top, top_width), **style)
    whole.set(
        xlabel="rank of the held-out item",
        ylabel="number of users",
        title=f"all ranks (buckets of {width})",
        yscale="log",
        xlim=(0, n_items + width),
    )
    head.set(
        xlabel="rank of the held-out item",
        ylabel="number of users",
        title=f"top {top} ranks (buckets of {top_width})",
        xlim=(0, top + 0.5),
    )
    head.legend(title="recommender")
    fig.tight_layout()
    return fig


def rank_distribution_facts(ranks: dict[str, pd.DataFrame], width: int = 100) -> pd.DataFrame:
    """The counts section 6.1 quotes: users with the held-out item in the top
    10 and top 100, in the bottom half of their ranked set, in the last bucket
    of Figure 5, and at the very last rank."""
    n_items = max(int(frame["n_candidates"].max()) for frame in ranks.values())
    last_bucket = rank_buckets(n_items, width)[-2]
    rows = []
    for name, frame in ranks.items():
        r, n = frame["rank"].to_numpy(), frame["n_candidates"].to_numpy()
        rows.append(
            {
                "recommender": name,
                "users": r.size,
                "top_10": int(np.sum(r <= 10)),
                "top_100": int(np.sum(r <= 100)),
                "bottom_half": int(np.sum(r > n / 2)),
                "last_bucket": int(np.sum(r > last_bucket)),
                "last_rank": int(np.sum(r == n)),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------
# Figures 1-4: the toy example and the metrics themselves
# --------------------------------------------------------------------------

METRIC_LABELS = {
    "auc": "AUC",
    "ap": "AP",
    "ndcg": "NDCG",
    "recall@10": "Recall@10",
    "ndcg@10": "NDCG@10",
}


def _label(metric: str) -> str:
    return METRIC_LABELS.get(metric, metric)


@styled
def metric_curves_figure(curves: pd.DataFrame, top: int = 100):
    """Figure 1: metric vs predicted rank, whole range (left) and top ranks (right)."""
    fig, (whole, head) = plt.subplots(1, 2, figsize=(10, 3.6))
    metrics = [c for c in curves.columns if c != "rank"]
    for metric in metrics:
        whole.plot(curves["rank"], curves[metric], label=_label(metric))
        first = curves[curves["rank"] <= top]
        head.plot(first["rank"], first[metric], label=_label(metric))
    n = int(curves["rank"].max())
    whole.set(xlabel="predicted rank", ylabel="metric", title=f"all {n:,} ranks")
    head.set(xlabel="predicted rank", ylabel="metric", title=f"top {top} ranks")
    head.legend()
    fig.tight_layout()
    return fig


@styled
def expected_vs_sample_size_figure(curves: pd.DataFrame):
    """Figure 2: expected sampled metric of each toy recommender vs m."""
    metrics = list(dict.fromkeys(curves["metric"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.2 * len(metrics), 3.2))
    for ax, metric in zip(np.atleast_1d(axes), metrics):
        part = curves[curves["metric"] == metric]
        for i, (name, group) in enumerate(part.groupby("recommender", sort=True)):
            ax.plot(group["m"], group["expected"], label=name, color=f"C{i + 3}")
        ax.set(xscale="log", xlabel="number of samples m", title=_label(metric))
    np.atleast_1d(axes)[0].set_ylabel("expected sampled metric")
    np.atleast_1d(axes)[-1].legend(title="recommender")
    fig.tight_layout()
    return fig


@styled
def expected_vs_true_rank_figure(curves: pd.DataFrame, n: int):
    """Figure 3: expected sampled metric vs true rank for several m (m = n: exact)."""
    metrics = list(dict.fromkeys(curves["metric"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.2 * len(metrics), 3.2))
    for ax, metric in zip(np.atleast_1d(axes), metrics):
        part = curves[curves["metric"] == metric]
        for m, group in part.groupby("m", sort=True):
            label = "exact" if m == n else f"m = {m:,}"
            ax.plot(
                group["rank"],
                group["expected"],
                label=label,
                color="black" if m == n else None,
                linestyle="--" if m == n else "-",
            )
        ax.set(xlabel="true rank r", title=_label(metric))
    np.atleast_1d(axes)[0].set_ylabel("expected sampled metric")
    np.atleast_1d(axes)[-1].legend()
    fig.tight_layout()
    return fig


METHOD_LABELS = {
    "sampled": "sampled (uncorrected)",
    "rank_estimate": "rank estimate",
    "cls": "CLS",
    "ls": "LS",
    "exact": "exact",
}


def method_label(method: str) -> str:
    if method.startswith("bv_"):
        return f"BV {method[3:]}"
    return METHOD_LABELS.get(method, method)


@styled
def corrected_ap_figure(on_sample: pd.DataFrame, expected: pd.DataFrame, n: int, m: int):
    """Figure 4: corrected AP over the sampled rank (left) and its expectation
    over the true rank (right)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for method, group in on_sample.groupby("method", sort=False):
        left.plot(group["sampled_rank"], group["value"], label=method_label(method), linewidth=1.2)
    for method, group in expected.groupby("method", sort=False):
        exact = method == "exact"
        right.plot(
            group["rank"],
            group["value"],
            label=method_label(method),
            linewidth=1.2,
            color="black" if exact else None,
            linestyle="--" if exact else "-",
        )
    left.set(
        xlabel=f"sampled rank r~ (m = {m})",
        ylabel="corrected AP",
        xscale="log",
        title="correction on the sample",
    )
    right.set(
        xlabel=f"true rank r (n = {n:,})",
        ylabel="expected corrected AP",
        xscale="log",
        title="expectation over the sampling",
    )
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


# --------------------------------------------------------------------------
# Figure 6: expected Recall@10 vs sample size on real ranks
# --------------------------------------------------------------------------


@styled
def sample_size_figure(curves: pd.DataFrame, exact: dict, metric: str, orders: pd.DataFrame):
    """Figure 6: expected metric vs m per recommender, one panel per method,
    the exact values as dashed lines and a marker at the smallest m from which
    the X/Y order stays right."""
    methods = list(dict.fromkeys(curves["method"]))
    fig, axes = plt.subplots(1, len(methods), figsize=(5 * len(methods), 3.6), squeeze=False)
    for ax, method in zip(axes[0], methods):
        part = curves[curves["method"] == method]
        for i, (name, group) in enumerate(part.groupby("recommender", sort=False)):
            color = _color(name, i)
            ax.plot(group["m"], 100 * group["expected"], label=name, color=color)
            if name in exact:
                ax.axhline(100 * exact[name], color=color, linestyle="--", linewidth=0.8)
        row = orders[orders["method"] == method]
        if len(row) and not np.isnan(row["stays_right_from_m"].iloc[0]):
            m_right = row["stays_right_from_m"].iloc[0]
            ax.axvline(m_right, color="grey", linestyle=":")
            ax.annotate(
                f"{row['pair'].iloc[0]} right from m = {m_right:.0f}",
                (m_right, 0.95),
                xycoords=("data", "axes fraction"),
                fontsize=8,
                ha="left",
                va="top",
            )
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="number of samples m",
            ylabel=f"expected {_label(metric)} (%)",
            title=method_label(method),
        )
        ax.legend(title="dashed: exact", fontsize=8)
    fig.tight_layout()
    return fig
