"""EASE (Steck, "Embarrassingly Shallow Autoencoders for Sparse Data", WWW 2019):
B = argmin ||X - X B||^2 + lambda ||B||^2 subject to diag(B) = 0, in closed form
B = I - P diag(1 / diag(P)), P = (X^T X + lambda I)^-1; scores X_u B.

The fit holds one dense items x items array and overwrites it: the Gram matrix is
built in it block by block (exact co-occurrence counts), inverted in place by
LAPACK's Cholesky (``?potrf``, ``?potri``) and scaled into B in place. Its precision
is one rule (:func:`ease_dtype`): float64 while that array takes at most
:data:`EASE_FLOAT64_MAX_BYTES` (up to 16,384 items, MovieLens 1M's 3706 among them:
the same bits as scipy's ``inv``), float32 above (``ml-20m-like``'s 26,744 items:
2.9 GB instead of 5.7 GB). benchmarks/bench_ease.py measures the time, the peak memory
and the float32 weights against float64 ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, DTypeLike
from scipy.linalg import lapack

from .hyperparameters import binary_train, hyperparameters, positive_number
from .scores import sparse_dense_product

__all__ = [
    "EASE_DEFAULTS",
    "EASE_FLOAT64_MAX_BYTES",
    "LAPACK_MAX_BYTES",
    "EASEModel",
    "build_ease",
    "ease_dtype",
    "ease_weights",
    "gram_matrix",
    "spd_inverse",
    "validate_ease",
]

# Steck's EASE: the L2 weight (he reports 200-1000 as good for MovieLens-size data).
EASE_DEFAULTS: dict[str, Any] = {"regularization": 500.0}

# The one precision rule: float64 while the items x items array takes at most this many
# bytes (n <= 16,384 items), float32 above. On MovieLens 1M float32 moves no weight by
# more than 2e-6 (of weights up to 0.27); benchmarks/bench_ease.py --accuracy measures it.
EASE_FLOAT64_MAX_BYTES = 2**31

# scipy's LAPACK takes 32-bit sizes. scipy's `inv` crashed from n = 23,200 in float64
# (4.3 GB); ?potrf/?potri inverted 26,744 items in float32 (2.9 GB) in one call. Above
# this many bytes the matrix is inverted by halves, in place (spd_inverse).
LAPACK_MAX_BYTES = 3 * 2**30

# Temporaries of a block of rows take at most this many bytes (memory.py counts them).
_BLOCK_BYTES = 16 * 2**20


def ease_dtype(n_items: int) -> np.dtype:
    """The precision of EASE's items x items array: float64 while it takes at most
    :data:`EASE_FLOAT64_MAX_BYTES`, float32 above.

    Parameters
    ----------
    n_items : int

    Returns
    -------
    numpy.dtype

    Examples
    --------
    >>> ease_dtype(3706), ease_dtype(16384), ease_dtype(26744)
    (dtype('float64'), dtype('float64'), dtype('float32'))
    """
    fits = n_items * n_items * 8 <= EASE_FLOAT64_MAX_BYTES
    return np.dtype(np.float64 if fits else np.float32)


def _row_blocks(n_rows: int, n_columns: int, itemsize: int = 8) -> list[slice]:
    size = max(1, _BLOCK_BYTES // (itemsize * max(n_columns, 1)))
    return [slice(start, min(start + size, n_rows)) for start in range(0, n_rows, size)]


def gram_matrix(
    train: sp.spmatrix, dtype: DTypeLike = np.float64, add_to_diagonal: float = 0.0
) -> np.ndarray:
    """X^T X + ``add_to_diagonal`` I for binary ``train``, dense, C-contiguous, of ``dtype``.

    Built by blocks of rows from sparse products in float64 (exact counts), so the
    only items x items array is the result.

    Parameters
    ----------
    train : scipy.sparse matrix (users x items)
    dtype : numpy dtype, default float64
    add_to_diagonal : float, default 0

    Returns
    -------
    numpy.ndarray (items, items)

    Examples
    --------
    >>> gram_matrix(sp.csr_matrix(np.array([[1, 1], [1, 0]])), add_to_diagonal=0.5).tolist()
    [[2.5, 1.0], [1.0, 1.5]]
    """
    X = binary_train(train).astype(np.float64)
    XT = X.T.tocsr()
    n = X.shape[1]
    G = np.empty((n, n), dtype=dtype)
    for rows in _row_blocks(n, n):
        G[rows] = (XT[rows] @ X).toarray()
    G[np.diag_indices(n)] += add_to_diagonal
    return G


def _copy_lower_to_upper(A: np.ndarray) -> None:
    """A's strict upper triangle <- its strict lower one, transposed, by square tiles."""
    side = max(1, int((_BLOCK_BYTES / A.itemsize) ** 0.5))
    starts = range(0, A.shape[0], side)
    for a in starts:
        rows = slice(a, a + side)
        tile = A[rows, rows]
        upper = np.triu_indices(tile.shape[0], 1)
        tile[upper] = tile.T[upper]
        for b in starts:
            if b > a:
                A[rows, b : b + side] = A[b : b + side, rows].T


