"""The protocol study's report, protocols.md: the protocols, each estimator's RMSE,
the pairs of recommenders ordered right, each recommender's bias, and for popularity
sampling the error against the metric of the popularity-weighted rank; and the protocols
left out because the data set cannot support them, with why.
"""

from __future__ import annotations

import pandas as pd

from ...frameworks.registry import FRAMEWORK_PROTOCOLS
from ...outputs.tables import format_mean_std, markdown_table

__all__ = ["LEFT_OUT_COLUMNS", "left_out_lines", "protocols_markdown"]

# The columns of protocols_left_out.csv after dataset: a protocol of protocols.run the
# data set cannot support, its draws, the data set's smallest pool and why
# (studies.protocols.files.left_out_reason).
LEFT_OUT_COLUMNS = ["protocol", "m", "replacement", "smallest_pool", "reason"]


def left_out_lines(left_out: pd.DataFrame) -> list:
    """One line per left-out protocol: its name, its draws, why (naming the smallest pool).

    Parameters
    ----------
    left_out : pandas.DataFrame
        :data:`LEFT_OUT_COLUMNS`.

    Returns
    -------
    list of str

    Examples
    --------
    >>> left_out_lines(pd.DataFrame([["elliot", 100, False, 60, "draws 100 distinct items "
    ...     "per user, more than the smallest candidate pool, 60 items"]],
    ...     columns=LEFT_OUT_COLUMNS))
    ['elliot (m = 100, distinct): draws 100 distinct items per user, more than the smallest candidate pool, 60 items']
    """  # noqa: E501
    return [
        f"{row.protocol} (m = {row.m}, {'with replacement' if row.replacement else 'distinct'})"
        f": {row.reason}"
        for row in left_out.itertuples(index=False)
    ]


