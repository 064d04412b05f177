"""The recommenders of section 9 of Krichene & Rendle (KDD 2020).

One small interface for all of them::

    model = fit_recommender(spec, train, seed)
    block = model.scores(users)      # float32, shape (len(users), n_items)

``spec`` is a plain dict from the configuration, ``{"type": ..., **hyperparameters}``
(an optional ``"name"`` is kept as ``model.name`` for messages). ``train`` is a
binary ``scipy.sparse.csr_matrix`` of shape (n_users, n_items). Unknown types
and bad hyperparameters raise ``ValueError`` naming the offending key, so a new
recommender is one more configuration entry (another ``ials`` or ``item_knn``
with other hyperparameters), and a new *kind* of recommender is one call to
:func:`register_recommender`.

Types
-----
``ials``
    Recommender X: matrix factorization trained with implicit alternating
    least squares on the loss of section 9 (parameterization of Bayer et al.),
    fitted with ``implicit``'s CPU solver through an exact reparameterization
    (:func:`implicit_parameters`).
``item_knn``
    Recommenders Y (q=3, k=k'=inf) and Z (q=1, k=inf, k'=10): item-based
    collaborative filtering with the cosine similarity of eqs 27-30, with the
    points the paper leaves open as options (see :class:`ItemKNN`).
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

__all__ = [
    "fit_recommender",
    "register_recommender",
    "recommender_types",
    "implicit_parameters",
    "ials_objective",
    "fit_ials",
    "IALSModel",
    "ItemKNN",
    "cosine_similarity",
    "IALS_DEFAULTS",
    "ITEM_KNN_DEFAULTS",
    "PAPER_RECOMMENDERS",
    "validate_spec",
    "PrecomputedScores",
    "all_scores",
]

# Section 9: d = 16, lambda = 10, alpha = 0.2, in the paper's parameterization
# ("regularization" is the paper's lambda, "alpha" its alpha; the mapping to
# implicit's is internal). Iterations and dtype: see fit_ials.
IALS_DEFAULTS = {
    "factors": 16,
    "regularization": 10.0,
    "alpha": 0.2,
    "iterations": 16,
    "use_cg": False,
    "dtype": "float64",
}

# Plain cosine (q=1), no cut, and for the points the paper leaves open the
# readings that come closest to its Table 3 for both Y and Z
# (docs/knn_variants.md): s_ii included, k' cut on the history-item side, eq 29
# with the L2 norm, no item-dependent denominator in eq 30.
ITEM_KNN_DEFAULTS = {
    "q": 1.0,
    "k": None,
    "k_prime": None,
    "self_similarity": "include",
    "cut": "column",
    "normalization": "row",
    "norm": "l2",
    "denominator": "none",
}

# The three recommenders of section 9; open points take ITEM_KNN_DEFAULTS.
PAPER_RECOMMENDERS = {
    "X": {"type": "ials", "name": "X", "factors": 16, "regularization": 10.0, "alpha": 0.2},
    "Y": {"type": "item_knn", "name": "Y", "q": 3.0, "k": None, "k_prime": None},
    "Z": {"type": "item_knn", "name": "Z", "q": 1.0, "k": None, "k_prime": 10},
}

_META_KEYS = ("type", "name")


# --------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------

def _check_train(train) -> sp.csr_matrix:
    if not sp.issparse(train):
        raise ValueError("train must be a scipy.sparse matrix (n_users x n_items)")
    X = sp.csr_matrix(train, copy=True)
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    X.data = np.ones_like(X.data, dtype=np.float32)  # binary, as in the paper
    return X.astype(np.float32)


def _positive_number(spec_name: str, key: str, value, *, integer=False, allow_zero=False):
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if ok:
        ok = math.isfinite(float(value)) and (value >= 0 if allow_zero else value > 0)
    if ok and integer:
        ok = float(value) == int(value)
    if not ok:
        kind = "integer" if integer else "number"
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{spec_name}: hyperparameter {key!r} must be a finite {kind} {bound}, "
                         f"got {value!r}")
    return int(value) if integer else float(value)


def _neighbourhood_size(spec_name: str, key: str, value):
    """None, inf or the strings 'inf'/'none' mean no cut; otherwise an integer >= 1."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("inf", "none")):
        return None
    if isinstance(value, (float, np.floating)) and math.isinf(value) and value > 0:
        return None
    return _positive_number(spec_name, key, value, integer=True)


