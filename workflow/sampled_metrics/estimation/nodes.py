"""Values of n at which per-user quantities are built, and the linear interpolation
between them: users of many distinct n share corrections built at a few nodes.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["bracketing_weights", "interpolation_nodes", "node_weights"]


def interpolation_nodes(n_values: ArrayLike, count: int) -> np.ndarray:
    """At most ``count`` values of n evenly spaced over the users' range of n.

    Parameters
    ----------
    n_values : array_like of int
        The users' n.
    count : int
        How many nodes at most (at least 2).

    Returns
    -------
    numpy.ndarray
        Sorted distinct integers: every distinct n when there are at most
        ``count``, else ``count`` evenly spaced values from the smallest n to the largest.

    Examples
    --------
    >>> interpolation_nodes([5, 5, 7], 4).tolist(), interpolation_nodes(range(1, 101), 3).tolist()
    ([5, 7], [1, 50, 100])
    """
    if count < 2:
        raise ValueError(f"nodes must be at least 2, got {count}")
    values = np.asarray(n_values)
    distinct = np.unique(values)
    if distinct.size <= count:
        return distinct
    return np.unique(np.round(np.linspace(distinct[0], distinct[-1], count)).astype(int))


def node_weights(n_values: ArrayLike, nodes: ArrayLike) -> np.ndarray:
    """Linear interpolation weights of each n between the nodes, (len(n_values), len(nodes)).

    Parameters
    ----------
    n_values : array_like of int
        The users' n (outside the nodes' range: the nearest node).
    nodes : array_like of int
        Increasing values of n.

    Returns
    -------
    numpy.ndarray
        Rows summing to 1, at most two non-zero weights each.

    Examples
    --------
    >>> node_weights([10, 15, 20], [10, 20]).tolist()
    [[1.0, 0.0], [0.5, 0.5], [0.0, 1.0]]
    """
    nodes = np.asarray(nodes, dtype=float)
    n_values = np.asarray(n_values, dtype=float)
    if nodes.size == 1:
        return np.ones((n_values.size, 1))
    return np.column_stack(
        [np.interp(n_values, nodes, np.eye(nodes.size)[k]) for k in range(nodes.size)]
    )


def bracketing_weights(n_values: ArrayLike, nodes: ArrayLike) -> tuple:
    """:func:`node_weights` as the two nodes around each n: (low, w_low, high, w_high),
    the first node of non-zero weight and the next one (its weight 0 past the last node),
    so that w_low x[low] + w_high x[high] is the weighted sum over every node, bit for bit.

    Parameters
    ----------
    n_values : array_like of int
    nodes : array_like of int
        As :func:`node_weights`'.

    Returns
    -------
    tuple of numpy.ndarray
        Node indices (low, high) and their weights, one entry per n.

    Examples
    --------
    >>> low, w_low, high, w_high = bracketing_weights([10, 15, 20], [10, 20])
    >>> low.tolist(), w_low.tolist(), high.tolist(), w_high.tolist()
    ([0, 0, 1], [1.0, 0.5, 1.0], [1, 1, 1], [0.0, 0.5, 0.0])
    """
    weights = node_weights(n_values, nodes)
    low = np.argmax(weights > 0, axis=1)
    high = np.minimum(low + 1, weights.shape[1] - 1)
    rows = np.arange(weights.shape[0])
    return low, weights[rows, low], high, np.where(high > low, weights[rows, high], 0.0)
