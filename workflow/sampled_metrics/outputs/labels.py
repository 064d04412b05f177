"""Names as the tables, figures and claims print them: the paper's (Exact, Uncorrected,
Rank Estimate, CLS, BV 0.1, Recall@10, X vs Y, ...), one home for each.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..estimation.metrics import metric_by_name
from ..estimation.registry import estimator_label, find_estimator

__all__ = [
    "column_label",
    "label_keys",
    "method_groups",
    "method_label",
    "metric_label",
    "pair_label",
]

_COLUMN_LABELS = {
    "recommender": "Recommender",
    "metric": "Metric",
    "method": "Method",
    "pair": "Pair",
    "ranks": "Predicted ranks",
}


# The estimators' labels are the registry's (estimation.registry). These two columns
# stand beside the estimators but are none (parse_estimator refuses them): the exact
# metric itself, and the Hansen-Hurwitz rank estimate of popularity-sampled negatives
# (estimation.popularity), which no config lists as a method.
_NOT_ESTIMATOR_LABELS = {
    "exact": "Exact",
    "hansen_hurwitz": "Hansen-Hurwitz",
}


# The group header the paper puts above its sampled columns (Tables 3 and 4).
_METHOD_GROUPS = {"exact": "", "sampled": "Sampled"}


_CORRECTED_GROUP = "Sampled with correction"


def method_label(method: str) -> str:
    """The paper's name of a method of Tables 3 and 4.

    The uncorrected sampled metric is "Uncorrected": the paper heads its column
    "Sampled (uncorrected)" and the corrections "Sampled with Correction" (the group
    headers of :func:`method_groups`).

    Parameters
    ----------
    method : str
        "exact", "hansen_hurwitz", or an estimator ("sampled", "rank_estimate", "ls",
        "cls", "bv_<gamma>", ...: its label is the registry's,
        :func:`sampled_metrics.estimation.registry.estimator_label`); another name is
        returned as it is.

    Returns
    -------
    str

    Examples
    --------
    >>> [method_label(m) for m in ("exact", "sampled", "rank_estimate", "cls", "bv_0.1", "ls")]
    ['Exact', 'Uncorrected', 'Rank Estimate', 'CLS', 'BV 0.1', 'LS']
    """
    if method in _NOT_ESTIMATOR_LABELS:
        return _NOT_ESTIMATOR_LABELS[method]
    label = estimator_label(method)
    return method if label is None else label


def metric_label(metric: str) -> str:
    """A readable name of a metric (names are case-insensitive); the cut-off is kept,
    as the metric is only named by it (the paper's Table 3 says "Recall" for Recall@10).

    Parameters
    ----------
    metric : str
        A metric name as :func:`sampled_metrics.estimation.metrics.metric_by_name` takes it.

    Returns
    -------
    str

    Examples
    --------
    >>> [metric_label(m) for m in ("recall@10", "NDCG@10", "ap", "auc")]
    ['Recall@10', 'NDCG@10', 'AP', 'AUC']
    """
    name, at, k = metric.strip().lower().partition("@")
    words = {"recall": "Recall", "precision": "Precision", "prec": "Precision"}
    return words.get(name, name.upper()) + at + k


def pair_label(pair: str) -> str:
    """A pair of recommenders as the paper's Table 4 names it.

    Parameters
    ----------
    pair : str
        "a<b": a is worse than b on the exact metric.

    Returns
    -------
    str

    Examples
    --------
    >>> pair_label("X<Y")
    'X vs Y'
    """
    return " vs ".join(pair.split("<"))


def column_label(column: str) -> str:
    """The header of a column of a result table: the key columns capitalised, a
    metric or method by its label.

    Parameters
    ----------
    column : str
        A column name of a result table ("recommender", "ranks", "auc", "bv_0.1").

    Returns
    -------
    str

    Examples
    --------
    >>> [column_label(c) for c in ("recommender", "ranks", "recall@10", "bv_1", "paper")]
    ['Recommender', 'Predicted ranks', 'Recall@10', 'BV 1', 'paper']
    """
    if column in _COLUMN_LABELS:
        return _COLUMN_LABELS[column]
    if column in _NOT_ESTIMATOR_LABELS or find_estimator(column) is not None:
        return method_label(column)
    try:
        metric_by_name(column)
    except ValueError:
        return column
    return metric_label(column)


def label_keys(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` for a reader: the values of its metric, method and pair columns by
    their labels, the predicted ranks comma-separated, every header by
    :func:`column_label`.

    Parameters
    ----------
    frame : pandas.DataFrame
        A result table (columns as the pipeline names them).

    Returns
    -------
    pandas.DataFrame
        A copy.

    Examples
    --------
    >>> frame = pd.DataFrame({"metric": ["ndcg@10"], "method": ["bv_0.01"], "paper": [3.4]})
    >>> label_keys(frame).to_dict("records")
    [{'Metric': 'NDCG@10', 'Method': 'BV 0.01', 'paper': 3.4}]
    """
    values = {"metric": metric_label, "method": method_label, "pair": pair_label}
    out = frame.copy()
    for column, label in values.items():
        if column in out.columns:
            out[column] = out[column].map(label)
    if "ranks" in out.columns:
        out["ranks"] = out["ranks"].map(lambda r: ", ".join(str(r).split()))
    return out.rename(columns=column_label)


def method_groups(methods: Sequence[str]) -> list[tuple[str, int]]:
    """The paper's group headers over the method columns of Tables 3 and 4: none over
    Exact, "Sampled" over the uncorrected metric, "Sampled with correction" over the
    corrections; one (header, number of columns) per run of equal headers.

    Parameters
    ----------
    methods : sequence of str
        The method columns, in order.

    Returns
    -------
    list of (str, int)

    Examples
    --------
    >>> method_groups(["exact", "sampled", "rank_estimate", "cls", "bv_1"])
    [('', 1), ('Sampled', 1), ('Sampled with correction', 3)]
    """
    groups: list[tuple[str, int]] = []
    for method in methods:
        header = _METHOD_GROUPS.get(method, _CORRECTED_GROUP)
        if groups and groups[-1][0] == header:
            groups[-1] = (header, groups[-1][1] + 1)
        else:
            groups.append((header, 1))
    return groups
