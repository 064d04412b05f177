"""Figures of the paper, drawn from result tables (no metric is computed here
other than through the library's own functions).

Every figure is drawn and saved inside :data:`STYLE` (a ``matplotlib``
``rc_context``): importing this module or drawing a figure changes no global
setting. Every figure says where its numbers come from in a subtitle (the
figure's ``suptitle``: data set or toy catalogue, n, m, the sampling law), and
:func:`save_figure` writes it at :data:`DPI` dots per inch.
"""

from __future__ import annotations

import functools
import textwrap
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

from ..io.atomic import atomic_path
from .labels import method_label, metric_label

__all__ = [
    "DPI",
    "STYLE",
    "corrected_ap_figure",
    "expected_vs_sample_size_figure",
    "expected_vs_true_rank_figure",
    "law_description",
    "method_title",
    "metric_curves_figure",
    "protocols_figure",
    "rank_buckets",
    "rank_distribution_facts",
    "rank_distribution_figure",
    "sample_size_figure",
    "save_figure",
    "styled",
]

# One style for every figure; svg.hashsalt makes SVG ids the same in every run.
STYLE = {
    "font.size": 9,
    "axes.titlesize": 9.5,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.title_fontsize": 8,
    "figure.titlesize": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "lines.linewidth": 1.4,
    "svg.hashsalt": "sampled-metrics",
}
# Resolution of every saved raster figure (PNG), in dots per inch.
DPI = 300

COLORS = {"X": "tab:blue", "Y": "tab:orange", "Z": "tab:green"}
TOY_COLORS = {"A": "tab:red", "B": "tab:purple", "C": "tab:brown"}
MARKERS = ("o", "s", "^", "D", "v", "P")
LINESTYLES = ("-", "--", ":", "-.")
METHOD_COLORS = {
    "sampled": "tab:blue",
    "rank_estimate": "tab:orange",
    "ls": "tab:olive",
    "cls": "tab:green",
    "bv_1": "tab:red",
    "bv_0.1": "tab:purple",
    "bv_0.01": "tab:brown",
    "bv_0.001": "tab:pink",
    "em": "tab:cyan",
    "mn_em": "goldenrod",
    "maxent": "tab:gray",
    "hansen_hurwitz": "black",
    "exact": "black",
}
# The CLS constraints of corrections.cls_constraint, in words.
CLS_CONSTRAINT_WORDS = {
    "monotone_in_range": "monotone, within the metric's range",
    "monotone": "monotone",
}
# Where an empty bucket of Figure 5 is drawn on its log axis (labelled "0").
EMPTY_BUCKET = 0.5


def styled(draw):
    """Run a figure-drawing function inside the figures' style (:data:`STYLE`).

    Parameters
    ----------
    draw : callable
        A function that draws (and returns) a figure.

    Returns
    -------
    callable
        ``draw`` wrapped in ``matplotlib.pyplot.rc_context(STYLE)``.

    Examples
    --------
    >>> import matplotlib as mpl
    >>> size = styled(lambda: mpl.rcParams["font.size"])
    >>> size() == STYLE["font.size"]
    True
    """

    @functools.wraps(draw)
    def wrapper(*args, **kwargs):
        with plt.rc_context(STYLE):
            return draw(*args, **kwargs)

    return wrapper


@styled
def save_figure(figure, *paths) -> None:
    """Save a figure to each path (format from the suffix), atomically.

    Saved in the figures' style (ticks drawn at save time follow it too), at
    :data:`DPI` dots per inch, cropped to its content. PDF metadata carries no
    date and PNG metadata no software version, so the same data gives the same
    bytes.

    Parameters
    ----------
    figure : matplotlib.figure.Figure
        The figure to save.
    *paths : str or path-like
        Output files; the suffix (``.pdf``, ``.png``, ``.svg``) picks the format.

    Examples
    --------
    >>> import tempfile
    >>> from PIL import Image
    >>> fig = rank_distribution_figure({"X": pd.DataFrame({"rank": [1, 5], "n_candidates": 9})})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     save_figure(fig, f"{tmp}/fig.png")
    ...     round(Image.open(f"{tmp}/fig.png").info["dpi"][0])
    300
    >>> plt.close(fig)
    """
    for path in paths:
        suffix = Path(path).suffix.lstrip(".")
        metadata = {"CreationDate": None} if suffix == "pdf" else {"Software": None}
        with atomic_path(path) as tmp:
            figure.savefig(
                tmp, format=suffix, metadata=metadata, dpi=DPI, bbox_inches="tight", pad_inches=0.04
            )


