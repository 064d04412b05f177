"""The claims of section 6 on small hand-made tables: PASS and FAIL where the run
has the numbers a claim is about, N/A (with the reason) where it has not, never
a PASS on nothing."""

import pandas as pd
import pytest

from sampled_metrics.reproduction.claims import (
    FIGURE6_METRIC,
    TOP_HEAVY,
    VERDICTS,
    check_claims,
    claims_markdown,
    crosscheck_claim,
    rank_distribution_claims,
)
from sampled_metrics.reproduction.paper import published

TRIO = ("X", "Y", "Z")
# Means (percent) with the paper's pattern: exact Z > Y > X on the top-heavy
# metrics and X > Y > Z on AUC; sampled top-heavy metrics reversed, sampled AUC
# equal to the exact; every correction a little above the exact value.
EXACT = {"recall@10": (7.5, 8.7, 9.5), "ndcg@10": (3.7, 4.5, 4.8), "ap": (3.8, 4.3, 4.4)}
EXACT["auc"] = (89.0, 85.0, 74.0)
SAMPLED = {"recall@10": (66.0, 57.0, 53.0), "ndcg@10": (39.0, 34.8, 35.3)}
SAMPLED |= {"ap": (32.0, 30.0, 30.7), "auc": EXACT["auc"]}
CORRECTIONS = ("rank_estimate", "cls", "bv_1", "bv_0.1", "bv_0.01", "bv_0.001")
PAPER_THRESHOLDS = {"sampled": 1000.0, "bv_0.1": 60.0}
# The claims whose every number comes from a top-heavy metric of Table 3.
TOP_HEAVY_CLAIMS = (
    "On the exact metric, Z > Y > X for Recall, NDCG and AP",
    "Sampled Recall@10 reverses the exact order of X and Y",
    "The worst recommender on the exact metric (X) looks best on every sampled top-heavy metric",
    "Every correction is closer to the exact value than the uncorrected metric "
    "(Recall, NDCG, AP; means over repetitions)",
    "Sampled NDCG and AP keep the exact order of the two better recommenders (Z > Y)",
    "The sampled lead of X is not variance: on every sampled top-heavy metric it exceeds "
    "5 standard deviations of the repetitions",
    "Every correction ranks Z best on Recall, NDCG and AP",
    "BV with low gamma also orders X below Y (in expectation)",
)
CORRECTION_CLAIMS = (
    "Every correction is closer to the exact value than the uncorrected metric "
    "(Recall, NDCG, AP; means over repetitions)",
    "Every correction ranks Z best on Recall, NDCG and AP",
    "BV with low gamma also orders X below Y (in expectation)",
    "The rank estimate orders every pair at least as often as the uncorrected metric",
    "BV 0.1 orders all but at most one comparison correctly in more than 90% of repetitions",
)
FIG6 = "needs about m = {m:g} to order {pair} (within a factor of 2)"


def tables(metrics=tuple(EXACT), methods=CORRECTIONS, fig6_methods=("sampled", "bv_0.1")):
    """Table 3, Table 4 and the Figure 6 thresholds of a run with these metrics,
    corrections and Figure 6 methods (pair X, Y), in the paper's pattern."""
    table3 = pd.DataFrame(
        [
            {"recommender": rec, "metric": metric, "method": method, "mean": mean, "std": 0.1}
            for metric in metrics
            for i, rec in enumerate(TRIO)
            for method, mean in (
                ("exact", EXACT[metric][i]),
                ("sampled", SAMPLED[metric][i]),
                *((m, EXACT[metric][i] * 1.01) for m in methods),
            )
        ]
    )
    table4 = pd.DataFrame(
        [
            {"pair": pair, "metric": metric, "method": method, "correct": c, "repetitions": 100}
            for pair in ("X<Y", "X<Z", "Y<Z")
            for metric in metrics
            for method, c in (("sampled", 0), ("rank_estimate", 60), ("bv_0.1", 95))
            if method == "sampled" or method in methods
        ]
    )
    thresholds = pd.DataFrame(
        [
            {"method": m, "pair": "X<Y", "first_right_m": 10, "stays_right_from_m": right}
            for m, right in (("sampled", 1000), ("bv_0.1", 50))
            if m in fig6_methods
        ],
        columns=["method", "pair", "first_right_m", "stays_right_from_m"],
    )
    return table3, table4, thresholds


