"""The protocol study's precision: the standard error, over its repetitions, of each
number it prints. The repetitions are independent draws of every protocol on fixed
scores and users, so the exact metric is a constant and every printed number is a
mean over repetitions, or a smooth function of means, whose standard error is the
standard deviation over repetitions divided by sqrt(repetitions): directly for the
bias (mean error) and the share of pairs ordered right, through the delta method for
the RMSE, sqrt of the mean squared error (Casella & Berger, *Statistical Inference*,
2nd ed., 2002, Theorem 5.5.24: se(g(X)) = |g'(mu)| se(X), here g = sqrt, g' = 1 / (2
RMSE)). Means over recommenders take each repetition's value of the mean, so that
recommenders that share their draws (paired protocols) are not counted as
independent.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

__all__ = ["error_precision", "mean_rmse", "pair_share"]


def _errors(exact: pd.DataFrame, values: pd.DataFrame) -> pd.DataFrame:
    """(recommender, metric, method) x rep: each repetition's value - exact."""
    truth = exact.set_index(["recommender", "metric"])["value"]
    wide = values.pivot_table(
        index=["recommender", "metric", "method"], columns="rep", values="value", sort=False
    )
    keys = list(zip(wide.index.get_level_values(0), wide.index.get_level_values(1)))
    return wide.sub(truth.loc[keys].to_numpy(), axis=0)


def _rmse_terms(errors: pd.DataFrame) -> tuple[pd.Series, pd.DataFrame]:
    """(RMSE, its delta-method term per repetition (e^2 - MSE) / (2 RMSE)), 0 where
    RMSE is 0 (every repetition exact: no spread)."""
    squared = errors**2
    mse = squared.mean(axis=1)
    rmse = np.sqrt(mse)
    scale = np.where(rmse > 0, 2 * rmse, np.inf)
    return rmse, squared.sub(mse, axis=0).div(scale, axis=0)


def _se(per_rep: pd.DataFrame) -> pd.Series:
    """Standard error of the mean over the columns (repetitions), each row."""
    reps = per_rep.shape[1]
    if reps < 2:
        return pd.Series(np.nan, index=per_rep.index)
    return per_rep.std(axis=1, ddof=1) / np.sqrt(reps)


def error_precision(exact: pd.DataFrame, values: pd.DataFrame) -> pd.DataFrame:
    """The standard errors of ``reproduction.tables.estimator_errors``' bias and RMSE.

    Parameters
    ----------
    exact : pandas.DataFrame
        recommender, metric, value.
    values : pandas.DataFrame
        recommender, metric, method, rep, value.

    Returns
    -------
    pandas.DataFrame
        recommender, metric, method, bias_se, rmse_se.

    Examples
    --------
    Errors -1 and +1: bias 0 with se 1 (sd sqrt 2 over sqrt 2 repetitions); every
    squared error 1, so the RMSE, 1, has se 0.

    >>> exact = pd.DataFrame({"recommender": ["X"], "metric": ["ap"], "value": [2.0]})
    >>> values = pd.DataFrame({"recommender": "X", "metric": "ap", "method": "cls",
    ...                        "rep": [0, 1], "value": [1.0, 3.0]})
    >>> error_precision(exact, values)[["bias_se", "rmse_se"]].values.tolist()
    [[1.0, 0.0]]
    """
    errors = _errors(exact, values)
    _, terms = _rmse_terms(errors)
    return pd.DataFrame(
        {"bias_se": _se(errors), "rmse_se": _se(terms)}, index=errors.index
    ).reset_index()


def mean_rmse(exact: pd.DataFrame, values: pd.DataFrame) -> pd.DataFrame:
    """The RMSE of each (metric, method), mean over the recommenders, and its standard
    error (each repetition's delta-method term averaged over the recommenders).

    Parameters
    ----------
    exact, values : pandas.DataFrame
        As :func:`error_precision`'s.

    Returns
    -------
    pandas.DataFrame
        metric, method, rmse, rmse_se, in the order of ``values``.

    Examples
    --------
    >>> exact = pd.DataFrame({"recommender": ["X", "Y"], "metric": "ap", "value": 0.0})
    >>> values = pd.DataFrame({"recommender": ["X", "X", "Y", "Y"], "metric": "ap",
    ...                        "method": "cls", "rep": [0, 1, 0, 1], "value": [1.0, 3, 2, 2]})
    >>> mean_rmse(exact, values).round(4).values.tolist()
    [['ap', 'cls', 2.118, 0.4472]]
    """
    rmse, terms = _rmse_terms(_errors(exact, values))
    keys = ["metric", "method"]
    mean = rmse.groupby(level=keys, sort=False).mean()
    per_rep = terms.groupby(level=keys, sort=False).mean()
    return pd.DataFrame({"rmse": mean, "rmse_se": _se(per_rep)}).reset_index()


def pair_share(
    exact: pd.DataFrame, values: pd.DataFrame, pairs: Iterable[tuple[str, str]]
) -> pd.DataFrame:
    """The percentage of pairs of recommenders ordered as the exact metric orders them
    (as ``reproduction.tables.pair_agreement`` counts them) over pairs x repetitions,
    and its standard error (each repetition's share over the pairs).

    Parameters
    ----------
    exact, values : pandas.DataFrame
        As :func:`error_precision`'s.
    pairs : iterable of (str, str)

    Returns
    -------
    pandas.DataFrame
        metric, method, share, share_se (percent).

    Examples
    --------
    >>> exact = pd.DataFrame({"recommender": ["X", "Y"], "metric": "ap", "value": [0.3, 0.2]})
    >>> values = pd.DataFrame({"recommender": ["X", "X", "Y", "Y"], "metric": "ap",
    ...     "method": "sampled", "rep": [0, 1, 0, 1], "value": [0.5, 0.4, 0.4, 0.6]})
    >>> pair_share(exact, values, [("X", "Y")]).values.tolist()
    [['ap', 'sampled', 50.0, 50.0]]
    """
    truth = exact.set_index(["recommender", "metric"])["value"]
    wide = values.pivot_table(
        index=["metric", "method"], columns=["recommender", "rep"], values="value", sort=False
    )
    metric = wide.index.get_level_values("metric")
    right = []
    for a, b in pairs:
        expected = np.sign(
            truth[a].reindex(metric).to_numpy() - truth[b].reindex(metric).to_numpy()
        )
        right.append(np.sign(wide[a] - wide[b]).eq(expected, axis=0).astype(float))
    per_rep = 100 * sum(right) / len(right)
    return pd.DataFrame({"share": per_rep.mean(axis=1), "share_se": _se(per_rep)}).reset_index()