def law_description(law: str) -> str:
    """The sampling law in words, for subtitles and captions.

    Parameters
    ----------
    law : str
        ``"binomial"`` or ``"hypergeometric"`` (another name is returned as it is).

    Returns
    -------
    str

    Examples
    --------
    >>> law_description("binomial")
    'binomial law (sampling with replacement)'
    """
    return {
        "binomial": "binomial law (sampling with replacement)",
        "hypergeometric": "hypergeometric law (sampling without replacement)",
    }.get(law, law)


def method_title(method: str) -> str:
    """A panel title that explains a correction method (Figure 6).

    Parameters
    ----------
    method : str
        ``"sampled"``, ``"rank_estimate"``, ``"ls"``, ``"cls"`` or ``"bv_<gamma>"``.

    Returns
    -------
    str

    Examples
    --------
    >>> method_title("sampled")
    'Uncorrected (sampled metric)'
    >>> method_title("bv_0.1")
    'Corrected: BV, γ = 0.1 (Bias² + 0.1·Variance, eq 24)'
    """
    if method.startswith("bv_"):
        gamma = method[3:]
        return f"Corrected: BV, γ = {gamma} (Bias² + {gamma}·Variance, eq 24)"
    titles = {
        "sampled": "Uncorrected (sampled metric)",
        "rank_estimate": "Corrected: rank estimate (eq 20)",
        "ls": "Corrected: LS (least squares, eq 21)",
        "cls": "Corrected: CLS (monotone least squares, eq 21)",
    }
    return titles.get(method, method_label(method))


def _color(name: str, index: int, colors=COLORS) -> str:
    return colors.get(name, f"C{index % 10}")


def _subtitle(fig, *lines: str) -> None:
    """The figure's subtitle: where its numbers come from, wrapped to the figure's width."""
    width = int(fig.get_figwidth() * 15)
    parts = [part for line in lines for part in line.split("\n") if part]
    text = "\n".join(textwrap.fill(part, width, break_on_hyphens=False) for part in parts)
    if text:
        fig.suptitle(text, fontsize=STYLE["figure.titlesize"])


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


# --------------------------------------------------------------------------
# Labels placed where they overlap no curve, label or legend
# --------------------------------------------------------------------------


def _densify(xy: np.ndarray, frame, step: float = 2.0) -> np.ndarray:
    """Points every ``step`` pixels along the part of a polyline (display
    coordinates) inside the box ``frame`` (segments clipped to it, Liang-Barsky)."""
    xy = xy[np.all(np.isfinite(xy), axis=1)]
    if len(xy) < 2:
        return xy
    start, delta = xy[:-1], np.diff(xy, axis=0)
    low, high = np.zeros(len(start)), np.ones(len(start))
    for axis, (a, b) in enumerate(((frame.x0, frame.x1), (frame.y0, frame.y1))):
        d, p = delta[:, axis], start[:, axis]
        with np.errstate(divide="ignore", invalid="ignore"):
            ta, tb = (a - p) / d, (b - p) / d
        moving = d != 0
        low = np.where(moving, np.maximum(low, np.minimum(ta, tb)), low)
        high = np.where(moving, np.minimum(high, np.maximum(ta, tb)), high)
        outside = ~moving & ((p < a) | (p > b))
        high = np.where(outside, -1.0, high)
    keep = low <= high
    start, delta, low, high = start[keep], delta[keep], low[keep], high[keep]
    start, delta = start + low[:, None] * delta, (high - low)[:, None] * delta
    counts = np.maximum(1, np.ceil(np.hypot(*delta.T) / step).astype(int))
    fractions = np.concatenate([np.arange(k + 1) / k for k in counts])[:, None]
    return np.repeat(start, counts + 1, axis=0) + fractions * np.repeat(delta, counts + 1, axis=0)


