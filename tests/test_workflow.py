"""End-to-end: the whole Snakemake workflow on the tiny synthetic data set of conftest.py."""

import re
import subprocess
from html import unescape

import numpy as np
import pandas as pd
import pytest
from conftest import (
    CONFIG_FILE,
    REPO,
    SNAKEMAKE,
    assert_claims_follow_the_tables,
    paper_outputs,
    run,
    tiny_config,
)

from sampled_metrics.pipeline.validation import load_config

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def finished_run(tiny_workdir):
    workdir = tiny_workdir("tiny")
    result = run(workdir, "--cores", "2")
    assert result.returncode == 0, result.stderr[-4000:]
    return workdir


def test_every_figure_and_table_is_made(finished_run):
    expected = paper_outputs("tiny")
    missing = [p for p in expected if not (finished_run / p).is_file()]
    assert not missing
    assert all((finished_run / p).stat().st_size > 0 for p in expected)
    assert list((finished_run / "logs").rglob("*.log"))


def test_output_contract(finished_run):
    ranks = pd.read_csv(finished_run / "results/tiny/ranks/X.csv")
    assert list(ranks.columns) == ["user", "rank", "n_candidates"]
    assert len(ranks) == 90 and ranks["rank"].between(1, ranks["n_candidates"]).all()
    exact = pd.read_csv(finished_run / "results/tiny/exact_metrics.csv")
    assert list(exact.columns) == ["recommender", "metric", "value", "paper"]
    assert set(exact["metric"]) == {"recall@10", "ndcg@10", "ap", "auc"}
    table3 = pd.read_csv(finished_run / "results/tiny/table3.csv")
    assert list(table3.columns) == [
        "recommender",
        "metric",
        "method",
        "mean",
        "std",
        "paper_mean",
        "paper_std",
    ]
    assert set(table3["method"]) == {
        "exact",
        "sampled",
        "rank_estimate",
        "cls",
        "bv_1",
        "bv_0.1",
        "bv_0.01",
        "bv_0.001",
    }
    table4 = pd.read_csv(finished_run / "results/tiny/table4.csv")
    assert {"pair", "metric", "method", "correct", "paper"} <= set(table4.columns)
    assert table4["correct"].between(0, 6).all()
    sampling = pd.read_csv(finished_run / "results/tiny/sampling.csv")
    assert list(sampling.columns) == ["dataset", "recommender", "metric", "method", "rep", "value"]
    methods = ["sampled", *load_config(CONFIG_FILE)["estimation"]["estimators"]]
    assert len(sampling) == 3 * 4 * len(methods) * 6
    assert list(dict.fromkeys(sampling["method"])) == methods
    # one verdict per claim, each the one these tables give, and the PASS rows counted
    assert_claims_follow_the_tables(finished_run / "results/tiny")


def test_every_estimator_is_scored_against_the_exact_metric(finished_run):
    """estimators.csv: per recommender, metric and estimator (the paper's and the
    learned ones), bias and RMSE recomputed here from sampling.csv and the exact
    metrics; the pairs ordered right counted out of the 6 repetitions."""
    results = finished_run / "results/tiny"
    errors = pd.read_csv(results / "estimators.csv")
    sampling = pd.read_csv(results / "sampling.csv")
    exact = pd.read_csv(results / "exact_metrics.csv").set_index(["recommender", "metric"])
    assert len(errors) == 3 * 4 * sampling["method"].nunique()
    assert {"em", "maxent", "mn_em", "bv_em_0.1"} <= set(errors["method"])
    for row in errors.sample(12, random_state=0).itertuples():
        values = sampling.query(
            "recommender == @row.recommender and metric == @row.metric and method == @row.method"
        )["value"]
        truth = exact.loc[(row.recommender, row.metric), "value"]
        assert row.bias == pytest.approx(values.mean() - truth, abs=1e-6)
        assert row.rmse == pytest.approx(np.sqrt(np.mean((values - truth) ** 2)), abs=1e-6)
    pairs = pd.read_csv(results / "estimators_pairs.csv")
    assert set(pairs["pair"]) == {"X<Y", "X<Z", "Y<Z"} and pairs["correct"].between(0, 6).all()
    text = (results / "estimators.md").read_text()
    for metric, method in set(zip(errors["metric"], errors["method"])):
        row = rf"\| {re.escape(metric)} +\| {re.escape(method)} +\|"
        assert len(re.findall(row, text)) == 2, (metric, method)  # errors and pairs


