"""Score matrices: every user's scores of a model, and a model made of them."""

from __future__ import annotations

import numpy as np

__all__ = ["PrecomputedScores", "all_scores"]


class PrecomputedScores:
    """A model whose scores are a stored (n_users, n_items) matrix, e.g. the
    output of :func:`all_scores` loaded back from disk."""

    def __init__(self, scores, name="precomputed"):
        self.all = np.asarray(scores)
        if self.all.ndim != 2:
            raise ValueError("scores must be a 2-d array (n_users, n_items)")
        self.name = name

    @property
    def n_items(self) -> int:
        return self.all.shape[1]

    def scores(self, users) -> np.ndarray:
        return self.all[np.asarray(users, dtype=np.int64)]


def all_scores(
    model, n_users: int, *, block_size: int = 1024, progress: bool = False
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
