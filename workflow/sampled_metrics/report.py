"""Rendering tidy result tables as Markdown and LaTeX (no computation here)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _cell(value, digits: int) -> str:
    if isinstance(value, (float, np.floating)):
        return "" if np.isnan(value) else f"{value:.{digits}f}"
    return "" if value is None else str(value)


def markdown_table(frame: pd.DataFrame, digits: int = 2) -> str:
    """A GitHub-flavoured Markdown table of ``frame`` (floats with ``digits``)."""
    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = [
        "| " + " | ".join(_cell(v, digits) for v in row) + " |"
        for row in frame.itertuples(index=False)
    ]
    return "\n".join([header, rule, *body]) + "\n"


def latex_table(frame: pd.DataFrame, digits: int = 2, caption: str = "") -> str:
    """A booktabs LaTeX tabular of ``frame`` (floats with ``digits``)."""

    def escape(text: str) -> str:
        return (
            text.replace("\\", r"\textbackslash{}")
            .replace("_", r"\_")
            .replace("%", r"\%")
            .replace("&", r"\&")
            .replace("#", r"\#")
            .replace("±", r"$\pm$")
        )

    columns = "l" * len(frame.columns)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        rf"\begin{{tabular}}{{{columns}}}",
        r"\toprule",
        " & ".join(escape(str(c)) for c in frame.columns) + r" \\",
        r"\midrule",
    ]
    lines += [
        " & ".join(escape(_cell(v, digits)) for v in row) + r" \\"
        for row in frame.itertuples(index=False)
    ]
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{escape(caption)}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def wide_mean_std(table: pd.DataFrame, digits: int = 2) -> pd.DataFrame:
    """Table 3 as the paper lays it out: one row per (metric, recommender), one
    column per method, cells "mean±std" (exact: the value alone)."""

    def cell(row) -> str:
        if pd.isna(row["std"]):
            return f"{row['mean']:.{digits}f}"
        return f"{row['mean']:.{digits}f}±{row['std']:.{digits}f}"

    cells = table.assign(cell=table.apply(cell, axis=1))
    wide = cells.pivot_table(
        index=["metric", "recommender"],
        columns="method",
        values="cell",
        aggfunc="first",
        sort=False,
    )
    wide = wide[list(dict.fromkeys(table["method"]))].reset_index()
    wide.columns.name = None
    return wide


def paper_comparison(table: pd.DataFrame, value: str, paper: str, digits: int) -> str:
    """Markdown of every row with ours, the paper's and their difference
    (rows the paper does not report are listed with an empty paper cell)."""
    keys = [c for c in table.columns if not pd.api.types.is_numeric_dtype(table[c])]
    frame = table[keys].copy()
    frame["ours"] = table[value]
    frame["paper"] = table[paper]
    frame["difference"] = table[value] - table[paper]
    return markdown_table(frame, digits=digits)
