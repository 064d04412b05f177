"""The paper's conclusions of sections 6.2 and 6.3, checked against the reproduced
Table 3, Table 4 and Figure 6 thresholds.

Each check returns a ``Claim``: what the paper says, its verdict and the numbers
behind it. The verdict is PASS or FAIL when the run has numbers to check the
claim on, and N/A (not applicable) when it has none: a metric, method or
recommender the claim is about is not in the run, or the run's Figure 6 is not
the paper's (another metric or pair); the evidence then says why. No claim is
checked on an empty set of numbers. Every verdict comes from the reproduced
Table 3, Table 4 and Figure 6 thresholds; the only published numbers used are
the sample sizes the text gives for Figure 6, passed in by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import pandas as pd

from ...outputs.labels import method_label, metric_label
from ...recommenders import PAPER_RECOMMENDERS
from .claim import (
    Claim,
    _fmt,
    _not_applicable,
    _order,
    _partly,
    _Run,
    _within_factor,
    _yes_no,
)

__all__ = ["FIGURE6_METRIC", "LOW_STD_FACTOR", "TOP_HEAVY", "check_claims"]

TOP_HEAVY = ("recall@10", "ndcg@10", "ap")
# The metric of the paper's Figure 6, whose thresholds in m the text gives (for X and Y).
FIGURE6_METRIC = "recall@10"
# How many standard deviations of the repetitions make a gap "not variance" (section 6.2).
LOW_STD_FACTOR = 5.0


def _exact_orders(run: _Run) -> list[Claim]:
    x, y, z = run.recommenders
    top = f"On the exact metric, {z} > {y} > {x} for Recall, NDCG and AP"
    metrics = run.metrics_with(TOP_HEAVY, "exact")
    if metrics:
        exact = {m: run.known(m, "exact") for m in metrics}
        first = Claim(
            "6.2",
            top,
            all(_order(exact[m]) == f"{z} > {y} > {x}" for m in metrics),
            _partly(
                "; ".join(f"{m}: {_fmt(exact[m])}" for m in metrics),
                run.absent(TOP_HEAVY, ["exact"]),
            ),
        )
    else:
        first = _not_applicable("6.2", top, run.absent(TOP_HEAVY, ["exact"]))
    auc = f"On the exact AUC, {x} > {y} > {z}"
    exact_auc = run.values("auc", "exact")
    if exact_auc is None:
        second = _not_applicable("6.2", auc, run.absent(["auc"], ["exact"]))
    else:
        second = Claim("6.2", auc, _order(exact_auc) == f"{x} > {y} > {z}", _fmt(exact_auc))
    return [first, second]


def _sampled_recall_reverses(run: _Run) -> list[Claim]:
    x, y, _ = run.recommenders
    r = "recall@10"
    statement = f"Sampled Recall@10 reverses the exact order of {x} and {y}"
    if not run.metrics_with([r], "exact", "sampled"):
        return [_not_applicable("6.2", statement, run.absent([r], ["exact", "sampled"]))]
    exact, sampled = run.known(r, "exact"), run.known(r, "sampled")
    return [
        Claim(
            "6.2",
            statement,
            (exact[x] < exact[y]) and (sampled[x] > sampled[y]),
            f"exact {_fmt({k: exact[k] for k in (x, y)})}; "
            f"sampled {_fmt({k: sampled[k] for k in (x, y)})}",
        )
    ]


def _worst_looks_best(run: _Run) -> list[Claim]:
    x = run.recommenders[0]
    statement = (
        f"The worst recommender on the exact metric ({x}) looks best on "
        "every sampled top-heavy metric"
    )
    metrics = run.metrics_with(TOP_HEAVY, "exact", "sampled")
    if not metrics:
        return [_not_applicable("6.2", statement, run.absent(TOP_HEAVY, ["exact", "sampled"]))]
    exact = {m: run.known(m, "exact") for m in metrics}
    sampled = {m: run.known(m, "sampled") for m in metrics}
    worst_best = [
        m
        for m in metrics
        if min(exact[m], key=exact[m].__getitem__) == x
        and max(sampled[m], key=sampled[m].__getitem__) == x
    ]
    return [
        Claim(
            "6.2",
            statement,
            len(worst_best) == len(metrics),
            _partly(
                "; ".join(f"sampled {m}: {_fmt(sampled[m])}" for m in metrics),
                run.absent(TOP_HEAVY, ["exact", "sampled"]),
            ),
        )
    ]


def _sampled_auc_keeps_order(run: _Run) -> list[Claim]:
    statement = "Sampled AUC keeps the exact order of every pair"
    if not run.metrics_with(["auc"], "exact", "sampled"):
        return [_not_applicable("6.2", statement, run.absent(["auc"], ["exact", "sampled"]))]
    exact, sampled = run.known("auc", "exact"), run.known("auc", "sampled")
    kept = all(
        (exact[a] - exact[b]) * (sampled[a] - sampled[b]) > 0
        for a, b in combinations(run.recommenders, 2)
    )
    return [Claim("6.2", statement, kept, f"exact {_fmt(exact)}; sampled {_fmt(sampled)}")]


def _sampled_keeps_the_better_two(run: _Run) -> list[Claim]:
    """Section 6.2 on sampled NDCG and AP: "The relative ordering of the two better
    recommenders is correct" (Z above Y)."""
    _, y, z = run.recommenders
    wanted = ("ndcg@10", "ap")
    statement = (
        f"Sampled NDCG and AP keep the exact order of the two better recommenders ({z} > {y})"
    )
    metrics = run.metrics_with(wanted, "exact", "sampled")
    if not metrics:
        return [_not_applicable("6.2", statement, run.absent(wanted, ["exact", "sampled"]))]
    checks, evidence = {}, []
    for m in metrics:
        exact, sampled = run.known(m, "exact"), run.known(m, "sampled")
        checks[m] = (exact[z] - exact[y]) * (sampled[z] - sampled[y]) > 0
        evidence.append(
            f"{m}: exact {_fmt({k: exact[k] for k in (y, z)})}, "
            f"sampled {_fmt({k: sampled[k] for k in (y, z)})}"
        )
    return [
        Claim(
            "6.2",
            statement,
            all(checks.values()),
            _partly("; ".join(evidence), run.absent(wanted, ["exact", "sampled"])),
        )
    ]


