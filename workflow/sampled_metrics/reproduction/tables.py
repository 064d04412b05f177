"""Tables 3 and 4 of the paper (section 6.2), the estimators' error table and the
cross-check of real sampling against the law, from frames of values.

The inputs are the exact metric of each recommender and the sampled values of
every method over the repetitions (columns recommender, metric, method, rep,
value); the outputs are tables in the same units: means and standard
deviations (Table 3), the repetitions that order a pair of recommenders as the
exact metric does (Table 4), each estimator's bias and RMSE, and the mean of
the repetitions against the expectation of section 4.3 in standard errors.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from ..estimation.registry import paper_methods

__all__ = [
    "STD_DDOF",
    "estimator_errors",
    "pair_agreement",
    "paper_rows",
    "sampling_crosscheck",
    "summary_table",
]


# Every standard deviation over repetitions (Tables 2 and 3, the cross-check) is the
# sample standard deviation. The paper does not say which it used; at its 100 and
# 1000 repetitions the two differ by 0.5 % and 0.05 % of the value.
STD_DDOF = 1


def paper_rows(sampling: pd.DataFrame) -> pd.DataFrame:
    """The rows of the paper's estimators (no correction and the corrections of
    section 5), without the learned ones of :mod:`sampled_metrics.estimation.estimators`: Tables
    3 and 4 are the paper's; every estimator is compared in the estimators table.

    Parameters
    ----------
    sampling : pandas.DataFrame
        With a ``method`` column.

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> frame = pd.DataFrame({"method": ["sampled", "mn_em", "bv_0.1", "em"]})
    >>> paper_rows(frame)["method"].tolist()
    ['sampled', 'bv_0.1']
    """
    return sampling[sampling["method"].isin(paper_methods(sampling["method"].unique()))]


def summary_table(exact: pd.DataFrame, sampling: pd.DataFrame) -> pd.DataFrame:
    """Table 3: exact value, then mean and std (over repetitions, ``STD_DDOF``) of every method.

    Same units in, same units out.

    Parameters
    ----------
    exact : pandas.DataFrame
        Columns recommender, metric, value.
    sampling : pandas.DataFrame
        Columns recommender, metric, method, rep, value.

    Returns
    -------
    pandas.DataFrame
        Columns recommender, metric, method, mean, std; the exact value is the
        row of method "exact" (std NaN).

    Examples
    --------
    >>> exact = pd.DataFrame({"recommender": ["X"], "metric": ["ap"], "value": [0.2]})
    >>> sampling = pd.DataFrame({"recommender": "X", "metric": "ap", "method": "sampled",
    ...                          "rep": [0, 1], "value": [0.4, 0.6]})
    >>> summary_table(exact, sampling).round(4).values.tolist()
    [['X', 'ap', 'exact', 0.2, nan], ['X', 'ap', 'sampled', 0.5, 0.1414]]
    """
    grouped = sampling.groupby(["recommender", "metric", "method"], sort=False)["value"]
    stats = grouped.mean().rename("mean").to_frame()
    stats["std"] = grouped.std(ddof=STD_DDOF)
    stats = stats.reset_index()
    exact_rows = exact.rename(columns={"value": "mean"}).assign(method="exact", std=np.nan)
    table = pd.concat([exact_rows[["recommender", "metric", "method", "mean", "std"]], stats])
    order = {name: i for i, name in enumerate(dict.fromkeys(table["method"]))}
    return (
        table.assign(_o=table["method"].map(order))
        .sort_values(["metric", "recommender", "_o"], kind="stable", key=_first_seen_order)
        .drop(columns="_o")
        .reset_index(drop=True)
    )


def _first_seen_order(column: pd.Series) -> pd.Series:
    """Metrics and recommenders in the order they first appear (the configured order:
    the exact rows come first), other columns as they are."""
    if column.name not in ("metric", "recommender"):
        return column
    first = {name: i for i, name in enumerate(dict.fromkeys(column))}
    return column.map(first)


def estimator_errors(exact: pd.DataFrame, sampling: pd.DataFrame) -> pd.DataFrame:
    """Each estimator against the exact metric over the repetitions: mean, bias (mean -
    exact), std and root-mean-square error sqrt(mean((value - exact)^2)).

    Parameters
    ----------
    exact : pandas.DataFrame
        Columns recommender, metric, value.
    sampling : pandas.DataFrame
        Columns recommender, metric, method, rep, value.

    Returns
    -------
    pandas.DataFrame
        recommender, metric, method, exact, mean, bias, std, rmse (in the units of
        the values), in the order of ``sampling``.

    Examples
    --------
    >>> exact = pd.DataFrame({"recommender": ["X"], "metric": ["ap"], "value": [2.0]})
    >>> sampling = pd.DataFrame({"recommender": "X", "metric": "ap", "method": "cls",
    ...                          "rep": [0, 1], "value": [1.0, 5.0]})
    >>> estimator_errors(exact, sampling)[["bias", "rmse"]].values.tolist()
    [[1.0, 2.23606797749979]]
    """
    keys = ["recommender", "metric", "method"]
    truth = exact.set_index(["recommender", "metric"])["value"]
    # each row's exact value, looked up once for all rows (a missing one: KeyError)
    rows = pd.MultiIndex.from_arrays([sampling["recommender"], sampling["metric"]])
    frame = sampling.assign(exact=truth.loc[rows].to_numpy())
    frame["squared_error"] = (frame["value"] - frame["exact"]) ** 2
    grouped = frame.groupby(keys, sort=False)
    table = grouped.agg(
        exact=("exact", "first"),
        mean=("value", "mean"),
        std=("value", lambda v: v.std(ddof=STD_DDOF)),
        mse=("squared_error", "mean"),
    ).reset_index()
    table["bias"] = table["mean"] - table["exact"]
    table["rmse"] = np.sqrt(table.pop("mse"))
    return table[[*keys, "exact", "mean", "bias", "std", "rmse"]]


def pair_agreement(
    exact: pd.DataFrame, sampling: pd.DataFrame, pairs: Iterable[tuple[str, str]]
) -> pd.DataFrame:
    """Table 4: in how many repetitions each pair is in the exact metric's order.

    For each pair (a, b), metric and method, the number of repetitions in which
    the sign of value(a) - value(b) equals its sign on the exact metric (a tie
    counts as wrong, unless the exact values tie too). Every recommender, metric and
    method holds the same repetitions.

    Parameters
    ----------
    exact : pandas.DataFrame
        Columns recommender, metric, value.
    sampling : pandas.DataFrame
        Columns recommender, metric, method, rep, value.
    pairs : iterable of (str, str)
        Pairs (a, b) of recommenders.

    Returns
    -------
    pandas.DataFrame
        Columns pair ("a<b"), metric, method, correct, repetitions.

    Examples
    --------
    >>> exact = pd.DataFrame({"recommender": ["X", "Y"], "metric": "ap", "value": [0.3, 0.2]})
    >>> sampling = pd.DataFrame({"recommender": ["X", "X", "Y", "Y"], "metric": "ap",
    ...     "method": "sampled", "rep": [0, 1, 0, 1], "value": [0.5, 0.4, 0.4, 0.6]})
    >>> pair_agreement(exact, sampling, [("X", "Y")]).values.tolist()
    [['X<Y', 'ap', 'sampled', 1, 2]]
    """
    exact_value = exact.set_index(["recommender", "metric"])["value"]
    # one row of repetitions per (recommender, metric, method), read by position
    wide = sampling.set_index(["recommender", "metric", "method", "rep"])["value"].unstack("rep")
    values = wide.to_numpy()
    row = {key: i for i, key in enumerate(wide.index)}
    cells = list(dict.fromkeys(zip(sampling["metric"], sampling["method"])))
    rows = []
    for a, b in pairs:
        for metric, method in cells:
            truth = np.sign(exact_value[(a, metric)] - exact_value[(b, metric)])
            diff = values[row[a, metric, method]] - values[row[b, metric, method]]
            rows.append(
                {
                    "pair": f"{a}<{b}",
                    "metric": metric,
                    "method": method,
                    "correct": int(np.sum(np.sign(diff) == truth)),
                    "repetitions": int(diff.size),
                }
            )
    return pd.DataFrame(rows)


def sampling_crosscheck(sampling: pd.DataFrame, expected: dict) -> pd.DataFrame:
    """Mean of the repetitions against the analytic expectation, in standard errors.

    Parameters
    ----------
    sampling : pandas.DataFrame
        Columns recommender, metric, method, rep, value.
    expected : dict
        ``expected[(recommender, metric, method)]`` is the law's value.

    Returns
    -------
    pandas.DataFrame
        Per (recommender, metric, method): mean, std, repetitions, expected,
        standard_error and z = (mean - expected) / standard_error (0 or inf
        when the standard error is 0, by whether mean and expected agree).

    Examples
    --------
    Values 0.4, 0.6, 0.4, 0.6 have mean 0.5 and standard error 0.1155 / 2:

    >>> sampling = pd.DataFrame({"recommender": "X", "metric": "ap", "method": "sampled",
    ...                          "rep": [0, 1, 2, 3], "value": [0.4, 0.6, 0.4, 0.6]})
    >>> row = sampling_crosscheck(sampling, {("X", "ap", "sampled"): 0.4}).iloc[0]
    >>> float(row["mean"]), round(float(row["z"]), 4)
    (0.5, 1.7321)
    """
    grouped = sampling.groupby(["recommender", "metric", "method"], sort=False)["value"]
    stats = grouped.mean().rename("mean").to_frame()
    stats["std"] = grouped.std(ddof=STD_DDOF)
    stats["repetitions"] = grouped.size()
    stats = stats.reset_index()
    stats["expected"] = [
        expected[key] for key in zip(stats["recommender"], stats["metric"], stats["method"])
    ]
    stats["standard_error"] = stats["std"] / np.sqrt(stats["repetitions"])
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (stats["mean"] - stats["expected"]) / stats["standard_error"]
    stats["z"] = np.where(
        stats["standard_error"] > 0,
        z,
        np.where(np.isclose(stats["mean"], stats["expected"], rtol=1e-9, atol=1e-12), 0.0, np.inf),
    )
    return stats