def test_sampled_auc_mean_matches_exact_auc(finished_run):
    """Sampled AUC is unbiased (section 4.4.1): over repetitions its mean is
    near the exact AUC computed on the same candidate pools."""
    table3 = pd.read_csv(finished_run / "results/tiny/table3.csv").set_index(
        ["recommender", "metric", "method"]
    )
    for rec in "XYZ":
        exact = table3.loc[(rec, "auc", "exact"), "mean"]
        sampled = table3.loc[(rec, "auc", "sampled"), "mean"]
        std = table3.loc[(rec, "auc", "sampled"), "std"]
        assert abs(sampled - exact) < 4 * std / np.sqrt(6) + 1.0


def test_nothing_left_to_do_and_one_figure_reruns_alone(finished_run):
    dry = run(finished_run, "--cores", "1", "--dry-run")
    assert dry.returncode == 0 and "Nothing to be done" in dry.stdout + dry.stderr
    (finished_run / "figures/tiny/fig6.pdf").unlink()
    dry = run(finished_run, "--cores", "1", "--dry-run", "figures/tiny/fig6.pdf")
    out = dry.stdout + dry.stderr
    assert dry.returncode == 0
    jobs = [
        line.split()[0]
        for line in out.splitlines()
        if line.strip()
        and line.split()[0]
        in {
            "fig6",
            "fig6_curves",
            "fig6_recommender",
            "fig6_corrections",
            "scores",
            "exact_ranks",
            "split",
            "sampled_ranks",
        }
    ]
    assert set(jobs) == {"fig6"}, out


