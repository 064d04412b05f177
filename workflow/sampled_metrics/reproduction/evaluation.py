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

from ..estimation.corrections import correction_vectors
from ..estimation.laws import sampled_rank_pmf
from ..estimation.nodes import interpolation_nodes, node_weights

# Every standard deviation over repetitions (Tables 2 and 3, the cross-check) is the
# sample standard deviation. The paper does not say which it used; at its 100 and
# 1000 repetitions the two differ by 0.5 % and 0.05 % of the value.
STD_DDOF = 1

__all__ = [
    "STD_DDOF",
    "estimator_errors",
    "expected_at_nodes",
    "protocol_sensitivity",
    "order_thresholds",
    "pair_agreement",
    "paper_rows",
    "sample_size_curves",
    "sampling_crosscheck",
    "summary_table",
]


# --------------------------------------------------------------------------
# Tables 3 and 4
# --------------------------------------------------------------------------


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
    from ..estimation.estimators import paper_methods

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
    frame = sampling.assign(
        exact=[truth[key] for key in zip(sampling["recommender"], sampling["metric"])]
    )
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


def sample_size_curves(
    ranks: dict,
    metric: str,
    methods,
    m_values,
    n: int | None,
    law: str,
    correction_law: str | None = None,
    cls_constraint: str = "monotone_in_range",
    nodes: int = 5,
    progress: bool = False,
) -> pd.DataFrame:
    """Figure 6: the expected mean over users of each method, for each m.

    For each m and recommender, the mean over users of E[M^(r~) | r_u, n_u]
    under the sampling ``law`` with each user's own n_u. The corrections are
    built with ``correction_law`` and with n = ``n`` (the catalogue) or, when
    ``n`` is None, with each user's own n_u: exactly at ``nodes`` values of n
    spread over the users' range (all distinct n_u when there are no more) and
    linearly interpolated in n between them, which keeps the largest m
    affordable (the approximation is measured in docs/protocol.md).

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
    n : int or None
        Catalogue size the corrections are built with; None: each user's n_u.
    law : {"hypergeometric", "binomial"}
        The law of the sampling the curves describe.
    correction_law : {"hypergeometric", "binomial"}, optional
        The law the corrections assume; ``law`` when None.
    cls_constraint : str, default "monotone_in_range"
        For ``cls`` (see :func:`.corrections.constrained_least_squares_correction`).
    nodes : int, default 5
        Values of n the per-user corrections are built at (at least 2).
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
    >>> curves = sample_size_curves(ranks, "auc", ["sampled"], [1, 9], 10, "hypergeometric")
    >>> curves.round(4).values.tolist()
    [[1, 'sampled', 'X', 0.9444], [9, 'sampled', 'X', 0.9444]]
    """
    methods, rows = list(methods), []
    correction_law = correction_law or law
    all_n = np.concatenate([np.asarray(c) for _, c in ranks.values()])
    node_n = np.array([n]) if n is not None else interpolation_nodes(all_n, nodes)
    grid = list(m_values)
    if progress:
        from tqdm.auto import tqdm

        grid = tqdm(grid, desc="Figure 6 sample sizes", unit="m")
    for m in grid:
        at_nodes = [
            correction_vectors(
                [metric], methods, int(v), int(m), correction_law, cls_constraint=cls_constraint
            )
            for v in node_n
        ]
        for name, (r, n_candidates) in ranks.items():
            values = expected_at_nodes(at_nodes, node_n, r, n_candidates, int(m), law)
            rows += [
                {
                    "m": int(m),
                    "method": method,
                    "recommender": name,
                    "expected": values[metric, method],
                }
                for method in methods
            ]
    return pd.DataFrame(rows)


