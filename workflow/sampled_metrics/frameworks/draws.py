"""Drawing items by a popularity (or uniform) law: the one place the library does it.

Items are drawn with probabilities proportional to weights (count ** alpha; equal
weights: uniform) from Walker's alias table, independently (with replacement), the
excluded items redrawn. Drawing successively without replacement, each draw over the
items left with their weights renormalised, is numpy's ``choice(replace=False, p=...)``
(BERT4Rec's ``EvalHooks``): equivalently, independent draws with the repeats discarded
until m distinct items are drawn, which is how :func:`draw_items` does it.
:func:`draw_items` draws a block of users' items under a framework's protocol;
:func:`draw_negatives` one user's negatives with probabilities pi.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from ..passes.entries import row_counts, true_entries
from .registry import Protocol

__all__ = ["draw_items", "draw_negatives"]

# Walker's alias table (keep, alias); None for equal weights.
_AliasTable = tuple[np.ndarray, np.ndarray] | None


def draw_items(
    protocol: Protocol, weights: ArrayLike, excluded: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Each row's m drawn items under ``protocol``, and which of them are ranked.

    Parameters
    ----------
    protocol : Protocol
    weights : numpy.ndarray (n_items,)
        count ** alpha (ones for alpha = 0); an item of weight 0 is never drawn.
    excluded : bool numpy.ndarray (rows, n_items)
        The items a row may not draw.
    rng : numpy.random.Generator

    Returns
    -------
    items : int numpy.ndarray (rows, m)
        In the order drawn.
    ranked : bool numpy.ndarray (rows, m)
        False for a repeat that the protocol collapses.

    Raises
    ------
    ValueError
        When a row has no item to draw, or fewer than m without replacement.

    Examples
    --------
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
    >>> p = FRAMEWORK_PROTOCOLS["elliot"]
    >>> excluded = np.zeros((2, 300), bool); excluded[0, :150] = True
    >>> items, ranked = draw_items(p, np.ones(300), excluded, np.random.default_rng(0))
    >>> items.shape, bool(items[0].min() >= 150), [len(set(row)) for row in items.tolist()]
    ((2, 100), True, [100, 100])
    """
    weights = np.asarray(weights, dtype=float)
    _check_drawable(protocol, weights, excluded)
    rows = np.arange(excluded.shape[0])
    return _draw_items(protocol, _alias_table(weights), excluded, rows, rng)


def draw_negatives(
    pi: ArrayLike,
    m: int,
    rng: np.random.Generator,
    replacement: bool = True,
    size: int | None = None,
) -> np.ndarray:
    """m negatives drawn with probabilities pi: independently (with replacement), or
    successively, each draw over the items left, renormalised (without replacement:
    numpy's ``choice(replace=False, p=pi)``, BERT4Rec's sampler). The draws of
    :func:`draw_items`: Walker's alias table of pi, and without replacement the first
    m distinct items of a stream of independent draws.

    Parameters
    ----------
    pi : array_like
        Probabilities over the items (0 for the ineligible ones).
    m : int
    rng : numpy.random.Generator
    replacement : bool, default True
    size : int, optional
        How many independent sets of m negatives to draw at once (one alias table for
        all of them); None: one set.

    Returns
    -------
    numpy.ndarray of int
        The drawn item indices: shape (m,), or (size, m) with ``size``.

    Raises
    ------
    ValueError
        When pi is negative or not finite somewhere, or fewer than m items (with
        replacement: none) have pi > 0.

    Examples
    --------
    >>> draw_negatives([0.5, 0.5, 0.0], 2, np.random.default_rng(0), replacement=False).tolist()
    [1, 0]
    >>> draw_negatives([0.2, 0.8], 3, np.random.default_rng(0), size=4).shape
    (4, 3)
    """
    pi = np.asarray(pi, dtype=float)
    if np.any(pi < 0) or not np.all(np.isfinite(pi)):
        raise ValueError("pi must be finite and non-negative")
    if not replacement and m > np.count_nonzero(pi):
        raise ValueError(f"m = {m} exceeds the {np.count_nonzero(pi)} items with pi > 0")
    if not np.any(pi > 0):
        raise ValueError("no item has pi > 0: nothing can be drawn")
    excluded = (pi == 0)[None, :]
    draws = _independent_draws if replacement else _successive_draws
    rows = np.zeros(1 if size is None else size, dtype=np.int64)  # every set: row 0
    items = draws(_alias_table(pi), excluded, rows, m, rng)
    return items[0] if size is None else items