def _choice(spec_name: str, key: str, value, allowed):
    if isinstance(value, str) and value.lower() in allowed:
        return value.lower()
    raise ValueError(f"{spec_name}: hyperparameter {key!r} must be one of {list(allowed)}, "
                     f"got {value!r}")


def _boolean(spec_name: str, key: str, value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{spec_name}: hyperparameter {key!r} must be true or false, got {value!r}")


def _hyperparameters(spec: dict, defaults: dict) -> tuple[str, dict]:
    name = str(spec.get("name", spec["type"]))
    unknown = [k for k in spec if k not in defaults and k not in _META_KEYS]
    if unknown:
        raise ValueError(f"{name}: unknown hyperparameter {unknown[0]!r} for type "
                         f"{spec['type']!r}; known: {', '.join(sorted(defaults))}")
    params = dict(defaults)
    params.update({k: v for k, v in spec.items() if k not in _META_KEYS})
    return name, params


# --------------------------------------------------------------------------
# Recommender X: iALS
# --------------------------------------------------------------------------

def implicit_parameters(alpha: float, regularization: float) -> tuple[float, float, float]:
    """Map the paper's (alpha, lambda) to implicit's (alpha, regularization).

    Returns ``(alpha_implicit, regularization_implicit, prediction_scale)`` with
    ``alpha_implicit = 1 + 1/alpha``, ``regularization_implicit =
    lambda (1 + alpha) / alpha`` and ``prediction_scale = 1 + alpha``: implicit's
    predictions are ``(1 + alpha)`` times the paper's, its factors
    ``sqrt(1 + alpha)`` times the paper's. For alpha = 0.2, lambda = 10:
    (6.0, 60.0, 1.2).

    Derivation (binary data, H = observed pairs, p = predicted score).

    The paper's loss (section 9, following Bayer et al. 2017) is::

        L_paper(W, V) = sum_{(u,i) in H} (p_ui - 1)^2 + alpha sum_{u,i} p_ui^2
                        + lambda (||W||^2 + ||V||^2)
                      = sum_H [1 - 2 p + (1 + alpha) p^2] + alpha sum_{not H} p^2 + lambda ||.||^2

    implicit 0.7.3: ``implicit/cpu/als.py`` lines 132-134 (``fit``) replace the
    input r by ``c = alpha * r``; the per-row solve (``user_linear_equation``,
    lines 494-513, the Python twin of the compiled ``_als._least_squares``)
    builds ``A = Y^T Y + reg I + sum_{i in H_u} (c - 1) y_i y_i^T`` and
    ``b = sum_{i in H_u} c y_i``. So the confidence is ``alpha * r`` (not
    ``1 + alpha * r``), unobserved pairs weigh 1, and ``reg`` is not scaled by the
    number of ratings; the same ``reg`` is used for users and items. implicit
    thus minimizes, with c = alpha_implicit for r = 1::

        L_impl(X, Y) = sum_H c (1 - x_u.y_i)^2 + sum_{not H} (x_u.y_i)^2 + reg (||X||^2 + ||Y||^2)

    Put X = sqrt(s) W, Y = sqrt(s) V, so that x_u.y_i = s p_ui. Then::

        L_impl / s^2 = const + sum_H [-2 (c/s) p + c p^2] + sum_{not H} p^2 + (reg/s) ||.||^2
        L_paper / alpha = const + sum_H [-(2/alpha) p + ((1+alpha)/alpha) p^2]
                          + sum_{not H} p^2 + (lambda/alpha) ||.||^2

    The two agree term by term iff c = (1 + alpha)/alpha = 1 + 1/alpha,
    c/s = 1/alpha, i.e. s = 1 + alpha, and reg/s = lambda/alpha, i.e.
    reg = lambda (1 + alpha)/alpha. Both losses being positive multiples of each
    other under this change of variables, every ALS half-step (exact minimizer
    of one side given the other) maps to the same half-step: implicit's factors
    divided by sqrt(1 + alpha) are the paper's iterates. tests/test_recommenders.py
    checks this against a direct solve of the paper's normal equations.
    """
    if not alpha > 0:
        raise ValueError("alpha must be > 0")
    if not regularization >= 0:
        raise ValueError("regularization must be >= 0")
    return 1.0 + 1.0 / alpha, regularization * (1.0 + alpha) / alpha, 1.0 + alpha


def ials_objective(train, user_factors, item_factors, alpha: float, regularization: float) -> float:
    """The paper's iALS loss of section 9 for binary ``train``::

        sum_{(u,i) in H} (w_u.v_i - 1)^2 + alpha sum_{u,i} (w_u.v_i)^2
        + lambda (||W||_F^2 + ||V||_F^2)

    computed without forming the dense prediction matrix
    (sum_{u,i} p_ui^2 = <W^T W, V^T V>).
    """
    X = sp.csr_matrix(train)
    W = np.asarray(user_factors, dtype=np.float64)
    V = np.asarray(item_factors, dtype=np.float64)
    rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    p_obs = np.einsum("nf,nf->n", W[rows], V[X.indices])
    observed = np.sum((p_obs - 1.0) ** 2)
    gram = np.sum((W.T @ W) * (V.T @ V))
    return float(observed + alpha * gram + regularization * (np.sum(W * W) + np.sum(V * V)))


class IALSModel:
    """A fitted iALS model in the paper's parameterization: ``scores = W V^T``."""

    def __init__(self, user_factors, item_factors, name="ials", hyperparameters=None):
        self.user_factors = user_factors
        self.item_factors = item_factors
        self.name = name
        self.hyperparameters = dict(hyperparameters or {})

    @property
    def n_items(self) -> int:
        return self.item_factors.shape[0]

    def scores(self, users) -> np.ndarray:
        users = np.asarray(users, dtype=np.int64)
        return (self.user_factors[users] @ self.item_factors.T).astype(np.float32, copy=False)


def fit_ials(train, *, factors=16, regularization=10.0, alpha=0.2, iterations=16, seed=0,
             use_cg=False, dtype="float64", callback: Callable | None = None,
             initial_factors: tuple | None = None, name="ials") -> IALSModel:
    """Recommender X (section 9): iALS on the paper's loss (see :func:`ials_objective`).

    Trained with ``implicit.cpu.als.AlternatingLeastSquares`` with the exact
    reparameterization of :func:`implicit_parameters`; the returned factors are
    implicit's divided by ``sqrt(1 + alpha)``, so ``W V^T`` are the paper's
    predictions. One iteration solves all users given the items, then all
    items given the users, exactly (``use_cg=False``: Cholesky per row;
    ``use_cg=True`` is implicit's 3-step conjugate gradient, faster, inexact).

    ``iterations`` defaults to 16 (the paper does not say). Measured on
    MovieLens 1M (seeds 0-2): the relative decrease of the paper's loss per
    iteration is ~5e-4 at 8 iterations, ~1e-4 at 16, ~5e-6 at 32; from 4
    iterations on, Recall@10 stays within 7.5-8.0 and AUC within 89.2-89.4,
    and the seed-to-seed spread at 16 iterations (~0.1 point of Recall@10) is as
    large as the change from 16 to 32 iterations. 16 exact iterations take
    2-4 s on 2 cores. ``dtype`` defaults to float64: the exact solves cost the
    same as in float32 at d = 16.

    ``callback(iteration, W, V)`` (paper parameterization, copies) is called
    after every iteration; ``initial_factors=(W0, V0)`` (paper parameterization)
    replaces implicit's random initialisation (uniform [0, 0.01) from ``seed``).
    """
    from implicit.cpu.als import AlternatingLeastSquares

    X = _check_train(train)
    alpha_impl, reg_impl, scale = implicit_parameters(alpha, regularization)
    root = math.sqrt(scale)
    with threadpool_limits(1, "blas"):
        model = AlternatingLeastSquares(
            factors=int(factors), regularization=reg_impl, alpha=alpha_impl,
            dtype=np.dtype(dtype), use_native=True, use_cg=bool(use_cg),
            iterations=int(iterations), calculate_training_loss=False,
            random_state=int(seed),
        )
        if initial_factors is not None:
            W0, V0 = initial_factors
            model.user_factors = np.array(W0, dtype=np.dtype(dtype)) * root
            model.item_factors = np.array(V0, dtype=np.dtype(dtype)) * root

        inner = None
        if callback is not None:
            def inner(iteration, elapsed, loss):  # noqa: ARG001 - implicit's signature
                callback(iteration, model.user_factors / root, model.item_factors / root)

        model.fit(X, show_progress=False, callback=inner)
    hyper = {"factors": factors, "regularization": regularization, "alpha": alpha,
             "iterations": iterations, "use_cg": use_cg, "dtype": str(np.dtype(dtype)),
             "seed": seed}
    fitted = IALSModel(np.asarray(model.user_factors) / root,
                       np.asarray(model.item_factors) / root, name=name, hyperparameters=hyper)
    fitted.implicit_model = model  # implicit's own object (its scores are (1 + alpha) x ours)
    return fitted


def _validate_ials(spec: dict) -> dict:
    name, p = _hyperparameters(spec, IALS_DEFAULTS)
    return {
        "name": name,
        "factors": _positive_number(name, "factors", p["factors"], integer=True),
        "regularization": _positive_number(name, "regularization", p["regularization"],
                                           allow_zero=True),
        "alpha": _positive_number(name, "alpha", p["alpha"]),
        "iterations": _positive_number(name, "iterations", p["iterations"], integer=True),
        "use_cg": _boolean(name, "use_cg", p["use_cg"]),
        "dtype": _choice(name, "dtype", p["dtype"], ("float32", "float64")),
    }


def _build_ials(spec: dict, train, seed) -> IALSModel:
    return fit_ials(train, seed=seed, **_validate_ials(spec))


# --------------------------------------------------------------------------
# Recommenders Y and Z: item-kNN, eqs 27-30
# --------------------------------------------------------------------------

def cosine_similarity(train, q: float = 1.0) -> np.ndarray:
    """Eq 27: s_ij = (|U_i & U_j| / (sqrt|U_i| sqrt|U_j|))^q, dense float64 (n_items^2).

    U_i is the set of users with item i in ``train``; computed from the sparse
    co-occurrence counts X^T X. The diagonal is 1 for every item with at least
    one interaction. Items without interactions have similarity 0 everywhere
    (0/0 := 0), including with themselves.
    """
    X = _check_train(train).astype(np.float64)
    counts = (X.T @ X).toarray()  # exact integer co-occurrence counts
    n = np.diag(counts).copy()
    root = np.sqrt(n)
    denom = np.multiply.outer(root, root)  # bit-symmetric
    with np.errstate(divide="ignore", invalid="ignore"):
        S = np.where(denom > 0, counts / denom, 0.0)
    np.fill_diagonal(S, (n > 0).astype(np.float64))
    if q != 1:
        np.power(S, q, out=S)
    return S


def _top_k_mask(S: np.ndarray, k: int, axis: int) -> np.ndarray:
    """Boolean mask of the k largest entries of every row (axis=1) or column
    (axis=0) of S, among the strictly positive ones; ties at the boundary go to
    the lower item index (a stable sort), so exactly min(k, #positive) entries
    are kept per row/column."""
    A = S if axis == 1 else S.T
    mask = np.zeros(A.shape, dtype=bool)
    if k < A.shape[1]:
        order = np.argsort(-A, axis=1, kind="stable")[:, :k]
        np.put_along_axis(mask, order, True, axis=1)
    else:
        mask[:] = True
    mask &= A > 0
    return mask if axis == 1 else mask.T


_SELF_SIMILARITY = {True: "include", False: "exclude", "include": "include",
                    "exclude": "exclude", "after_cut": "after_cut"}


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
        the side is irrelevant. Ties at the k-th place go to the lower item index.
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

    Numerics: the similarity and the sums are computed in float64 and the
    row scalings of eqs 29/30 are applied to the sum, not to s, so numerator and
    denominator of eq 30 are accumulated over j in the same (index) order: an
    item whose every neighbour lies in H_u scores exactly 1.0 under "row_sum",
    one with no neighbour in H_u exactly 0.0. Ties there are exact, not rounding
    artefacts. Scores are returned as float32.
    """

    def __init__(self, train, *, q=1.0, k=None, k_prime=None, self_similarity="include",
                 cut="column", normalization="row", norm="l2", denominator="none",
                 name="item_knn"):
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
        self.name = name
        self.hyperparameters = {"q": q, "k": k, "k_prime": k_prime,
                                "self_similarity": self_similarity, "cut": cut,
                                "normalization": normalization, "norm": norm,
                                "denominator": denominator}
        self._train = _check_train(train).astype(np.float64)
        S = cosine_similarity(self._train, q)
        diagonal = np.diag(S).copy()
        if self_similarity != "include":
            np.fill_diagonal(S, 0.0)
        # eq 28: delta(j in N_k'(i)) on the k' side, delta(i in N_k(j)) on the other
        row_k, col_k = (k_prime, k) if cut == "row" else (k, k_prime)
        if row_k is not None:
            S *= _top_k_mask(S, row_k, axis=1)
        if col_k is not None:
            S *= _top_k_mask(S, col_k, axis=0)
        if self_similarity == "after_cut":
            np.fill_diagonal(S, diagonal)

        def _norms(A, axis):
            return np.abs(A).sum(axis=axis) if norm == "l1" else np.sqrt(np.sum(A * A, axis=axis))

        if normalization == "column":  # eq 29 on the other axis
            col_norm = _norms(S, 0)
            S = S / np.where(col_norm > 0, col_norm, 1.0)
        self._ST = np.ascontiguousarray(S.T)  # s' (column-normalized if asked); row scalings below
        n_items = S.shape[0]
        # per-item divisor of the numerator sum_{j in H_u} s'_ij
        if denominator == "row_sum":
            ones = sp.csr_matrix((np.ones(n_items), (np.zeros(n_items, dtype=np.int64),
                                                     np.arange(n_items))), shape=(1, n_items))
            divisor = np.asarray(ones @ self._ST).ravel()  # same summation order as the numerator
        elif normalization == "row":
            divisor = _norms(S, 1)
        else:
            divisor = np.ones(n_items)
        self._divisor = divisor

    @property
    def similarity(self) -> np.ndarray:
        """s' after the cut (and the column normalization, if any), before the
        per-row scaling of eqs 29-30 (a read-only view)."""
        view = self._ST.T
        view.flags.writeable = False
        return view

    @property
    def n_items(self) -> int:
        return self._ST.shape[0]

    def scores(self, users) -> np.ndarray:
        users = np.asarray(users, dtype=np.int64)
        numerator = np.asarray(self._train[users] @ self._ST)
        d = self._divisor
        y = np.divide(numerator, d, out=np.zeros_like(numerator), where=d > 0)
        return y.astype(np.float32)


def _validate_item_knn(spec: dict) -> dict:
    name, p = _hyperparameters(spec, ITEM_KNN_DEFAULTS)
    ss = p["self_similarity"]
    if isinstance(ss, (bool, np.bool_)):
        ss = _SELF_SIMILARITY[bool(ss)]
    else:
        ss = _choice(name, "self_similarity", ss, ("include", "exclude", "after_cut"))
    return {
        "name": name,
        "q": _positive_number(name, "q", p["q"]),
        "k": _neighbourhood_size(name, "k", p["k"]),
        "k_prime": _neighbourhood_size(name, "k_prime", p["k_prime"]),
        "self_similarity": ss,
        "cut": _choice(name, "cut", p["cut"], ("row", "column")),
        "normalization": _choice(name, "normalization", p["normalization"],
                                 ("row", "column", "none")),
        "norm": _choice(name, "norm", p["norm"], ("l1", "l2")),
        "denominator": _choice(name, "denominator", p["denominator"], ("row_sum", "none")),
    }


def _build_item_knn(spec: dict, train, seed) -> ItemKNN:  # noqa: ARG001 - deterministic
    return ItemKNN(train, **_validate_item_knn(spec))


# --------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------

_REGISTRY: dict[str, tuple[Callable, Callable | None]] = {
    "ials": (_build_ials, _validate_ials),
    "item_knn": (_build_item_knn, _validate_item_knn),
}


def register_recommender(type_name: str, builder: Callable, validate: Callable | None = None) -> None:
    """Add a recommender type.

    ``builder(spec, train, seed)`` must return an object with
    ``scores(users) -> float32 array (len(users), n_items)`` and should raise
    ``ValueError`` naming any bad key of ``spec``; ``validate(spec)``, if given,
    checks a spec without training (used by :func:`validate_spec`).
    """
    if not isinstance(type_name, str) or not type_name:
        raise ValueError("type_name must be a non-empty string")
    _REGISTRY[type_name] = (builder, validate)


def recommender_types() -> list[str]:
    return sorted(_REGISTRY)


def validate_spec(spec: dict) -> dict:
    """Check a recommender spec without fitting anything.

    Returns the hyperparameters with defaults filled in and values normalized
    (for registered types without a validator: the spec itself). Raises
    ``ValueError`` naming the offending key.
    """
    if not isinstance(spec, dict):
        raise ValueError(f"recommender spec must be a dict, got {type(spec).__name__}")
    if "type" not in spec:
        raise ValueError("recommender spec needs the key 'type'")
    kind = spec["type"]
    if kind not in _REGISTRY:
        raise ValueError(f"unknown recommender 'type' {kind!r}; known: {', '.join(recommender_types())}")
    validate = _REGISTRY[kind][1]
    return validate(spec) if validate is not None else dict(spec)


def fit_recommender(spec: dict, train, seed: int = 0):
    """Fit the recommender described by ``spec`` on ``train``.

    ``spec = {"type": "ials" | "item_knn" | <registered>, "name": optional, **hyperparameters}``;
    missing hyperparameters take the defaults (:data:`IALS_DEFAULTS`,
    :data:`ITEM_KNN_DEFAULTS`). The returned model has ``scores(users)`` and
    ``name``. Raises ``ValueError`` naming the offending key of ``spec``.
    """
    validate_spec(spec)
    model = _REGISTRY[spec["type"]][0](spec, train, seed)
    if not hasattr(model, "name"):
        model.name = str(spec.get("name", spec["type"]))
    return model


# --------------------------------------------------------------------------
# Score matrices
# --------------------------------------------------------------------------

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


def all_scores(model, n_users: int, *, block_size: int = 1024, progress: bool = False) -> np.ndarray:
    """Every user's scores, ``model.scores`` called block by block: float32
    array (n_users, n_items)."""
    starts = range(0, n_users, block_size)
    if progress:
        from tqdm.auto import tqdm
        starts = tqdm(starts, desc=f"scoring {getattr(model, 'name', 'model')}", unit="block")
    blocks = [np.asarray(model.scores(np.arange(a, min(a + block_size, n_users))), dtype=np.float32)
              for a in starts]
    return np.vstack(blocks) if blocks else np.zeros((0, 0), dtype=np.float32)