def verdicts(claims) -> dict[str, str]:
    """Claim -> verdict, after checking what every report must hold."""
    assert len(claims) == 14, [c.statement for c in claims]  # the same claims in every run
    for claim in claims:
        assert claim.verdict in VERDICTS
        # evidence behind every verdict: the numbers, or why there are none
        assert claim.evidence.strip(), claim
        if claim.verdict == "N/A":
            assert claim.passed is None
    return {c.statement: c.verdict for c in claims}


def check(table3, table4, thresholds, **fig6):
    return check_claims(table3, table4, thresholds, PAPER_THRESHOLDS, TRIO, **fig6)


def test_the_paper_pattern_passes_and_a_change_fails():
    held = verdicts(check(*tables()))
    assert set(held.values()) == {"PASS"}, held
    assert "BV 0.1 Recall@10 " + FIG6.format(m=60, pair="X and Y") in held
    assert "Uncorrected Recall@10 " + FIG6.format(m=1000, pair="X and Y") in held
    # sampled Recall@10 no longer reversed: its claims fail, the others still hold
    table3, table4, thresholds = tables()
    sampled_y = (table3["recommender"] == "Y") & (table3["method"] == "sampled")
    table3.loc[sampled_y & (table3["metric"] == "recall@10"), "mean"] = 70.0
    # and BV 0.1 right on the grid only from m = 500, over twice the paper's 60
    thresholds.loc[thresholds["method"] == "bv_0.1", "stays_right_from_m"] = 500
    changed = verdicts(check(table3, table4, thresholds))
    failed = {claim for claim, verdict in changed.items() if verdict == "FAIL"}
    assert failed == {
        "Sampled Recall@10 reverses the exact order of X and Y",
        "The worst recommender on the exact metric (X) looks best on every sampled "
        "top-heavy metric",
        "The sampled lead of X is not variance: on every sampled top-heavy metric it exceeds "
        "5 standard deviations of the repetitions",
        "BV 0.1 Recall@10 " + FIG6.format(m=60, pair="X and Y"),
    }
    assert set(changed.values()) == {"PASS", "FAIL"}


def test_auc_only_makes_every_top_heavy_claim_not_applicable():
    claims = check(*tables(metrics=["auc"], methods=[]))
    found = verdicts(claims)
    assert all(found[claim] == "N/A" for claim in TOP_HEAVY_CLAIMS), found
    # the AUC claims still hold, on AUC numbers
    assert found["On the exact AUC, X > Y > Z"] == "PASS"
    assert found["Sampled AUC keeps the exact order of every pair"] == "PASS"
    evidence = {c.statement: c.evidence for c in claims}
    assert (
        "recall@10, ndcg@10, ap"
        in evidence["On the exact metric, Z > Y > X for Recall, NDCG and AP"]
    )
    assert all(c.evidence.startswith("X 89.00") for c in claims if "exact AUC" in c.statement)


def test_auc_not_a_metric_makes_the_auc_claims_not_applicable():
    found = verdicts(check(*tables(metrics=TOP_HEAVY)))
    assert found["On the exact AUC, X > Y > Z"] == "N/A"
    assert found["Sampled AUC keeps the exact order of every pair"] == "N/A"
    assert {v for c, v in found.items() if "AUC" not in c} == {"PASS"}


def test_no_correction_makes_the_correction_claims_not_applicable():
    claims = check(*tables(methods=[]))
    found = verdicts(claims)
    assert {claim: found[claim] for claim in CORRECTION_CLAIMS} == dict.fromkeys(
        CORRECTION_CLAIMS, "N/A"
    )
    assert {v for c, v in found.items() if c not in CORRECTION_CLAIMS} == {"PASS"}
    closer = next(c for c in claims if c.statement == CORRECTION_CLAIMS[0])
    assert "no correction" in closer.evidence and "0 of 0" not in closer.evidence


def test_a_claim_is_checked_on_the_corrections_and_metrics_the_run_has():
    # only CLS of the low-bias corrections, only AP of the top-heavy metrics
    claims = check(*tables(metrics=["ap", "auc"], methods=["cls"]))
    found = verdicts(claims)
    evidence = {c.statement: c.evidence for c in claims}
    z_best = "Every correction ranks Z best on Recall, NDCG and AP"
    assert found[z_best] == "PASS"
    assert evidence[z_best].startswith("cls ap: yes")
    assert "not in this run: metrics recall@10, ndcg@10" in evidence[z_best]
    # no low-gamma BV at all: nothing to check the second claim on
    assert found["BV with low gamma also orders X below Y (in expectation)"] == "N/A"
    assert found["Sampled Recall@10 reverses the exact order of X and Y"] == "N/A"


