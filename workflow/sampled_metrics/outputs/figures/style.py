"""The figures' one style and what every figure shares: the ``matplotlib`` settings
(:data:`STYLE`, applied in a context by :func:`styled`, never globally), colours,
markers and line styles, the subtitle that says where a figure's numbers come from,
the sampling law and correction methods in words, and :func:`save_figure`, which
writes a figure at :data:`DPI` dots per inch with the same bytes for the same data.
"""

from __future__ import annotations

import functools
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib.pyplot as plt

from ...estimation.registry import method_color
from ...io.atomic import atomic_path
from ..labels import method_label

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "CLS_CONSTRAINT_WORDS",
    "COLORS",
    "DPI",
    "LINESTYLES",
    "MARKERS",
    "REFERENCE_COLORS",
    "STYLE",
    "TOY_COLORS",
    "color_of",
    "method_color_of",
    "law_description",
    "method_title",
    "save_figure",
    "styled",
    "subtitle",
]

# One style for every figure; svg.hashsalt makes SVG ids the same in every run.
STYLE: dict[Any, Any] = {
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
LINESTYLES: tuple[Any, ...] = ("-", "--", ":", "-.")
# What the figures draw beside the estimators, in black: the exact metric, and
# Hansen-Hurwitz (no estimator of the registry: it needs each draw's probability).
REFERENCE_COLORS = {"hansen_hurwitz": "black", "exact": "black"}
# The CLS constraints of estimation.cls_constraint, in words.
CLS_CONSTRAINT_WORDS = {
    "monotone_in_range": "monotone, within the metric's range",
    "monotone": "monotone",
}


def styled(draw: Callable[..., Any]) -> Callable[..., Any]:
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
def save_figure(figure: Figure, *paths: Any) -> None:
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
    >>> import pandas as pd
    >>> from PIL import Image
    >>> from sampled_metrics.outputs.figures.rank_distribution import rank_distribution_figure
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


def color_of(name: str, index: int, colors: Mapping[str, str] = COLORS) -> str:
    """The colour of ``name`` in ``colors``, else the ``index``-th of the default cycle."""
    return colors.get(name, f"C{index % 10}")


def method_color_of(method: str, index: int) -> str:
    """A method's colour: the estimator registry's (``estimation.registry.method_color``),
    a reference's (:data:`REFERENCE_COLORS`), else the ``index``-th of the default cycle."""
    return method_color(method) or REFERENCE_COLORS.get(method) or f"C{index % 10}"


def subtitle(fig: Figure, *lines: str) -> None:
    """The figure's subtitle: where its numbers come from, wrapped to the figure's width."""
    width = int(fig.get_figwidth() * 15)
    parts = [part for line in lines for part in line.split("\n") if part]
    text = "\n".join(textwrap.fill(part, width, break_on_hyphens=False) for part in parts)
    if text:
        fig.suptitle(text, fontsize=STYLE["figure.titlesize"])