def _check_drawable(protocol: Protocol, weights: np.ndarray, excluded: np.ndarray) -> None:
    drawable = row_counts(~excluded & (weights > 0))
    need = 1 if protocol.replacement else protocol.m
    if np.any(drawable < need):
        row = int(np.argmin(drawable))
        raise ValueError(
            f"protocol {protocol.name}: row {row} has {int(drawable[row])} items to draw "
            f"from, fewer than {need}"
        )


def _draw_items(
    protocol: Protocol,
    table: _AliasTable,
    excluded: np.ndarray,
    rows: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`draw_items` for the users ``rows`` of ``excluded`` (a row per draw)."""
    if protocol.replacement:
        items = _independent_draws(table, excluded, rows, protocol.m, rng)
        ranked = _first_occurrences(items) if protocol.collapse else np.ones(items.shape, bool)
        return items, ranked
    return _successive_draws(table, excluded, rows, protocol.m, rng), np.ones(
        (rows.size, protocol.m), bool
    )


def _alias_table(weights: np.ndarray) -> _AliasTable:
    """Walker's alias table of the weights (Vose's construction): item j drawn as a
    uniform column c, kept when a uniform is below keep[c], else alias[c]. None for
    equal weights (a uniform column is the draw). Built once per weights and process
    (:func:`_vose`): a protocol draws with the same weights in every block of users, and
    the construction is a Python loop over the items."""
    if np.all(weights == weights[0]):
        return None
    return _vose(np.asarray(weights, dtype=float).tobytes())


@lru_cache(maxsize=4)
def _vose(key: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Vose's alias table of the float64 weights whose bytes are ``key``, read-only (it
    is shared by every call with those weights)."""
    weights = np.frombuffer(key)
    n = weights.size
    scaled = weights * n / weights.sum()
    keep, alias = np.ones(n), np.arange(n)
    small = [j for j in range(n) if scaled[j] < 1.0]
    large = [j for j in range(n) if scaled[j] >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        keep[s], alias[s] = scaled[s], g
        scaled[g] -= 1.0 - scaled[s]
        (small if scaled[g] < 1.0 else large).append(g)
    keep.flags.writeable = alias.flags.writeable = False
    return keep, alias


def _draw(table: _AliasTable, n_items: int, size, rng) -> np.ndarray:
    columns = rng.integers(0, n_items, size=size)
    if table is None:
        return columns
    keep, alias = table
    return np.where(rng.random(size) < keep[columns], columns, alias[columns])


def _independent_draws(table, excluded, rows, m, rng) -> np.ndarray:
    """(len(rows), m) draws with probabilities proportional to the weights restricted
    to the allowed items of user ``rows[i]`` of ``excluded``: draws from all items,
    the excluded ones redrawn."""
    n_items = excluded.shape[1]
    items = _draw(table, n_items, (rows.size, m), rng)
    redraw = true_entries(excluded[rows[:, None], items])
    while redraw[0].size:
        fresh = _draw(table, n_items, redraw[0].size, rng)
        items[redraw] = fresh
        still = excluded[rows[redraw[0]], fresh]
        redraw = (redraw[0][still], redraw[1][still])
    return items


def _successive_draws(table, excluded, rows, m, rng) -> np.ndarray:
    """(len(rows), m) distinct items in the order of successive sampling: the first m
    distinct items of a stream of independent draws."""
    result = np.empty((rows.size, m), dtype=np.int64)
    todo = np.arange(rows.size)
    stream = np.empty((0, 0), dtype=np.int64)
    batch = m + m // 2 + 8
    while todo.size:
        fresh = _independent_draws(table, excluded, rows[todo], batch, rng)
        stream = fresh if stream.size == 0 else np.hstack([stream, fresh])
        first = _first_occurrences(stream)
        done = row_counts(first) >= m
        take = first[done] & (np.cumsum(first[done], axis=1) <= m)
        result[todo[done]] = stream[done][take].reshape(-1, m)
        todo, stream = todo[~done], stream[~done]
    return result


def _first_occurrences(items: np.ndarray) -> np.ndarray:
    """True where an item appears in its row for the first time."""
    keys = items.astype(np.uint16) if items.max(initial=0) < 2**16 else items  # radix sort
    order = np.argsort(keys, axis=1, kind="stable")
    ordered = np.take_along_axis(items, order, axis=1)
    first_sorted = np.ones(items.shape, dtype=bool)
    first_sorted[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    first = np.empty(items.shape, dtype=bool)
    np.put_along_axis(first, order, first_sorted, axis=1)
    return first
