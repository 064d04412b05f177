"""The items a model ranks above the held-out item, by each framework's tie order.

A framework's sampled rank is 1 + the drawn items its sort puts before the held-out
item. Strictly higher scores always come first; an item scored exactly like the
held-out one comes first or not by the framework's sort (read at the sources,
``registry``'s :attr:`Protocol.ties`):

- ``"pessimistic"``: every tied item first. NCF's ``evaluate.py`` takes
  ``heapq.nlargest(K, map_item_score, key=map_item_score.get)``: as stable as
  ``sorted(..., reverse=True)``, so tied items keep the dict's order, and under Python 3
  the held-out item, inserted last, comes after all of them.
- ``"index"``: the tied items of a lower item index first. Elliot ranks with
  ``tf.nn.top_k``, documented "if two elements are equal, the lower-index element
  appears first" (here the item ids play its private indices).
- ``"random"``: an order the framework leaves unspecified (RecBole's ``torch.topk``,
  BERT4Rec's ``argsort().argsort()`` with numpy's unstable quicksort, DaisyRec's unstable
  ``torch.argsort``): the pipeline's own tie policy stands in for it
  (:func:`tie_order_for`), so these protocols' ranks agree with the exact ranks.

:func:`beaten_items` marks one tie order's items; the exact ranks' order (the
pipeline's ``tie_policy``) is the one checked against the exact ranks.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from ..passes.ranking import above_and_tied
from ..passes.ties import check_tie_policy, put_ties_first

__all__ = [
    "TIE_ORDERS",
    "beaten_items",
    "check_tie_order",
    "order_ties",
    "tie_order_for",
]

# The tie orders a protocol can name (registry.Protocol.ties).
TIE_ORDERS = ("pessimistic", "index", "random")


def tie_order_for(ties: str, tie_policy: str) -> str:
    """The tie order :func:`beaten_items` uses for a protocol whose framework sorts ties
    by ``ties``: the framework's own, or the pipeline's ``tie_policy`` where the
    framework leaves the order unspecified ("random").

    Parameters
    ----------
    ties : {"pessimistic", "index", "random"}
    tie_policy : str
        The pipeline's (exact ranks') tie policy.

    Returns
    -------
    str

    Examples
    --------
    >>> tie_order_for("index", "random"), tie_order_for("random", "pessimistic")
    ('index', 'pessimistic')
    """
    if ties not in TIE_ORDERS:
        raise ValueError(f"unknown tie order {ties!r}; known: {', '.join(TIE_ORDERS)}")
    return tie_policy if ties == "random" else ties


def beaten_items(
    S: np.ndarray, test_items: ArrayLike, users: ArrayLike, tie_policy: str, seed: int
) -> np.ndarray:
    """bool (rows, items): the items each user's model ranks above the held-out item,
    ties resolved by ``tie_policy``; under the exact ranks' policy 1 + a row's count is
    the row's exact rank (``ranking.block_ranks``).

    Parameters
    ----------
    S : numpy.ndarray (rows, n_items)
        Scores, -inf for the items that are not ranked.
    test_items : array_like of int (rows,)
    users : array_like of int (rows,)
        The user ids (for the "random" tie order).
    tie_policy : {"random", "pessimistic", "optimistic", "index"}
        "index": tied items of a lower index first (Elliot's ``tf.nn.top_k``).
        "average" gives half items, which no draw can beat.
    seed : int
        Seed of the "random" tie order.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> S = np.array([[0.9, 0.5, 0.5, -np.inf, 0.5]])
    >>> beaten_items(S, [2], [0], "pessimistic", 0).astype(int).tolist()
    [[1, 1, 0, 0, 1]]
    >>> beaten_items(S, [2], [0], "index", 0).astype(int).tolist()
    [[1, 1, 0, 0, 0]]
    """
    check_tie_order(tie_policy)
    above, tied = above_and_tied(S, test_items)
    return order_ties(above, tied, test_items, users, tie_policy, seed)


def check_tie_order(tie_policy: str) -> None:
    """Raise ValueError unless ``tie_policy`` orders tied items one by one (as drawn
    items must be counted): "average" counts half items.

    Parameters
    ----------
    tie_policy : str
        A tie order of :func:`beaten_items`.

    Returns
    -------
    None

    Examples
    --------
    >>> check_tie_order("index")
    """
    if tie_policy != "index":
        check_tie_policy(tie_policy)
    if tie_policy == "average":
        raise ValueError("tie_policy 'average' counts half items: simulated draws need integers")


def order_ties(
    above: np.ndarray,
    tied: np.ndarray,
    test_items: ArrayLike,
    users: ArrayLike,
    tie_policy: str,
    seed: int,
) -> np.ndarray:
    """The beaten items of :func:`beaten_items` from ``ranking.above_and_tied``'s masks
    (neither is changed): ``above`` and the tied items the order puts first.

    Parameters
    ----------
    above, tied : numpy.ndarray of bool (rows, n_items)
        ``passes.ranking.above_and_tied``'s masks.
    test_items, users : array_like of int (rows,)
    tie_policy : str
        As :func:`beaten_items`'s.
    seed : int
        Seed of the "random" tie order.

    Returns
    -------
    numpy.ndarray of bool (rows, n_items)

    Examples
    --------
    >>> above, tied = np.array([[True, False, False]]), np.array([[False, False, True]])
    >>> order_ties(above, tied, [1], [0], "index", 0).astype(int).tolist()
    [[1, 0, 0]]
    """
    beaten = above.copy()
    put_ties_first(beaten, tied, test_items, users, tie_policy, seed)
    return beaten
