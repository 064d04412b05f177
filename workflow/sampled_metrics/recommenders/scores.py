"""Score matrices: every user's scores of a model, and a model made of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

if TYPE_CHECKING:
    from ..passes.scorer import Scorer

__all__ = ["PrecomputedScores", "all_scores", "sparse_dense_product"]

# Columns of the dense factor multiplied at a time by sparse_dense_product: a copy of
# this many bytes (at most) stays in a share of a server's L3 cache while every row of the
# sparse factor reads it: smaller tiles loop over fewer columns a row, larger ones leave
# the cache (benchmarks/bench_tiled_scores.py --tile-mb compares sizes).
_TILE_BYTES = 10 * 2**20


class PrecomputedScores:
    """A model whose scores are a stored (n_users, n_items) matrix, e.g. the
    output of :func:`all_scores` loaded back from disk."""

    def __init__(self, scores: ArrayLike, name: str = "precomputed") -> None:
        self.all = np.asarray(scores)
        if self.all.ndim != 2:
            raise ValueError("scores must be a 2-d array (n_users, n_items)")
        self.name = name

    @property
    def n_items(self) -> int:
        return self.all.shape[1]

    def scores(self, users: ArrayLike) -> np.ndarray:
        return self.all[np.asarray(users, dtype=np.int64)]


def all_scores(
    model: Scorer, n_users: int, *, block_size: int = 1024, progress: bool = False
) -> np.ndarray:
    """Every user's scores, ``model.scores`` called block by block: float32
    array (n_users, n_items)."""
    starts = range(0, n_users, block_size)
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc=f"scoring {getattr(model, 'name', 'model')}", unit="block")
    blocks = [
        np.asarray(model.scores(np.arange(a, min(a + block_size, n_users))), dtype=np.float32)
        for a in starts
    ]
    return np.vstack(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)


def sparse_dense_product(
    rows: sp.csr_matrix, dense: np.ndarray, out: np.ndarray, scale: np.ndarray | None = None
) -> None:
    """``out[:] = rows @ dense`` (divided by ``scale`` where it is positive, when given),
    computed in tiles of the dense factor's columns, each copied once per call.

    scipy's product reads a whole row of ``dense`` for every stored entry of ``rows``:
    with 26,744 items that is 107 KB from memory per entry. A tile's copy serves every
    row of the block from the cache: 1.3-2 times faster on a block of 4,096 users
    (``benchmarks/bench_tiled_scores.py``), for one tile's copy and product more in
    memory. Every entry is the same sum, in the same
    order, as in ``rows @ dense`` (the sparse row's entries in their stored order), so
    the bits are the same whatever the tiles and whichever rows are multiplied together.

    Parameters
    ----------
    rows : scipy.sparse.csr_matrix
        (users, k).
    dense : numpy.ndarray
        (k, items), C-ordered.
    out : numpy.ndarray
        (users, items): takes the product (cast to its dtype).
    scale : numpy.ndarray, optional
        (items,): each column divided by its value where positive (left as is elsewhere).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> rows, dense = sp.csr_matrix([[1.0, 0.0], [1.0, 1.0]]), np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> out = np.empty((2, 2))
    >>> sparse_dense_product(rows, dense, out, scale=np.array([2.0, 0.0]))
    >>> out.tolist()
    [[0.5, 2.0], [2.0, 6.0]]
    """
    width = max(16, _TILE_BYTES // max(1, dense.shape[0] * dense.itemsize))
    for j in range(0, dense.shape[1], width):
        columns = slice(j, min(j + width, dense.shape[1]))
        # a copy, but for one tile of every column: the C-ordered matrix itself
        tile = np.asarray(rows @ np.ascontiguousarray(dense[:, columns]))
        if scale is not None:
            np.divide(tile, scale[columns], out=tile, where=scale[columns] > 0)
        out[:, columns] = tile