def _obstacles(ax, renderer):
    """What a label must not cover: points along every line and step outline of
    ``ax`` (display coordinates), and the boxes of its bars, texts and legend."""
    points = [np.empty((0, 2))]
    frame = ax.get_window_extent(renderer)
    for line in ax.get_lines():
        if line.get_visible():
            xy = np.asarray(line.get_xydata(), dtype=float)
            points.append(_densify(line.get_transform().transform(xy), frame))
            if line.get_marker() not in (None, "None", "none", ""):
                points.append(line.get_transform().transform(xy))
    boxes = []
    for patch in ax.patches:
        if type(patch).__name__ == "StepPatch":
            path = patch.get_path()
            points.append(_densify(patch.get_transform().transform(path.vertices), frame))
        elif patch.get_visible():
            boxes.append(patch.get_window_extent(renderer))
    boxes += [text.get_window_extent(renderer) for text in ax.texts if text.get_visible()]
    if ax.get_legend() is not None:
        boxes.append(ax.get_legend().get_window_extent(renderer))
    return np.vstack(points), boxes


def _place_labels(labels) -> None:
    """Place the labels ``(ax, text, candidates, kwargs)`` one after the other, once
    the figure is complete (legend and subtitle change the layout)."""
    for ax, text, candidates, kwargs in labels:
        _place_text(ax, text, candidates, **kwargs)


def _place_text(ax, text: str, candidates, pad: float = 3.0, **kwargs):
    """Add ``text`` at the first of ``candidates`` (dicts of x, y, ha, va and
    optionally transform, in axes fractions by default) where it stays inside
    the axes and covers no curve, text or legend; else where it covers least."""
    fig = ax.figure
    fig.draw_without_rendering()  # the layout, so that boxes are final
    renderer = fig.canvas.get_renderer()
    points, boxes = _obstacles(ax, renderer)
    frame = ax.get_window_extent(renderer)
    best, best_cost = None, np.inf
    for candidate in candidates:
        spot = {"transform": ax.transAxes, **candidate}
        artist = ax.text(s=text, **spot, **kwargs)
        box = artist.get_window_extent(renderer).padded(pad)
        inside = (
            box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
        )
        covered = np.count_nonzero(
            (points[:, 0] >= box.x0)
            & (points[:, 0] <= box.x1)
            & (points[:, 1] >= box.y0)
            & (points[:, 1] <= box.y1)
        )
        cost = covered + 1000 * sum(box.overlaps(other) for other in boxes) + 1e6 * (not inside)
        artist.remove()
        if cost < best_cost:
            best, best_cost = spot, cost
        if cost == 0:
            break
    return ax.text(s=text, **best, **kwargs)


def _corners(margin: float = 0.03):
    """Candidate spots in the corners and along the edges of the axes."""
    lo, hi = margin, 1 - margin
    spots = []
    for y, va in ((hi, "top"), (lo, "bottom"), (0.5, "center"), (0.75, "center"), (0.25, "center")):
        for x, ha in ((hi, "right"), (lo, "left"), (0.5, "center")):
            spots.append({"x": x, "y": y, "ha": ha, "va": va})
    return spots


def _beside_vertical(ax, x: float, factor: float = 1.06):
    """Candidate spots just right or left of the vertical line at data x (log x axis)."""
    spots = []
    for y, va in ((0.97, "top"), (0.03, "bottom"), (0.5, "center"), (0.75, "center")):
        for side in ("right", "left"):
            spots.append(
                {
                    "x": x * factor if side == "right" else x / factor,
                    "y": y,
                    "ha": "left" if side == "right" else "right",
                    "va": va,
                    "transform": ax.get_xaxis_transform(),
                }
            )
    for y in (0.5, 0.25, 0.75):  # rotated, along the line
        for side in ("right", "left"):
            spots.append(
                {
                    "x": x * factor if side == "right" else x / factor,
                    "y": y,
                    "ha": "left" if side == "right" else "right",
                    "va": "center",
                    "rotation": 90,
                    "transform": ax.get_xaxis_transform(),
                }
            )
    return spots