def spd_inverse(A: np.ndarray, max_bytes: int = LAPACK_MAX_BYTES) -> np.ndarray:
    """The inverse of a symmetric positive definite C-contiguous matrix, in ``A``.

    Up to ``max_bytes``: one Cholesky factorization and inverse (LAPACK ``?potrf``,
    ``?potri``) on ``A``'s own memory, then the lower triangle copied to the upper.
    Above: by halves with the Schur complement S = A22 - A21 A11^-1 A12 (SPD too): with
    X = A11^-1 A12, A^-1 = [[A11^-1 + X S^-1 X^T, -X S^-1], [-S^-1 X^T, S^-1]], the
    halves inverted the same way and every product written into ``A`` by blocks of
    rows: at most two half x half arrays besides ``A``.

    Parameters
    ----------
    A : numpy.ndarray (n, n), float32 or float64, C-contiguous
        Symmetric positive definite; overwritten by its inverse.
    max_bytes : int, default LAPACK_MAX_BYTES
        The largest matrix inverted by one LAPACK call.

    Returns
    -------
    numpy.ndarray
        ``A`` itself.

    Raises
    ------
    ValueError
        If ``A`` is not C-contiguous, or LAPACK finds it not positive definite.

    Examples
    --------
    >>> A = np.array([[4.0, 1, 0], [1, 3, 1], [0, 1, 2]])
    >>> np.allclose(spd_inverse(A.copy(), max_bytes=8) @ A, np.eye(3))
    True
    """
    if not A.flags.c_contiguous or A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("spd_inverse needs a square C-contiguous array")
    if A.nbytes <= max_bytes or A.shape[0] < 2:
        # A.T is the Fortran-ordered view of the same memory (A is symmetric): LAPACK
        # works in place on its upper triangle, which is A's lower one.
        potrf, potri = lapack.get_lapack_funcs(("potrf", "potri"), (A,))
        factor, info = potrf(A.T, lower=0, overwrite_a=1, clean=0)
        if info == 0:
            inverse, info = potri(factor, lower=0, overwrite_c=1)
        if info != 0:
            raise ValueError(f"EASE: X^T X + lambda I is not positive definite (LAPACK {info})")
        if not np.shares_memory(inverse, A):  # cannot happen for a C-contiguous A
            A[...] = inverse.T
        _copy_lower_to_upper(A)
        return A
    h = A.shape[0] // 2
    inverse_11 = spd_inverse(A[:h, :h].copy(), max_bytes)
    X = inverse_11 @ A[:h, h:]
    A[:h, :h] = inverse_11
    del inverse_11
    for rows in _row_blocks(A.shape[0] - h, A.shape[0] - h, A.itemsize):  # S, in A22
        block = slice(h + rows.start, h + rows.stop)
        A[block, h:] -= A[block, :h] @ X
    S = spd_inverse(A[h:, h:].copy(), max_bytes)
    A[h:, h:] = S
    del S
    P22 = A[h:, h:]
    for rows in _row_blocks(h, A.shape[0] - h, A.itemsize):
        A[rows, h:] = -(X[rows] @ P22)  # P12 = -X S^-1
        A[rows, :h] -= A[rows, h:] @ X.T  # P11 = A11^-1 + X S^-1 X^T = A11^-1 - P12 X^T
    del X
    for rows in _row_blocks(h, A.shape[0] - h, A.itemsize):
        A[h:, rows] = A[rows, h:].T  # P21 = P12^T
    return A


