"""The protocol study's report, protocols.md: the protocols, each estimator's RMSE,
the pairs of recommenders ordered right, each recommender's bias, and for popularity
sampling the error against the metric of the popularity-weighted rank; and the protocols
left out because the data set cannot support them, with why.
"""

from __future__ import annotations

import pandas as pd

from ...frameworks.registry import FRAMEWORK_PROTOCOLS
from ...outputs.tables import markdown_table

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
    pairs: pd.DataFrame,
    dataset: str,
    reps: int,
    left_out: pd.DataFrame | None = None,
) -> str:
    """protocols.md: the protocols, then per protocol and estimator the RMSE (mean over
    the recommenders), the pairs ordered right, each recommender's bias, and for
    popularity sampling the error against the metric of R^pi; first, the protocols
    left out (the data set cannot support them) with why, when there are any.

    Parameters
    ----------
    errors : pandas.DataFrame
        :func:`protocol_table` of ``evaluation.estimator_errors`` with protocol, target.
    pairs : pandas.DataFrame
        :func:`protocol_table` of ``evaluation.pair_agreement`` with protocol.
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
    ...     "rmse": [26.0, 0.25]})
    >>> pairs = pd.DataFrame({"dataset": "d", "protocol": "ncf", "pair": "X<Y",
    ...     "metric": "ap", "method": ["sampled", "cls"], "correct": [60, 95],
    ...     "repetitions": 100})
    >>> text = protocols_markdown(errors, pairs, "d", 100)
    >>> [line for line in text.splitlines() if line.startswith("| ncf")][-2:]
    ['| ncf      | sampled | 26.000 |', '| ncf      | cls     |  0.200 |']
    >>> left_out = pd.DataFrame([["elliot", 100, False, 60, "draws 100 distinct items per "
    ...     "user, more than the smallest candidate pool, 60 items"]], columns=LEFT_OUT_COLUMNS)
    >>> text = protocols_markdown(errors.iloc[:0], pairs.iloc[:0], "d", 100, left_out)
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

    def by_metric(frame, value, how="mean") -> pd.DataFrame:
        wide = frame.pivot_table(
            index=["protocol", "method"], columns="metric", values=value, aggfunc=how, sort=False
        )
        return wide[metrics].reset_index()

    right = pairs.assign(share=100 * pairs["correct"] / pairs["repetitions"])
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
        "Hansen-Hurwitz estimate of the rank.",
        "",
        markdown_table(described, digits={"alpha": 0}),
        *skipped,
        "",
        "## RMSE against the exact metric, mean over the recommenders",
        "",
        markdown_table(by_metric(rank, "rmse"), digits=3),
        "",
        f"## Pairs of recommenders ordered as the exact metric orders them (% of {reps} "
        "repetitions x pairs)",
        "",
        markdown_table(by_metric(right, "share"), digits=1),
    ]
    for metric in metrics:
        bias = rank[rank["metric"] == metric].pivot_table(
            index=["protocol", "method"], columns="recommender", values="bias", sort=False
        )
        order = list(dict.fromkeys(rank["recommender"]))
        lines += ["", f"## Bias of {metric} for each recommender", "", markdown_table(
            bias[order].reset_index(), digits=3)]  # fmt: skip
    weighted = errors[errors["target"] == "weighted_rank"]
    if not weighted.empty:
        gap = weighted.merge(
            rank[["protocol", "recommender", "metric", "method", "exact"]],
            on=["protocol", "recommender", "metric", "method"],
            suffixes=("", "_rank"),
        )
        gap["R^pi - exact"] = gap["exact"] - gap["exact_rank"]
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
                        by_metric(
                            gap[gap["method"] == gap["method"].iloc[0]], "R^pi - exact"
                        ).assign(method="metric(R^pi) - exact"),
                        by_metric(weighted, "rmse"),
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