# --------------------------------------------------------------------------
# Figure 5: distribution of exact ranks
# --------------------------------------------------------------------------


def rank_buckets(n_items: int, width: int) -> np.ndarray:
    """Bucket edges 0.5, width + 0.5, ... covering ranks 1..n_items.

    Parameters
    ----------
    n_items : int
        The largest rank.
    width : int
        Ranks per bucket.

    Returns
    -------
    numpy.ndarray
        The edges, the first 0.5, the last at least ``n_items`` + 0.5.

    Examples
    --------
    >>> rank_buckets(25, 10).tolist()
    [0.5, 10.5, 20.5, 30.5]
    """
    return np.arange(0, n_items + width, width) + 0.5


def _largest_n(*rank_sets) -> int:
    return max(
        int(frame["n_candidates"].max()) for ranks in rank_sets if ranks for frame in ranks.values()
    )


def _log_count_panel(ax, counts: dict, edges: np.ndarray) -> None:
    """Counts per bucket on a log axis: step outlines with a marker per bucket,
    offset within the bucket per recommender; an empty bucket sits on the
    marked floor "0" instead of vanishing."""
    width = edges[1] - edges[0]
    centres = edges[:-1] + width / 2
    offsets = (np.arange(len(counts)) - (len(counts) - 1) / 2) * width / (len(counts) + 1)
    for i, (name, count) in enumerate(counts.items()):
        shown = np.where(count > 0, count, EMPTY_BUCKET)
        color = _color(name, i)
        ax.stairs(
            shown, edges, baseline=None, color=color, linestyle=LINESTYLES[i % 4], linewidth=1.1
        )
        ax.plot(
            centres + offsets[i],
            shown,
            linestyle="none",
            marker=MARKERS[i % len(MARKERS)],
            markersize=3,
            color=color,
            gid=f"counts {name}",
        )
    ax.axhline(EMPTY_BUCKET, color="0.4", linewidth=0.8, linestyle=(0, (1, 2)), zorder=0)
    largest = max(int(c.max()) for c in counts.values())
    decades = 10.0 ** np.arange(0, np.ceil(np.log10(max(largest, 1) * 1.5)) + 1)
    ax.set_yscale("log")
    ax.set_ylim(EMPTY_BUCKET / 1.8, max(largest, 1) * 2.5)
    ax.yaxis.set_major_locator(FixedLocator([EMPTY_BUCKET, *decades]))
    ax.yaxis.set_major_formatter(
        FuncFormatter(lambda v, _: "0" if np.isclose(v, EMPTY_BUCKET) else f"{v:,.0f}")
    )
    ax.yaxis.set_minor_formatter(NullFormatter())


def _bar_count_panel(ax, counts: dict, edges: np.ndarray) -> None:
    """Counts per bucket as bars side by side (one per recommender) on a linear axis."""
    width = edges[1] - edges[0]
    centres = edges[:-1] + width / 2
    bar = width / (len(counts) + 1)
    offsets = (np.arange(len(counts)) - (len(counts) - 1) / 2) * bar
    for i, (name, count) in enumerate(counts.items()):
        ax.bar(centres + offsets[i], count, width=bar, color=_color(name, i), label=name)
    ax.set_ylim(0, max(int(c.max()) for c in counts.values()) * 1.15 + 1)


