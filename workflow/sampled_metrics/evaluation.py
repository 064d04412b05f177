"""From ranks to the numbers of Tables 3 and 4 and Figure 6 (section 6).

Exact metrics average M(r_u) over users, with AUC's n the user's ranked-set
size (eq 7). Sampled metrics average a vector M^ over r~ = 1..m+1 (the
uncorrected metric or a correction) at the observed sampled ranks. Expected
sampled metrics average E[M^(r~) | r_u, n_u] over users with the law of
section 4.3, the user's own n_u and the pool the items were drawn from.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .corrections import corrected_metric
from .laws import WITHOUT_REPLACEMENT, sampled_rank_pmf
from .metrics import metric_by_name

__all__ = [
    "correction_vectors",
    "exact_metric",
    "expected_sampled_value",
    "order_thresholds",
    "pair_agreement",
    "sample_size_curves",
    "sampled_metric_table",
    "sampling_crosscheck",
    "summary_table",
]


def exact_metric(metric: str, ranks, n_candidates) -> float:
    """Mean over users of M(r_u), AUC with n = the user's ranked-set size (eq 7).

    Parameters
    ----------
    metric : str
        A metric name (see :func:`.metrics.metric_by_name`).
    ranks : array_like
        Exact rank r_u of each user's held-out item.
    n_candidates : int or array_like
        Each user's ranked-set size n_u (only AUC uses it).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the metric is unknown or a rank is invalid.

    Examples
    --------
    >>> round(exact_metric("recall@10", [1, 5, 20], n_candidates=100), 4)
    0.6667
    >>> exact_metric("auc", [1, 3], n_candidates=[3, 3])
    0.5
    """
    return float(np.mean(metric_by_name(metric)(ranks, n_candidates)))


def correction_vectors(
    metrics,
    methods,
    n: int,
    m: int,
    law: str = WITHOUT_REPLACEMENT,
    prior=None,
    interpolation: str = "floor",
) -> dict:
    """{(metric, method): M^ over r~ = 1..m+1} for every pair (one law for all).

    Parameters
    ----------
    metrics : iterable of str
        Metric names.
    methods : iterable of str
        Correction method names (see :func:`.corrections.parse_method`).
    n : int
        Number of ranked items.
    m : int
        Number of sampled irrelevant items.
    law : {"hypergeometric", "binomial"}, default "hypergeometric"
        The sampling law.
    prior : array_like, optional
        p(r) over r = 1..n; uniform when None.
    interpolation : {"floor", "linear"}, default "floor"
        For ``rank_estimate``.

    Returns
    -------
    dict
        {(metric, method): numpy.ndarray of length m + 1}.

    Raises
    ------
    ValueError
        As :func:`.corrections.corrected_metric`.

    Examples
    --------
    >>> vectors = correction_vectors(["ap"], ["sampled", "rank_estimate"], n=10, m=3)
    >>> np.round(vectors["ap", "rank_estimate"], 4).tolist()  # AP at ranks 1, 4, 7, 10
    [1.0, 0.25, 0.1429, 0.1]
    """
    return {
        (metric, method): corrected_metric(metric, method, n, m, law, prior, interpolation)
        for metric in metrics
        for method in methods
    }


def sampled_metric_table(sampled_ranks, vectors, n_per_user=None) -> pd.DataFrame:
    """Per repetition, the mean over users of M^[r~ - 1], for each (metric, method).

    Parameters
    ----------
    sampled_ranks : array_like (repetitions, n_users)
        Integer sampled ranks.
    vectors : dict or callable
        {(metric, method): M^}, one for all users; or, with ``n_per_user``, a
        function n -> such a dict, called once per distinct n so that each
        user's correction is built with their own n.
    n_per_user : array_like of int, optional
        Each user's n, when ``vectors`` is a function.

    Returns
    -------
    pandas.DataFrame
        A tidy frame with columns metric, method, rep, value (a fraction).

    Raises
    ------
    ValueError
        If the ranks are not integers (the "average" tie policy) or a sampled
        rank exceeds m + 1.

    Examples
    --------
    >>> ranks = np.array([[1, 2], [1, 1]])  # 2 repetitions x 2 users
    >>> table = sampled_metric_table(ranks, {("recall@1", "sampled"): [1.0, 0.0, 0.0]})
    >>> list(table.columns), table["value"].tolist()
    (['metric', 'method', 'rep', 'value'], [0.5, 1.0])
    """
    ranks = np.asarray(sampled_ranks)
    if np.any(ranks != np.round(ranks)):
        raise ValueError("corrections need integer sampled ranks (not the 'average' tie policy)")
    index = ranks.astype(np.int64) - 1
    if n_per_user is None:
        groups = [(np.arange(index.shape[1]), vectors)]
    else:
        n_per_user = np.asarray(n_per_user)
        groups = [(np.flatnonzero(n_per_user == n), vectors(int(n))) for n in np.unique(n_per_user)]
    sums: dict = {}
    for users, group_vectors in groups:
        for key, vector in group_vectors.items():
            vector = np.asarray(vector)
            if index.max() >= vector.size:
                raise ValueError(f"a sampled rank exceeds m + 1 = {vector.size}")
            sums[key] = sums.get(key, 0.0) + vector[index[:, users]].sum(axis=1)
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "metric": metric,
                    "method": method,
                    "rep": np.arange(index.shape[0]),
                    "value": total / index.shape[1],
                }
            )
            for (metric, method), total in sums.items()
        ],
        ignore_index=True,
    )


def expected_sampled_value(vector, ranks, n_candidates, law: str = WITHOUT_REPLACEMENT) -> float:
    """Mean over users of E[M^(r~) | r_u] (eq 16), with each user's own law.

    The law of user u has n = n_u (their ranked-set size) and m = len(vector) - 1.

    Parameters
    ----------
    vector : array_like
        M^ over r~ = 1..m+1 (uncorrected or corrected).
    ranks : array_like of int
        Exact rank r_u of each user's held-out item.
    n_candidates : int or array_like of int
        Each user's ranked-set size n_u.
    law : {"hypergeometric", "binomial"}, default "hypergeometric"
        The sampling law.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        As :func:`.laws.sampled_rank_pmf`.

    Examples
    --------
    Sampled AUC (m = 1: M^ = [1, 0]) is unbiased (section 4.4.1):

    >>> expected_sampled_value([1.0, 0.0], [1, 2, 3], 3), exact_metric("auc", [1, 2, 3], 3)
    (0.5, 0.5)
    """
    vector = np.asarray(vector, dtype=float)
    P = sampled_rank_pmf(ranks, n_candidates, vector.size - 1, law)
    return float(np.mean(P @ vector))


# --------------------------------------------------------------------------
# Tables 3 and 4
# --------------------------------------------------------------------------


def summary_table(exact: pd.DataFrame, sampling: pd.DataFrame) -> pd.DataFrame:
    """Table 3: exact value, then mean and std (over repetitions, ddof = 1) of every method.

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
    stats = (
        sampling.groupby(["recommender", "metric", "method"], sort=False)["value"]
        .agg(mean="mean", std="std")
        .reset_index()
    )
    exact_rows = exact.rename(columns={"value": "mean"}).assign(method="exact", std=np.nan)
    table = pd.concat([exact_rows[["recommender", "metric", "method", "mean", "std"]], stats])
    order = {name: i for i, name in enumerate(dict.fromkeys(table["method"]))}
    return (
        table.assign(_o=table["method"].map(order))
        .sort_values(["metric", "recommender", "_o"], kind="stable", key=_metric_order)
        .drop(columns="_o")
        .reset_index(drop=True)
    )


