"""Figure 5: the distribution of exact ranks, the number of users per bucket of
exact ranks of the held-out item per recommender (all ranks on a log axis, the top
ranks on a linear one, one row per tie policy), and the counts section 6.1 quotes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from .placement import corners, place_labels
from .style import LINESTYLES, MARKERS, color_of, styled, subtitle

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "EMPTY_BUCKET",
    "rank_buckets",
    "rank_distribution_facts",
    "rank_distribution_figure",
]


# Where an empty bucket of Figure 5 is drawn on its log axis (labelled "0").
EMPTY_BUCKET = 0.5


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
        color = color_of(name, i)
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
        ax.bar(centres + offsets[i], count, width=bar, color=color_of(name, i), label=name)
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
) -> Figure:
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
                corners(),
                {"fontsize": 7.5, "color": "0.2"},
            )
        )
        if len(edges) > 2:  # a last bucket other than the first
            labels.append(
                (
                    whole,
                    f"{worst}: {counts[worst][-1]:,} users in the last\n"
                    f"bucket (ranks {lo:,} to {hi:,})",
                    corners(),
                    {"fontsize": 7.5, "color": color_of(worst, list(counts).index(worst))},
                )
            )
    handles = [
        Line2D(
            [],
            [],
            color=color_of(name, i),
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
    subtitle(
        fig,
        (f"{dataset}: " if dataset else "")
        + f"exact ranks of {users:,} users' held-out items, each among the user's "
        + f"{n_low:,} to {n_items:,} unseen items; empty buckets on the dotted line 0",
    )
    place_labels(labels)
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
