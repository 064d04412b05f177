"""Labels placed where they overlap no curve, label or legend: candidate spots (the
axes' corners and edges, either side of a vertical line), the obstacles a label must
not cover (points along every line, the boxes of bars, texts and legends), and the
placement of a figure's labels once it is complete.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["corners", "place_labels", "vertical_marker"]


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


def place_labels(labels: Iterable[tuple[Any, str, list[dict], dict]]) -> None:
    """Place the labels ``(ax, text, candidates, kwargs)`` one after the other, once
    the figure is complete (legend and subtitle change the layout).

    The figure is laid out once: a label placed inside its axes leaves the layout as it
    was (it only joins the obstacles of the labels after it); one that fits nowhere
    inside may move the axes, and the figure is laid out again after it."""
    layouts: dict = {}  # figure -> (renderer, {axes: (points, boxes)})
    for ax, text, candidates, kwargs in labels:
        if ax.figure not in layouts:
            ax.figure.draw_without_rendering()  # the layout, so that boxes are final
            layouts[ax.figure] = (ax.figure.canvas.get_renderer(), {})
        renderer, obstacles = layouts[ax.figure]
        if ax not in obstacles:
            obstacles[ax] = _obstacles(ax, renderer)
        points, boxes = obstacles[ax]
        artist, inside = _place_text(ax, text, candidates, renderer, points, boxes, **kwargs)
        if inside:
            boxes.append(artist.get_window_extent(renderer))
        else:
            del layouts[ax.figure]


def _place_text(ax, text: str, candidates, renderer, points, boxes, pad: float = 3.0, **kwargs):
    """(text artist, inside): ``text`` added at the first of ``candidates`` (dicts of
    x, y, ha, va and optionally transform, in axes fractions by default) where it stays
    inside the axes and covers none of the ``points`` and ``boxes`` (``_obstacles``);
    else where it covers least."""
    frame = ax.get_window_extent(renderer)
    best: dict = {}
    best_cost = np.inf
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
        cost = covered + 1000 * sum(box.overlaps(other) for other in boxes)
        cost += _OUTSIDE * (not inside)
        artist.remove()
        if cost < best_cost:
            best, best_cost = spot, cost
        if cost == 0:
            break
    return ax.text(s=text, **best, **kwargs), best_cost < _OUTSIDE


# A spot's cost when the label would leave the axes: more than any overlap can cost.
_OUTSIDE = 1e6


def corners(margin: float = 0.03) -> list[dict]:
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


def vertical_marker(ax: Axes, m: float, label: str, labels: list, linestyle: Any = "-.") -> None:
    """A vertical line at m, its label to be placed beside it."""
    ax.axvline(m, color="0.35", linestyle=linestyle, linewidth=1.0, zorder=1)
    if label:
        labels.append((ax, label, _beside_vertical(ax, m), {"fontsize": 7.5, "color": "0.25"}))