def _metric_order(column: pd.Series) -> pd.Series:
    if column.name != "metric":
        return column
    first = {name: i for i, name in enumerate(dict.fromkeys(column))}
    return column.map(first)


def pair_agreement(exact: pd.DataFrame, sampling: pd.DataFrame, pairs) -> pd.DataFrame:
    """Table 4: in how many repetitions each pair is in the exact metric's order.

    For each pair (a, b), metric and method, the number of repetitions in which
    the sign of value(a) - value(b) equals its sign on the exact metric (a tie
    counts as wrong, unless the exact values tie too).

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
    values = sampling.set_index(["recommender", "metric", "method", "rep"])["value"]
    rows = []
    for a, b in pairs:
        for (metric, method), _ in sampling.groupby(["metric", "method"], sort=False):
            truth = np.sign(exact_value[(a, metric)] - exact_value[(b, metric)])
            diff = values.xs((a, metric, method), level=[0, 1, 2]) - values.xs(
                (b, metric, method), level=[0, 1, 2]
            )
            rows.append(
                {
                    "pair": f"{a}<{b}",
                    "metric": metric,
                    "method": method,
                    "correct": int(np.sum(np.sign(diff.to_numpy()) == truth)),
                    "repetitions": int(diff.size),
                }
            )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------
# Cross-check of real sampling against the law, and Figure 6
# --------------------------------------------------------------------------


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
    stats = (
        sampling.groupby(["recommender", "metric", "method"], sort=False)["value"]
        .agg(mean="mean", std="std", repetitions="size")
        .reset_index()
    )
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


def sample_size_curves(
    ranks: dict, metric: str, methods, m_values, n: int, law: str, progress: bool = False
) -> pd.DataFrame:
    """Figure 6: the expected mean over users of each method, for each m.

    For each m, each method's corrected vector (built with the catalogue size n
    and ``law``) and its expected mean over users, E[M^(r~) | r_u, n_u], for
    each recommender.

    Parameters
    ----------
    ranks : dict
        ``ranks[name]`` is a pair (ranks, n_candidates).
    metric : str
        A metric name.
    methods : iterable of str
        Correction method names.
    m_values : iterable of int
        The sample sizes.
    n : int
        Catalogue size the corrections are built with.
    law : {"hypergeometric", "binomial"}
        The sampling law.
    progress : bool, default False
        Show a tqdm bar over the sample sizes.

    Returns
    -------
    pandas.DataFrame
        Columns m, method, recommender, expected.

    Raises
    ------
    ValueError
        As :func:`.corrections.corrected_metric` and :func:`.laws.sampled_rank_pmf`.

    Examples
    --------
    Sampled AUC is unbiased for every m: the mean of (10 - r)/9 over r = 1, 2.

    >>> ranks = {"X": ([1, 2], [10, 10])}
    >>> curves = sample_size_curves(ranks, "auc", ["sampled"], [1, 9], 10, WITHOUT_REPLACEMENT)
    >>> curves.round(4).values.tolist()
    [[1, 'sampled', 'X', 0.9444], [9, 'sampled', 'X', 0.9444]]
    """
    rows = []
    grid = list(m_values)
    if progress:
        from tqdm.auto import tqdm

        grid = tqdm(grid, desc="Figure 6 sample sizes", unit="m")
    for m in grid:
        vectors = {method: corrected_metric(metric, method, n, int(m), law) for method in methods}
        for name, (r, n_candidates) in ranks.items():
            P = sampled_rank_pmf(r, n_candidates, int(m), law)  # one law for every method
            rows += [
                {
                    "m": int(m),
                    "method": method,
                    "recommender": name,
                    "expected": float(np.mean(P @ vector)),
                }
                for method, vector in vectors.items()
            ]
    return pd.DataFrame(rows)


def order_thresholds(curves: pd.DataFrame, exact: dict, a: str, b: str) -> pd.DataFrame:
    """Per method, the smallest m at which a and b are in the exact order, and stay so.

    Over the grid of m of ``curves``: the smallest m at which the expected
    values of a and b are in the exact order, and the smallest m from which
    they stay so; NaN when there is none.

    Parameters
    ----------
    curves : pandas.DataFrame
        Columns m, method, recommender, expected (see :func:`sample_size_curves`).
    exact : dict
        Exact value of each recommender.
    a, b : str
        The two recommenders.

    Returns
    -------
    pandas.DataFrame
        Columns method, pair ("a<b"), first_right_m, stays_right_from_m.

    Examples
    --------
    The exact order is A < B; the expected values are in it at m = 1 and 100:

    >>> curves = pd.DataFrame({"m": [1, 1, 10, 10, 100, 100], "method": "sampled",
    ...     "recommender": ["A", "B"] * 3, "expected": [0.3, 0.4, 0.5, 0.4, 0.2, 0.3]})
    >>> order_thresholds(curves, {"A": 0.1, "B": 0.2}, "A", "B").values.tolist()
    [['sampled', 'A<B', 1, 100]]
    """
    truth = np.sign(exact[a] - exact[b])
    rows = []
    for method, group in curves.groupby("method", sort=False):
        wide = group.pivot(index="m", columns="recommender", values="expected").sort_index()
        right = (np.sign(wide[a] - wide[b]) == truth).to_numpy()
        ms = wide.index.to_numpy()
        first = ms[right][0] if right.any() else np.nan
        wrong_after = np.flatnonzero(~right)
        stays = (
            ms[wrong_after[-1] + 1]
            if wrong_after.size and wrong_after[-1] + 1 < ms.size
            else (np.nan if wrong_after.size else ms[0])
        )
        rows.append(
            {
                "method": method,
                "pair": f"{a}<{b}",
                "first_right_m": first,
                "stays_right_from_m": stays,
            }
        )
    return pd.DataFrame(rows)