@styled
def rank_distribution_figure(
    ranks: dict[str, pd.DataFrame],
    width: int = 100,
    top: int = 100,
    top_width: int = 10,
    *,
    pessimistic: dict[str, pd.DataFrame] | None = None,
    tie_policy: str = "random",
    dataset: str | None = None,
):
    """Figure 5: the number of users per bucket of exact ranks, per recommender.

    Left: all ranks in buckets of ``width`` (log axis; an empty bucket is drawn
    on the floor labelled 0). Right: the top ``top`` ranks in buckets of
    ``top_width``. One row for ``ranks`` (ties broken by ``tie_policy``) and,
    when given, one for ``pessimistic`` ranks (every item scored like the
    held-out item ranked above it, the convention of the paper's Figure 5).

    Parameters
    ----------
    ranks : dict of str to pandas.DataFrame
        Per recommender, the exact ranks: columns ``rank`` and ``n_candidates``.
    width : int, default 100
        Bucket width of the left panels.
    top : int, default 100
        Ranks shown in the right panels.
    top_width : int, default 10
        Bucket width of the right panels.
    pessimistic : dict of str to pandas.DataFrame, optional
        The same users' ranks under the pessimistic tie policy: a second row.
    tie_policy : str, default "random"
        The tie policy of ``ranks``, for the row titles.
    dataset : str, optional
        The data set, for the subtitle.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> ranks = {"X": pd.DataFrame({"rank": [1, 3, 250], "n_candidates": 300})}
    >>> worst = {"X": pd.DataFrame({"rank": [1, 3, 300], "n_candidates": 300})}
    >>> fig = rank_distribution_figure(ranks, pessimistic=worst, dataset="toy")
    >>> [ax.get_title() for ax in fig.axes][2]
    'Pessimistic ties: all ranks (buckets of 100)'
    >>> plt.close(fig)
    """
    rows = [(ranks, tie_policy)]
    if pessimistic is not None and tie_policy != "pessimistic":
        rows.append((pessimistic, "pessimistic"))
    n_items = _largest_n(ranks, pessimistic)
    edges, top_edges = rank_buckets(n_items, width), rank_buckets(top, top_width)
    fig, axes = plt.subplots(
        len(rows), 2, figsize=(10, 3.1 * len(rows) + 0.8), squeeze=False, layout="constrained"
    )
    row_names = {
        "random": "Random ties",
        "pessimistic": "Pessimistic ties",
        "optimistic": "Optimistic ties",
        "average": "Average ties",
    }
    labels = []
    for (whole, head), (row_ranks, policy) in zip(axes, rows):
        counts = {name: np.histogram(f["rank"], edges)[0] for name, f in row_ranks.items()}
        _log_count_panel(whole, counts, edges)
        head_counts = {name: np.histogram(f["rank"], top_edges)[0] for name, f in row_ranks.items()}
        _bar_count_panel(head, head_counts, top_edges)
        row = row_names.get(policy, f"{policy} ties")
        whole.set(
            xlabel="exact rank of the held-out item",
            ylabel="number of users",
            title=f"{row}: all ranks (buckets of {width})",
            xlim=(0, edges[-1] + width / 2),
        )
        head.set(
            xlabel="exact rank of the held-out item",
            ylabel="number of users",
            title=f"{row}: ranks 1 to {top} (buckets of {top_width})",
            xlim=(0, top + 0.5),
        )
        head.set_xticks(top_edges - 0.5)
        worst = max(counts, key=lambda name: counts[name][-1])
        lo, hi = int(edges[-2] + 0.5), int(edges[-1] - 0.5)
        labels.append(
            (
                whole,
                f"ranks 1 to {width:,} (first bucket):\n"
                + ", ".join(f"{name} {count[0]:,}" for name, count in counts.items()),
                _corners(),
                {"fontsize": 7.5, "color": "0.2"},
            )
        )
        if len(edges) > 2:  # a last bucket other than the first
            labels.append(
                (
                    whole,
                    f"{worst}: {counts[worst][-1]:,} users in the last\n"
                    f"bucket (ranks {lo:,} to {hi:,})",
                    _corners(),
                    {"fontsize": 7.5, "color": _color(worst, list(counts).index(worst))},
                )
            )
    handles = [
        Line2D(
            [],
            [],
            color=_color(name, i),
            linestyle=LINESTYLES[i % 4],
            marker=MARKERS[i % len(MARKERS)],
            markersize=4,
            label=name,
        )
        for i, name in enumerate(ranks)
    ]
    fig.legend(handles=handles, title="recommender", loc="outside right center")
    frames = list(ranks.values())
    n_low = min(int(f["n_candidates"].min()) for f in frames)
    users = len(frames[0])
    _subtitle(
        fig,
        (f"{dataset}: " if dataset else "")
        + f"exact ranks of {users:,} users' held-out items, each among the user's "
        + f"{n_low:,} to {n_items:,} unseen items; empty buckets on the dotted line 0",
    )
    _place_labels(labels)
    return fig


