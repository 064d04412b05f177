"""Result tables as a reader sees them: Markdown and LaTeX, in the paper's layout and
beside the paper's numbers (rendering only: every number comes from a result table).

One home for what the tables print:

* numbers: :func:`format_number` (a rounded zero prints ``0.00``, never ``-0.00``) and
  :func:`format_mean_std` (``mean ± std``);
* names: :mod:`.labels`;
* layouts: :func:`paper_layout` (one row per key, one column per method or metric, as
  the paper's Tables 1-4), :func:`comparison` and :func:`mean_std_comparison` (ours
  beside the paper's, with the difference and, for means over repetitions, the gap
  in standard errors: :func:`standard_error_gap`);
* files: :func:`markdown_table` and :func:`latex_table` (booktabs, numbers
  right-aligned, mean ± std as ``$a \\pm b$``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .labels import label_keys

__all__ = [
    "comparison",
    "format_mean_std",
    "format_number",
    "latex_table",
    "markdown_table",
    "mean_std_comparison",
    "paper_layout",
    "standard_error_gap",
]

# Below this relative size, a difference or std is floating-point noise (standard_error_gap).
_NOISE = 1e-12
# A formatted number, or "mean ± std": right-aligned in every table.
_NUMBER = re.compile(r"^[-+]?(\d+(\.\d*)?|inf)( ± (\d+(\.\d*)?|inf))?$")


def format_number(value: float | str | None, digits: int = 2) -> str:
    """A table cell: a float with ``digits`` decimals, "" for NaN or None.

    A value that rounds to zero prints without a sign ("0.00", never "-0.00");
    integers print as they are, anything else as ``str``.

    Parameters
    ----------
    value : float, int, str or None
        The value of the cell.
    digits : int
        Decimals of a float.

    Returns
    -------
    str

    Examples
    --------
    >>> [format_number(v) for v in (-0.001, 0.004, -0.006, 66.7649, float("nan"), None)]
    ['0.00', '0.00', '-0.01', '66.76', '', '']
    >>> format_number(-0.4, 0), format_number(62), format_number("X<Y")
    ('0', '62', 'X<Y')
    """
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if np.isnan(value):
            return ""
        text = f"{value:.{digits}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text
    return str(value)


def format_mean_std(mean: float, std: float, digits: int = 2) -> str:
    """``mean ± std`` as the paper prints it; the mean alone when std is NaN (an
    exact value), "" when the mean is NaN (a cell the source does not report).

    Parameters
    ----------
    mean, std : float
        The mean and standard deviation over repetitions.
    digits : int
        Decimals of both.

    Returns
    -------
    str

    Examples
    --------
    >>> format_mean_std(66.764, 0.2714), format_mean_std(7.5189, float("nan"))
    ('66.76 ± 0.27', '7.52')
    >>> format_mean_std(float("nan"), float("nan")), format_mean_std(-0.001, 0.0, 3)
    ('', '0.000 ± 0.000')
    """
    if pd.isna(mean):
        return ""
    if pd.isna(std):
        return format_number(float(mean), digits)
    return f"{format_number(float(mean), digits)} ± {format_number(float(std), digits)}"


def paper_layout(
    table: pd.DataFrame, index: Sequence[str], column: str, value: str
) -> pd.DataFrame:
    """A long result table laid out as the paper's: one row per ``index`` key, one
    column per value of ``column`` (in order of appearance), cells from ``value``;
    keys and headers labelled.

    Parameters
    ----------
    table : pandas.DataFrame
        Long format: the ``index`` columns, ``column`` and ``value``.
    index : sequence of str
        The key columns of a row ("metric", "recommender").
    column : str
        The column whose values become columns ("method").
    value : str
        The column of the cells (numbers or formatted strings).

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> long = pd.DataFrame({"metric": "ap", "recommender": ["X", "X", "Y", "Y"],
    ...     "method": ["exact", "bv_0.1", "exact", "bv_0.1"], "cell": ["1", "2", "3", "4"]})
    >>> paper_layout(long, ["metric", "recommender"], "method", "cell").values.tolist()
    [['AP', 'X', '1', '2'], ['AP', 'Y', '3', '4']]
    >>> list(paper_layout(long, ["metric", "recommender"], "method", "cell").columns)
    ['Metric', 'Recommender', 'Exact', 'BV 0.1']
    """
    index = list(index)
    wide = table.pivot_table(index=index, columns=column, values=value, aggfunc="first", sort=False)
    wide = wide.reindex(columns=list(dict.fromkeys(table[column]))).reset_index()
    wide.columns.name = None
    return label_keys(wide)


def standard_error_gap(
    mean: ArrayLike,
    std: ArrayLike,
    repetitions: ArrayLike,
    paper_mean: ArrayLike,
    paper_std: ArrayLike,
    paper_repetitions: ArrayLike,
) -> float | np.ndarray:
    """The difference of two means over repetitions in standard errors of the difference:
    (mean - paper_mean) / sqrt(std² / repetitions + paper_std² / paper_repetitions).

    NaN where a std is missing (an exact value) or both are 0 with equal means; ±inf
    when both stds are 0 and the means differ. Floating-point noise (relative 1e-12,
    e.g. the std of 1000 equal values) counts as 0.

    Parameters
    ----------
    mean, std : float or array_like
        Ours: mean and standard deviation over ``repetitions``.
    repetitions : int or array_like
        Our number of repetitions.
    paper_mean, paper_std : float or array_like
        The paper's mean and standard deviation.
    paper_repetitions : int or array_like
        The paper's number of repetitions
        (:data:`sampled_metrics.reproduction.paper.PAPER_REPETITIONS`).

    Returns
    -------
    float or numpy.ndarray
        A float for scalar arguments.

    Examples
    --------
    >>> round(standard_error_gap(66.76, 0.27, 100, 66.19, 0.25, 100), 2)
    15.49
    >>> standard_error_gap([7.52, 0.4, 0.4], [np.nan, 5.6e-17, 0.0], [100, 1000, 1000],
    ...                    [7.6, 0.4 + 1e-16, 0.5], [np.nan, 0.0, 0.0], [100, 1000, 1000])
    array([ nan,  nan, -inf])
    """
    mean, std, paper_mean, paper_std = (
        np.asarray(x, dtype=float) for x in (mean, std, paper_mean, paper_std)
    )
    # Rounding noise (a mean of equal values, its std) counts as 0.
    noise = _NOISE * np.maximum(np.abs(mean), np.abs(paper_mean))
    difference = np.where(np.abs(mean - paper_mean) <= noise, 0.0, mean - paper_mean)
    std, paper_std = (np.where(s <= noise, 0.0, s) for s in (std, paper_std))
    error = np.sqrt(std**2 / np.asarray(repetitions) + paper_std**2 / np.asarray(paper_repetitions))
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = difference / error
    return float(gap) if np.ndim(gap) == 0 else gap


def comparison(table: pd.DataFrame, value: str, paper: str) -> pd.DataFrame:
    """Every row of a result table with ours, the paper's and their difference; rows the
    paper does not report keep an empty paper cell.

    Parameters
    ----------
    table : pandas.DataFrame
        Key columns (the non-numeric ones), ``value`` and ``paper``.
    value, paper : str
        The columns of our number and the paper's.

    Returns
    -------
    pandas.DataFrame
        The labelled keys, then "Ours", "Paper", "Difference" (ours - paper).

    Examples
    --------
    >>> table = pd.DataFrame({"pair": ["X<Y", "X<Y"], "metric": "ap",
    ...     "method": ["sampled", "ls"], "correct": [0, 62], "paper": [0.0, np.nan]})
    >>> comparison(table, "correct", "paper").values.tolist()
    [['X vs Y', 'AP', 'Uncorrected', 0, 0.0, 0.0], ['X vs Y', 'AP', 'LS', 62, nan, nan]]
    """
    keys = [
        c
        for c in table.columns
        if c not in (value, paper) and not pd.api.types.is_numeric_dtype(table[c])
    ]
    frame = table[keys].copy()
    frame["Ours"] = table[value]
    frame["Paper"] = pd.to_numeric(table[paper]).astype(float)
    frame["Difference"] = frame["Ours"] - frame["Paper"]
    return label_keys(frame)


def mean_std_comparison(
    table: pd.DataFrame,
    repetitions: ArrayLike,
    paper_repetitions: int,
    digits: int = 2,
    keys: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Ours (mean ± std) beside the paper's (mean ± std), their difference and the gap
    in standard errors of the difference (:func:`standard_error_gap`, column "z").

    Parameters
    ----------
    table : pandas.DataFrame
        Key columns and mean, std, paper_mean, paper_std (std NaN for an exact value:
        no z).
    repetitions : int or array_like
        Our repetitions behind each mean.
    paper_repetitions : int
        The paper's (:data:`sampled_metrics.reproduction.paper.PAPER_REPETITIONS`).
    digits : int
        Decimals of the means and stds.
    keys : sequence of str, optional
        The key columns, in order; by default the non-numeric columns.

    Returns
    -------
    pandas.DataFrame
        The labelled keys, then "Ours", "Paper" (formatted), "Difference", "z".

    Examples
    --------
    >>> table = pd.DataFrame({"recommender": "X", "metric": "recall@10",
    ...     "method": ["exact", "sampled"], "mean": [7.52, 66.76], "std": [np.nan, 0.27],
    ...     "paper_mean": [7.6, 66.19], "paper_std": [np.nan, 0.25]})
    >>> mean_std_comparison(table, 100, 100).round(2).values.tolist()
    [['X', 'Recall@10', 'Exact', '7.52', '7.60', -0.08, nan],
     ['X', 'Recall@10', 'Uncorrected', '66.76 ± 0.27', '66.19 ± 0.25', 0.57, 15.49]]
    """
    numbers = ["mean", "std", "paper_mean", "paper_std"]
    if keys is None:
        keys = [
            c
            for c in table.columns
            if c not in numbers and not pd.api.types.is_numeric_dtype(table[c])
        ]
    table = table.assign(**{c: pd.to_numeric(table[c]).astype(float) for c in numbers})
    frame = table[list(keys)].copy()
    frame["Ours"] = [format_mean_std(m, s, digits) for m, s in zip(table["mean"], table["std"])]
    frame["Paper"] = [
        format_mean_std(m, s, digits) for m, s in zip(table["paper_mean"], table["paper_std"])
    ]
    frame["Difference"] = table["mean"] - table["paper_mean"]
    frame["z"] = standard_error_gap(
        table["mean"],
        table["std"],
        repetitions,
        table["paper_mean"],
        table["paper_std"],
        paper_repetitions,
    )
    return label_keys(frame)