def protocols_markdown(
    errors: pd.DataFrame,
    summary: pd.DataFrame,
    dataset: str,
    reps: int,
    left_out: pd.DataFrame | None = None,
) -> str:
    """protocols.md: the protocols, then per protocol and estimator the RMSE (mean over
    the recommenders), the pairs ordered right, each recommender's bias, and for
    popularity sampling the error against the metric of R^pi, each number with its
    standard error over the repetitions (``precision``); first, the protocols left out
    (the data set cannot support them) with why, when there are any.

    Parameters
    ----------
    errors : pandas.DataFrame
        :func:`protocol_table` of ``evaluation.estimator_errors`` with protocol, target
        and ``precision.error_precision``'s bias_se.
    summary : pandas.DataFrame
        :func:`protocol_table` of ``precision.mean_rmse`` (rmse, rmse_se) and, for the
        target "rank", ``precision.pair_share`` (share, share_se), with protocol, target.
    dataset : str
    reps : int
        Repetitions of each protocol.
    left_out : pandas.DataFrame, optional
        The protocols left out (:data:`LEFT_OUT_COLUMNS`); none when None or empty.

    Returns
    -------
    str

    Examples
    --------
    >>> errors = pd.DataFrame({"dataset": "d", "protocol": "ncf", "target": "rank",
    ...     "recommender": "X", "metric": "ap", "method": ["sampled", "cls"],
    ...     "exact": 4.0, "mean": [30.0, 4.2], "bias": [26.0, 0.2], "std": 0.1,
    ...     "rmse": [26.0, 0.25], "bias_se": 0.01, "rmse_se": 0.01})
    >>> summary = pd.DataFrame({"dataset": "d", "protocol": "ncf", "target": "rank",
    ...     "metric": "ap", "method": ["sampled", "cls"], "rmse": [26.0, 0.25],
    ...     "rmse_se": 0.01, "share": [60.0, 95.0], "share_se": [4.9, 2.2]})
    >>> text = protocols_markdown(errors, summary, "d", 100)
    >>> [line for line in text.splitlines() if line.startswith("| ncf")][-2:]
    ['| ncf      | sampled | 26.000 ± 0.010 |', '| ncf      | cls     |  0.200 ± 0.010 |']
    >>> left_out = pd.DataFrame([["elliot", 100, False, 60, "draws 100 distinct items per "
    ...     "user, more than the smallest candidate pool, 60 items"]], columns=LEFT_OUT_COLUMNS)
    >>> text = protocols_markdown(errors.iloc[:0], summary.iloc[:0], "d", 100, left_out)
    >>> [line for line in text.splitlines() if line.startswith(("No ", "- "))]  # doctest: +ELLIPSIS
    ['No protocol of protocols.run could be simulated on d: every one is left out.', '- elliot (m = 100, distinct): draws 100 ... pool, 60 items']
    """  # noqa: E501
    skipped = _left_out_section(left_out, dataset)
    if errors.empty:
        return "\n".join([
            f"# Sampling protocols of common frameworks on {dataset}", "",
            f"No protocol of protocols.run could be simulated on {dataset}: every one is left "
            "out.", "", *skipped]) + "\n"  # fmt: skip
    metrics = list(dict.fromkeys(errors["metric"]))
    rank = errors[errors["target"] == "rank"]
    used = list(dict.fromkeys(errors["protocol"]))
    described = pd.DataFrame(
        [
            {
                "protocol": p.name,
                "m": p.m,
                "alpha": p.alpha,
                "draws": "with replacement" if p.replacement else "distinct",
                "an item drawn twice": ("ranked once" if p.collapse else "ranked twice")
                if p.replacement
                else "-",
                "pool": _POOLS[p.target_in_pool, p.history_in_pool],
                "recommenders": "same draws" if p.paired else "own draws",
                "ties": _TIES[p.ties],
                "law of the estimators": p.law,
            }
            for p in (FRAMEWORK_PROTOCOLS[name] for name in used)
        ]
    )

    def by_metric(frame, value, how="first") -> pd.DataFrame:
        wide = frame.pivot_table(
            index=["protocol", "method"], columns="metric", values=value, aggfunc=how, sort=False
        )
        return wide[metrics].reset_index()

    def with_se(frame, value, digits) -> pd.DataFrame:
        """``value ± value_se`` cells."""
        cells = [format_mean_std(a, b, digits) for a, b in zip(frame[value], frame[f"{value}_se"])]
        return frame.assign(**{value: cells})

    means = summary[summary["target"] == "rank"]
    lines = [
        f"# Sampling protocols of common frameworks on {dataset}",
        "",
        f"Each protocol simulated {reps} times on every recommender's real scores as the",
        "framework's code does it: the same sampled items for all recommenders or each its",
        "own draws (RecBole, DaisyRec redraw per model), ties in the framework's order",
        "(held-out item last: NCF; lower index first: Elliot; unspecified: the pipeline's",
        "tie policy); each estimator applied with the law the protocol implies and each",
        "user's own n (docs/popularity.md). Percent points. alpha: draws proportional to",
        "count ** alpha; unseen: the items without a training interaction, held-out item",
        "excluded. hansen_hurwitz (protocols with replacement): the mean of M(r^), r^ the",
        "Hansen-Hurwitz estimate of the rank. Each number ± its standard error over the",
        "repetitions (means over recommenders: each repetition's mean).",
        "",
        markdown_table(described, digits={"alpha": 0}),
        *skipped,
        "",
        "## RMSE against the exact metric, mean over the recommenders",
        "",
        markdown_table(by_metric(with_se(means, "rmse", 3), "rmse"), digits=3),
        "",
        f"## Pairs of recommenders ordered as the exact metric orders them (% of {reps} "
        "repetitions x pairs)",
        "",
        markdown_table(by_metric(with_se(means, "share", 1), "share"), digits=1),
    ]
    for metric in metrics:
        bias = with_se(rank[rank["metric"] == metric], "bias", 3).pivot_table(
            index=["protocol", "method"],
            columns="recommender",
            values="bias",
            aggfunc="first",
            sort=False,
        )
        order = list(dict.fromkeys(rank["recommender"]))
        lines += ["", f"## Bias of {metric} for each recommender", "", markdown_table(
            bias[order].reset_index(), digits=3)]  # fmt: skip
    weighted = errors[errors["target"] == "weighted_rank"]
    weighted_means = summary[summary["target"] == "weighted_rank"]
    if not weighted.empty:
        gap = weighted.merge(
            rank[["protocol", "recommender", "metric", "method", "exact"]],
            on=["protocol", "recommender", "metric", "method"],
            suffixes=("", "_rank"),
        )
        gap["R^pi - exact"] = gap["exact"] - gap["exact_rank"]
        # a difference of exact values: no standard error
        distance = by_metric(gap[gap["method"] == gap["method"].iloc[0]], "R^pi - exact", "mean")
        distance[metrics] = distance[metrics].map(lambda x: format_mean_std(x, float("nan"), 3))
        lines += [
            "",
            "## Popularity sampling: RMSE against the metric of the popularity-weighted rank",
            "",
            "The corrections estimate the metric of R^pi = 1 + (n - 1) q (q the popularity",
            "mass of the items ranked above the held-out item), not the exact metric; the first",
            "row of each protocol is how far apart the two are (mean over the recommenders).",
            "hansen_hurwitz estimates the rank itself and is left out here.",
            "",
            markdown_table(
                pd.concat(
                    [
                        distance.assign(method="metric(R^pi) - exact"),
                        by_metric(with_se(weighted_means, "rmse", 3), "rmse"),
                    ]
                ).sort_values("protocol", key=lambda p: p.map(used.index), kind="stable"),
                digits=3,
            ),
        ]
    return "\n".join(lines) + "\n"


# (target_in_pool, history_in_pool) -> the pool's name; Protocol.ties -> its label
_POOLS = {(False, False): "unseen", (True, False): "unseen + held-out",
          (False, True): "all but held-out", (True, True): "all"}  # fmt: skip
_TIES = {"pessimistic": "held-out last", "index": "lower index first",
         "random": "unspecified"}  # fmt: skip


def _left_out_section(left_out, dataset: str) -> list:
    """The lines of protocols.md naming the left-out protocols (none: no lines)."""
    if left_out is None or left_out.empty:
        return []
    return [  # after a table, which ends its own line
        f"## Left out on {dataset}",
        "",
        f"{dataset} cannot support these protocols of protocols.run: they were not simulated",
        'and have no numbers here (docs/popularity.md, "Small data sets").',
        "",
        *(f"- {line}" for line in left_out_lines(left_out)),
    ]