def test_a_missing_recommender_makes_the_table3_claims_not_applicable():
    table3, table4, thresholds = tables()
    claims = check(table3[table3["recommender"] != "Z"], table4, thresholds)
    found = verdicts(claims)
    table3_claims = [c for c in claims if not c.section.startswith("6.3 /")]
    assert {found[c.statement] for c in table3_claims} == {"N/A"}
    assert all("recommender Z" in c.evidence for c in table3_claims), table3_claims


@pytest.mark.parametrize(
    ("fig6", "named"),
    [
        ({"fig6_pair": ("Y", "Z")}, "Recall@10 {m} to order Y and Z"),
        ({"fig6_metric": "ndcg@10"}, "NDCG@10 {m} to order X and Y"),
        ({"fig6_metric": "ndcg@10", "fig6_pair": ["X", "Z"]}, "NDCG@10 {m} to order X and Z"),
    ],
)
def test_a_figure6_other_than_the_papers_makes_the_threshold_claims_not_applicable(fig6, named):
    table3, table4, thresholds = tables()
    a, b = fig6.get("fig6_pair", ("X", "Y"))
    thresholds["pair"] = f"{a}<{b}"  # the thresholds of the configured pair
    claims = [c for c in check(table3, table4, thresholds, **fig6) if c.section == "6.3 / Fig 6"]
    for claim, (label, m) in zip(claims, [("Uncorrected", 1000), ("BV 0.1", 60)], strict=True):
        assert claim.verdict == "N/A", claim
        assert claim.statement.startswith(label + " ")
        assert named.format(m=f"needs about m = {m}") in claim.statement, claim.statement
        assert "the paper's m is for Recall@10 of X and Y" in claim.evidence


def test_the_pair_in_either_order_is_the_papers():
    table3, table4, thresholds = tables()
    thresholds["pair"] = "Y<X"
    found = verdicts(check(table3, table4, thresholds, fig6_pair=["Y", "X"]))
    assert found["BV 0.1 Recall@10 " + FIG6.format(m=60, pair="Y and X")] == "PASS"


def test_a_figure6_method_without_a_threshold_is_not_applicable():
    claims = check(*tables(fig6_methods=["sampled"]))
    found = verdicts(claims)
    bv = "BV 0.1 Recall@10 " + FIG6.format(m=60, pair="X and Y")
    assert found[bv] == "N/A"
    assert found["Uncorrected Recall@10 " + FIG6.format(m=1000, pair="X and Y")] == "PASS"
    assert (
        "no Figure 6 threshold of bv_0.1" in next(c for c in claims if c.statement == bv).evidence
    )
    # a threshold never reached on the grid is a FAIL, not an N/A
    table3, table4, thresholds = tables()
    thresholds.loc[thresholds["method"] == "bv_0.1", "stays_right_from_m"] = float("nan")
    assert verdicts(check(table3, table4, thresholds))[bv] == "FAIL"


def test_the_paper_thresholds_are_for_recall_at_10_of_x_and_y():
    figure6 = published("figure6")
    assert set(figure6["metric"]) == {FIGURE6_METRIC}
    assert set(figure6["pair"]) == {"X<Y"}
    assert dict(zip(figure6["method"], figure6["stays_right_from_m"])) == PAPER_THRESHOLDS


def test_an_empty_crosscheck_is_not_applicable():
    empty = pd.DataFrame(columns=["recommender", "metric", "method", "z"], dtype=float)
    assert crosscheck_claim(empty).verdict == "N/A"