def _digits_of(digits: int | Mapping[str, int], column) -> int:
    if isinstance(digits, Mapping):
        return digits.get(column, 2)
    return digits


def _formatted(frame: pd.DataFrame, digits) -> tuple[list[str], list[list[str]], list[bool]]:
    """Headers, formatted cells and whether each column is numeric (right-aligned)."""
    columns = [str(c) for c in frame.columns]
    cells = [
        [format_number(value, _digits_of(digits, column)) for column, value in zip(columns, row)]
        for row in frame.itertuples(index=False)
    ]
    numeric = []
    for j in range(len(columns)):
        filled = [row[j] for row in cells if row[j] != ""]
        numeric.append(
            pd.api.types.is_numeric_dtype(frame.iloc[:, j])
            or (bool(filled) and all(_NUMBER.match(text) for text in filled))
        )
    return columns, cells, numeric


def markdown_table(frame: pd.DataFrame, digits: int | Mapping[str, int] = 2) -> str:
    """A GitHub-flavoured Markdown table of ``frame``, columns padded to one width
    (readable as plain text too), numeric columns right-aligned.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table; its column names are the header.
    digits : int or mapping of str to int
        Decimals of the floats, for every column or per column name (others: 2).

    Returns
    -------
    str

    Examples
    --------
    >>> frame = pd.DataFrame({"Metric": ["AP", "AUC"], "ours": [3.7712, -0.001]})
    >>> print(markdown_table(frame), end="")
    | Metric | ours |
    |--------|-----:|
    | AP     | 3.77 |
    | AUC    | 0.00 |
    """
    columns, cells, numeric = _formatted(frame, digits)
    cells = [[text.replace("|", r"\|") for text in row] for row in cells]
    widths = [max([len(c), 3, *(len(row[j]) for row in cells)]) for j, c in enumerate(columns)]

    def line(texts):
        padded = [
            text.rjust(w) if right else text.ljust(w)
            for text, w, right in zip(texts, widths, numeric)
        ]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(
        "-" * (w + 1) + ":" if right else "-" * (w + 2) for w, right in zip(widths, numeric)
    )
    return "\n".join([line(columns), rule + "|", *(line(row) for row in cells)]) + "\n"


