"""The protocol study's share of one model (rule ``protocol_model``): the exact metrics
of its ranks and, for each protocol that draws for every model apart (unpaired:
``Protocol.paired`` False), every estimate of every repetition and the metrics of its
popularity-weighted ranks. No other model enters them, so each model's share is made
as soon as its ranking pass is done; rule ``protocols`` joins the shares, the same
numbers as the study of all models at once.

A share is an .npz of fractions: ``exact`` (metrics,), and per protocol
``<protocol>.values`` (metrics, methods, repetitions), methods as
:func:`estimate_methods`, and for a popularity protocol ``<protocol>.weighted``
(metrics,).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...estimation.population import exact_metric
from ...estimation.registry import paper_methods
from ...frameworks.registry import HANSEN_HURWITZ, Protocol
from ...frameworks.simulate import ProtocolRanks
from ...io.atomic import read_npz, write_npz
from .estimates import protocol_estimates
from .files import study_precision

__all__ = ["estimate_methods", "exact_metrics", "part_values", "read_part", "save_part",
           "study_part"]  # fmt: skip


def estimate_methods(protocol: Protocol, methods: Sequence[str]) -> list[str]:
    """The methods of ``protocol_estimates``' table, in its order: the paper's,
    Hansen-Hurwitz for a protocol with replacement, then the learned ones.

    Parameters
    ----------
    protocol : Protocol
    methods : list of str

    Returns
    -------
    list of str

    Examples
    --------
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS as P
    >>> estimate_methods(P["daisyrec"], ["sampled", "em", "cls"])
    ['sampled', 'cls', 'hansen_hurwitz', 'em']
    """
    fixed = paper_methods(methods)
    learned = [method for method in methods if method not in fixed]
    return [*fixed, *([HANSEN_HURWITZ] if protocol.replacement else []), *learned]


def exact_metrics(ranks: ArrayLike, n: ArrayLike, metrics: Sequence[str]) -> np.ndarray:
    """(metrics,) the exact metric (a fraction) of each metric on the ranks.

    Parameters
    ----------
    ranks, n : array_like (users,)
    metrics : list of str

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> exact_metrics([1, 3], [10, 10], ["recall@1"]).tolist()
    [0.5]
    """
    return np.array([exact_metric(metric, ranks, n) for metric in metrics], dtype=float)


def study_part(
    ranks: ProtocolRanks,
    protocol: Protocol,
    n: ArrayLike,
    metrics: Sequence[str],
    methods: Sequence[str],
    *,
    nodes: int,
    corrections: list,
) -> dict:
    """One model's arrays of one protocol (the module docstring): ``protocol_estimates``
    of its simulated ranks, in the precision the study keeps (``files.study_precision``:
    the same numbers as the study of all models from its files), and the metrics of
    its weighted ranks.

    Parameters
    ----------
    ranks : ProtocolRanks
        Of one recommender.
    protocol : Protocol
    n : array_like of int (users,)
    metrics, methods : list of str
    nodes : int
    corrections : list of dict
        ``estimates.protocol_corrections``' of the protocol's (m, law).

    Returns
    -------
    dict
        {"<protocol>.values": array, and "<protocol>.weighted" for alpha > 0}.
    """
    table = protocol_estimates(
        study_precision(ranks),
        protocol,
        n,
        ["model"],
        metrics,
        methods,
        nodes=nodes,
        corrections=corrections,
    )
    shape = (len(metrics), len(estimate_methods(protocol, methods)), ranks.sampled.shape[0])
    part = {f"{protocol.name}.values": table["value"].to_numpy().reshape(shape)}
    if protocol.alpha:
        part[f"{protocol.name}.weighted"] = exact_metrics(ranks.weighted_rank[0], n, metrics)
    return part


def save_part(part: dict, path: str | Path) -> None:
    """Write a model's share atomically (read back by :func:`read_part`)."""
    write_npz(part, path)


def read_part(path: str | Path, protocols: Sequence[Protocol]) -> dict:
    """A model's share, with the arrays of ``protocols`` (and the exact metrics).

    Parameters
    ----------
    path : str or pathlib.Path
    protocols : list of Protocol

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        For a damaged file, or one without a protocol's arrays.
    """
    keys = ["exact"] + [
        f"{p.name}.{kind}"
        for p in protocols
        for kind in ("values", "weighted")[: 1 + bool(p.alpha)]
    ]
    return read_npz(path, keys, "model's share of the protocol study (rule protocol_model)")


def part_values(
    parts: Sequence[dict],
    protocol: Protocol,
    recommenders: Sequence[str],
    metrics: Sequence[str],
    methods: Sequence[str],
) -> pd.DataFrame:
    """``protocol_estimates``' table of every recommender from their shares, row for
    row: recommender, metric, method, rep, value (a fraction).

    Parameters
    ----------
    parts : list of dict
        Each recommender's share (:func:`read_part`), in order.
    protocol : Protocol
    recommenders, metrics, methods : list of str

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS as P
    >>> part = {"ncf.values": np.array([[[0.5, 0.25]]])}
    >>> part_values([part], P["ncf"], ["A"], ["ap"], ["sampled"]).values.tolist()
    [['A', 'ap', 'sampled', 0, 0.5], ['A', 'ap', 'sampled', 1, 0.25]]
    """
    names = estimate_methods(protocol, methods)
    values = np.stack([part[f"{protocol.name}.values"] for part in parts])
    shape = (len(recommenders), len(metrics), len(names), values.shape[-1])
    if values.shape != shape:
        raise ValueError(f"{protocol.name}: shares of shape {values.shape}, not {shape}")
    grid = pd.MultiIndex.from_product(
        [list(recommenders), list(metrics), names, np.arange(shape[-1])],
        names=["recommender", "metric", "method", "rep"],
    )
    return grid.to_frame(index=False).assign(value=values.ravel())
