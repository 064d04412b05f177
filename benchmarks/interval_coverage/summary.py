"""The coverage benchmark's summary: per cell (kind, population, law, m, metric, method)
the seeds, the coverage of the 95 % interval with its binomial standard error, the mean
width, the mean bias and the bias over the mean half-width; for paired comparisons also
how often the interval gives a verdict and how often that verdict is wrong."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

RANGE = "range"  # the one interval ``sampled-metrics correct`` prints


def summarize(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per cell: seeds, coverage and its binomial standard error, mean width,
    mean bias, bias / mean half-width; for comparisons also how often the interval gives
    a verdict (excludes 0) and how often that verdict's sign is wrong."""
    raw = raw.copy()
    raw["covered"] = (raw["low"] <= raw["exact"]) & (raw["exact"] <= raw["high"])
    raw["width"] = raw["high"] - raw["low"]
    raw["bias"] = raw["estimate"] - raw["exact"]
    raw["verdict"] = (raw["low"] > 0) | (raw["high"] < 0)
    side = np.where(raw["low"] > 0, 1.0, -1.0)  # the interval's side (``range``: no estimate)
    sign = np.where(np.isfinite(raw["estimate"]), np.sign(raw["estimate"]), side)
    raw["wrong"] = raw["verdict"] & (sign != np.sign(raw["exact"]))
    keys = ["kind", "population", "law", "m", "metric", "method"]
    out = raw.groupby(keys, sort=False).agg(
        seeds=("covered", "size"),
        bootstrap=("bootstrap", "max"),
        exact=("exact", "first"),
        coverage=("covered", "mean"),
        mean_width=("width", "mean"),
        mean_bias=("bias", "mean"),
        sd_estimate=("estimate", "std"),
        verdicts=("verdict", "mean"),
        wrong_verdicts=("wrong", "mean"),
    )
    out = out.reset_index()
    out.insert(out.columns.get_loc("seeds") + 2, "printed", out["method"] == RANGE)
    out["coverage_se"] = np.sqrt(out["coverage"] * (1 - out["coverage"]) / out["seeds"])
    # one-sided 95 % lower confidence bound (Clopper-Pearson): informative at coverage 1,
    # where the binomial standard error is 0
    hits = np.round(out["coverage"] * out["seeds"])
    out["coverage_low95"] = np.where(
        hits > 0, stats.beta.ppf(0.05, hits, out["seeds"] - hits + 1), 0.0
    )
    out["bias_over_half_width"] = out["mean_bias"] / (out["mean_width"] / 2)
    columns = keys + [
        "seeds",
        "bootstrap",
        "printed",
        "exact",
        "coverage",
        "coverage_se",
        "coverage_low95",
        "mean_width",
        "mean_bias",
        "bias_over_half_width",
        "sd_estimate",
        "verdicts",
        "wrong_verdicts",
    ]
    return out[columns]


def _fmt_table(frame: pd.DataFrame) -> str:
    rows = [list(frame.columns)] + [
        [f"{v:.4g}" if isinstance(v, float) else str(v) for v in row]
        for row in frame.itertuples(index=False)
    ]
    widths = [max(len(row[k]) for row in rows) for k in range(len(rows[0]))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in rows)


def print_summary(summary: pd.DataFrame) -> None:
    shown = summary.copy()
    for column in ("coverage", "coverage_se", "coverage_low95", "verdicts", "wrong_verdicts"):
        shown[column] = shown[column].round(3)
    for column in ("mean_width", "mean_bias", "sd_estimate", "exact"):
        shown[column] = shown[column].round(5)
    shown["bias_over_half_width"] = shown["bias_over_half_width"].round(2)
    estimates = shown[shown["kind"] == "estimate"].drop(
        columns=["kind", "verdicts", "wrong_verdicts"]
    )
    pairs = shown[shown["kind"] == "compare"].drop(columns=["kind"])
    with pd.option_context("display.width", 250, "display.max_rows", None):
        if len(estimates):
            print("estimates: coverage of the 95 % interval of the mean exact metric\n")
            print(_fmt_table(estimates))
        if len(pairs):
            print("\npaired comparisons (first - second): coverage of the difference's ")
            print("interval; verdicts: share of seeds whose interval excludes 0; wrong: share")
            print("of seeds with a verdict whose sign is not the exact difference's\n")
            print(_fmt_table(pairs))
        by_method = (
            summary.groupby(["kind", "method"], sort=False)
            .agg(
                cells=("coverage", "size"),
                seeds_min=("seeds", "min"),
                seeds_max=("seeds", "max"),
                coverage_min=("coverage", "min"),
                coverage_median=("coverage", "median"),
                coverage_max=("coverage", "max"),
                wrong_verdicts_max=("wrong_verdicts", "max"),
            )
            .reset_index()
            .round(3)
        )
        print("\nby method: coverage over the cells\n")
        print(_fmt_table(by_method))