def test_the_report_counts_pass_fail_and_not_applicable():
    table3, table4, thresholds = tables(metrics=["auc"], methods=[])
    claims = check(table3, table4, thresholds)
    claims.append(
        crosscheck_claim(
            pd.DataFrame([{"recommender": "X", "metric": "auc", "method": "sampled", "z": 5.0}])
        )
    )
    text = claims_markdown(claims, "Claims of the paper on test").splitlines()
    counts = {v: sum(c.verdict == v for c in claims) for v in VERDICTS}
    assert counts == {"PASS": 4, "FAIL": 1, "N/A": 10}, counts
    assert text[2] == (
        "4 of 15 claims of the paper hold on the reproduced numbers, 1 fails, 10 not applicable "
        "(N/A: the run has no numbers to check the claim on)."
    )
    rows = [line for line in text if line.startswith("| ") and "---" not in line][1:]
    assert [row.split(" | ")[2] for row in rows] == [c.verdict for c in claims]


def test_sampled_ndcg_and_ap_must_keep_the_better_two_in_order():
    """Section 6.2: sampled NDCG and AP keep Z above Y; ours reverse them (a FAIL)."""
    table3, table4, thresholds = tables()
    claim = "Sampled NDCG and AP keep the exact order of the two better recommenders (Z > Y)"
    assert verdicts(check(table3, table4, thresholds))[claim] == "PASS"
    rows = (
        (table3["method"] == "sampled")
        & (table3["metric"] == "ap")
        & (table3["recommender"] == "Z")
    )
    table3.loc[rows, "mean"] = 29.0  # below Y's 30.0
    claims = check(table3, table4, thresholds)
    assert verdicts(claims)[claim] == "FAIL"
    assert "ap: exact Y 4.30, Z 4.40, sampled Y 30.00, Z 29.00" in next(
        c.evidence for c in claims if c.statement == claim
    )
    only_recall = verdicts(check(*tables(metrics=["recall@10", "auc"])))
    assert only_recall[claim] == "N/A"


def test_a_sampled_lead_within_the_noise_is_variance():
    claim = (
        "The sampled lead of X is not variance: on every sampled top-heavy metric it exceeds "
        "5 standard deviations of the repetitions"
    )
    table3, table4, thresholds = tables()
    assert verdicts(check(table3, table4, thresholds))[claim] == "PASS"  # AP lead 1.3 = 13 std
    table3["std"] = 0.3  # AP lead 1.3 = 4.3 std
    claims = check(table3, table4, thresholds)
    assert verdicts(claims)[claim] == "FAIL"
    assert "ap: lead 4.3 std" in next(c.evidence for c in claims if c.statement == claim)


FIGURE5_PAPER = {"top_100": 2310, "bottom_half_below": 300, "worst_bucket_above": 1600}


def figure5_facts(**changes):
    facts = pd.DataFrame(
        {
            "recommender": list(TRIO),
            "top_10": [454, 523, 575],
            "top_100": [2316, 2093, 2242],
            "bottom_half": [214, 381, 1451],
            "last_bucket": [1, 1, 22],
            "pessimistic_last_bucket": [1, 1, 1569],
        }
    )
    for column, values in changes.items():
        facts[column] = values
    return facts


def test_figure5_claims_read_the_rank_distribution():
    claims = rank_distribution_claims(figure5_facts(), FIGURE5_PAPER, TRIO)
    assert [c.verdict for c in claims] == ["PASS", "PASS", "FAIL"]
    assert claims[2].evidence == "22 with random ties (the pipeline's); 1569 with pessimistic ties"
    assert "over 1600 users in the worst bucket" in claims[2].statement
    # the paper's 1600 is met under the pessimistic rule alone: PASS
    held = rank_distribution_claims(
        figure5_facts(pessimistic_last_bucket=[1, 1, 1700]), FIGURE5_PAPER, TRIO
    )
    assert held[2].verdict == "PASS"
    # X with 2600 in the top 100 is not "about 2310"; Y better than Z in the top 10
    changed = rank_distribution_claims(
        figure5_facts(top_100=[2600, 2093, 2242], top_10=[454, 600, 575]), FIGURE5_PAPER, TRIO
    )
    assert [c.verdict for c in changed] == ["FAIL", "FAIL", "FAIL"]


def test_figure5_claims_without_the_facts_are_not_applicable():
    claims = rank_distribution_claims(figure5_facts().drop(columns="top_10"), FIGURE5_PAPER, TRIO)
    assert {c.verdict for c in claims} == {"N/A"} and all(c.evidence for c in claims)
    partial = figure5_facts().iloc[:2]
    assert {c.verdict for c in rank_distribution_claims(partial, FIGURE5_PAPER, TRIO)} == {"N/A"}