def _latex_text(text: str) -> str:
    return (
        text.replace("\\", r"\textbackslash{}")
        .replace("_", r"\_")
        .replace("%", r"\%")
        .replace("&", r"\&")
        .replace("#", r"\#")
        .replace("±", r"$\pm$")
    )


def _latex_number(text: str) -> str:
    """A formatted number in math mode when it has a sign or a ± ($a \\pm b$)."""
    if " ± " in text or text.startswith("-"):
        return "$" + text.replace(" ± ", r" \pm ") + "$"
    return text


def latex_table(
    frame: pd.DataFrame,
    digits: int | Mapping[str, int] = 2,
    caption: str = "",
    label: str = "",
    groups: Sequence[tuple[str, int]] = (),
    block: str | None = None,
    wide: bool = False,
) -> str:
    """A booktabs LaTeX table of ``frame``: \\toprule, \\midrule, \\bottomrule, text
    columns left-aligned, numeric ones right-aligned, mean ± std as ``$a \\pm b$``,
    the caption above the tabular.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table; its column names are the header.
    digits : int or mapping of str to int
        Decimals of the floats, for every column or per column name (others: 2).
    caption : str
        The caption (plain text; escaped, ± typeset).
    label : str
        A ``\\label``, if given.
    groups : sequence of (str, int)
        Headers above the column headers, each spanning that many columns (in order,
        covering every column), with a \\cmidrule under each non-empty one.
    block : str, optional
        A column whose repeated values are printed once per block of rows, with a
        \\midrule between blocks (the paper's Metric of Table 3, Pair of Table 4).
    wide : bool
        ``table*``: spanning both columns of a two-column paper.

    Returns
    -------
    str

    Examples
    --------
    >>> frame = pd.DataFrame({"Metric": ["AP", "AP", "AUC"], "Recommender": ["X", "Y", "X"],
    ...     "Exact": [3.77, 4.32, 89.22], "CLS": ["3.53 ± 0.06", "3.55 ± 0.06", "-0.001 ± 0.04"]})
    >>> print(latex_table(frame, groups=[("", 3), ("Sampled", 1)], block="Metric"), end="")
    \\begin{table}[t]
    \\centering
    \\begin{tabular}{llrr}
    \\toprule
     &  &  & Sampled \\\\
    \\cmidrule(lr){4-4}
    Metric & Recommender & Exact & CLS \\\\
    \\midrule
    AP & X & 3.77 & $3.53 \\pm 0.06$ \\\\
     & Y & 4.32 & $3.55 \\pm 0.06$ \\\\
    \\midrule
    AUC & X & 89.22 & $-0.001 \\pm 0.04$ \\\\
    \\bottomrule
    \\end{tabular}
    \\end{table}
    """
    columns, cells, numeric = _formatted(frame, digits)
    environment = "table*" if wide else "table"
    lines = [rf"\begin{{{environment}}}[t]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{_latex_text(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    spec = "".join("r" if right else "l" for right in numeric)
    lines += [rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    if any(header for header, _ in groups):
        headers, rules, start = [], [], 1
        for header, span in groups:
            text = _latex_text(header)
            if not header:
                headers += [""] * span
            else:
                headers.append(text if span == 1 else rf"\multicolumn{{{span}}}{{c}}{{{text}}}")
                rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
            start += span
        lines += [" & ".join(headers) + r" \\", "".join(rules)]
    lines += [" & ".join(_latex_text(c) for c in columns) + r" \\", r"\midrule"]
    where = columns.index(block) if block is not None else None
    previous = None
    for row in cells:
        row = [_latex_number(t) if right else _latex_text(t) for t, right in zip(row, numeric)]
        if where is not None:
            if previous is not None and row[where] != previous:
                lines.append(r"\midrule")
            if row[where] == previous:
                row[where] = ""
            else:
                previous = row[where]
        lines.append(" & ".join(row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\end{{{environment}}}"]
    return "\n".join(lines) + "\n"
