"""Recommenders Y and Z of section 9: item-based collaborative filtering with
the cosine similarity of eqs 27-30, the points the paper leaves open as options
(see :class:`ItemKNN`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, DTypeLike

from ..passes.entries import row_counts, true_entries
from .hyperparameters import (
    binary_train,
    choice,
    hyperparameters,
    neighbourhood_size,
    positive_number,
)
from .scores import sparse_dense_product

__all__ = ["ITEM_KNN_DEFAULTS", "ItemKNN", "cosine_similarity"]

# Users multiplied at a time with a sparse similarity (their product a sparse matrix).
_SPARSE_ROWS = 1024

# Plain cosine (q=1), no cut, and for the points the paper leaves open the
# readings that come closest to its Table 3 for both Y and Z
# (docs/knn_variants.md): s_ii included, k' cut on the history-item side, eq 29
# with the L2 norm, no item-dependent denominator in eq 30. float32: on ML-1M it
# changes no exact rank of Y and 65 of Z's, far less than the tie-order seed does
# (benchmarks/knn_float32.py), and halves the items x items array.
ITEM_KNN_DEFAULTS: dict[str, Any] = {
    "q": 1.0,
    "k": None,
    "k_prime": None,
    "self_similarity": "include",
    "cut": "column",
    "normalization": "row",
    "norm": "l2",
    "denominator": "none",
    "dtype": "float32",
}


def cosine_similarity(
    train: sp.spmatrix, q: float = 1.0, dtype: DTypeLike = np.float64
) -> np.ndarray:
    """Eq 27: s_ij = (|U_i & U_j| / (sqrt|U_i| sqrt|U_j|))^q, dense (n_items^2) of ``dtype``.

    The counts are exact (below 2^24 co-occurrences in float32) and the cosine is
    computed in float64 and stored in ``dtype`` (one rounding); the power q is
    taken in ``dtype``.

    U_i is the set of users with item i in ``train``; computed from the sparse
    co-occurrence counts X^T X. The diagonal is 1 for every item with at least
    one interaction. Items without interactions have similarity 0 everywhere
    (0/0 := 0), including with themselves.
    """
    X = binary_train(train).astype(np.float64)
    XT = X.T.tocsr()
    S = np.empty((X.shape[1], X.shape[1]), dtype=dtype)
    for rows in _row_blocks(S.shape[0], S.shape[1]):  # exact integer co-occurrence counts
        S[rows] = (XT[rows] @ X).toarray()
    n = np.diag(S).astype(np.float64)
    root = np.sqrt(n)
    # Row blocks keep the one n_items^2 array: each block is divided by its slice of
    # the bit-symmetric outer product root_i root_j, the same float64 operations as
    # a whole-matrix division.
    for rows in _row_blocks(S.shape[0], S.shape[1]):
        denom = np.multiply.outer(root[rows], root)
        with np.errstate(divide="ignore", invalid="ignore"):
            np.divide(S[rows], denom, out=S[rows])
        S[rows][denom == 0] = 0.0
    np.fill_diagonal(S, (n > 0).astype(dtype))
    if q != 1:
        np.power(S, q, out=S)
    return S


# Temporaries of a row block are at most this many bytes per float64 array.
_BLOCK_BYTES = 64 * 2**20


def _row_blocks(n_rows: int, n_columns: int):
    """Slices of consecutive rows whose float64 entries take at most _BLOCK_BYTES."""
    size = max(1, _BLOCK_BYTES // (8 * max(n_columns, 1)))
    return [slice(start, start + size) for start in range(0, n_rows, size)]


def _transpose_in_place(S: np.ndarray) -> None:
    """S <- S.T for a square C-contiguous S, block by block (no second n^2 array)."""
    side = max(1, int((_BLOCK_BYTES / 8) ** 0.5))  # square tiles of at most _BLOCK_BYTES
    blocks = [slice(start, start + side) for start in range(0, S.shape[0], side)]
    for a, rows in enumerate(blocks):
        tile = S[rows, rows].T.copy()
        S[rows, rows] = tile
        for cols in blocks[a + 1 :]:
            upper = S[rows, cols].copy()
            S[rows, cols] = S[cols, rows].T
            S[cols, rows] = upper.T


def _norms(S: np.ndarray, axis: int, norm: str) -> np.ndarray:
    """Row (axis=1) or column (axis=0) l1/l2 norms of S, by blocks of rows."""
    if axis == 1:
        parts = [
            np.abs(S[rows]).sum(axis=1) if norm == "l1" else np.sqrt(np.sum(S[rows] ** 2, axis=1))
            for rows in _row_blocks(S.shape[0], S.shape[1])
        ]
        return np.concatenate(parts)
    # A column sum adds the rows one after the other: carrying the running total as the
    # first row of each block keeps that order, hence the bits of a whole-matrix sum.
    total = np.zeros((1, S.shape[1]))
    for rows in _row_blocks(S.shape[0], S.shape[1]):
        block = np.abs(S[rows]) if norm == "l1" else S[rows] ** 2
        total = np.add.reduce(np.vstack([total, block]), axis=0, keepdims=True)
    return total[0] if norm == "l1" else np.sqrt(total[0])


def _top_k_kept(S: np.ndarray, k: int, axis: int) -> sp.csr_matrix | None:
    """The k largest entries of every row (axis=1) or column (axis=0) of S, among
    the strictly positive ones, as a sparse 0/1 matrix of S's shape (at most k
    entries per row/column); ties at the boundary go to the lower item index (the
    first k of a stable sort, found without sorting: :func:`_first_k_largest`).
    None when k leaves every entry (k >= the row/column length)."""
    A = S if axis == 1 else S.T
    if k >= A.shape[1]:
        return None
    row_blocks, column_blocks = [], []
    for block_rows in _row_blocks(A.shape[0], A.shape[1]):  # bounded temporaries
        block = A[block_rows]
        row, column = true_entries(_first_k_largest(block, k) & (block > 0))
        row_blocks.append((block_rows.start + row).astype(np.int64))
        column_blocks.append(column.astype(np.int64))
    rows, columns = np.concatenate(row_blocks), np.concatenate(column_blocks)
    if axis == 0:
        rows, columns = columns, rows
    ones = np.ones(rows.size, dtype=np.int8)
    return sp.csr_matrix((ones, (rows, columns)), shape=S.shape)


def _first_k_largest(block: np.ndarray, k: int) -> np.ndarray:
    """Bool mask of the first k entries of each row in the order of
    ``np.argsort(-block, kind="stable")`` (descending, the lower index first among
    equals): the entries above the row's k-th largest value, then the lowest-indexed
    entries equal to it up to k. One partial sort (introselect) instead of a full one
    (26,744 items: 40 % of Z's fit was the sort)."""
    place = block.shape[1] - k  # the k-th largest value is the (n - k)-th smallest
    kth = np.partition(block, place, axis=1)[:, place : place + 1]
    above = block > kth
    tied = block == kth
    # of the entries equal to the k-th largest, the first k - (those above) by index
    room = k - row_counts(above)[:, None]
    return above | (tied & (np.cumsum(tied, axis=1, dtype=np.int32) <= room))


def _cut(S: np.ndarray, row_k: int | None, col_k: int | None) -> None:
    """Eq 28 in place: keep s_ij iff it is in the top row_k of row i and in the top
    col_k of column j of the uncut S (None: no cut on that side), by blocks of
    rows, with the kept sets held sparse: no second items x items array."""
    kept = None
    for size, axis in ((row_k, 1), (col_k, 0)):
        side = None if size is None else _top_k_kept(S, size, axis)
        if side is not None:
            kept = side if kept is None else kept.multiply(side).tocsr()
    if kept is None:
        return
    for rows in _row_blocks(*S.shape):
        S[rows] *= kept[rows].toarray().astype(bool)


def _sparse_if_smaller(S: np.ndarray):
    """S as CSR if that takes less than half its dense bytes, else S itself."""
    nnz = sum(int(np.count_nonzero(S[rows])) for rows in _row_blocks(*S.shape))
    if nnz * (S.itemsize + 4) >= S.nbytes / 2:
        return S
    return sp.vstack([sp.csr_matrix(S[rows]) for rows in _row_blocks(*S.shape)], format="csr")


def _dense(product) -> np.ndarray:
    """A product with the similarity as a dense array."""
    return product.toarray() if sp.issparse(product) else np.asarray(product)


_SELF_SIMILARITY = {
    True: "include",
    False: "exclude",
    "include": "include",
    "exclude": "exclude",
    "after_cut": "after_cut",
}


class ItemKNN:
    """Item-based collaborative filtering of section 9, eqs 27-30.

    Eq 27  s_ij = cos(i, j)^q                          (:func:`cosine_similarity`)
    Eq 28  s'_ij = s_ij delta(i in N_k(j)) delta(j in N_k'(i))
    Eq 29  s''_ij = s'_ij / ||s'_i||
    Eq 30  y(u, i) = sum_{j in H_u} s''_ij / sum_{j in I} s''_ij

    ``i`` is the item being scored, ``j`` runs over the user's history H_u.

    Options for what the paper leaves open (docs/knn_variants.md measures them):

    ``self_similarity``
        ``"include"`` (or True): s_ii (= 1) is an entry of s before the cut; it is
        then i's nearest neighbour and takes one of the k' places. ``"exclude"``
        (or False): s_ii = 0. ``"after_cut"``: the neighbourhoods are chosen
        among the other items, then s_ii = 1 is put back. A candidate item is
        never in the user's history, so s_ii never enters a numerator; it only
        enters the norms of eq 29 and the denominator of eq 30.
    ``cut``
        The side of k'. ``"row"`` is eq 28 as printed: (i, j) survives if j is
        among the k' most similar items of the scored item i (top-k' of row i)
        and i among the k most similar of j (top-k of column j). ``"column"``
        swaps the roles: every history item j votes only for its own k' nearest
        neighbours (top-k' of column j), the classic item-kNN. With k = k' = None
        the side is irrelevant. Both neighbourhoods are judged on the uncut s (after
        the ``self_similarity`` choice above): with k and k' both finite an entry
        survives iff it is in the top of its row and in the top of its column of
        s, not of the already cut matrix. Only strictly positive entries count as
        neighbours; ties at the k-th place go to the lower item index.
    ``normalization`` and ``norm``
        ``"row"`` is eq 29 (divide row i by its ``norm``, "l1" or "l2"),
        ``"column"`` divides column j by its norm, ``"none"`` skips eq 29.
    ``denominator``
        ``"row_sum"`` is eq 30 as printed: divide by sum_{j in I} s''_ij. That
        cancels any row normalization, so "row" and "none" then give
        bit-identical scores. ``"none"``: y(u, i) = sum_{j in H_u} s''_ij, which
        ranks items exactly as any denominator that does not depend on i (a
        per-user constant) would. The paper's Table 3 is matched only by this
        reading together with an L2 row normalization (docs/knn_variants.md).

    A score 0/0 (an item whose row of s' is all zero, e.g. an item without
    training interactions, or with no neighbour left after the cut) is 0.

    Numerics: the similarity and the sums are computed in ``dtype`` (float32 by
    default, which halves the one items x items array; float64 on request) and the
    row scalings of eqs 29/30 are applied to the sum, not to s, so numerator and
    denominator of eq 30 are accumulated over j in the same (index) order: an
    item whose every neighbour lies in H_u scores exactly 1.0 under "row_sum",
    one with no neighbour in H_u exactly 0.0. Ties there are exact, not rounding
    artefacts. Scores are returned as float32.
    """

    def __init__(
        self,
        train: sp.spmatrix,
        *,
        q: float = ITEM_KNN_DEFAULTS["q"],
        k: int | None = ITEM_KNN_DEFAULTS["k"],
        k_prime: int | None = ITEM_KNN_DEFAULTS["k_prime"],
        self_similarity: str = ITEM_KNN_DEFAULTS["self_similarity"],
        cut: str = ITEM_KNN_DEFAULTS["cut"],
        normalization: str = ITEM_KNN_DEFAULTS["normalization"],
        norm: str = ITEM_KNN_DEFAULTS["norm"],
        denominator: str = ITEM_KNN_DEFAULTS["denominator"],
        dtype: DTypeLike = ITEM_KNN_DEFAULTS["dtype"],
        name: str = "item_knn",
    ) -> None:
        if self_similarity not in _SELF_SIMILARITY:
            raise ValueError(f"self_similarity must be one of {list(_SELF_SIMILARITY)}")
        self_similarity = _SELF_SIMILARITY[self_similarity]
        if cut not in ("row", "column"):
            raise ValueError("cut must be 'row' or 'column'")
        if normalization not in ("row", "column", "none"):
            raise ValueError("normalization must be 'row', 'column' or 'none'")
        if norm not in ("l1", "l2"):
            raise ValueError("norm must be 'l1' or 'l2'")
        if denominator not in ("row_sum", "none"):
            raise ValueError("denominator must be 'row_sum' or 'none'")
        if dtype not in ("float32", "float64"):
            raise ValueError("dtype must be 'float32' or 'float64'")
        self.name = name
        self.hyperparameters = {
            "q": q,
            "k": k,
            "k_prime": k_prime,
            "self_similarity": self_similarity,
            "cut": cut,
            "normalization": normalization,
            "norm": norm,
            "denominator": denominator,
            "dtype": dtype,
        }
        self._train = binary_train(train).astype(dtype)
        S = cosine_similarity(self._train, q, dtype)
        diagonal = np.diag(S).copy()
        if self_similarity != "include":
            np.fill_diagonal(S, 0.0)
        # eq 28: delta(j in N_k'(i)) on the k' side, delta(i in N_k(j)) on the other;
        # both neighbourhoods are judged on the uncut s, then the masks are combined
        row_k, col_k = (k_prime, k) if cut == "row" else (k, k_prime)
        _cut(S, row_k, col_k)
        if self_similarity == "after_cut":
            np.fill_diagonal(S, diagonal)
        if normalization == "column":  # eq 29 on the other axis
            col_norm = _norms(S, 0, norm)
            S /= np.where(col_norm > 0, col_norm, 1.0)
        n_items = S.shape[0]
        # per-item divisor of the numerator sum_{j in H_u} s'_ij
        divisor = _norms(S, 1, norm) if normalization == "row" else np.ones(n_items, dtype)
        _transpose_in_place(S)
        # s' (column-normalized if asked), transposed; row scalings below. Stored sparse
        # when a cut leaves it sparse: the sums skip only exact zeros, the same bits.
        self._ST = _sparse_if_smaller(S)  # C-contiguous when dense: the product reads its rows
        del S
        if denominator == "row_sum":
            ones = sp.csr_matrix(
                (np.ones(n_items, dtype), (np.zeros(n_items, dtype=np.int64), np.arange(n_items))),
                shape=(1, n_items),
            )
            divisor = _dense(ones @ self._ST).ravel()  # same summation order as the numerator
        self._divisor = divisor

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if not sp.issparse(self._ST):  # the product reads rows of s'^T
            self._ST = np.ascontiguousarray(self._ST)

    @property
    def similarity(self) -> np.ndarray:
        """s' after the cut (and the column normalization, if any), before the
        per-row scaling of eqs 29-30 (a read-only view)."""
        view = self._ST.T.toarray() if sp.issparse(self._ST) else self._ST.T
        view.flags.writeable = False
        return view

    @property
    def n_items(self) -> int:
        return self._ST.shape[0]

    def scores(self, users: ArrayLike) -> np.ndarray:
        users = np.asarray(users, dtype=np.int64)
        out = np.empty((users.size, self.n_items), dtype=np.float32)
        self.scores_into(users, out)
        return out

    def scores_into(self, users: ArrayLike, out: np.ndarray) -> None:
        """``out[:] = self.scores(users)``: the numerator divided by the item's divisor
        where it is positive (where it is 0 the item's row of s' is all zero, s >= 0,
        so the numerator is 0 already), in the product's precision, then float32. A
        user's row is the same bits whichever users are scored with it, so a ranking
        pass scores a whole block of users at once."""
        users = np.asarray(users, dtype=np.int64)
        d = self._divisor
        if not sp.issparse(self._ST):
            sparse_dense_product(self._train[users], self._ST, out, scale=d)
            return
        # A sparse product: only its stored entries are divided and written (scipy's
        # product stores each (user, item) once), the rest of ``out`` is 0.
        out[:] = 0
        for a in range(0, users.size, _SPARSE_ROWS):
            y = sp.csr_matrix(self._train[users[a : a + _SPARSE_ROWS]] @ self._ST)
            divisor = d[y.indices]
            np.divide(y.data, divisor, out=y.data, where=divisor > 0)
            rows = a + np.repeat(np.arange(y.shape[0]), np.diff(y.indptr))
            out[rows, y.indices] = y.data


def validate_item_knn(spec: dict) -> dict:
    name, p = hyperparameters(spec, ITEM_KNN_DEFAULTS)
    ss = p["self_similarity"]
    if isinstance(ss, (bool, np.bool_)):
        ss = _SELF_SIMILARITY[bool(ss)]
    else:
        ss = choice(name, "self_similarity", ss, ("include", "exclude", "after_cut"))
    return {
        "name": name,
        "q": positive_number(name, "q", p["q"]),
        "k": neighbourhood_size(name, "k", p["k"]),
        "k_prime": neighbourhood_size(name, "k_prime", p["k_prime"]),
        "self_similarity": ss,
        "cut": choice(name, "cut", p["cut"], ("row", "column")),
        "normalization": choice(
            name, "normalization", p["normalization"], ("row", "column", "none")
        ),
        "norm": choice(name, "norm", p["norm"], ("l1", "l2")),
        "denominator": choice(name, "denominator", p["denominator"], ("row_sum", "none")),
        "dtype": choice(name, "dtype", p["dtype"], ("float32", "float64")),
    }


def build_item_knn(spec: dict, train: sp.spmatrix, seed: int) -> ItemKNN:  # noqa: ARG001 - deterministic
    return ItemKNN(train, **validate_item_knn(spec))