def rank_distribution_facts(
    ranks: dict[str, pd.DataFrame],
    width: int = 100,
    pessimistic: dict[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """The counts section 6.1 quotes, per recommender.

    Users with the held-out item in the top 10 and top 100, in the bottom half
    of their ranked set, in the last bucket of Figure 5 (the ranks above the
    second-to-last edge of :func:`rank_buckets`), and at the very last rank.

    Parameters
    ----------
    ranks : dict of str to pandas.DataFrame
        Per recommender, columns ``rank`` and ``n_candidates``.
    width : int, default 100
        Bucket width of Figure 5 (defines the last bucket).
    pessimistic : dict of str to pandas.DataFrame, optional
        The ranks under the pessimistic tie policy: the same counts again, in
        columns prefixed ``pessimistic_``. The buckets are those of both sets.

    Returns
    -------
    pandas.DataFrame
        Columns recommender, users, top_10, top_100, bottom_half, last_bucket,
        last_rank (and pessimistic_top_10, ..., pessimistic_last_rank).

    Examples
    --------
    >>> ranks = {"Z": pd.DataFrame({"rank": [1, 150, 240], "n_candidates": 250})}
    >>> worst = {"Z": pd.DataFrame({"rank": [1, 250, 250], "n_candidates": 250})}
    >>> facts = rank_distribution_facts(ranks, pessimistic=worst)
    >>> facts[["last_bucket", "pessimistic_last_bucket", "pessimistic_last_rank"]].values.tolist()
    [[1, 2, 2]]
    """
    n_items = _largest_n(ranks, pessimistic)
    last_bucket = rank_buckets(n_items, width)[-2]

    def counts(frame: pd.DataFrame, prefix: str = "") -> dict:
        r, n = frame["rank"].to_numpy(), frame["n_candidates"].to_numpy()
        return {
            f"{prefix}top_10": int(np.sum(r <= 10)),
            f"{prefix}top_100": int(np.sum(r <= 100)),
            f"{prefix}bottom_half": int(np.sum(r > n / 2)),
            f"{prefix}last_bucket": int(np.sum(r > last_bucket)),
            f"{prefix}last_rank": int(np.sum(r == n)),
        }

    rows = []
    for name, frame in ranks.items():
        row = {"recommender": name, "users": len(frame), **counts(frame)}
        if pessimistic is not None:
            row.update(counts(pessimistic[name], "pessimistic_"))
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------
# Figures 1-4: the toy example and the metrics themselves
# --------------------------------------------------------------------------


@styled
def metric_curves_figure(curves: pd.DataFrame, top: int = 100):
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
    _subtitle(
        fig, f"n = {n:,} items: the metric of a single held-out item at exact rank r (no sampling)"
    )
    return fig


def _vertical_marker(ax, m: float, label: str, labels: list, linestyle="-.") -> None:
    """A vertical line at m, its label to be placed beside it."""
    ax.axvline(m, color="0.35", linestyle=linestyle, linewidth=1.0, zorder=1)
    if label:
        labels.append((ax, label, _beside_vertical(ax, m), {"fontsize": 7.5, "color": "0.25"}))


def _panel_row(panels: int):
    """A row of toy-figure panels, room for a legend on the right."""
    size = (2.6 * panels + 0.8, 3.0)
    return plt.subplots(1, panels, figsize=size, squeeze=False, layout="constrained")[1][0]


@styled
def expected_vs_sample_size_figure(
    curves: pd.DataFrame, n: int | None = None, law: str | None = None, marked_m: int | None = None
):
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
            ax.plot(group["m"], group["expected"], label=name, color=_color(name, i, TOY_COLORS))
        ax.set(xscale="log", xlabel="number of sampled items m", title=metric_label(metric))
        ax.set_ylim(-0.03, 1.03)
    labels = []
    if marked_m is not None:
        for i, ax in enumerate(axes):
            _vertical_marker(ax, marked_m, "" if i else f"m = {marked_m}\n(Table 2)", labels)
    axes[0].set_ylabel(r"expected sampled metric $E[M(\tilde{r})]$")
    fig.legend(
        *axes[0].get_legend_handles_labels(), title="toy\nrecommender", loc="outside right center"
    )
    _subtitle(
        fig,
        "Toy example of Table 1 (recommenders A, B, C; 5 held-out items each): "
        + (f"n = {n:,} items, " if n else "")
        + _m_range(curves["m"])
        + (f", {law_description(law)}" if law else ""),
    )
    _place_labels(labels)
    return fig


@styled
def expected_vs_true_rank_figure(curves: pd.DataFrame, n: int, law: str | None = None):
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
            notes.append((ax, text, _corners(), {"fontsize": 7.5, "color": "0.25"}))
        ax.set(xlabel="exact rank $r$", title=metric_label(metric))
    axes[0].set_ylabel(r"expected sampled metric $E[M(\tilde{r})\,|\,r]$")
    handles, labels = axes[0].get_legend_handles_labels()
    order = [*range(1, len(handles)), 0]  # the sampled m first, exact last
    fig.legend([handles[i] for i in order], [labels[i] for i in order], loc="outside right center")
    max_rank = int(curves["rank"].max())
    _subtitle(
        fig,
        f"Toy setting: n = {n:,} items, "
        + _m_range(sampled_m)
        + (f", {law_description(law)}" if law else "")
        + f"; the top {max_rank:,} of {n:,} ranks",
    )
    _place_labels(notes)
    return fig


@styled
def corrected_ap_figure(
    on_sample: pd.DataFrame,
    expected: pd.DataFrame,
    n: int,
    m: int,
    law: str | None = None,
    cls_constraint: str | None = None,
):
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
            color=_color(method, i, METHOD_COLORS),
            linewidth=1.2,
        )
    for i, (method, group) in enumerate(expected.groupby("method", sort=False)):
        exact = method == "exact"
        right.plot(
            group["rank"],
            group["value"],
            label=method_label(method),
            linewidth=1.6 if exact else 1.2,
            color=_color(method, i, METHOD_COLORS),
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
            _corners(),
            {"fontsize": 7.5, "color": _color(method, 0, METHOD_COLORS)},
        )
        for method, row in off_scale.iterrows()
    ]
    handles, labels = right.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", title="method")
    _subtitle(
        fig,
        f"Toy setting: n = {n:,} items, m = {m} sampled items"
        + (f", {law_description(law)}" if law else "")
        + "; uniform prior p(r) = 1/n"
        + (
            f"; CLS: {CLS_CONSTRAINT_WORDS.get(cls_constraint, cls_constraint)}"
            * bool(cls_constraint)
        ),
    )
    _place_labels(notes)
    return fig