def test_default_config_builds_its_plan_without_data():
    """The shipped config.yaml validates and plans every job (no download in a dry run)."""
    result = subprocess.run(
        [*SNAKEMAKE, "--directory", str(REPO), "--cores", "1", "--dry-run"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "download" in result.stdout + result.stderr


def test_html_report_is_self_contained_with_every_caption(finished_run):
    """`snakemake --report` embeds every figure, table and the claims, each with its caption."""
    report = finished_run / "report.html"
    result = run(finished_run, "--report", str(report))
    assert result.returncode == 0, result.stderr[-3000:]
    assert report.is_file() and report.stat().st_size > 200_000
    assert not (finished_run / "report").exists()  # one file, no side folder
    html = report.read_text()
    assert 'src="http' not in html and '<link rel="stylesheet" href' not in html
    assert html.count("data:image/png;") == 8  # fig1-4, fig5, fig6, the protocol study, decisions
    assert html.count("data:text/csv;") == 5  # tables 1-4, exact metrics: unrounded, to download
    # captions sit in JS strings
    text = " ".join(unescape(html.replace("\\n", " ").replace("\\u00b1", "±")).split())
    captions = [
        "Figure 1 of the paper: metrics against the predicted rank",
        "Figure 2 of the paper: expected sampled metrics",
        "Figure 3 of the paper: expected sampled metric against the true rank",
        "Figure 4 of the paper: corrected AP",
        "Figure 5 of the paper: distribution of the exact ranks on tiny",
        "Figure 6 of the paper: expected recall@10 against the sample size m on tiny",
        "Table 1 of the paper: the toy example, exact metrics",
        "Table 2 of the paper: the toy example, sampled metrics",
        "Table 3 of the paper: exact, sampled and corrected metrics on tiny",
        "Table 4 of the paper: correct orderings of recommender pairs on tiny",
        "Exact metrics on tiny",
        "claims checked on tiny",
        "Protocol sensitivity on tiny",
        "The sampling protocols of common frameworks on tiny",
        "The protocol study on tiny",
        "Deciding between recommenders on tiny: the design study",
        "Pairs decided right against cost on tiny.",
        "Reproduction of <strong>On Sampled Metrics for Item Recommendation</strong>",
    ]
    assert [c for c in captions if c not in text] == []
    # and the bold title of every caption file (jinja expressions matched loosely)
    for rst in sorted((REPO / "workflow/report").glob("*.rst")):
        titles = re.findall(r"\*\*(.+?)\*\*", rst.read_text(), flags=re.S)
        assert titles, rst
        for title in titles:
            pattern = r"\s+".join(re.escape(word) for word in title.split())
            pattern = re.sub(r"\\\{\\\{.*?\\\}\\\}", ".+?", pattern)
            assert re.search(pattern, text), f"{rst.name}: {title!r} not in the report"
    # the claims file is included verbatim, and every table readable in its caption: the
    # paper's layout, then ours beside the paper's numbers (rounded; "±"; no "-0.00")
    assert "Claims of the paper on tiny" in html
    # the paper's tables, ours beside them, protocol sensitivity, estimators, protocols,
    # the design study
    assert html.count('<pre class=\\"result-table literal-block\\">') == 11
    readable = [
        r"\| A \| 100, 100, 100, 100, 100 \| 0\.990 \| 0\.010 \| 0\.150 \| 0\.000 \|",
        r"\| C \| Recall@10 \| 0\.200 \| 0\.200 \| 0\.000 \|",
        r"\| A \| AP \| \d\.\d{3} ± \d\.\d{3} \| 0\.630 ± 0\.129 \| -?\d\.\d{3} \| -?\d+\.\d \|",
        r"\| Metric \| Recommender \| Exact \| Uncorrected \| Rank Estimate \| CLS \| BV 1 \|",
        r"\| Recall@10 \| X \| Uncorrected \| \d+\.\d\d ± \d+\.\d\d \| 66\.19 ± 0\.25 \| "
        r"-?\d+\.\d\d \| -?\d+\.\d \|",
        r"\| Recall@10 \| X \| Exact \| \d+\.\d\d \| 7\.60 \| -?\d+\.\d\d \| \|",
        r"\| Pair \| Metric \| Uncorrected \| Rank Estimate \|",
        r"\| X vs Y \| Recall@10 \| Rank Estimate \| \d+ \| 31 \| -?\d+ \|",
        r"\| X \| AUC \| \d+\.\d\d \| 89\.13 \| -?\d+\.\d\d \|",
        r"\| recall@10 \| mn_em \| -?\d+\.\d{3} \| \d+\.\d{3} \|",  # estimators.md
    ]
    assert [p for p in readable if not re.search(p, text)] == []
    tables = re.findall(r'<pre class=\\"result-table literal-block\\">(.*?)</pre>', html, re.S)
    assert not [t for t in tables if re.search(r"-0(\.0*)?(?![\d.])", t)]


def test_a_fourth_recommender_is_one_config_entry(tiny_workdir):
    """A recommender added in config alone is fitted, ranked, sampled, corrected and
    tabulated beside X, Y, Z; the paper's claims stay about X, Y and Z."""
    config = tiny_config()
    config["sampling"] = {"m": 10, "repetitions": 3, "law": "hypergeometric"}
    config["recommenders"]["W"] = {"type": "item_knn", "q": 2, "k": None, "k_prime": 3}
    workdir = tiny_workdir("fourth", config)
    result = run(workdir, "--cores", "2", "results/tiny/claims.md", "results/tiny/table4.csv")
    assert result.returncode == 0, result.stderr[-3000:]
    table3 = pd.read_csv(workdir / "results/tiny/table3.csv")
    assert set(table3["recommender"]) == {"W", "X", "Y", "Z"}
    assert len(pd.read_csv(workdir / "results/tiny/ranks/W.csv")) == 90
    assert {"W<X", "X<Y", "Y<Z"} <= set(pd.read_csv(workdir / "results/tiny/table4.csv")["pair"])
    # the claims of section 6 are recomputed on X, Y and Z only: W changes no verdict
    rows = assert_claims_follow_the_tables(workdir / "results/tiny", trio=("X", "Y", "Z"))
    paper_rows = [row for row in rows if row["section"].startswith("6.")]
    assert len(paper_rows) >= 10 and any("Z > Y > X" in row["claim"] for row in paper_rows)
    assert not any("W " in row["evidence"] for row in paper_rows)


def test_the_protocol_study_is_made_for_the_configured_protocols(finished_run):
    """protocols.csv: every protocol, recommender, metric and estimator once per target;
    Hansen-Hurwitz for the protocols with replacement, the weighted-rank target for
    popularity sampling; the pairs and the figure."""
    errors = pd.read_csv(finished_run / "results/tiny/protocols.csv")
    keys = ["protocol", "target", "recommender", "metric", "method"]
    assert not errors.duplicated(keys).any()
    assert set(errors["protocol"]) == {"recbole-uni100", "recbole-pop100"}
    assert set(errors["recommender"]) == {"X", "Y", "Z"}
    methods = ["sampled", "cls", "bv_0.1", "em", "hansen_hurwitz"]
    for (protocol, target), group in errors.groupby(["protocol", "target"]):
        expected = methods if target == "rank" else methods[:-1]
        assert set(group["method"]) == set(expected), (protocol, target)
        assert len(group) == 3 * 4 * len(expected)
    assert set(errors[errors["protocol"] == "recbole-uni100"]["target"]) == {"rank"}
    assert set(errors[errors["protocol"] == "recbole-pop100"]["target"]) == {
        "rank",
        "weighted_rank",
    }
    assert np.allclose(errors["rmse"] ** 2, errors["bias"] ** 2 + errors["std"] ** 2 * 5 / 6)
    pairs = pd.read_csv(finished_run / "results/tiny/protocols_pairs.csv")
    assert set(pairs["pair"]) == {"X<Y", "X<Z", "Y<Z"} and (pairs["repetitions"] == 6).all()
    assert (finished_run / "figures/tiny/protocols.png").stat().st_size > 10_000
    assert (
        "## Pairs of recommenders ordered"
        in (finished_run / "results/tiny/protocols.md").read_text()
    )