def _md(frame: pd.DataFrame) -> str:
    rows = [[str(c) for c in frame.columns]] + [
        [f"{v:.3g}" if isinstance(v, float) else str(v) for v in row]
        for row in frame.itertuples(index=False)
    ]
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    lines.insert(1, "|" + "---|" * len(rows[0]))
    return "\n".join(lines)


def markdown(summary: pd.DataFrame, full: bool = False) -> str:
    """The summary as Markdown: the range per population, law and m (the metrics every
    cell has); each estimator's noise interval over its cells; the pairs; with ``full``
    then every cell."""
    parts = []
    ranges = summary[(summary["kind"] == "estimate") & (summary["method"] == RANGE)]
    counts = ranges["metric"].value_counts()
    ranges = ranges[ranges["metric"].isin(counts[counts == counts.max()].index)]
    if len(ranges):
        wide = ranges.assign(
            cell=[
                f"{c:.2f} ({s}; >= {lo:.2f}) w {w:.3g}"
                for c, s, lo, w in zip(
                    ranges["coverage"],
                    ranges["seeds"],
                    ranges["coverage_low95"],
                    ranges["mean_width"],
                )
            ]
        ).pivot_table(
            index=["population", "m", "law"], columns="metric", values="cell", aggfunc="first"
        )
        parts += [
            "Range (printed): coverage (seeds; its one-sided 95 % lower confidence bound) and"
            " mean width w, per population, m and law",
            "",
            _md(wide.reset_index().fillna("-")),
        ]
    others = summary[(summary["kind"] == "estimate") & (summary["method"] != RANGE)].copy()
    if len(others):
        others["abs_ratio"] = others["bias_over_half_width"].abs()
        worst = others.loc[others.groupby(["method", "metric"])["coverage"].idxmin()]
        worst = worst.set_index(["method", "metric"])
        table = others.groupby(["method", "metric"], sort=False).agg(
            cells=("coverage", "size"),
            seeds=("seeds", "min"),
            coverage_min=("coverage", "min"),
            coverage_median=("coverage", "median"),
            cells_below_90=("coverage", lambda c: int((c < 0.9).sum())),
            median_abs_bias_over_half_width=("abs_ratio", "median"),
        )
        table["worst_cell"] = [
            f"{w.population} m={w.m} {w.law}" for w in worst.loc[table.index].itertuples()
        ]
        parts += [
            "",
            "Estimators' noise intervals (not printed): coverage over the cells (seeds: the"
            " fewest of its cells; worst_cell: the cell of coverage_min)",
            "",
            _md(table.reset_index()),
        ]
    pairs = summary[summary["kind"] == "compare"]
    if len(pairs):
        shown = pairs[
            ["population", "law", "m", "metric", "method", "seeds", "printed", "exact",
             "coverage", "coverage_se", "coverage_low95", "mean_width", "verdicts",
             "wrong_verdicts"]
        ]  # fmt: skip
        parts += ["", "Paired differences: coverage, verdicts, wrong verdicts", "", _md(shown)]
    if full:
        cells = summary[summary["kind"] == "estimate"].drop(
            columns=["kind", "verdicts", "wrong_verdicts"]
        )
        parts += ["", "Every cell", "", _md(cells)]
    return "\n".join(parts) + "\n"