def _sampled_gaps_are_not_variance(run: _Run) -> list[Claim]:
    """Section 6.2: "All the measures have low standard deviation, so the issue is not
    that of variance": X's sampled lead over Y and Z is many standard deviations wide."""
    x, y, z = run.recommenders
    statement = (
        f"The sampled lead of {x} is not variance: on every sampled top-heavy metric it "
        f"exceeds {LOW_STD_FACTOR:g} standard deviations of the repetitions"
    )
    metrics = run.metrics_with(TOP_HEAVY, "sampled")
    if not metrics:
        return [_not_applicable("6.2", statement, run.absent(TOP_HEAVY, ["sampled"]))]
    if "std" not in run.table3.columns:
        return [_not_applicable("6.2", statement, "Table 3 has no standard deviations")]
    std = run.table3.set_index(["recommender", "metric", "method"])["std"]
    ratios = {}
    for m in metrics:
        sampled = run.known(m, "sampled")
        spread = max(std.get((rec, m, "sampled"), float("nan")) for rec in run.recommenders)
        ratios[m] = min(sampled[x] - sampled[y], sampled[x] - sampled[z]) / spread
    return [
        Claim(
            "6.2",
            statement,
            all(pd.notna(r) and r > LOW_STD_FACTOR for r in ratios.values()),
            _partly(
                "; ".join(f"{m}: lead {r:.1f} std" for m, r in ratios.items()),
                run.absent(TOP_HEAVY, ["sampled"]),
            ),
        )
    ]


