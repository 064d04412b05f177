"""The protocol study's files of sampled ranks, one per protocol: the ranks of every
user (:func:`save_protocol_ranks`), or, for a protocol a data set cannot support
(:func:`left_out_reason`: more distinct draws than some user's pool), the record that
it was left out and why (:func:`save_left_out`), which the study's outputs name. Both
are read back by ``pipeline.intermediates.read_protocol_ranks``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ...frameworks.registry import Protocol
from ...frameworks.simulate import ProtocolRanks
from ...io.atomic import read_npz, write_npz

__all__ = [
    "left_out_reason",
    "ranks_bytes_per_user",
    "read_corrections",
    "save_corrections",
    "save_left_out",
    "save_protocol_ranks",
    "study_precision",
]


def ranks_bytes_per_user(protocol: Protocol, repetitions: int, recommenders: int) -> int:
    """Bytes of a user's :class:`ProtocolRanks` under ``protocol``: int16 sampled
    ranks, float64 Hansen-Hurwitz estimates (with replacement) and weighted ranks.

    Parameters
    ----------
    protocol : Protocol
    repetitions, recommenders : int

    Returns
    -------
    int

    Examples
    --------
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
    >>> ranks_bytes_per_user(FRAMEWORK_PROTOCOLS["ncf"], 100, 3)
    624
    """
    per_draw = np.dtype(np.int16).itemsize + (8 if protocol.replacement else 0)
    return recommenders * (repetitions * per_draw + 8)


def left_out_reason(protocol: Protocol, smallest_pool: int) -> str | None:
    """Why the study leaves ``protocol`` out of a data set whose users have at least
    ``smallest_pool`` items outside their history (training and held-out items); None
    when the data set supports it.

    Without replacement every user needs m distinct items to draw, and the law the
    estimators correct with (hypergeometric) m <= n_u - 1: m <= smallest_pool (NCF's
    pool also holds the held-out item, but n_u - 1 binds it as well). With replacement
    one item to draw is enough, whatever m (DaisyRec's 999 draws from 50 items).

    Parameters
    ----------
    protocol : Protocol
    smallest_pool : int
        The fewest items outside a user's history (``SplitUsers.smallest_pool``).

    Returns
    -------
    str or None

    Examples
    --------
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
    >>> left_out_reason(FRAMEWORK_PROTOCOLS["elliot"], 99)
    'draws 100 distinct items per user, more than the smallest candidate pool, 99 items'
    >>> left_out_reason(FRAMEWORK_PROTOCOLS["ncf"], 99), left_out_reason(
    ...     FRAMEWORK_PROTOCOLS["daisyrec"], 99)
    (None, None)
    """
    if not protocol.replacement and protocol.m > smallest_pool:
        return (
            f"draws {protocol.m} distinct items per user, more than the smallest candidate "
            f"pool, {smallest_pool} items"
        )
    if smallest_pool < 1:
        return "draws from the items outside a user's history, and a user has none"
    return None


def study_precision(ranks: ProtocolRanks) -> ProtocolRanks:
    """The ranks in the precision the study keeps and estimates from, each array in the
    precision it needs: the sampled ranks in the smallest integer type that holds them
    (uint8 up to m = 254), the Hansen-Hurwitz estimates in float32 (a rank to a relative
    6e-8, far below the study's standard errors); the weighted ranks, a target, as
    computed.

    Parameters
    ----------
    ranks : ProtocolRanks

    Returns
    -------
    ProtocolRanks

    Examples
    --------
    >>> r = ProtocolRanks(0, np.ones((2, 1, 3), np.int16), np.ones((2, 1, 3)), np.ones((1, 3)))
    >>> kept = study_precision(r)
    >>> kept.sampled.dtype, kept.hansen_hurwitz.dtype
    (dtype('uint8'), dtype('float32'))
    """
    sampled = ranks.sampled
    if np.issubdtype(sampled.dtype, np.integer) and sampled.size:  # else kept, and refused
        extremes = (int(sampled.min()), int(sampled.max()))
        sampled = sampled.astype(np.result_type(*map(np.min_scalar_type, extremes)))
    return ProtocolRanks(
        ranks.start, sampled, ranks.hansen_hurwitz.astype(np.float32), ranks.weighted_rank
    )


def save_protocol_ranks(ranks: ProtocolRanks, path: str | Path) -> None:
    """Write :class:`~sampled_metrics.frameworks.simulate.ProtocolRanks` of all users
    atomically (read back by ``intermediates.read_protocol_ranks``), in the
    :func:`study_precision`.

    Parameters
    ----------
    ranks : ProtocolRanks
    path : str or pathlib.Path

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from sampled_metrics.pipeline.intermediates import read_protocol_ranks
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ncf.npz"
    >>> r = ProtocolRanks(0, np.ones((2, 1, 3), np.int16), np.ones((0, 1, 3)), np.ones((1, 3)))
    >>> save_protocol_ranks(r, path)
    >>> read_protocol_ranks(path, FRAMEWORK_PROTOCOLS["ncf"], 3, 2, 1).sampled.dtype
    dtype('uint8')
    """
    kept = study_precision(ranks)
    write_npz(
        {
            "sampled": kept.sampled,
            "hansen_hurwitz": kept.hansen_hurwitz,
            "weighted_rank": kept.weighted_rank,
        },
        path,
    )


def save_left_out(reason: str, smallest_pool: int, path: str | Path) -> None:
    """Write, in place of a protocol's ranks, that it was left out, why
    (:func:`left_out_reason`) and the smallest pool that decided it, atomically (read
    back by ``intermediates.read_protocol_ranks``, which checks both against the split).

    Parameters
    ----------
    reason : str
    smallest_pool : int
    path : str or pathlib.Path

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from sampled_metrics.pipeline.intermediates import read_protocol_ranks
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
    >>> elliot = FRAMEWORK_PROTOCOLS["elliot"]
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "elliot.npz"
    >>> save_left_out(left_out_reason(elliot, 60), 60, path)
    >>> read_protocol_ranks(path, elliot, 3, 2, 1, smallest_pool=60)
    'draws 100 distinct items per user, more than the smallest candidate pool, 60 items'
    """
    write_npz({"left_out": np.array(reason), "smallest_pool": np.array(smallest_pool)}, path)


def save_corrections(
    corrections: dict, metrics: list, methods: list, nodes: np.ndarray, path: str | Path
) -> None:
    """Write ``estimates.protocol_corrections``' vectors atomically: for each (m, law)
    an array (nodes, metrics, methods, m + 1), with the nodes they were built at.

    Parameters
    ----------
    corrections : dict
        {(m, law): [{(metric, method): vector} at each node]}.
    metrics, methods : list of str
        The keys of every node's vectors, in the order stored.
    nodes : numpy.ndarray
        The values of n they were built at.
    path : str or pathlib.Path

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "corrections.npz"
    >>> built = {(1, "binomial"): [{("ap", "sampled"): np.array([1.0, 0.5])}]}
    >>> save_corrections(built, ["ap"], ["sampled"], np.array([10]), path)
    >>> read_corrections(path, [(1, "binomial")], ["ap"], ["sampled"], np.array([10]))
    {(1, 'binomial'): [{('ap', 'sampled'): array([1. , 0.5])}]}
    """
    arrays = {"nodes": np.asarray(nodes)}
    for (m, law), at_nodes in corrections.items():
        arrays[f"{law}-{m}"] = np.array(
            [[[vectors[metric, method] for method in methods] for metric in metrics]
             for vectors in at_nodes]
        )  # fmt: skip
    write_npz(arrays, path)


def read_corrections(
    path: str | Path, laws: list, metrics: list, methods: list, nodes: np.ndarray
) -> dict:
    """The corrections :func:`save_corrections` wrote, as it was given them, for each
    (m, law) of ``laws``; checked against the nodes the split calls for.

    Parameters
    ----------
    path : str or pathlib.Path
    laws : list of (int, str)
    metrics, methods : list of str
    nodes : numpy.ndarray

    Returns
    -------
    dict
        {(m, law): [{(metric, method): vector} at each node]}.

    Raises
    ------
    ValueError
        For a damaged file or one built at other nodes, metrics or methods.
    """
    keys = [f"{law}-{m}" for m, law in dict.fromkeys(laws)]
    arrays = read_npz(path, ["nodes", *keys], "file of the protocol study's corrections")
    expected = (len(nodes), len(metrics), len(methods))
    if not np.array_equal(arrays["nodes"], nodes) or any(
        arrays[key].shape[:3] != expected for key in keys
    ):
        raise ValueError(
            f"{path}: corrections built at other nodes, metrics or methods than the split's "
            "and the config's; delete it and rerun"
        )
    return {
        (m, law): [
            {(metric, method): at_node[i, j] for i, metric in enumerate(metrics)
             for j, method in enumerate(methods)}
            for at_node in arrays[f"{law}-{m}"]
        ]
        for m, law in dict.fromkeys(laws)
    }  # fmt: skip
