"""Every estimator on the frameworks' simulated sampled ranks, and the study's tables.

Each protocol's sampled ranks are corrected with the law the protocol implies
(:attr:`~sampled_metrics.frameworks.registry.Protocol.law`) and each user's own n: the
paper's corrections interpolated between values of n, the learned estimators, and for
protocols with replacement the Hansen-Hurwitz estimate (:data:`.registry.HANSEN_HURWITZ`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...estimation.corrections import correction_vectors
from ...estimation.metrics import metric_by_name
from ...estimation.nodes import interpolation_nodes, node_weights
from ...estimation.population import learned_estimates
from ...estimation.registry import paper_methods
from ...frameworks.registry import HANSEN_HURWITZ, Protocol
from ...frameworks.simulate import ProtocolRanks
from ...io.forked import forked_map

__all__ = ["protocol_corrections", "protocol_estimates", "protocol_table"]


def protocol_corrections(
    n: ArrayLike,
    protocols: Sequence[Protocol],
    metrics: Sequence[str],
    methods: Sequence[str],
    *,
    nodes: int,
    workers: int = 1,
) -> dict:
    """The paper's corrections every protocol's estimates read, built once for each
    distinct (m, law) at each of ``nodes`` values of n (``nodes.interpolation_nodes``
    of the users' n): they depend on the split alone, not on a model.

    Parameters
    ----------
    n : array_like of int (users,)
        Each user's ranked-set size.
    protocols : list of Protocol
    metrics, methods : list of str
        The study's; only the paper's methods (``registry.paper_methods``) are built.
    nodes : int
    workers : int, default 1
        Forked processes over the (m, law, node) systems, BLAS on one thread in each
        (the same bits for any number).

    Returns
    -------
    dict
        {(m, law): [correction_vectors at each node]}.

    Examples
    --------
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS as P
    >>> built = protocol_corrections([50, 60], [P["elliot"], P["bert4rec"]], ["ap"],
    ...                              ["sampled", "em"], nodes=2)
    >>> list(built), len(built[100, "hypergeometric"])  # one law of both, at 2 nodes
    ([(100, 'hypergeometric')], 2)
    """
    fixed = paper_methods(methods)
    node_n = interpolation_nodes(np.asarray(n, dtype=np.int64), nodes)
    laws = list(dict.fromkeys((protocol.m, protocol.law) for protocol in protocols))
    tasks = [(m, law, int(node)) for m, law in laws for node in node_n]
    built = forked_map(
        lambda _, task: correction_vectors(metrics, fixed, task[2], task[0], task[1]),
        None,
        tasks,
        workers,
    )
    return {
        (m, law): built[k * node_n.size : (k + 1) * node_n.size] for k, (m, law) in enumerate(laws)
    }


def protocol_estimates(
    ranks: ProtocolRanks,
    protocol: Protocol,
    n: ArrayLike,
    recommenders: Sequence[str],
    metrics: Sequence[str],
    methods: Sequence[str],
    *,
    nodes: int,
    workers: int = 1,
    corrections: list | None = None,
) -> pd.DataFrame:
    """Every estimator on every repetition of one protocol's simulated ranks, with
    the law the protocol implies (:attr:`Protocol.law`) and the user's own n.

    The paper's corrections are built at ``nodes`` values of n and interpolated
    linearly in n between them (as Figure 6's); the learned estimators
    (``em``, ``mn_em``, ...) learn from each repetition; :data:`HANSEN_HURWITZ` is
    added for protocols with replacement.

    Parameters
    ----------
    ranks : ProtocolRanks
    protocol : Protocol
    n : array_like of int (users,)
        Each user's ranked-set size (the exact ranks').
    recommenders : list of str
        The names of ``ranks``' recommenders, in order.
    metrics, methods : list of str
    nodes : int
        Values of n the corrections are built at (at least 2).
    workers : int, default 1
        Processes of the learned estimators.
    corrections : list of dict, optional
        The corrections at the nodes, as :func:`protocol_corrections` built them for
        the protocol's (m, law); built here when not given.

    Returns
    -------
    pandas.DataFrame
        recommender, metric, method, rep, value (a fraction).

    Examples
    --------
    >>> r = ProtocolRanks(0, np.array([[[1, 2, 3]]], np.int16), np.array([[[1.0, 2, 3]]]),
    ...                   np.ones((1, 3)))
    >>> p = Protocol("tiny", 2, 0.0, True, False, False, "")
    >>> table = protocol_estimates(r, p, [3, 3, 3], ["A"], ["recall@1"], ["sampled"], nodes=2)
    >>> table[["method", "value"]].round(4).values.tolist()
    [['sampled', 0.3333], ['hansen_hurwitz', 0.3333]]
    """
    n = np.asarray(n, dtype=np.int64)
    methods, metrics = list(methods), list(metrics)
    fixed = paper_methods(methods)
    learned = [method for method in methods if method not in fixed]
    node_n = interpolation_nodes(n, nodes)
    distinct_n, user_n = np.unique(n, return_inverse=True)
    weights = node_weights(distinct_n, node_n)  # a function of n: once per distinct n
    vectors = corrections
    if vectors is None:
        vectors = [
            correction_vectors(metrics, fixed, int(node), protocol.m, protocol.law)
            for node in node_n
        ]
    frames = []
    reps = np.arange(ranks.sampled.shape[0])
    for metric, method in product(metrics, fixed):
        # each distinct n's vector, interpolated between the nodes (once for every
        # recommender, one at a time: at m = 999 and thousands of n it is large), read
        # per user
        by_n = sum(weights[:, [j]] * vectors[j][metric, method] for j in range(node_n.size))
        for k, recommender in enumerate(recommenders):
            per_user = by_n[user_n, ranks.sampled[:, k, :].astype(np.int64) - 1]
            frames.append(_values(recommender, metric, method, reps, per_user.mean(axis=1)))
    for k, recommender in enumerate(recommenders):
        if protocol.replacement:
            estimate = np.minimum(ranks.hansen_hurwitz[:, k, :], n)
            for metric in metrics:
                values = metric_by_name(metric)(estimate, n).mean(axis=1)
                frames.append(_values(recommender, metric, HANSEN_HURWITZ, reps, values))
        if learned:
            table = learned_estimates(
                ranks.sampled[:, k, :].astype(np.int64), n, protocol.m, protocol.law, metrics,
                learned, workers=workers,
            )  # fmt: skip
            frames.append(table.assign(recommender=recommender))
    # rows by recommender, metric and method in the given orders, then repetition
    position = {
        column: {name: i for i, name in enumerate(names)}
        for column, names in (
            ("recommender", recommenders),
            ("metric", metrics),
            ("method", [*fixed, HANSEN_HURWITZ, *learned]),
        )
    }
    table = pd.concat(frames, ignore_index=True).sort_values(
        ["recommender", "metric", "method", "rep"],
        key=lambda column: column.map(position[column.name]) if column.name in position else column,
        kind="stable",
    )
    return table.reset_index(drop=True)[["recommender", "metric", "method", "rep", "value"]]


def _values(recommender, metric, method, reps, values) -> pd.DataFrame:
    return pd.DataFrame(
        {"recommender": recommender, "metric": metric, "method": method, "rep": reps,
         "value": values}
    )  # fmt: skip


def protocol_table(frame: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The study's long table with its key columns first: dataset, protocol, target
    (when present), then the rest in their order.

    Parameters
    ----------
    frame : pandas.DataFrame
        With a column ``protocol``.
    dataset : str

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> frame = pd.DataFrame({"metric": ["ap"], "protocol": ["ncf"], "rmse": [1.0]})
    >>> list(protocol_table(frame, "ml-1m").columns)
    ['dataset', 'protocol', 'metric', 'rmse']
    """
    first = ["protocol", *(["target"] if "target" in frame else [])]
    rest = [column for column in frame.columns if column not in first]
    table = frame[first + rest].copy()
    table.insert(0, "dataset", dataset)
    return table