def _corrections_are_closer(run: _Run) -> list[Claim]:
    statement = (
        "Every correction is closer to the exact value than the "
        "uncorrected metric (Recall, NDCG, AP; means over repetitions)"
    )
    if not run.methods:
        reason = "no correction in this run (estimation.estimators)"
        return [_not_applicable("6.3", statement, reason)]
    closer, total, misses = 0, 0, []
    metrics = run.metrics_with(TOP_HEAVY, "exact", "sampled")
    for m in metrics:
        exact, sampled = run.known(m, "exact"), run.known(m, "sampled")
        for method in run.methods:
            corrected = run.values(m, method)
            if corrected is None:
                continue
            for rec in run.recommenders:
                ok = abs(corrected[rec] - exact[rec]) < abs(sampled[rec] - exact[rec])
                closer, total = closer + ok, total + 1
                if not ok:
                    misses.append(f"{method} {m} {rec}")
    absent = run.absent(TOP_HEAVY, ["exact", "sampled"])
    if total == 0:
        return [_not_applicable("6.3", statement, absent)]
    return [
        Claim(
            "6.3",
            statement,
            closer == total,
            _partly(
                f"{closer} of {total} closer"
                + (f"; not closer: {', '.join(misses)}" if misses else ""),
                absent,
            ),
        )
    ]


def _low_bias_orders(run: _Run) -> list[Claim]:
    x, y, z = run.recommenders
    metrics = run.metrics_with(TOP_HEAVY, "exact")
    claims = []
    for statement, candidates, holds in (
        (
            f"Every correction ranks {z} best on Recall, NDCG and AP",
            tuple(run.methods),
            lambda v: _order(v).startswith(z),
        ),
        (
            f"BV with low gamma also orders {x} below {y} (in expectation)",
            ("bv_0.01", "bv_0.001"),
            lambda v: v[x] < v[y],
        ),
    ):
        checks = {
            f"{method} {m}": holds(values)
            for method in candidates
            for m in metrics
            if (values := run.values(m, method)) is not None
        }
        absent = run.absent(TOP_HEAVY, candidates)
        if not candidates:
            absent = "no correction of this kind in this run (estimation.estimators)"
        claims.append(
            Claim("6.3", statement, all(checks.values()), _partly(_yes_no(checks), absent))
            if checks
            else _not_applicable("6.3", statement, absent)
        )
    return claims


def _sample_size_thresholds(run: _Run) -> list[Claim]:
    x, y, _ = run.recommenders
    a, b = run.fig6_pair
    metric = metric_label(run.fig6_metric)
    comparable = run.fig6_metric.strip().lower() == FIGURE6_METRIC and {a, b} == {x, y}
    rows = run.thresholds
    if "pair" in rows.columns:  # the pair order_thresholds names a<b
        rows = rows[rows["pair"] == f"{a}<{b}"]
    claims = []
    for method, target in run.paper_thresholds.items():
        statement = (
            f"{method_label(method)} {metric} needs about m = {target:g} to order {a} and {b} "
            "(within a factor of 2)"
        )
        row = rows[rows["method"] == method]
        if not comparable:
            claims.append(
                _not_applicable(
                    "6.3 / Fig 6",
                    statement,
                    f"the paper's m is for {metric_label(FIGURE6_METRIC)} of {x} and {y}, "
                    f"not {metric} of {a} and {b} (fig6.metric, fig6.pair)",
                )
            )
        elif row.empty:
            claims.append(
                _not_applicable(
                    "6.3 / Fig 6",
                    statement,
                    f"no Figure 6 threshold of {method} for {a} and {b} (fig6.estimators)",
                )
            )
        else:
            value = row["stays_right_from_m"].iloc[0]
            claims.append(
                Claim(
                    "6.3 / Fig 6",
                    statement,
                    _within_factor(value, target),
                    f"right from m = {value:g} on the grid"
                    if pd.notna(value)
                    else "never right on the grid",
                )
            )
    return claims