def expected_at_nodes(at_nodes, node_n, ranks, n_candidates, m: int, law: str) -> dict:
    """Mean over users of E[M^_u(r~) | r_u, n_u], M^_u interpolated in n_u between nodes.

    ``at_nodes[k]`` is the dict {(metric, method): M^} built with n = ``node_n[k]``;
    user u's vector is the linear interpolation at n_u (:func:`node_weights`),
    and its expectation is taken under ``law`` with the user's own n_u.

    Parameters
    ----------
    at_nodes : list of dict
        {(metric, method): M^ over r~ = 1..m+1}, one dict per node.
    node_n : array_like of int
        The n of each node, increasing.
    ranks, n_candidates : array_like of int
        Each user's exact rank r_u and ranked-set size n_u.
    m : int
        Number of sampled items.
    law : {"hypergeometric", "binomial"}
        The sampling law.

    Returns
    -------
    dict
        {(metric, method): float}.

    Examples
    --------
    >>> at_nodes = [{("m", "x"): [1.0, 0.0]}, {("m", "x"): [3.0, 0.0]}]
    >>> expected_at_nodes(at_nodes, [4, 6], [1, 1], [5, 6], 1, "binomial")  # 2 and 3
    {('m', 'x'): 2.5}
    """
    ranks, n_candidates = np.atleast_1d(ranks), np.broadcast_to(n_candidates, np.shape(ranks))
    weights = node_weights(n_candidates, node_n)
    stacked = {key: np.column_stack([v[key] for v in at_nodes]) for key in at_nodes[0]}
    totals = dict.fromkeys(stacked, 0.0)
    # Users in blocks, so that the law of a block (users x (m + 1)) stays within
    # _LAW_BLOCK_BYTES whatever the number of users and m.
    block = max(1, _LAW_BLOCK_BYTES // (8 * (m + 1)))
    for start in range(0, ranks.size, block):
        users = slice(start, start + block)
        P = sampled_rank_pmf(ranks[users], n_candidates[users], m, law)  # one law for all
        for key, V in stacked.items():
            totals[key] += float(np.sum((P @ V) * weights[users]))
    return {key: total / ranks.size for key, total in totals.items()}


# Memory of one block of per-user laws in expected_at_nodes (Figure 6 at large m).
_LAW_BLOCK_BYTES = 32 * 2**20


def protocol_sensitivity(
    ranks: dict,
    metrics,
    methods,
    n_items: int,
    m: int,
    sampling_law: str,
    cls_constraint: str,
    nodes: int,
) -> pd.DataFrame:
    """Every Table 3 cell in expectation under each reading of the correction protocol.

    The readings: corrections built with n = the catalogue size or each user's
    own n_u, under the binomial or the hypergeometric law, with
    ``cls_constraint``; and the other CLS constraint. Each value is the mean
    over users of E[M^(r~) | r_u, n_u] under the sampling that was run
    (``sampling_law``, the user's own pool), so the variants differ only in
    how the correction was built. Per-user corrections are built at ``nodes``
    values of n and interpolated (:func:`expected_at_nodes`).

    Parameters
    ----------
    ranks : dict
        ``ranks[name]`` is a pair (ranks, n_candidates).
    metrics, methods : iterable of str
        Table 3's metrics and correction methods (``sampled`` included or not).
    n_items : int
        Catalogue size.
    m : int
        Number of sampled items.
    sampling_law : {"hypergeometric", "binomial"}
        The law of the sampling that was run.
    cls_constraint : str
        The configured CLS constraint.
    nodes : int
        Values of n the per-user corrections are built at.

    Returns
    -------
    pandas.DataFrame
        Columns recommender, metric, method, n, law, cls_constraint, expected
        (a fraction).

    Examples
    --------
    Sampled AUC is unbiased, so every reading gives the exact AUC, 0.5:

    >>> table = protocol_sensitivity({"A": ([1, 2, 3], [3, 3, 3])}, ["auc"], ["ls"], 3, 1,
    ...                              "hypergeometric", "monotone_in_range", 2)
    >>> sorted(set(table["expected"].round(12)))
    [0.5]
    """
    from ..estimation.corrections import CLS_CONSTRAINTS
    from ..estimation.laws import LAWS

    all_n = np.concatenate([np.asarray(c) for _, c in ranks.values()])
    other = [c for c in CLS_CONSTRAINTS if c != cls_constraint]
    variants = [(n, law, cls_constraint) for n in ("catalogue", "per_user") for law in LAWS]
    variants += [(n, law, c) for n in ("per_user",) for law in LAWS for c in other]
    rows = []
    for n_mode, law, constraint in variants:
        node_n = np.array([n_items]) if n_mode == "catalogue" else interpolation_nodes(all_n, nodes)
        at_nodes = [
            correction_vectors(metrics, methods, int(v), m, law, cls_constraint=constraint)
            for v in node_n
        ]
        for name, (r, n_candidates) in ranks.items():
            values = expected_at_nodes(at_nodes, node_n, r, n_candidates, m, sampling_law)
            rows += [
                {
                    "recommender": name,
                    "metric": metric,
                    "method": method,
                    "n": n_mode,
                    "law": law,
                    "cls_constraint": constraint,
                    "expected": value,
                }
                for (metric, method), value in values.items()
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
