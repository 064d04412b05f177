"""The paper's conclusions of section 6, checked against reproduced numbers.

Each check returns a ``Claim``: what the paper says, PASS or FAIL, and the
numbers behind the verdict. Every verdict comes from the reproduced Table 3,
Table 4 and Figure 6 thresholds; the only published numbers used are the sample
sizes the text gives for Figure 6, passed in by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import pandas as pd

from .recommenders import PAPER_RECOMMENDERS

TOP_HEAVY = ("recall@10", "ndcg@10", "ap")


@dataclass(frozen=True)
class Claim:
    section: str
    statement: str
    passed: bool
    evidence: str


def _means(table3: pd.DataFrame, metric: str, method: str) -> dict[str, float]:
    rows = table3[(table3["metric"] == metric) & (table3["method"] == method)]
    return dict(zip(rows["recommender"], rows["mean"]))


def _order(values: dict[str, float]) -> str:
    return " > ".join(sorted(values, key=values.get, reverse=True))


def _fmt(values: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in values.items())


def _within_factor(value, target: float, factor: float = 2.0) -> bool:
    return bool(pd.notna(value) and target / factor <= value <= target * factor)


@dataclass(frozen=True)
class _Run:
    """The reproduced numbers the claims are checked on (see :func:`check_claims`)."""

    table3: pd.DataFrame
    table4: pd.DataFrame
    thresholds: pd.DataFrame
    paper_thresholds: dict
    recommenders: tuple
    metrics: list  # the top-heavy metrics of the run
    methods: list  # the corrections of the run
    exact: dict  # metric -> {recommender: exact value}
    sampled: dict  # metric -> {recommender: mean uncorrected sampled value}


def _exact_orders(run: _Run) -> list[Claim]:
    x, y, z = run.recommenders
    orders = {m: _order(run.exact[m]) for m in run.metrics}
    return [
        Claim(
            "6.2",
            f"On the exact metric, {z} > {y} > {x} for Recall, NDCG and AP",
            all(o == f"{z} > {y} > {x}" for o in orders.values()),
            "; ".join(f"{m}: {_fmt(run.exact[m])}" for m in run.metrics),
        ),
        Claim(
            "6.2",
            f"On the exact AUC, {x} > {y} > {z}",
            _order(run.exact["auc"]) == f"{x} > {y} > {z}",
            _fmt(run.exact["auc"]),
        ),
    ]


def _sampled_recall_reverses(run: _Run) -> list[Claim]:
    x, y, _ = run.recommenders
    r = "recall@10"
    if r not in run.metrics:
        return []
    exact, sampled = run.exact[r], run.sampled[r]
    return [
        Claim(
            "6.2",
            f"Sampled Recall@10 reverses the exact order of {x} and {y}",
            (exact[x] < exact[y]) and (sampled[x] > sampled[y]),
            f"exact {_fmt({k: exact[k] for k in (x, y)})}; "
            f"sampled {_fmt({k: sampled[k] for k in (x, y)})}",
        )
    ]


def _worst_looks_best(run: _Run) -> list[Claim]:
    x = run.recommenders[0]
    worst_best = [
        m
        for m in run.metrics
        if min(run.exact[m], key=run.exact[m].get) == x
        and max(run.sampled[m], key=run.sampled[m].get) == x
    ]
    return [
        Claim(
            "6.2",
            f"The worst recommender on the exact metric ({x}) looks best on "
            "every sampled top-heavy metric",
            len(worst_best) == len(run.metrics),
            "; ".join(f"sampled {m}: {_fmt(run.sampled[m])}" for m in run.metrics),
        )
    ]


def _sampled_auc_keeps_order(run: _Run) -> list[Claim]:
    exact, sampled = run.exact["auc"], run.sampled["auc"]
    kept = all(
        (exact[a] - exact[b]) * (sampled[a] - sampled[b]) > 0
        for a, b in combinations(run.recommenders, 2)
    )
    return [
        Claim(
            "6.2",
            "Sampled AUC keeps the exact order of every pair",
            kept,
            f"exact {_fmt(exact)}; sampled {_fmt(sampled)}",
        )
    ]


def _corrections_are_closer(run: _Run) -> list[Claim]:
    closer, misses = 0, []
    for m in run.metrics:
        for method in run.methods:
            corrected = _means(run.table3, m, method)
            for rec in run.recommenders:
                exact = run.exact[m][rec]
                ok = abs(corrected[rec] - exact) < abs(run.sampled[m][rec] - exact)
                closer += ok
                if not ok:
                    misses.append(f"{method} {m} {rec}")
    total = len(run.metrics) * len(run.methods) * len(run.recommenders)
    return [
        Claim(
            "6.3",
            "Every correction is closer to the exact value than the "
            "uncorrected metric (Recall, NDCG, AP; means over repetitions)",
            closer == total,
            f"{closer} of {total} closer"
            + (f"; not closer: {', '.join(misses)}" if misses else ""),
        )
    ]


def _low_bias_orders(run: _Run) -> list[Claim]:
    x, y, z = run.recommenders
    low_bias = [m for m in ("cls", "bv_0.01", "bv_0.001") if m in run.methods]
    z_best = {
        f"{method} {m}": _order(_means(run.table3, m, method)).startswith(z)
        for method in low_bias
        for m in run.metrics
    }
    low_gamma = [m for m in ("bv_0.01", "bv_0.001") if m in run.methods]
    xy = {
        f"{method} {m}": _means(run.table3, m, method)[x] < _means(run.table3, m, method)[y]
        for method in low_gamma
        for m in run.metrics
    }
    return [
        Claim(
            "6.3",
            f"CLS and low-gamma BV rank {z} best on Recall, NDCG and AP",
            all(z_best.values()),
            ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in z_best.items()),
        ),
        Claim(
            "6.3",
            f"BV with low gamma also orders {x} below {y} (in expectation)",
            all(xy.values()),
            ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in xy.items()),
        ),
    ]


def _sample_size_thresholds(run: _Run) -> list[Claim]:
    x, y, _ = run.recommenders
    claims = []
    for method, target in run.paper_thresholds.items():
        row = run.thresholds[run.thresholds["method"] == method]
        value = row["stays_right_from_m"].iloc[0] if len(row) else float("nan")
        claims.append(
            Claim(
                "6.3 / Fig 6",
                f"{'Uncorrected' if method == 'sampled' else 'BV 0.1'} "
                f"Recall@10 needs about m = {target:g} to order {x} and {y} "
                "(within a factor of 2)",
                _within_factor(value, target),
                f"right from m = {value:g} on the grid"
                if pd.notna(value)
                else "never right on the grid",
            )
        )
    return claims


def _table4_orderings(run: _Run) -> list[Claim]:
    table4, claims = run.table4, []
    if {"rank_estimate", "sampled"} <= set(table4["method"]):
        t4 = table4.pivot_table(index=["pair", "metric"], columns="method", values="correct")
        claims.append(
            Claim(
                "6.3 / Table 4",
                "The rank estimate orders every pair at least as often as the uncorrected metric",
                bool((t4["rank_estimate"] >= t4["sampled"]).all()),
                f"rank estimate {int(t4['rank_estimate'].sum())} vs uncorrected "
                f"{int(t4['sampled'].sum())} correct orderings in total",
            )
        )
    if "bv_0.1" in set(table4["method"]):
        bv = table4[table4["method"] == "bv_0.1"]
        share = bv["correct"] / bv["repetitions"]
        claims.append(
            Claim(
                "6.3 / Table 4",
                "BV 0.1 orders all but at most one comparison "
                "correctly in more than 90% of repetitions",
                int((share <= 0.9).sum()) <= 1,
                f"{int((share > 0.9).sum())} of {len(bv)} comparisons above 90%",
            )
        )
    return claims


# The checks, in the order of the report.
_CHECKS = (
    _exact_orders,
    _sampled_recall_reverses,
    _worst_looks_best,
    _sampled_auc_keeps_order,
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
    recommenders=tuple(PAPER_RECOMMENDERS),
) -> list[Claim]:
    """All checks; table3 has recommender, metric, method, mean (percent);
    table4 pair, metric, method, correct, repetitions; thresholds (Figure 6)
    method, stays_right_from_m; ``paper_thresholds`` the m the paper's text
    gives per method ({"sampled": 1000, "bv_0.1": 60}, from
    ``sampled_metrics.paper.published("figure6")``)."""
    metrics = [m for m in TOP_HEAVY if m in set(table3["metric"])]
    run = _Run(
        table3=table3,
        table4=table4,
        thresholds=thresholds,
        paper_thresholds=paper_thresholds,
        recommenders=tuple(recommenders),
        metrics=metrics,
        methods=[m for m in dict.fromkeys(table3["method"]) if m not in ("exact", "sampled")],
        exact={m: _means(table3, m, "exact") for m in [*metrics, "auc"]},
        sampled={m: _means(table3, m, "sampled") for m in [*metrics, "auc"]},
    )
    return [claim for check in _CHECKS for claim in check(run)]


def paper_trio(recommenders) -> tuple[str, str, str] | None:
    """The recommenders the paper's claims are about: X, Y and Z when the run
    has all three (other recommenders may run beside them), else None."""
    trio = tuple(PAPER_RECOMMENDERS)
    return trio if set(trio) <= set(recommenders) else None


def crosscheck_claim(check: pd.DataFrame, z_limit: float = 4.0) -> Claim:
    """Real sampling against the law of section 4.3: the mean over repetitions
    of every (recommender, metric, method) lies within ``z_limit`` standard
    errors of the analytic expectation (``check`` from
    ``evaluation.sampling_crosscheck``)."""
    z = check["z"].abs()
    worst = check.loc[z.idxmax()]
    return Claim(
        "4.3",
        "The mean of the sampling repetitions equals the law's expectation "
        f"(every cell within {z_limit:g} standard errors)",
        bool((z <= z_limit).all()),
        f"{len(check)} cells; largest |z| = {z.max():.2f} ({worst['recommender']}, "
        f"{worst['metric']}, {worst['method']}); {int((z > 3).sum())} beyond 3",
    )


def claims_markdown(claims: list[Claim], title: str) -> str:
    """The claims report: one row per claim with its verdict and numbers."""
    passed = sum(c.passed for c in claims)
    lines = [
        f"# {title}",
        "",
        f"{passed} of {len(claims)} claims of the paper hold on the reproduced numbers.",
        "",
        "| section | claim | verdict | evidence |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {c.section} | {c.statement} | {'PASS' if c.passed else 'FAIL'} | {c.evidence} |"
        for c in claims
    ]
    return "\n".join(lines) + "\n"