# --------------------------------------------------------------------------
# Figure 6: expected Recall@10 vs sample size on real ranks
# --------------------------------------------------------------------------


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
    log_methods=("sampled",),
    note: str | None = None,
):
    """Figure 6: expected metric against m per recommender, one panel per method.

    Solid lines: the expected metric; dashed: the exact values (named with
    their value in the legend). A vertical line marks ``marked_m`` (the sample
    size of Table 3) with each curve's value there, another the smallest m from
    which the pair of ``orders`` stays ordered as on the exact metric. Panels of
    ``log_methods`` have a log y axis with ticks at 1, 2, 5 x 10^k, the others a
    linear one from 0.

    Parameters
    ----------
    curves : pandas.DataFrame
        Columns m, method, recommender, expected (a fraction).
    exact : dict
        The exact metric (a fraction) per recommender.
    metric : str
        The metric's name.
    orders : pandas.DataFrame
        Columns method, pair, stays_right_from_m (``evaluation.order_thresholds``).
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
    """
    methods = list(dict.fromkeys(curves["method"]))
    names = list(dict.fromkeys(curves["recommender"]))
    fig, axes = plt.subplots(
        1, len(methods), figsize=(5 * len(methods), 3.9), squeeze=False, layout="constrained"
    )
    m_low, m_high = int(curves["m"].min()), int(curves["m"].max())
    show_marked = marked_m is not None and m_low <= marked_m <= m_high
    labels = []
    for ax, method in zip(axes[0], methods):
        part = curves[curves["method"] == method]
        values = [100 * part["expected"].to_numpy()]
        at_marked = []
        for i, name in enumerate(names):
            group = part[part["recommender"] == name].sort_values("m")
            color = _color(name, i)
            ax.plot(group["m"], 100 * group["expected"], color=color, linewidth=1.6)
            if name in exact:
                ax.axhline(100 * exact[name], color=color, linestyle="--", linewidth=1.0)
                values.append([100 * exact[name]])
            if show_marked and len(group):
                value = 100 * _value_at(group, marked_m)
                ax.plot([marked_m], [value], marker="o", markersize=4, color=color, zorder=4)
                at_marked.append(f"{name} {value:.1f} %")
        ax.set_xscale("log")
        ax.set_xlim(m_low / 1.3, m_high * 1.3)
        values = np.concatenate(values)
        if method in log_methods:
            ax.set_yscale("log")
            low, high = _nice_floor(values.min() / 1.1), values.max() * 1.35
            ax.set_ylim(low, high)
            subs = (1.0, 2.0, 5.0) if high / low >= 10 else (1.0, 2.0, 3.0, 5.0, 7.0)
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
            ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            ax.yaxis.set_minor_formatter(NullFormatter())
        else:
            ax.set_ylim(0, values.max() * 1.12)
        ax.set(
            xlabel="number of sampled items m",
            ylabel=f"expected {metric_label(metric)} (%)",
            title=method_title(method),
        )
        if show_marked:
            label = f"m = {marked_m} ({marked_label}):\n" + "\n".join(at_marked)
            _vertical_marker(ax, marked_m, label, labels)
        row = orders[orders["method"] == method]
        if len(row) and not np.isnan(row["stays_right_from_m"].iloc[0]):
            m_right = float(row["stays_right_from_m"].iloc[0])
            pair = row["pair"].iloc[0].replace("<", " < ")
            label = f"order {pair} right\nfrom m = {m_right:,.0f}"
            _vertical_marker(ax, m_right, label, labels, linestyle=":")
    handles = []
    for i, name in enumerate(names):
        color = _color(name, i)
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
    _subtitle(
        fig,
        (f"{dataset}: " if dataset else "")
        + f"expected {metric_label(metric)} of each recommender over its users' exact ranks, "
        + f"m = {m_low:,} to {m_high:,}"
        + (f", {law_description(law)}" if law else ""),
        note or "",
    )
    _place_labels(labels)
    return fig


@styled
def protocols_figure(errors: pd.DataFrame, pairs: pd.DataFrame, *, dataset: str = ""):
    """The protocol study (``results/<dataset>/protocols.csv``): for each metric, the
    RMSE of every estimator against the exact metric under every framework's
    protocol (mean over the recommenders, log scale), and the share of recommender
    pairs it orders as the exact metric does.

    Parameters
    ----------
    errors : pandas.DataFrame
        protocol, target, recommender, metric, method, rmse (percent points).
    pairs : pandas.DataFrame
        protocol, pair, metric, method, correct, repetitions.
    dataset : str, optional
        Named in the subtitle.

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
    """
    rank = errors[errors["target"] == "rank"]
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
                "color": METHOD_COLORS.get(method, f"C{k % 10}"),
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
    _subtitle(
        fig,
        f"{dataset}: frameworks' sampling protocols simulated on {n_models} recommenders' "
        "real scores. Top: RMSE against the exact metric, mean over the recommenders; "
        "bottom: recommender pairs ordered as the exact metric orders them. Every "
        "estimator with the law the protocol implies.",
    )
    fig.tight_layout()
    return fig