def ease_weights(
    train: sp.spmatrix, regularization: float, dtype: DTypeLike | None = None
) -> np.ndarray:
    """Steck's closed form: B = I - P diag(1/diag(P)), P = (X^T X + lambda I)^-1.

    Parameters
    ----------
    train : scipy.sparse matrix
        Binary users x items.
    regularization : float
        lambda.
    dtype : numpy dtype or None
        The precision; None: :func:`ease_dtype` of the number of items.

    Returns
    -------
    numpy.ndarray
        B (items x items), zero diagonal, C-contiguous, of ``dtype``.

    Examples
    --------
    >>> B = ease_weights(sp.csr_matrix(np.array([[1.0, 1.0], [1.0, 0.0]])), 1.0)
    >>> np.round(B, 4).tolist()
    [[0.0, 0.3333], [0.5, 0.0]]
    """
    n = train.shape[1]
    dtype = ease_dtype(n) if dtype is None else np.dtype(dtype)
    B = spd_inverse(gram_matrix(train, dtype, regularization))
    negative_diagonal = -np.diag(B).copy()
    for rows in _row_blocks(n, n, B.itemsize):
        B[rows] /= negative_diagonal[None, :]  # column j divided by -P_jj
    B[np.diag_indices(n)] = 0.0
    return B


class EASEModel:
    """scores = X_u B, X the training matrix, B :func:`ease_weights`, stored float32 and
    C-contiguous (the product reads B's rows), also after unpickling."""

    def __init__(self, train: sp.spmatrix, weights: np.ndarray, name: str = "ease") -> None:
        self.train = sp.csr_matrix(train, dtype=np.float32)
        self.weights = np.ascontiguousarray(weights, dtype=np.float32)
        self.name = name

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.weights = np.ascontiguousarray(self.weights, dtype=np.float32)

    @property
    def n_items(self) -> int:
        return self.weights.shape[0]

    def scores(self, users: ArrayLike) -> np.ndarray:
        users = np.asarray(users, dtype=np.int64)
        out = np.empty((users.size, self.n_items), dtype=np.float32)
        self.scores_into(users, out)
        return out

    def scores_into(self, users: ArrayLike, out: np.ndarray) -> None:
        """``out[:] = self.scores(users)``: a user's row is the same bits whichever
        users are scored with it (``sparse_dense_product``), so a ranking pass scores
        a whole block of users at once."""
        rows = self.train[np.asarray(users, dtype=np.int64)]
        sparse_dense_product(rows, self.weights, out)


def validate_ease(spec: dict) -> dict:
    """Check an EASE spec: ``regularization`` a number > 0.

    Parameters
    ----------
    spec : dict

    Returns
    -------
    dict
        The hyperparameters, defaults filled in.

    Examples
    --------
    >>> validate_ease({"type": "ease", "regularization": 200})
    {'regularization': 200.0}
    """
    name, params = hyperparameters(spec, EASE_DEFAULTS)
    params["regularization"] = positive_number(name, "regularization", params["regularization"])
    return params


def build_ease(spec: dict, train: sp.spmatrix, seed: int) -> EASEModel:  # noqa: ARG001 - closed form
    """Fit EASE on ``train``.

    Parameters
    ----------
    spec : dict
    train : scipy.sparse matrix
    seed : int
        Unused (closed form).

    Returns
    -------
    EASEModel

    Examples
    --------
    >>> X = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 1], [0, 1, 1]]))
    >>> build_ease({"type": "ease", "regularization": 1.0}, X, 0).scores([0]).shape
    (1, 3)
    """
    params = validate_ease(spec)
    name = str(spec.get("name", spec["type"]))
    X = binary_train(train)
    weights = ease_weights(X, params["regularization"])
    if weights.dtype != np.float32:  # float64 path: the float32 copy, then one array
        weights = weights.astype(np.float32)
    return EASEModel(X, weights, name=name)
