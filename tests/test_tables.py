"""The tables as a reader sees them (sampled_metrics.outputs.tables and .labels), on small
hand-made frames:
no "-0.00", the paper's numbers and the gap in standard errors beside ours, LaTeX as a
paper typesets it, the paper's names in one place."""

import inspect
import math
import re

import numpy as np
import pandas as pd
import pytest
from test_public_api import missing_sections

from sampled_metrics.outputs import labels, tables
from sampled_metrics.outputs.labels import method_groups
from sampled_metrics.outputs.tables import (
    comparison,
    format_mean_std,
    format_number,
    latex_table,
    markdown_table,
    mean_std_comparison,
    paper_layout,
    standard_error_gap,
)
from sampled_metrics.reproduction.claims import table_claims

METHODS = ["exact", "sampled", "rank_estimate", "cls", "bv_1", "bv_0.1", "bv_0.01", "bv_0.001"]
PAPER_NAMES = [
    "Exact",
    "Uncorrected",
    "Rank Estimate",
    "CLS",
    "BV 1",
    "BV 0.1",
    "BV 0.01",
    "BV 0.001",
]
NEGATIVE_ZERO = re.compile(r"-0\.?0*(?![\d.])")


def table3_frame() -> pd.DataFrame:
    """Two recommenders, two metrics, every method; one difference of -0.001."""
    rows = []
    for metric in ("recall@10", "auc"):
        for recommender in ("X", "Y"):
            for i, method in enumerate(METHODS):
                exact = method == "exact"
                mean = 10.0 + i
                rows.append(
                    {
                        "recommender": recommender,
                        "metric": metric,
                        "method": method,
                        "mean": mean,
                        "std": np.nan if exact else 0.2,
                        "paper_mean": mean + 0.001,  # ours - paper = -0.001
                        "paper_std": np.nan if exact else 0.3,
                    }
                )
    return pd.DataFrame(rows)


def test_a_rounded_zero_has_no_sign():
    assert format_number(-0.001) == "0.00"
    assert format_number(-0.0) == "0.00"
    assert format_number(-0.004, 2) == "0.00" and format_number(-0.005001, 2) == "-0.01"
    assert format_number(-0.4, 0) == "0"
    assert format_mean_std(-0.001, 0.0001) == "0.00 ± 0.00"


@pytest.mark.parametrize("digits", [0, 1, 2, 3])
def test_no_negative_zero_in_markdown_or_latex(digits):
    frame = pd.DataFrame({"Metric": ["AP", "AUC"], "difference": [-0.001, -0.0], "z": -1e-9})
    for text in (markdown_table(frame, digits), latex_table(frame, digits)):
        assert not NEGATIVE_ZERO.search(text), text
    versus = mean_std_comparison(table3_frame(), 100, 100)
    for text in (markdown_table(versus, {"z": 1}), latex_table(versus)):
        assert "-0.00" not in text and "0.00" in text


def test_the_gap_in_standard_errors_is_the_difference_of_two_means():
    # (66.76 - 66.19) / sqrt(0.27^2 / 100 + 0.25^2 / 100) = 0.57 / 0.036797 = 15.49
    assert standard_error_gap(66.76, 0.27, 100, 66.19, 0.25, 100) == pytest.approx(15.4904, 1e-4)
    # R differs between ours and the paper's: (5 - 4) / sqrt(1/25 + 4/100) = 1 / sqrt(0.08)
    assert standard_error_gap(5.0, 1.0, 25, 4.0, 2.0, 100) == pytest.approx(1 / math.sqrt(0.08))
    assert math.isnan(standard_error_gap(7.52, np.nan, 100, 7.6, np.nan, 100))


def test_the_vs_paper_table_has_the_papers_std_and_z():
    table = pd.DataFrame(
        {
            "recommender": "X",
            "metric": "recall@10",
            "method": ["exact", "sampled"],
            "mean": [7.52, 66.76],
            "std": [np.nan, 0.27],
            "paper_mean": [7.60, 66.19],
            "paper_std": [np.nan, 0.25],
        }
    )
    versus = mean_std_comparison(table, 100, 100, keys=["metric", "recommender", "method"])
    assert list(versus.columns) == [
        "Metric",
        "Recommender",
        "Method",
        "Ours",
        "Paper",
        "Difference",
        "z",
    ]
    exact, sampled = versus.to_dict("records")
    assert sampled["Ours"] == "66.76 ± 0.27" and sampled["Paper"] == "66.19 ± 0.25"
    assert sampled["Difference"] == pytest.approx(0.57)
    assert sampled["z"] == pytest.approx(0.57 / math.sqrt(0.27**2 / 100 + 0.25**2 / 100))
    assert exact["Paper"] == "7.60" and math.isnan(exact["z"])  # no std: no z
    text = markdown_table(versus, digits={"z": 1})
    row = next(line for line in text.splitlines() if "Uncorrected" in line)
    assert [c.strip() for c in row.strip("|").split("|")] == [
        "Recall@10",
        "X",
        "Uncorrected",
        "66.76 ± 0.27",
        "66.19 ± 0.25",
        "0.57",
        "15.5",
    ]
    exact_row = next(line for line in text.splitlines() if "Exact" in line)
    assert exact_row.rstrip(" |").endswith("-0.08")  # the z cell is empty


