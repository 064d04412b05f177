"""The True entries of a bool matrix as (rows, columns), as ``np.nonzero`` gives them,
from one flat pass: numpy's 2-D ``nonzero`` is about 4 times slower on the masks of a
chunk of users (32 x 26,744 items, 15 % True; 3.7 vs 0.8 ms)."""

from __future__ import annotations

import numpy as np

__all__ = ["true_entries"]


def true_entries(mask: np.ndarray) -> tuple:
    """(rows, columns) of the True entries of a 2-D bool ``mask``, in row-major order:
    ``np.nonzero(mask)``, faster.

    Parameters
    ----------
    mask : bool numpy.ndarray (rows, columns)

    Returns
    -------
    tuple of numpy.ndarray of intp

    Examples
    --------
    >>> rows, columns = true_entries(np.array([[False, True], [True, True]]))
    >>> rows.tolist(), columns.tolist()
    ([0, 1, 1], [1, 0, 1])
    """
    flat = np.flatnonzero(mask)
    rows = np.repeat(np.arange(mask.shape[0]), np.count_nonzero(mask, axis=1))
    return rows, flat - rows * mask.shape[1]
