"""Figure 6 (section 6.3): the expected metric of each method as the sample size m grows,
and the smallest m that orders two recommenders as the exact metric does.

Expected sampled metrics average E[M^(r~) | r_u, n_u] over users with the law of
section 4.3, the user's own n_u and the pool the items were drawn from; a
correction built per user is interpolated in n_u between a few nodes. A sample size
above what the data set allows (:func:`largest_sample_size`) is left out of the curves
(:func:`sample_sizes_left_out`), named with why.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..estimation.corrections import correction_vectors
from ..estimation.laws import sampled_rank_pmf
from ..estimation.nodes import interpolation_nodes, node_weights
from ..io.forked import forked_map

__all__ = [
    "CURVE_COLUMNS",
    "LEFT_OUT_COLUMNS",
    "THRESHOLD_COLUMNS",
    "curve_corrections",
    "curve_nodes",
    "curve_values",
    "expected_at_nodes",
    "expected_at_nodes_each",
    "largest_sample_size",
    "order_thresholds",
    "sample_size_curves",
    "sample_sizes_left_out",
]

# The columns of fig6.csv, fig6_thresholds.csv and fig6_left_out.csv.
CURVE_COLUMNS = ["m", "method", "recommender", "expected"]
THRESHOLD_COLUMNS = ["method", "pair", "first_right_m", "stays_right_from_m"]
LEFT_OUT_COLUMNS = ["key", "m", "largest_m", "reason"]


def largest_sample_size(
    n_items: int, smallest_pool: int, law: str, correction_law: str, per_user: bool
) -> tuple:
    """The largest sample size m of Figure 6 on a data set, and what sets it.

    The grid ends at n - 1, n the number of items (as the paper's). A law without
    replacement needs m <= n - 1 for the n it is used with: the curves' ``law`` each
    user's own n_u, so m <= ``smallest_pool`` (the fewest items outside a history, n_u - 1
    of the users with the fewest candidates); the corrections' ``correction_law`` the n
    they are built with, n_u with ``per_user``, else the number of items.

    Parameters
    ----------
    n_items : int
        The number of items.
    smallest_pool : int
        The fewest items outside a user's history.
    law, correction_law : {"hypergeometric", "binomial"}
        The laws of the curves (``fig6.law``) and of the corrections (``estimation.law``).
    per_user : bool
        The corrections are built with each user's n_u (``estimation.n: per_user``).

    Returns
    -------
    largest : int
    why : str
        The bound, for a message.

    Examples
    --------
    >>> largest_sample_size(3706, 1391, "binomial", "binomial", True)
    (3705, 'n - 1 = 3705 (3706 items)')
    >>> largest_sample_size(120, 99, "binomial", "hypergeometric", True)[1]
    'n_u - 1 = 99 of the users with the fewest candidates (estimation.law: hypergeometric)'
    """
    from ..estimation.laws import sampling_law

    largest, why = n_items - 1, f"n - 1 = {n_items - 1} ({n_items} items)"
    for key, name, bound in (
        ("fig6.law", law, smallest_pool),
        ("estimation.law", correction_law, smallest_pool if per_user else n_items - 1),
    ):
        if not sampling_law(name).replacement and bound < largest:
            largest = bound
            why = f"n_u - 1 = {bound} of the users with the fewest candidates ({key}: {name})"
    return largest, why


def sample_sizes_left_out(
    m_values: Iterable[int], largest: int, why: str, key: str
) -> pd.DataFrame:
    """The sample sizes of ``m_values`` above ``largest`` (:func:`largest_sample_size`):
    left out of Figure 6, each with why (:data:`LEFT_OUT_COLUMNS`; no rows when none).

    Parameters
    ----------
    m_values : iterable of int
    largest : int
    why : str
    key : str
        The configuration key of ``m_values``.

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> left_out = sample_sizes_left_out([1, 150, 200], 119, "n - 1 = 119 (120 items)",
    ...                                  "fig6.m_values")
    >>> left_out["m"].tolist(), left_out["reason"].iloc[0]
    ([150, 200], 'above the largest sample size, n - 1 = 119 (120 items)')
    """
    rows = [
        [key, int(m), largest, f"above the largest sample size, {why}"]
        for m in m_values
        if m > largest
    ]
    return pd.DataFrame(rows, columns=LEFT_OUT_COLUMNS)


def sample_size_curves(
    ranks: dict,
    metric: str,
    methods: Iterable[str],
    m_values: Iterable[int],
    n: int | None,
    law: str,
    correction_law: str | None = None,
    cls_constraint: str = "monotone_in_range",
    nodes: int = 5,
    progress: bool = False,
    workers: int = 1,
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
    workers : int, default 1
        Forked processes that build the corrections (:func:`curve_corrections`), over
        the sample sizes, the largest first: they take longest.

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
    correction_law = correction_law or law
    methods, m_values = list(methods), list(m_values)
    all_n = np.concatenate([np.asarray(c) for _, c in ranks.values()])
    node_n = curve_nodes(n, all_n, nodes)
    grid = sorted({int(m) for m in m_values}, reverse=True)
    at_by_m = curve_corrections(
        metric,
        methods,
        grid,
        node_n,
        correction_law,
        cls_constraint,
        workers=workers,
        progress=progress,
    )
    found = {
        name: curve_values(at_by_m, node_n, r, n_candidates, law)
        for name, (r, n_candidates) in ranks.items()
    }
    return pd.DataFrame(
        [
            [m, method, name, values[int(m)][metric, method]]
            for m in m_values
            for name, values in found.items()
            for method in methods
        ],
        columns=CURVE_COLUMNS,
    )


def curve_nodes(n: int | None, n_values: ArrayLike, nodes: int) -> np.ndarray:
    """The values of n Figure 6's corrections are built at: the catalogue's ``n``, or
    (``n`` None) ``nodes`` values spread over the users' ``n_values``
    (:func:`~sampled_metrics.estimation.nodes.interpolation_nodes`).

    Examples
    --------
    >>> curve_nodes(10, [4, 9], 5).tolist(), curve_nodes(None, [4, 9, 6], 2).tolist()
    ([10], [4, 9])
    """
    return np.array([n]) if n is not None else interpolation_nodes(n_values, nodes)


def curve_corrections(
    metric: str,
    methods: Iterable[str],
    m_values: Iterable[int],
    node_n: ArrayLike,
    correction_law: str,
    cls_constraint: str,
    *,
    workers: int = 1,
    progress: bool = False,
) -> dict:
    """{m: [{(metric, method): M^} at each node of ``node_n``]}: Figure 6's corrections,
    which depend on the users' n alone, never on a model.

    Parameters
    ----------
    metric, methods, m_values, correction_law, cls_constraint
        As :func:`sample_size_curves`' (``m_values`` built in their order, the largest
        first when given so: they take longest).
    node_n : array_like of int
        The values of n (:func:`curve_nodes`).
    workers : int, default 1
        Forked processes over the sample sizes.
    progress : bool, default False
        A tqdm bar over the sample sizes.

    Returns
    -------
    dict

    Examples
    --------
    >>> at = curve_corrections("auc", ["sampled"], [1], [10], "binomial", "monotone")
    >>> at[1][0]["auc", "sampled"].tolist()
    [1.0, 0.0]
    """
    grid = [int(m) for m in m_values]
    work = (metric, list(methods), np.asarray(node_n), correction_law, cls_constraint)
    found = forked_map(
        _corrections_at, work, grid, workers, progress="Figure 6 sample sizes" if progress else None
    )
    return dict(zip(grid, found))


def _corrections_at(work: tuple, m: int) -> list:
    """The corrections of sample size m at every node of n."""
    metric, methods, node_n, correction_law, cls_constraint = work
    return [
        correction_vectors(
            [metric], methods, int(v), m, correction_law, cls_constraint=cls_constraint
        )
        for v in node_n
    ]


def curve_values(
    at_by_m: dict, node_n: ArrayLike, ranks: ArrayLike, n_candidates: ArrayLike, law: str
) -> dict:
    """{m: {(metric, method): expected value}} of one recommender: :func:`expected_at_nodes`
    of each sample size's corrections (:func:`curve_corrections`).

    Examples
    --------
    Sampled AUC is unbiased: the mean of (10 - r)/9 over r = 1, 2.

    >>> at = curve_corrections("auc", ["sampled"], [1, 9], [10], "hypergeometric", "monotone")
    >>> values = curve_values(at, [10], [1, 2], [10, 10], "hypergeometric")
    >>> [round(values[m]["auc", "sampled"], 4) for m in (1, 9)]
    [0.9444, 0.9444]
    """
    return {
        m: expected_at_nodes(at_nodes, node_n, ranks, n_candidates, m, law)
        for m, at_nodes in at_by_m.items()
    }


def expected_at_nodes(
    at_nodes: list[dict],
    node_n: ArrayLike,
    ranks: ArrayLike,
    n_candidates: ArrayLike,
    m: int,
    law: str,
) -> dict:
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
    build = [(at_nodes, node_n)]
    return _expected_sums(build, ranks, n_candidates, m, law, per_vector=True)[0]


def expected_at_nodes_each(
    builds: list[tuple[list[dict], ArrayLike]],
    ranks: ArrayLike,
    n_candidates: ArrayLike,
    m: int,
    law: str,
) -> list:
    """:func:`expected_at_nodes` of several builds of the corrections on the same users:
    each user's law of r~ is computed once for all of them, and weighted by each build's
    interpolation weights once (P^T W), which every vector of the build reads. The same
    values as :func:`expected_at_nodes` but for the rounding of sums taken in another
    order: one product per build instead of one per vector. (Figure 6 keeps
    :func:`expected_at_nodes`: its thresholds compare recommenders bit by bit, and where
    the metric is constant in r~, Recall@10 below m = 10, their values differ by rounding only.)

    Parameters
    ----------
    builds : list of (at_nodes, node_n)
        As :func:`expected_at_nodes`' first two arguments.
    ranks, n_candidates, m, law
        As :func:`expected_at_nodes`'.

    Returns
    -------
    list of dict
        One {(metric, method): float} per build, in order.

    Examples
    --------
    >>> one = [{("m", "x"): [1.0, 0.0]}, {("m", "x"): [3.0, 0.0]}]
    >>> two = [{("m", "x"): [2.0, 0.0]}]
    >>> expected_at_nodes_each([(one, [4, 6]), (two, [5])], [1, 1], [5, 6], 1, "binomial")
    [{('m', 'x'): 2.5}, {('m', 'x'): 2.0}]
    """
    return _expected_sums(builds, ranks, n_candidates, m, law, per_vector=False)


def _expected_sums(builds, ranks, n_candidates, m: int, law: str, per_vector: bool) -> list:
    """The sums of :func:`expected_at_nodes_each`, or with ``per_vector`` each user's
    expectation P V first, as :func:`expected_at_nodes`."""
    ranks, n_candidates = np.atleast_1d(ranks), np.broadcast_to(n_candidates, np.shape(ranks))
    weights = [node_weights(n_candidates, node_n) for _, node_n in builds]
    stacked = [
        {key: np.column_stack([v[key] for v in at_nodes]) for key in at_nodes[0]}
        for at_nodes, _ in builds
    ]
    totals = [dict.fromkeys(vectors, 0.0) for vectors in stacked]
    # Users in blocks, so that the law of a block (users x (m + 1)) stays within
    # _LAW_BLOCK_BYTES whatever the number of users and m.
    block = max(1, _LAW_BLOCK_BYTES // (8 * (m + 1)))
    for start in range(0, ranks.size, block):
        users = slice(start, start + block)
        P = sampled_rank_pmf(ranks[users], n_candidates[users], m, law, tails=False)
        for vectors, total, w in zip(stacked, totals, weights):
            if per_vector:
                for key, V in vectors.items():
                    total[key] += float(np.sum((P @ V) * w[users]))
                continue
            # sum_u sum_k w_uk (P V)_uk = sum_(r~, k) V_r~k (P^T W)_r~k: one product
            # with the weights serves every vector of the build
            mass = P.T @ w[users]
            for key, V in vectors.items():
                total[key] += float(np.sum(mass * V))
    return [{key: value / ranks.size for key, value in total.items()} for total in totals]


# Memory of one block of per-user laws in expected_at_nodes (Figure 6 at large m).
_LAW_BLOCK_BYTES = 32 * 2**20


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
    return pd.DataFrame(rows, columns=THRESHOLD_COLUMNS)
