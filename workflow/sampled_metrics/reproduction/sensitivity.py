"""Table 3 under each reading of the correction protocol (section 6.2): the corrections
built with the catalogue size or each user's own n_u, under either sampling law and
either CLS constraint, each cell in expectation under the sampling that was run.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..estimation.corrections import CLS_CONSTRAINTS, correction_vectors
from ..estimation.laws import LAWS
from ..estimation.nodes import interpolation_nodes
from ..io.forked import forked_map
from .curves import expected_at_nodes_each

__all__ = [
    "protocol_sensitivity",
    "sensitivity_corrections",
    "sensitivity_table",
    "sensitivity_variants",
]


def protocol_sensitivity(
    ranks: dict,
    metrics: Iterable[str],
    methods: Iterable[str],
    n_items: int,
    m: int,
    sampling_law: str,
    cls_constraint: str,
    nodes: int,
    *,
    workers: int = 1,
) -> pd.DataFrame:
    """Every Table 3 cell in expectation under each reading of the correction protocol.

    The readings: corrections built with n = the catalogue size or each user's
    own n_u, under the binomial or the hypergeometric law, with
    ``cls_constraint``; and, per user, the other CLS constraint, whose readings hold
    the CLS rows only (the one method it changes). Each value is the mean
    over users of E[M^(r~) | r_u, n_u] under the sampling that was run
    (``sampling_law``, the user's own pool), so the variants differ only in
    how the correction was built. Per-user corrections are built at ``nodes``
    values of n and interpolated (:func:`.curves.expected_at_nodes_each`).

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
    workers : int, default 1
        Forked processes that build the corrections (each node of n and law once for
        both CLS constraints), then take each recommender's expectations (the same
        values with any number).

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
    methods = list(methods)
    all_n = np.concatenate([np.asarray(c) for _, c in ranks.values()])
    variants = sensitivity_variants(all_n, n_items, methods, cls_constraint, nodes)
    built = sensitivity_corrections(variants, metrics, methods, m, cls_constraint, workers=workers)
    return sensitivity_table(ranks, variants, built, m, sampling_law, workers=workers)


def sensitivity_variants(
    n_values: ArrayLike, n_items: int, methods: Iterable[str], cls_constraint: str, nodes: int
) -> list:
    """[((n reading, law, CLS constraint), values of n built at)]: the readings of
    :func:`protocol_sensitivity`, from the users' ``n_values`` alone.

    Examples
    --------
    >>> [(v, n.tolist()) for v, n in sensitivity_variants([5, 9], 10, ["ls"], "monotone", 2)]
    ... # doctest: +NORMALIZE_WHITESPACE
    [(('catalogue', 'binomial', 'monotone'), [10]),
     (('catalogue', 'hypergeometric', 'monotone'), [10]),
     (('per_user', 'binomial', 'monotone'), [5, 9]),
     (('per_user', 'hypergeometric', 'monotone'), [5, 9])]
    """
    other = [c for c in CLS_CONSTRAINTS if c != cls_constraint and "cls" in methods]
    readings = [(n, law, cls_constraint) for n in ("catalogue", "per_user") for law in LAWS]
    readings += [(n, law, c) for n in ("per_user",) for law in LAWS for c in other]
    return [
        (
            reading,
            np.array([n_items])
            if reading[0] == "catalogue"
            else interpolation_nodes(n_values, nodes),
        )
        for reading in readings
    ]


def sensitivity_corrections(
    variants: list,
    metrics: Iterable[str],
    methods: Iterable[str],
    m: int,
    cls_constraint: str,
    *,
    workers: int = 1,
) -> dict:
    """{(n, law, CLS constraint): {(metric, method): M^}} of every node of n of the
    ``variants`` (:func:`sensitivity_variants`): every method under ``cls_constraint``,
    CLS alone under the other constraints; one build per node of n and law, in
    ``workers`` forked processes. They depend on the users' n alone, never on a model.

    Examples
    --------
    >>> variants = sensitivity_variants([3], 3, ["ls"], "monotone", 2)
    >>> built = sensitivity_corrections(variants, ["auc"], ["ls"], 1, "monotone")
    >>> sorted(built)
    [(3, 'binomial', 'monotone'), (3, 'hypergeometric', 'monotone')]
    """
    # one build per node of n and law, every constraint's vectors from the same law
    tasks = list(dict.fromkeys((int(v), law) for (_, law, _), node_n in variants for v in node_n))
    shared = (list(metrics), list(methods), m, cls_constraint)
    return {
        (n, law, constraint): vectors
        for (n, law), found in zip(tasks, forked_map(_vectors_at_node, shared, tasks, workers))
        for constraint, vectors in found.items()
    }


def sensitivity_table(
    ranks: dict, variants: list, built: dict, m: int, sampling_law: str, *, workers: int = 1
) -> pd.DataFrame:
    """:func:`protocol_sensitivity`'s table from the corrections of
    :func:`sensitivity_corrections`: each recommender's expectations, in ``workers``
    forked processes (the same values with any number)."""
    builds = [
        ([built[int(v), law, constraint] for v in node_n], node_n)
        for (_, law, constraint), node_n in variants
    ]
    # each recommender's per-user laws once, for every variant
    expected = forked_map(
        lambda shared, pair: expected_at_nodes_each(shared, pair[0], pair[1], m, sampling_law),
        builds,
        list(ranks.values()),
        workers,
    )
    each = dict(zip(ranks, expected))
    rows = [
        {
            "recommender": name,
            "metric": metric,
            "method": method,
            "n": n_mode,
            "law": law,
            "cls_constraint": constraint,
            "expected": value,
        }
        for v, ((n_mode, law, constraint), _) in enumerate(variants)
        for name in ranks
        for (metric, method), value in each[name][v].items()
    ]
    return pd.DataFrame(rows)


def _vectors_at_node(shared, task) -> dict:
    """{CLS constraint: correction_vectors of (metrics, methods, m) at the task's (n, law)}:
    every method under the configured constraint; under each other constraint CLS alone,
    the only method it changes (the law, cached, serves both)."""
    (metrics, methods, m, configured), (n, law) = shared, task
    found = {configured: correction_vectors(metrics, methods, n, m, law, cls_constraint=configured)}
    if "cls" in methods:
        for constraint in CLS_CONSTRAINTS:
            if constraint != configured:
                found[constraint] = correction_vectors(
                    metrics, ["cls"], n, m, law, cls_constraint=constraint
                )
    return found
