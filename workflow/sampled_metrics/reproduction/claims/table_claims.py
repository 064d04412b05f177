"""The paper's conclusions of section 6, checked against reproduced numbers.

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

from collections import Counter
from dataclasses import dataclass
from itertools import combinations

import pandas as pd

from ..outputs.labels import method_label, metric_label
from ..recommenders import PAPER_RECOMMENDERS

TOP_HEAVY = ("recall@10", "ndcg@10", "ap")
# The metric of the paper's Figure 6, whose thresholds in m the text gives (for X and Y).
FIGURE6_METRIC = "recall@10"
# How many standard deviations of the repetitions make a gap "not variance" (section 6.2).
LOW_STD_FACTOR = 5.0
# The three verdicts, in the order the report counts them.
VERDICTS = ("PASS", "FAIL", "N/A")


@dataclass(frozen=True)
class Claim:
    """One claim of the paper and its verdict on the reproduced numbers.

    ``passed`` is True (PASS), False (FAIL) or None (N/A: the run has no numbers
    to check the claim on; ``evidence`` says why).

    Examples
    --------
    >>> Claim("6.2", "On the exact AUC, X > Y > Z", None, "not in this run: metric auc").verdict
    'N/A'
    >>> Claim("6.2", "On the exact AUC, X > Y > Z", True, "X 89.22, Y 85.48, Z 74.31").verdict
    'PASS'
    """

    section: str
    statement: str
    passed: bool | None
    evidence: str

    @property
    def verdict(self) -> str:
        """ "PASS", "FAIL" or "N/A"."""
        return "N/A" if self.passed is None else "PASS" if self.passed else "FAIL"


def _means(table3: pd.DataFrame, metric: str, method: str) -> dict[str, float]:
    rows = table3[(table3["metric"] == metric) & (table3["method"] == method)]
    return dict(zip(rows["recommender"], rows["mean"]))


def _order(values: dict[str, float]) -> str:
    return " > ".join(sorted(values, key=values.get, reverse=True))


def _fmt(values: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in values.items())


def _yes_no(checks: dict[str, bool]) -> str:
    return ", ".join(f"{k}: {'yes' if v else 'no'}" for k, v in checks.items())


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
    fig6_metric: str
    fig6_pair: tuple
    methods: list  # the corrections of the run

    def values(self, metric: str, method: str) -> dict[str, float] | None:
        """The mean of every recommender of the claims, in their order; None
        unless Table 3 has one for each."""
        means = _means(self.table3, metric, method)
        if not set(self.recommenders) <= set(means):
            return None
        return {rec: means[rec] for rec in self.recommenders}

    def metrics_with(self, metrics, *methods: str) -> list[str]:
        """The ``metrics`` with values of every one of ``methods`` for every recommender."""
        return [m for m in metrics if all(self.values(m, k) is not None for k in methods)]

    def absent(self, metrics=(), methods=()) -> str:
        """What of ``metrics``, ``methods`` and the recommenders Table 3 lacks ("" if nothing)."""
        parts = []
        for kind, wanted in (
            ("metric", metrics),
            ("method", methods),
            ("recommender", self.recommenders),
        ):
            missing = [w for w in wanted if w not in set(self.table3[kind])]
            if missing:
                parts.append(f"{kind}{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        return "not in this run: " + "; ".join(parts) if parts else ""


def _not_applicable(section: str, statement: str, reason: str) -> Claim:
    return Claim(section, statement, None, reason or "Table 3 has no values to check it on")


def _partly(evidence: str, absent: str) -> str:
    """The evidence, and what part of the claim the run could not check."""
    return f"{evidence}; {absent}" if absent else evidence


def _exact_orders(run: _Run) -> list[Claim]:
    x, y, z = run.recommenders
    top = f"On the exact metric, {z} > {y} > {x} for Recall, NDCG and AP"
    metrics = run.metrics_with(TOP_HEAVY, "exact")
    if metrics:
        exact = {m: run.values(m, "exact") for m in metrics}
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
    exact, sampled = run.values(r, "exact"), run.values(r, "sampled")
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
    exact = {m: run.values(m, "exact") for m in metrics}
    sampled = {m: run.values(m, "sampled") for m in metrics}
    worst_best = [
        m
        for m in metrics
        if min(exact[m], key=exact[m].get) == x and max(sampled[m], key=sampled[m].get) == x
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
    exact, sampled = run.values("auc", "exact"), run.values("auc", "sampled")
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
        exact, sampled = run.values(m, "exact"), run.values(m, "sampled")
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
        sampled = run.values(m, "sampled")
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
        reason = "no correction in this run (corrections.methods)"
        return [_not_applicable("6.3", statement, reason)]
    closer, total, misses = 0, 0, []
    metrics = run.metrics_with(TOP_HEAVY, "exact", "sampled")
    for m in metrics:
        exact, sampled = run.values(m, "exact"), run.values(m, "sampled")
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
            absent = "no correction of this kind in this run (corrections.methods)"
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
                    f"no Figure 6 threshold of {method} for {a} and {b} (fig6.methods)",
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
    recommenders=tuple(PAPER_RECOMMENDERS),
    *,
    fig6_metric: str = FIGURE6_METRIC,
    fig6_pair=None,
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
        optionally pair ("a<b", as :func:`~sampled_metrics.reproduction.evaluation.order_thresholds`
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


def paper_trio(recommenders) -> tuple[str, str, str] | None:
    """The recommenders the paper's claims are about: X, Y and Z when the run
    has all three (other recommenders may run beside them), else None."""
    trio = tuple(PAPER_RECOMMENDERS)
    return trio if set(trio) <= set(recommenders) else None


def rank_distribution_claims(distribution: pd.DataFrame, paper: dict, recommenders) -> list[Claim]:
    """The claims of section 6.1 on Figure 5, from its rank-distribution facts.

    Parameters
    ----------
    distribution : pandas.DataFrame
        ``fig5_rank_distribution.csv``: per recommender, users with the held-out
        item in the top 10, the top 100, the bottom half and the last bucket,
        under the pipeline's tie policy and (columns ``pessimistic_*``) with
        every tie ranked above the held-out item.
    paper : dict
        The numbers of the text: {"top_100": 2310, "bottom_half_below": 300,
        "worst_bucket_above": 1600} (``published("figure5")``).
    recommenders : tuple of str
        X, Y and Z.

    Returns
    -------
    list of Claim
        Three claims; N/A when a recommender or a column is missing.

    Examples
    --------
    >>> facts = pd.DataFrame({"recommender": ["X", "Y", "Z"], "top_10": [454, 523, 575],
    ...     "top_100": [2316, 2093, 2242], "bottom_half": [214, 381, 1451],
    ...     "last_bucket": [1, 1, 22], "pessimistic_last_bucket": [1, 1, 1569]})
    >>> paper = {"top_100": 2310, "bottom_half_below": 300, "worst_bucket_above": 1600}
    >>> [c.verdict for c in rank_distribution_claims(facts, paper, ("X", "Y", "Z"))]
    ['PASS', 'PASS', 'FAIL']
    """
    x, y, z = recommenders
    facts = distribution.set_index("recommender")
    top, bottom = paper["top_100"], paper["bottom_half_below"]
    worst = paper["worst_bucket_above"]
    statements = (
        f"{x} puts about {top:g} held-out items in the top 100 (within 10%) "
        f"and fewer than {bottom:g} in the bottom half",
        f"{z} is best in the top 10; {y} is better than {x} in the top 10 but worse overall "
        "(more items in the bottom half)",
        f"{z} puts over {worst:g} users in the worst bucket of Figure 5 (under either tie rule)",
    )
    needed = {"top_10", "top_100", "bottom_half", "last_bucket"}
    if not set(recommenders) <= set(facts.index) or not needed <= set(facts.columns):
        reason = "Figure 5's rank distribution lacks X, Y or Z or a column"
        return [_not_applicable("6.1 / Fig 5", s, reason) for s in statements]
    n = facts["top_10"].to_dict(), facts["bottom_half"].to_dict()
    buckets = {"random ties (the pipeline's)": int(facts.loc[z, "last_bucket"])}
    if "pessimistic_last_bucket" in facts.columns:
        buckets["pessimistic ties"] = int(facts.loc[z, "pessimistic_last_bucket"])
    return [
        Claim(
            "6.1 / Fig 5",
            statements[0],
            abs(facts.loc[x, "top_100"] - top) <= 0.1 * top
            and facts.loc[x, "bottom_half"] < bottom,
            f"top 100: {facts.loc[x, 'top_100']}, bottom half: {facts.loc[x, 'bottom_half']}",
        ),
        Claim(
            "6.1 / Fig 5",
            statements[1],
            n[0][z] > n[0][y] > n[0][x] and n[1][y] > n[1][x],
            "top 10: "
            + ", ".join(f"{k} {n[0][k]}" for k in recommenders)
            + "; bottom half: "
            + ", ".join(f"{k} {n[1][k]}" for k in recommenders),
        ),
        Claim(
            "6.1 / Fig 5",
            statements[2],
            max(buckets.values()) > worst,
            "; ".join(f"{count} with {rule}" for rule, count in buckets.items()),
        ),
    ]


def crosscheck_claim(check: pd.DataFrame, z_limit: float = 4.0) -> Claim:
    """Real sampling against the law of section 4.3: the mean over repetitions
    of every (recommender, metric, method) lies within ``z_limit`` standard
    errors of the analytic expectation (``check`` from
    ``evaluation.sampling_crosscheck``); N/A when ``check`` has no cell."""
    statement = (
        "The mean of the sampling repetitions equals the law's expectation "
        f"(every cell within {z_limit:g} standard errors)"
    )
    z = check["z"].abs()
    if z.dropna().empty:
        return _not_applicable("4.3", statement, "the cross-check has no cell")
    worst = check.loc[z.idxmax()]
    return Claim(
        "4.3",
        statement,
        bool((z <= z_limit).all()),
        f"{len(check)} cells; largest |z| = {z.max():.2f} ({worst['recommender']}, "
        f"{worst['metric']}, {worst['method']}); {int((z > 3).sum())} beyond 3",
    )


def claims_summary(claims: list[Claim]) -> str:
    """The report's count of the verdicts.

    Examples
    --------
    >>> print(claims_summary([Claim("6.2", "a", True, ""), Claim("6.2", "b", False, ""),
    ...                       Claim("6.2", "c", None, "not in this run: metric auc")]))
    1 of 3 claims of the paper hold on the reproduced numbers, 1 fails, 1 not applicable
    (N/A: the run has no numbers to check the claim on).
    """
    counts = Counter(c.verdict for c in claims)
    failed = counts["FAIL"]
    return (
        f"{counts['PASS']} of {len(claims)} claims of the paper hold on the reproduced numbers, "
        f"{failed} {'fails' if failed == 1 else 'fail'}, {counts['N/A']} not applicable "
        "(N/A: the run has no numbers to check the claim on)."
    )


def claims_markdown(claims: list[Claim], title: str) -> str:
    """The claims report: the count of each verdict, then one row per claim
    with its verdict (PASS, FAIL or N/A) and its numbers or the reason it is N/A."""
    lines = [
        f"# {title}",
        "",
        claims_summary(claims),
        "",
        "| section | claim | verdict | evidence |",
        "|---|---|---|---|",
    ]
    lines += [f"| {c.section} | {c.statement} | {c.verdict} | {c.evidence} |" for c in claims]
    return "\n".join(lines) + "\n"