def test_a_cell_the_paper_does_not_report_stays_empty():
    table = table3_frame().iloc[:2].assign(paper_mean=np.nan, paper_std=np.nan)
    versus = mean_std_comparison(table, 100, 100)
    assert (versus["Paper"] == "").all() and versus["z"].isna().all()
    counts = comparison(
        pd.DataFrame({"pair": "X<W", "metric": "ap", "method": "cls", "correct": [7], "p": [None]}),
        value="correct",
        paper="p",
    )
    header, rule, row = markdown_table(counts, 0).splitlines()
    assert [c.strip() for c in row.strip("|").split("|")] == ["X vs W", "AP", "CLS", "7", "", ""]
    assert rule.endswith("|-----:|------:|-----------:|")  # numbers right-aligned, even empty


def test_markdown_right_aligns_the_numbers_and_pads_the_columns():
    wide = paper_layout(
        table3_frame().assign(
            cell=lambda t: [format_mean_std(m, s) for m, s in zip(t["mean"], t["std"])]
        ),
        ["metric", "recommender"],
        "method",
        "cell",
    )
    lines = markdown_table(wide).splitlines()
    assert lines[0].split("|")[1:-1] == [
        f" {c} ".ljust(len(cell)) if c in ("Metric", "Recommender") else f" {c} ".rjust(len(cell))
        for c, cell in zip(wide.columns, lines[0].split("|")[1:-1])
    ]
    rule = lines[1].split("|")[1:-1]
    assert not rule[0].endswith(":") and not rule[1].endswith(":")
    assert all(cell.endswith(":") for cell in rule[2:])
    assert len(set(map(len, lines))) == 1  # every row as wide as the header


def test_latex_is_typeset_as_a_paper_would():
    table = table3_frame()
    wide = paper_layout(
        table.assign(cell=[format_mean_std(m, s) for m, s in zip(table["mean"], table["std"])]),
        ["metric", "recommender"],
        "method",
        "cell",
    )
    tex = latex_table(
        wide,
        caption="Evaluation of three recommenders (X, Y and Z): mean ± std.",
        groups=[("", 2), *method_groups(METHODS)],
        block="Metric",
        wide=True,
    )
    lines = tex.splitlines()
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert rule in lines
    assert lines.index(r"\toprule") < lines.index(r"\midrule") < lines.index(r"\bottomrule")
    assert r"\begin{tabular}{llrrrrrrrr}" in lines  # keys left, every number right
    header = next(line for line in lines if line.startswith("Metric &"))
    assert header == "Metric & Recommender & " + " & ".join(PAPER_NAMES) + r" \\"
    assert r"\multicolumn{6}{c}{Sampled with correction}" in tex and "& Sampled &" in tex
    assert r"\cmidrule(lr){4-4}\cmidrule(lr){5-10}" in lines
    assert r"$11.00 \pm 0.20$" in tex and "±" not in tex
    assert r"\caption{Evaluation of three recommenders (X, Y and Z): mean $\pm$ std.}" in tex
    assert r"\begin{table*}[t]" in lines and r"\end{table*}" in lines
    # the paper's blocks: the metric once, a rule between metrics
    body = lines[lines.index(r"\midrule") + 1 : lines.index(r"\bottomrule")]
    assert [line.split(" & ")[0] for line in body] == ["Recall@10", "", r"\midrule", "AUC", ""]
    assert "_" not in tex.replace(r"\_", "")


def test_paper_names_have_one_home():
    assert [labels.method_label(m) for m in METHODS] == PAPER_NAMES
    assert [labels.metric_label(m) for m in ("recall@10", "ndcg@10", "ap", "auc")] == [
        "Recall@10",
        "NDCG@10",
        "AP",
        "AUC",
    ]
    assert table_claims.method_label is labels.method_label
    assert table_claims.metric_label is labels.metric_label
    assert labels.pair_label("Y<Z") == "Y vs Z"
    assert method_groups(METHODS) == [("", 1), ("Sampled", 1), ("Sampled with correction", 6)]


@pytest.mark.parametrize(
    "name",
    sorted(
        f"{module.__name__}.{n}"
        for module in (labels, tables)
        for n in module.__all__
        if inspect.isfunction(getattr(module, n))
    ),
)
def test_every_function_of_the_tables_and_labels_has_a_numpy_docstring(name):
    module, function = name.rsplit(".", 1)
    assert (
        missing_sections(getattr({m.__name__: m for m in (labels, tables)}[module], function)) == []
    )
