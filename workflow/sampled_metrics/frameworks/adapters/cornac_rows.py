"""The rows of the cornac adapter's sampled file (:mod:`.cornac`): one per held-out
item, each with the items it does not rank (those outside its user's candidates and the
user's other positives), built a block of rows at a time so that no matrix of every
row is held. Does not import cornac.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np
import scipy.sparse as sp

from ...passes.block_pass import SCORE_CHUNK

__all__ = [
    "BYTES_PER_ENTRY",
    "CandidatePools",
    "HeldOutRows",
    "excluded_rows",
    "held_out_rows",
    "row_blocks",
]


class CandidatePools(Protocol):
    """What cornac's ``ranking_eval`` ranks for each evaluated user (the adapter's pools)."""

    positives: list  # each user's positive test items below n_columns
    n_columns: int  # the items a row covers

    def candidates(self, position: int) -> np.ndarray:
        """The items ranked for the user at ``position``: its positives among them."""
        ...


# Bytes of one entry of a block's rows of items not ranked: an int32 index, an int8 one.
BYTES_PER_ENTRY = 5


@dataclass
class HeldOutRows:
    """One row per held-out item, in the order of the rows of ``cornac.exact_ranks``."""

    user: np.ndarray  # the position of the row's user in the pools
    targets: np.ndarray  # the row's held-out item
    first: np.ndarray  # per user position, its first row
    entries: np.ndarray  # per row, the items it does not rank


def held_out_rows(pools: CandidatePools) -> HeldOutRows:
    """The rows of every held-out item and their sizes: a row does not rank the items
    outside its user's candidates nor the user's other positives."""
    counts = np.array([pos.size for pos in pools.positives], dtype=np.int64)
    outside = np.array(
        [pools.n_columns - pools.candidates(position).size for position in range(counts.size)],
        dtype=np.int64,
    )
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return HeldOutRows(
        np.repeat(np.arange(counts.size), counts),
        np.concatenate([np.empty(0, dtype=np.int64), *pools.positives]).astype(np.int64),
        first,
        np.repeat(outside + counts - 1, counts),
    )


def row_blocks(entries: np.ndarray, limit: float) -> list[tuple[int, int]]:
    """(start, stop) of consecutive rows that start at multiples of ``SCORE_CHUNK`` (the
    draws' chunks) and hold at most ``limit`` entries, or one chunk where it holds more.

    >>> row_blocks(np.array([5, 5, 5]), 10), row_blocks(np.ones(70, dtype=int), 64)
    ([(0, 3)], [(0, 64), (64, 70)])
    """
    cuts = np.append(np.arange(0, entries.size, SCORE_CHUNK), entries.size)
    held = np.concatenate([[0], np.cumsum(entries)])[cuts]
    blocks, i = [], 0
    while i < cuts.size - 1:
        j = max(i + 1, int(np.searchsorted(held, held[i] + limit, side="right")) - 1)
        blocks.append((int(cuts[i]), int(cuts[j])))
        i = j
    return blocks


def excluded_rows(pools: CandidatePools, rows: HeldOutRows, start: int, stop: int) -> sp.csr_matrix:
    """Rows ``start..stop - 1`` as a csr matrix (rows, n_columns) of what each does not
    rank: the items outside its user's candidates and the user's other positives.

    Built into int32 indices and int8 ones, a user's rows at a time: no array per row."""
    indptr = np.concatenate([[0], np.cumsum(rows.entries[start:stop])])
    indices = np.empty(int(indptr[-1]), dtype=np.int32)
    end = 0
    for position in range(int(rows.user[start]), int(rows.user[stop - 1]) + 1):
        pos = pools.positives[position]
        lo = max(start, rows.first[position]) - rows.first[position]
        hi = min(stop, rows.first[position] + pos.size) - rows.first[position]
        if hi <= lo:
            continue
        kept = np.ones(pools.n_columns, dtype=bool)
        kept[pools.candidates(position)] = False
        kept[pos] = True
        base = np.flatnonzero(kept).astype(np.int32)  # outside and every positive
        block = np.broadcast_to(base, (hi - lo, base.size))
        block = block[block != pos[lo:hi, None].astype(np.int32)]  # each row drops its own
        indices[end : end + block.size] = block
        end += block.size
    data = np.ones(indices.size, dtype=np.int8)
    return sp.csr_matrix((data, indices, indptr), shape=(stop - start, pools.n_columns))
