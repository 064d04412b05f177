"""Metrics of a population of users: exact, sampled (per repetition), expected, learned.

The exact metric averages M(r_u) over users, with AUC's n the user's ranked-set size
(eq 7). A sampled metric averages a vector M^ over r~ = 1..m+1 (the uncorrected metric or
a correction, section 5) at the observed sampled ranks. An expected sampled metric averages
E[M^(r~) | r_u, n_u] over users with the law of section 4.3, the user's own n_u and the
pool the items were drawn from (eq 16). A learned estimator learns its rank distribution
from each repetition alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..io.forked import forked_map
from .laws import WITHOUT_REPLACEMENT, sampled_rank_pmf
from .metrics import metric_by_name
from .registry import parse_estimator

__all__ = [
    "exact_metric",
    "expected_sampled_value",
    "expected_sampled_values",
    "learned_estimates",
    "learned_estimates_of",
    "sampled_metric_table",
]


def exact_metric(metric: str, ranks: ArrayLike, n_candidates: ArrayLike) -> float:
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


def sampled_metric_table(
    sampled_ranks: ArrayLike,
    vectors: dict | Callable[..., Any],
    n_per_user: ArrayLike | None = None,
) -> pd.DataFrame:
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
        rank is not in 1..m + 1.

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
    lowest, highest = (index.min(), index.max()) if index.size else (0, -1)
    sums: dict = {}
    for users, group_vectors in _user_groups(vectors, n_per_user, index.shape[1]):
        group = index[:, users]
        for key, vector in group_vectors.items():
            vector = np.asarray(vector)
            if lowest < 0 or highest >= vector.size:
                raise ValueError(f"sampled ranks must lie in 1..m + 1 = {vector.size}")
            sums[key] = sums.get(key, 0.0) + vector[group].sum(axis=1)
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


def learned_estimates(
    sampled_ranks: ArrayLike,
    n: ArrayLike,
    m: int,
    law: str,
    metrics: Iterable[str],
    methods: Iterable[str],
    *,
    workers: int = 1,
    progress: bool = False,
) -> pd.DataFrame:
    """Per repetition, the estimates of the learned estimators (``em``, ``maxent``,
    ``bv_em_<gamma>``, ...: :mod:`sampled_metrics.estimation.estimators`), each repetition's
    distribution learned from that repetition alone.

    Parameters
    ----------
    sampled_ranks : array_like (repetitions, n_users)
        Integer sampled ranks.
    n : int or array_like of int
        The users' n (one for all, or per user).
    m : int
        Sampled items per user.
    law : {"binomial", "hypergeometric"}
        The law the estimators assume.
    metrics, methods : iterable of str
        Metric names; learned estimator names.
    workers : int, default 1
        Processes (forked) over the repetitions.
    progress : bool, default False
        A tqdm bar over the repetitions.

    Returns
    -------
    pandas.DataFrame
        metric, method, rep, value (a fraction), as :func:`sampled_metric_table`.

    Examples
    --------
    >>> ranks = np.array([[1, 2, 11], [1, 1, 3]])  # 2 repetitions x 3 users, m = n - 1
    >>> table = learned_estimates(ranks, 11, 10, "hypergeometric", ["recall@1"], ["em"])
    >>> table["value"].round(6).tolist()
    [0.333333, 0.666667]
    """
    (table,) = learned_estimates_of(
        [(sampled_ranks, n)], m, law, metrics, methods, workers=workers, progress=progress
    )
    return table


def learned_estimates_of(
    evaluations: Sequence[tuple[ArrayLike, ArrayLike]],
    m: int,
    law: str,
    metrics: Iterable[str],
    methods: Iterable[str],
    *,
    workers: int = 1,
    progress: bool = False,
) -> list:
    """:func:`learned_estimates` of several evaluations at once (the recommenders of a
    run): EM of each evaluation's repetitions together, the evaluations in a pool of
    ``workers`` forked processes, then every (evaluation, repetition) in another. The
    workers inherit the sampled ranks (the second pool also EM's distributions): only
    indices, EM's distributions and the estimates cross between processes.

    Parameters
    ----------
    evaluations : sequence of (sampled_ranks, n)
        As :func:`learned_estimates`' first two arguments.
    m, law, metrics, methods, workers, progress
        As :func:`learned_estimates`.

    Returns
    -------
    list of pandas.DataFrame
        One table per evaluation, in order, as :func:`learned_estimates`'.

    Examples
    --------
    >>> ranks = np.array([[1, 2, 11], [1, 1, 3]])
    >>> tables = learned_estimates_of([(ranks, 11), (ranks[::-1], 11)], 10,
    ...                               "hypergeometric", ["recall@1"], ["em"])
    >>> [t["value"].round(6).tolist() for t in tables]
    [[0.333333, 0.666667], [0.666667, 0.333333]]
    """
    metrics, methods = list(metrics), list(methods)
    ranks = [np.asarray(sampled) for sampled, _ in evaluations]
    n = [users_n for _, users_n in evaluations]
    learned: list[dict] = [{} for _ in ranks]  # {kind: pis over repetitions} of each evaluation
    shared = _LearnedWork(ranks, n, m, law, metrics, methods, learned)
    if any(parse_estimator(method)[1] == "em" for method in methods):
        # EM of every repetition of an evaluation at once, the evaluations in the pool
        for found, pis in zip(learned, forked_map(_em_of, shared, range(len(ranks)), workers)):
            found["em"] = pis
    tasks = [(e, rep) for e, sampled in enumerate(ranks) for rep in range(sampled.shape[0])]
    rows = forked_map(
        _learned_at,
        shared,
        tasks,
        workers,
        chunksize=max(1, len(tasks) // (8 * workers)),
        progress="learned estimators" if progress else None,
    )
    per_evaluation: list = [[] for _ in ranks]
    for (e, _), found in zip(tasks, rows):
        per_evaluation[e] += found
    return [
        pd.DataFrame(found, columns=["metric", "method", "rep", "value"])
        for found in per_evaluation
    ]


class _LearnedWork(NamedTuple):
    """What the workers of :func:`learned_estimates_of` read (inherited at fork)."""

    ranks: list
    n: list
    m: int
    law: str
    metrics: list
    methods: list
    learned: list  # {kind: pis over repetitions} of each evaluation


def _em_of(work: _LearnedWork, e: int) -> list:
    """EM's distributions of every repetition of evaluation ``e``, together."""
    from .estimators import em_distributions, sampled_evaluation

    sampled, users_n = work.ranks[e], work.n[e]
    return em_distributions([sampled_evaluation(row, work.m, users_n, work.law) for row in sampled])


def _learned_at(work: _LearnedWork, task) -> list:
    """[(metric, method, rep, value)] of one (evaluation, repetition), metric by metric."""
    from .estimators import point_estimates, sampled_evaluation

    e, rep = task
    data = sampled_evaluation(work.ranks[e][rep], work.m, work.n[e], work.law)
    distributions = {kind: pis[rep] for kind, pis in work.learned[e].items()}
    values = point_estimates(data, work.metrics, work.methods, distributions=distributions)
    return [
        (metric, method, rep, values[metric, method])
        for metric in work.metrics
        for method in work.methods
    ]


def _user_groups(vectors, n_per_user, n_users: int):
    """[(user indices, {(metric, method): M^})]: one group, or one per distinct n."""
    if n_per_user is None:
        return [(np.arange(n_users), vectors)]
    distinct, group = np.unique(np.asarray(n_per_user), return_inverse=True)
    members = np.split(np.argsort(group, kind="stable"), np.cumsum(np.bincount(group))[:-1])
    return [(users, vectors(int(n))) for n, users in zip(distinct, members)]


def expected_sampled_values(
    vectors: dict | Callable[..., Any],
    ranks: ArrayLike,
    n_candidates: ArrayLike,
    m: int,
    law: str = WITHOUT_REPLACEMENT,
    per_user: bool = False,
) -> dict:
    """{(metric, method): mean over users of E[M^(r~) | r_u, n_u]} (eq 16), every vector at once.

    The law of user u has n = n_u, their ranked-set size, as in the sampling
    itself. The vectors are one dict for all users, or with ``per_user`` a
    function n -> dict called once per distinct n_u (the correction of each
    user built with their own n).

    Parameters
    ----------
    vectors : dict or callable
        As :func:`sampled_metric_table`.
    ranks : array_like of int
        Exact rank r_u of each user's held-out item.
    n_candidates : array_like of int
        Each user's ranked-set size n_u.
    m : int
        Number of sampled items.
    law : {"hypergeometric", "binomial"}, default "hypergeometric"
        The sampling law.
    per_user : bool, default False
        Whether ``vectors`` is a function of n.

    Returns
    -------
    dict
        {(metric, method): float}.

    Examples
    --------
    >>> expected_sampled_values({("auc", "sampled"): [1.0, 0.0]}, [1, 2, 3], [3, 3, 3], 1)
    {('auc', 'sampled'): 0.5}
    """
    ranks, n_candidates = np.asarray(ranks), np.asarray(n_candidates)
    # every user's law at once (a row depends on its user alone), read by each group
    laws = sampled_rank_pmf(ranks, np.broadcast_to(n_candidates, ranks.shape), m, law)
    totals: dict = {}
    for users, group_vectors in _user_groups(
        vectors, n_candidates if per_user else None, ranks.size
    ):
        P = laws[users]
        keys = list(group_vectors)
        sums = P.sum(axis=0) @ np.column_stack([group_vectors[key] for key in keys])
        for key, value in zip(keys, sums):
            totals[key] = totals.get(key, 0.0) + float(value)
    return {key: total / ranks.size for key, total in totals.items()}


def expected_sampled_value(
    vector: ArrayLike, ranks: ArrayLike, n_candidates: ArrayLike, law: str = WITHOUT_REPLACEMENT
) -> float:
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