def _table4_orderings(run: _Run) -> list[Claim]:
    table4 = run.table4
    methods = set(table4["method"])

    def absent(*wanted: str) -> str:
        missing = [w for w in wanted if w not in methods]
        label = f"method{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
        return f"not in Table 4: {label}" if missing else "Table 4 has no comparison to check"

    statement = "The rank estimate orders every pair at least as often as the uncorrected metric"
    t4 = table4.pivot_table(index=["pair", "metric"], columns="method", values="correct")
    both = t4.reindex(columns=["rank_estimate", "sampled"]).dropna()
    if both.empty:
        first = _not_applicable("6.3 / Table 4", statement, absent("rank_estimate", "sampled"))
    else:
        first = Claim(
            "6.3 / Table 4",
            statement,
            bool((both["rank_estimate"] >= both["sampled"]).all()),
            f"rank estimate {int(both['rank_estimate'].sum())} vs uncorrected "
            f"{int(both['sampled'].sum())} correct orderings in total",
        )
    statement = (
        "BV 0.1 orders all but at most one comparison correctly in more than 90% of repetitions"
    )
    bv = table4[table4["method"] == "bv_0.1"]
    if bv.empty:
        second = _not_applicable("6.3 / Table 4", statement, absent("bv_0.1"))
    else:
        share = bv["correct"] / bv["repetitions"]
        second = Claim(
            "6.3 / Table 4",
            statement,
            int((share <= 0.9).sum()) <= 1,
            f"{int((share > 0.9).sum())} of {len(bv)} comparisons above 90%",
        )
    return [first, second]


# The checks, in the order of the report.
_CHECKS = (
    _exact_orders,
    _sampled_recall_reverses,
    _worst_looks_best,
    _sampled_auc_keeps_order,
    _sampled_keeps_the_better_two,
    _sampled_gaps_are_not_variance,
    _corrections_are_closer,
    _low_bias_orders,
    _sample_size_thresholds,
    _table4_orderings,
)


def check_claims(
    table3: pd.DataFrame,
    table4: pd.DataFrame,
    thresholds: pd.DataFrame,
    paper_thresholds: dict,
    recommenders: Sequence[str] = tuple(PAPER_RECOMMENDERS),
    *,
    fig6_metric: str = FIGURE6_METRIC,
    fig6_pair: Sequence[str] | None = None,
) -> list[Claim]:
    """Every claim of section 6, each PASS, FAIL or N/A (see :class:`Claim`).

    Parameters
    ----------
    table3 : pandas.DataFrame
        Columns recommender, metric, method, mean (percent).
    table4 : pandas.DataFrame
        Columns pair, metric, method, correct, repetitions.
    thresholds : pandas.DataFrame
        The Figure 6 thresholds: columns method, stays_right_from_m and
        optionally pair ("a<b", as :func:`~sampled_metrics.reproduction.curves.order_thresholds`
        writes it; only the rows of ``fig6_pair`` are used).
    paper_thresholds : dict
        The m the paper's text gives per method ({"sampled": 1000, "bv_0.1": 60},
        from ``sampled_metrics.reproduction.paper.published("figure6")``).
    recommenders : tuple of str
        The paper's X, Y and Z, in that order.
    fig6_metric : str
        The metric of the run's Figure 6 (config ``fig6.metric``).
    fig6_pair : tuple of str, optional
        The pair of the run's Figure 6 (config ``fig6.pair``); default X and Y.
        The paper's thresholds are compared only for Recall@10 of X and Y: for
        another metric or pair the Figure 6 claims are N/A.

    Returns
    -------
    list of Claim
        The same claims, in the same order, whatever the run has.
    """
    recommenders = tuple(recommenders)
    run = _Run(
        table3=table3,
        table4=table4,
        thresholds=thresholds,
        paper_thresholds=paper_thresholds,
        recommenders=recommenders,
        fig6_metric=fig6_metric,
        fig6_pair=tuple(fig6_pair) if fig6_pair is not None else recommenders[:2],
        methods=[m for m in dict.fromkeys(table3["method"]) if m not in ("exact", "sampled")],
    )
    return [claim for check in _CHECKS for claim in check(run)]
