"""Every estimator of a metric from sampled ranks, behind one API.

All of them read the same inputs (:class:`SampledEvaluation`): each user's sampled
rank r~_u in 1..m_u + 1, the user's sample size m_u and ranked-set size n_u (the
held-out item and the n_u - 1 items it competes with), and the sampling law
(``binomial``: with replacement; ``hypergeometric``: without). Each estimates the
mean exact metric over the users, (1/U) sum_u M(r_u, n_u) (eq 1 of the paper), for
any metric of :mod:`sampled_metrics.estimation.metrics`:

* **corrections** of Krichene & Rendle, section 5: ``sampled``, ``rank_estimate``,
  ``ls``, ``cls``, ``bv_<gamma>`` (a vector M^ over r~ per (m, n), eqs 20-25, uniform
  prior); the estimate is the mean of M^(r~_u);
* **a learned rank distribution** (Jin et al., "On Estimating Recommendation
  Evaluation Metrics under Sampling", AAAI 2021): ``em``, the maximum-likelihood
  distribution p(r) by EM over the mixture r~_u ~ sum_r p(r) p(r~ | r), and
  ``maxent``, their maximum-entropy estimate (a weighted squared distance between
  the implied and the observed distribution of r~, minus gamma times the entropy,
  gamma = 0.01, solved here with scipy's L-BFGS rather than a commercial conic
  solver); the estimate is the metric's expectation under the learned distribution;
* **learned-prior corrections**: ``bv_em_<gamma>``, ``bv_maxent_<gamma>`` (eqs 24-25
  with the learned distribution as p(r)), and ``mn_em``, ``mn_maxent`` (Li et al.,
  "Towards Reliable Item Sampling for Recommendation Evaluation", AAAI 2023: the
  variance weighted by 1/#users instead of gamma p(r)). The prior is learned from the
  sample being corrected, never from other repetitions.

**Users with different n.** The learned distribution lives on the relative position
theta = (r - 1)/(n - 1), on the grid theta_j = (j - 1)/(N - 1), j = 1..N, N the largest
n: under the binomial law p(r~ | r) depends on theta alone (eq 15), so every user's
likelihood is exact; a user's rank at theta is 1 + theta (n_u - 1). When all users
share one n the grid is the ranks themselves and both laws are exact; with different
n and the hypergeometric law the learned distribution uses the binomial likelihood
(documented approximation: the laws differ by O(m / n)). Learned-prior corrections are
built at up to ``nodes`` values of n and interpolated linearly in n between them, as
Figure 6's per-user corrections (exact when there are at most ``nodes`` distinct n).

**Uncertainty** (:func:`estimate_table`, :func:`compare`): an estimator that is a mean
of per-user values with a fixed vector (the corrections) gets the normal interval of
that mean, whose variance holds both the spread of the users' exact ranks and the
sampling variance of the law (each r~_u is one draw); the others are bootstrapped over
users (the learned distribution re-learned on every resample).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import linalg, optimize, special, stats
from threadpoolctl import threadpool_limits

from .corrections import (
    cached_law,
    correction_vectors,
    parse_method,
)
from .laws import LAWS, WITH_REPLACEMENT, WITHOUT_REPLACEMENT
from .metrics import metric_by_name, metric_vector

__all__ = [
    "ESTIMATOR_DEFAULTS",
    "LEARNED_DISTRIBUTIONS",
    "SampledEvaluation",
    "compare",
    "estimate",
    "estimate_table",
    "learned_rank_distribution",
    "mn_correction",
    "paper_methods",
    "parse_estimator",
    "sampled_evaluation",
]

# The learned distributions and their defaults: Jin et al.'s code runs EM for 100
# iterations from the uniform distribution (no tolerance) and weights the entropy by
# gamma = 0.01; both kept, so that the numbers are theirs.
LEARNED_DISTRIBUTIONS = ("em", "maxent")
ESTIMATOR_DEFAULTS = {
    "em_iterations": 100,
    "maxent_gamma": 0.01,
    "nodes": 5,
    "bootstrap": 200,
    "confidence": 0.95,
}


@dataclass(frozen=True)
class SampledEvaluation:
    """One sampled evaluation: per user the sampled rank, m and n, and the law
    (build it with :func:`sampled_evaluation`, which checks them).

    Parameters
    ----------
    ranks : numpy.ndarray
        r~_u in 1..m_u + 1 (int64).
    m : numpy.ndarray
        Sampled items of each user (int64).
    n : numpy.ndarray
        Ranked-set size of each user, the held-out item included (int64).
    law : str
        ``binomial`` (with replacement) or ``hypergeometric`` (without).

    Examples
    --------
    >>> data = sampled_evaluation([1, 5, 2], m=10, n=100)
    >>> data.take([0, 0, 2]).ranks.tolist()
    [1, 1, 2]
    """

    ranks: np.ndarray  # r~_u in 1..m_u + 1 (int64)
    m: np.ndarray  # sampled items of each user (int64)
    n: np.ndarray  # ranked-set size of each user, the held-out item included (int64)
    law: str  # "binomial" (with replacement) or "hypergeometric" (without)

    @property
    def n_users(self) -> int:
        return int(self.ranks.size)

    def take(self, users) -> SampledEvaluation:
        """The evaluation restricted to (or resampled as) ``users`` (indices)."""
        return SampledEvaluation(self.ranks[users], self.m[users], self.n[users], self.law)


def sampled_evaluation(ranks, m, n, law: str = WITH_REPLACEMENT) -> SampledEvaluation:
    """Check and bundle the inputs every estimator shares.

    Parameters
    ----------
    ranks : array_like of int
        Each user's sampled rank r~ in 1..m + 1 (1 + the sampled items scored above
        the held-out item).
    m : int or array_like of int
        Sampled items per user (one value for all, or one per user).
    n : int or array_like of int
        Ranked-set size per user: the held-out item and every item it could be
        ranked against (e.g. the catalogue minus the user's training items).
    law : {"binomial", "hypergeometric"}, default "binomial"
        Sampling with or without replacement.

    Returns
    -------
    SampledEvaluation

    Raises
    ------
    ValueError
        Naming what does not hold (and the first user where it fails).

    Examples
    --------
    >>> data = sampled_evaluation([1, 3, 101], m=100, n=3706)
    >>> data.n_users, data.m.tolist(), data.law
    (3, [100, 100, 100], 'binomial')
    >>> sampled_evaluation([1, 102], m=100, n=3706)
    Traceback (most recent call last):
    ValueError: sampled rank of user 1 is 102, outside 1..m + 1 = 101
    """
    if law not in LAWS:
        raise ValueError(f"unknown law {law!r}; choose one of {LAWS}")
    r = np.asarray(ranks)
    if r.ndim != 1 or r.size == 0:
        raise ValueError(f"sampled ranks must be a non-empty 1-d array, got shape {r.shape}")
    m_u, n_u = (np.broadcast_to(np.asarray(x), r.shape) for x in (m, n))
    for name, values in (("sampled rank", r), ("m", m_u), ("n", n_u)):
        bad = np.flatnonzero(~np.isfinite(values.astype(float)) | (values != np.round(values)))
        if bad.size:
            raise ValueError(f"{name} of user {bad[0]} is {values[bad[0]]}, not an integer")
    r, m_u, n_u = (np.asarray(x, dtype=np.int64) for x in (r, m_u, n_u))
    for name, values, low in (("m", m_u, 1), ("n", n_u, 2)):
        bad = np.flatnonzero(values < low)
        if bad.size:
            raise ValueError(f"{name} of user {bad[0]} is {values[bad[0]]}, below {low}")
    bad = np.flatnonzero((r < 1) | (r > m_u + 1))
    if bad.size:
        u = bad[0]
        raise ValueError(f"sampled rank of user {u} is {r[u]}, outside 1..m + 1 = {m_u[u] + 1}")
    if law == WITHOUT_REPLACEMENT:
        bad = np.flatnonzero(m_u > n_u - 1)
        if bad.size:
            u = bad[0]
            raise ValueError(
                f"m of user {u} is {m_u[u]} > n - 1 = {n_u[u] - 1}: impossible without replacement"
            )
    return SampledEvaluation(r, m_u.copy(), n_u.copy(), law)


# --------------------------------------------------------------------------
# Method names
# --------------------------------------------------------------------------


def parse_estimator(method: str) -> tuple[str, str | None, float | None]:
    """Split an estimator name into (family, learned distribution, gamma).

    Parameters
    ----------
    method : str
        ``sampled``, ``rank_estimate``, ``ls``, ``cls``, ``bv_<gamma>`` (the paper's);
        ``em``, ``maxent``; ``bv_em_<gamma>``, ``bv_maxent_<gamma>``; ``mn_em``,
        ``mn_maxent``.

    Returns
    -------
    family : str
        ``correction`` (a fixed vector), ``distribution`` (plug-in of a learned
        distribution), ``bv`` or ``mn`` (a correction with a learned prior).
    learned : str or None
        ``em`` or ``maxent`` for the learned families.
    gamma : float or None
        The gamma of BV.

    Raises
    ------
    ValueError
        Naming the method when it is unknown.

    Examples
    --------
    >>> parse_estimator("bv_em_0.1"), parse_estimator("mn_maxent"), parse_estimator("cls")
    (('bv', 'em', 0.1), ('mn', 'maxent', None), ('correction', None, None))
    """
    if method in LEARNED_DISTRIBUTIONS:
        return "distribution", method, None
    for learned in LEARNED_DISTRIBUTIONS:
        if method == f"mn_{learned}":
            return "mn", learned, None
        if method.startswith(f"bv_{learned}_"):
            try:
                _, gamma = parse_method(f"bv_{method[len(learned) + 4 :]}")
            except ValueError:
                raise ValueError(f"method {method!r}: gamma must be a number in [0, 1]") from None
            return "bv", learned, gamma
    try:
        parse_method(method)
    except ValueError:
        if method.startswith("bv_"):
            raise  # its own message: what is wrong with the gamma
        raise ValueError(
            f"unknown estimator {method!r}; known: sampled, rank_estimate, ls, cls, "
            "bv_<gamma>, em, maxent, bv_em_<gamma>, bv_maxent_<gamma>, mn_em, mn_maxent"
        ) from None
    return "correction", None, None


def paper_methods(methods) -> list[str]:
    """The methods of the paper (no correction, and the corrections of section 5: a
    fixed vector over r~), in order, without the learned estimators.

    Parameters
    ----------
    methods : iterable of str
        Estimator names.

    Returns
    -------
    list of str

    Examples
    --------
    >>> paper_methods(["sampled", "mn_em", "bv_0.1", "em"])
    ['sampled', 'bv_0.1']
    """
    return [method for method in methods if parse_estimator(method)[0] == "correction"]


# --------------------------------------------------------------------------
# The learned rank distribution (Jin et al., AAAI 2021)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Likelihood:
    """The users grouped by (m, r~) (and n when the law needs it): rows[g, j] =
    p(r~_g | theta_j; m_g, n_g) on the grid, counts[g] users, group[u] of each user."""

    rows: np.ndarray
    counts: np.ndarray
    group: np.ndarray
    classes: np.ndarray  # the (m, n) class of each group (index into class_sizes)
    class_sizes: np.ndarray  # sampled-set size m + 1 of each class
    grid: int


def _likelihood(data: SampledEvaluation) -> _Likelihood:
    grid = int(data.n.max())
    exact_n = data.law == WITHOUT_REPLACEMENT and np.unique(data.n).size == 1
    distinct, group, counts = _distinct_rows(
        data.m, data.n if exact_n else np.zeros_like(data.n), data.ranks
    )
    rows = np.empty((len(distinct), grid))
    for g, (m, n, r) in enumerate(distinct):
        if exact_n:  # one n, no replacement: the grid is the ranks, the law exact
            rows[g] = cached_law(int(n), int(m), WITHOUT_REPLACEMENT)[:, r - 1]
        else:  # eq 15: r~ - 1 ~ Binomial(m, theta)
            rows[g] = _binomial_on_grid(int(m), grid)[r - 1]
    class_keys, classes, _ = _distinct_rows(distinct[:, 0], distinct[:, 1])
    return _Likelihood(rows, counts, group, classes, class_keys[:, 0] + 1, grid)


def _distinct_rows(*columns):
    """np.unique(..., axis=0) of non-negative integer columns, through one int64 code
    per row (a sort of 1-d codes: much faster than sorting rows)."""
    code = np.zeros(columns[0].size, dtype=np.int64)
    for column in columns:
        code = code * (int(column.max()) + 1) + column
    codes, first, group, counts = np.unique(
        code, return_index=True, return_inverse=True, return_counts=True
    )
    distinct = np.column_stack([column[first] for column in columns])
    return distinct, group.ravel(), counts


@lru_cache(maxsize=4)
def _binomial_on_grid(m: int, grid: int) -> np.ndarray:
    """p(r~ | theta_j) = Binomial(r~ - 1; m, theta_j) for r~ = 1..m + 1 (rows), read-only."""
    table = stats.binom.pmf(np.arange(m + 1)[:, None], m, np.linspace(0.0, 1.0, grid))
    table.setflags(write=False)
    return table


def learned_rank_distribution(
    data: SampledEvaluation,
    kind: str,
    *,
    em_iterations: int = ESTIMATOR_DEFAULTS["em_iterations"],
    maxent_gamma: float = ESTIMATOR_DEFAULTS["maxent_gamma"],
) -> np.ndarray:
    """The distribution of the users' relative rank learned from their sampled ranks.

    ``em``: maximum likelihood of the mixture p(r~_u) = sum_j pi_j p(r~_u | theta_j) by
    EM, from the uniform distribution (Jin et al. 2021): pi_j <- pi_j (1/U) sum_u
    p(r~_u | theta_j) / sum_k pi_k p(r~_u | theta_k), ``em_iterations`` times.
    ``maxent``: argmin over the simplex of sum_c (U_c/U)(m_c + 1) sum_r~ p^_c(r~)
    ((A_c^T pi)(r~) - p^_c(r~))^2 - gamma H(pi) (their maximum-entropy estimator, c
    the classes of equal (m, n), p^_c the observed distribution of r~ in class c),
    solved by L-BFGS over pi = softmax(z).

    Parameters
    ----------
    data : SampledEvaluation
    kind : {"em", "maxent"}
    em_iterations : int, default 100
    maxent_gamma : float, default 0.01

    Returns
    -------
    numpy.ndarray
        pi over theta_j = (j - 1)/(N - 1), j = 1..N, N the largest n (summing to 1).

    Examples
    --------
    With every sampled item drawn (m = n - 1, no replacement) the sampled rank is the
    rank, and EM returns the observed distribution:

    >>> data = sampled_evaluation([1, 1, 2, 4], m=3, n=4, law="hypergeometric")
    >>> np.round(learned_rank_distribution(data, "em"), 3).tolist()
    [0.5, 0.25, 0.0, 0.25]
    """
    likelihood = _likelihood(data)
    if kind == "em":
        return _em(likelihood, em_iterations)
    if kind == "maxent":
        return _maxent(likelihood, maxent_gamma)
    raise ValueError(
        f"unknown learned distribution {kind!r}; choose one of {LEARNED_DISTRIBUTIONS}"
    )


def _em(likelihood: _Likelihood, iterations: int) -> np.ndarray:
    rows, weights = likelihood.rows, likelihood.counts / likelihood.counts.sum()
    pi = np.full(likelihood.grid, 1.0 / likelihood.grid)
    for _ in range(iterations):
        pi = pi * (rows.T @ (weights / (rows @ pi)))
        pi /= pi.sum()  # exact in theory; keeps rounding from drifting
    return pi


def _maxent(likelihood: _Likelihood, gamma: float) -> np.ndarray:
    rows, counts = likelihood.rows, likelihood.counts
    users = counts.sum()
    class_users = np.bincount(likelihood.classes, weights=counts)
    observed = counts / class_users[likelihood.classes]  # p^_c(r~) of each group
    coef = (class_users / users * likelihood.class_sizes)[likelihood.classes] * observed

    def objective(z):
        pi = special.softmax(z)
        gap = rows @ pi - observed
        log_pi = np.log(np.maximum(pi, 1e-300))
        value = np.sum(coef * gap**2) + gamma * np.sum(pi * log_pi)
        grad_pi = 2.0 * rows.T @ (coef * gap) + gamma * (log_pi + 1.0)
        return value, pi * (grad_pi - pi @ grad_pi)

    z0 = np.zeros(likelihood.grid)
    result = optimize.minimize(
        objective,
        z0,
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 10000, "ftol": 1e-12, "gtol": 1e-10},
    )
    return special.softmax(result.x)


def _prior_on_ranks(pi: np.ndarray, n: int) -> np.ndarray:
    """pi on the theta grid as p(r) over r = 1..n: each theta_j sits at the rank
    1 + theta_j (n - 1), its mass split linearly between the two nearest ranks."""
    grid = pi.size
    if grid == n:
        return pi.copy()
    position = np.linspace(0.0, n - 1.0, grid)  # 0-based rank of each theta_j
    low = np.floor(position).astype(np.int64)
    high = np.minimum(low + 1, n - 1)
    upper = position - low
    prior = np.bincount(low, weights=pi * (1.0 - upper), minlength=n)
    prior += np.bincount(high, weights=pi * upper, minlength=n)
    return prior


def _plug_in(metric: str, pi: np.ndarray, data: SampledEvaluation) -> float:
    """(1/U) sum_u sum_j pi_j M(1 + theta_j (n_u - 1), n_u): the metric's expectation
    under the learned distribution, each user at their own n."""
    return float(pi @ _metric_on_grid(metric, pi.size, data))


def _metric_on_grid(metric: str, grid: int, data: SampledEvaluation) -> np.ndarray:
    """(1/U) sum_u M(1 + theta_j (n_u - 1), n_u) for every theta_j (cached by the users'
    n: the repetitions of one evaluation share it)."""
    values, counts = np.unique(data.n, return_counts=True)
    return _metric_on_grid_at(metric, grid, values.tobytes(), counts.tobytes())


@lru_cache(maxsize=64)
def _metric_on_grid_at(metric: str, grid: int, values: bytes, counts: bytes) -> np.ndarray:
    """One array of the distinct n at once, in blocks of 256 (bounded memory)."""
    fn = metric_by_name(metric)
    values, counts = np.frombuffer(values, dtype=np.int64), np.frombuffer(counts, dtype=np.int64)
    theta = np.linspace(0.0, 1.0, grid)
    total = np.zeros(grid)
    for start in range(0, values.size, 256):
        n = values[start : start + 256, None].astype(float)
        total += counts[start : start + 256] @ fn(1.0 + theta * (n - 1.0), n)
    total /= counts.sum()
    total.setflags(write=False)
    return total


# --------------------------------------------------------------------------
# Corrections with a learned prior
# --------------------------------------------------------------------------


def mn_correction(exact_values, law_matrix, prior, n_users: int) -> np.ndarray:
    """The MN correction of Li et al. (AAAI 2023): with P = p(r~ | r), D = diag(p(r)),

        M^ = [P^T D P + (1/U) (diag(P^T 1) - P^T P)]^-1 P^T D M,

    the minimizer of sum_r p(r) bias_r(M^)^2 + (1/U) sum_r Var_r(M^), bias_r and Var_r
    the bias and variance of M^(r~) given the rank r: BV (eq 24) with the variance
    weighted by 1/U, U the number of users, instead of gamma p(r).

    Parameters
    ----------
    exact_values : array_like
        M(r) over r = 1..n (or several metrics as columns).
    law_matrix : array_like
        P, shape (n, m + 1).
    prior : array_like
        p(r) over r = 1..n.
    n_users : int
        U.

    Returns
    -------
    numpy.ndarray
        M^ over r~ = 1..m + 1 (one column per metric when several).

    Examples
    --------
    With every item sampled (P = I) there is no variance and M^ = M:

    >>> mn_correction([1.0, 0.5, 0.0], np.eye(3), [0.2, 0.3, 0.5], 10).round(12).tolist()
    [1.0, 0.5, 0.0]
    """
    from .corrections import normal_equations

    P = np.asarray(law_matrix, dtype=float)
    gram, rhs, _ = normal_equations(exact_values, P, prior)  # P^T D P (upper), P^T D M
    solution = _solve_symmetric(_mn_system(gram, P, n_users), rhs)
    return solution[:, 0] if np.ndim(exact_values) == 1 else solution


def _mn_system(gram: np.ndarray, P: np.ndarray, n_users: int) -> np.ndarray:
    """P^T D P + (diag(P^T 1) - P^T P) / U, from the upper triangle of P^T D P."""
    lhs = np.triu(gram) + np.triu(gram, 1).T
    return lhs + (np.diag(P.sum(axis=0)) - P.T @ P) / n_users


def _solve_symmetric(lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """lhs^-1 rhs for a symmetric positive semi-definite lhs; a sampled rank that the
    prior makes impossible leaves lhs singular and its value undetermined (it has
    weight 0 in the objective): the minimum-norm solution sets it to 0."""
    try:
        return linalg.solve(lhs, rhs, assume_a="pos")
    except (linalg.LinAlgError, ValueError):
        return linalg.lstsq(lhs, rhs)[0]


def _learned_prior_vectors(metrics, specs, pi, data, nodes) -> dict:
    """{(m, n): {(metric, method): M^ over r~}} of the learned-prior corrections
    ``specs`` (method -> (family, gamma)) at the node values of n of each m: one law,
    prior and set of normal equations per node serve every metric and method."""
    from .corrections import _solve_bias_variance, normal_equations
    from .nodes import interpolation_nodes

    vectors = {}
    for m in np.unique(data.m):
        for n in interpolation_nodes(data.n[data.m == m], nodes):
            P = cached_law(int(n), int(m), data.law)
            exact = np.column_stack([metric_vector(metric, int(n)) for metric in metrics])
            gram, rhs, c = normal_equations(exact, P, _prior_on_ranks(pi, int(n)))
            solutions = {}
            for method, (family, gamma) in specs.items():
                if family == "mn":  # the system of mn_correction
                    lhs = _mn_system(gram, P, data.n_users)
                    solutions[method] = _solve_symmetric(lhs, rhs)
                else:
                    solutions[method] = _solve_bias_variance(gram.copy(), rhs, c, gamma)
            vectors[m, n] = {
                (metric, method): solution[:, k]
                for method, solution in solutions.items()
                for k, metric in enumerate(metrics)
            }
    return vectors


def _per_user_from_vectors(vectors: dict, key, data: SampledEvaluation) -> np.ndarray:
    """M^_{m_u, n_u}(r~_u) of ``key`` = (metric, method), linear in n between the node
    values of n of each m."""
    from .nodes import node_weights

    values = np.empty(data.n_users)
    for m in np.unique(data.m):
        users = np.flatnonzero(data.m == m)
        nodes = np.array(sorted(n for mm, n in vectors if mm == m))
        weights = node_weights(data.n[users], nodes)
        table = np.column_stack([vectors[m, n][key] for n in nodes])  # (m + 1, nodes)
        values[users] = np.sum(table[data.ranks[users] - 1] * weights, axis=1)
    return values


# --------------------------------------------------------------------------
# Estimates
# --------------------------------------------------------------------------


def _fixed_values(metrics, methods, data, options, cache) -> dict:
    """{(metric, method): per-user M^_{m_u, n_u}(r~_u)} of the paper's corrections: one
    set of vectors per distinct (m, n), kept in ``cache`` across calls (the same users
    in every repetition of a pipeline share them). BLAS runs on one thread, as in
    ``correction_vectors_by_n``: the same bits as the pipeline's vectors, and no
    oversubscription of small QR factorizations."""
    with threadpool_limits(1):
        return _fixed_values_at(metrics, methods, data, options, cache)


def _fixed_values_at(metrics, methods, data, options, cache) -> dict:
    rounding = options.get("rank_estimate_rounding", "floor")
    constraint = options.get("cls_constraint", "monotone_in_range")
    distinct, which, _ = _distinct_rows(data.m, data.n)
    values = {(metric, method): np.empty(data.n_users) for metric in metrics for method in methods}
    for k, (m, n) in enumerate(distinct):
        key = (int(m), int(n), data.law, rounding, constraint)
        known = cache.setdefault(key, {})
        missing = [(a, b) for a, b in values if (a, b) not in known]
        if missing:
            known.update(
                correction_vectors(
                    sorted({a for a, _ in missing}),
                    sorted({b for _, b in missing}),
                    int(n),
                    int(m),
                    data.law,
                    None,
                    rounding,
                    constraint,
                )
            )
        users = which == k
        for pair, per_user in values.items():
            per_user[users] = known[pair][data.ranks[users] - 1]
    return values


def _estimates(data: SampledEvaluation, metrics, methods, options, cache=None) -> dict:
    """{(metric, method): (estimate, per-user values or None)} for every pair; each
    learned distribution is learned once and serves every metric and method."""
    parsed = {method: parse_estimator(method) for method in methods}
    out = {}
    fixed = [method for method, (family, _, _) in parsed.items() if family == "correction"]
    if fixed:
        values = _fixed_values(metrics, fixed, data, options, {} if cache is None else cache)
        out.update({pair: (float(v.mean()), v) for pair, v in values.items()})
    for kind in LEARNED_DISTRIBUTIONS:
        mine = {method: spec for method, spec in parsed.items() if spec[1] == kind}
        if not mine:
            continue
        pi = learned_rank_distribution(
            data,
            kind,
            em_iterations=options.get("em_iterations", ESTIMATOR_DEFAULTS["em_iterations"]),
            maxent_gamma=options.get("maxent_gamma", ESTIMATOR_DEFAULTS["maxent_gamma"]),
        )
        specs = {
            m: (family, gamma) for m, (family, _, gamma) in mine.items() if family != "distribution"
        }
        if specs:
            nodes = options.get("nodes", ESTIMATOR_DEFAULTS["nodes"])
            vectors = _learned_prior_vectors(metrics, specs, pi, data, nodes)
        for method, (family, _, _) in mine.items():
            for metric in metrics:
                if family == "distribution":
                    out[metric, method] = (float(_plug_in(metric, pi, data)), None)
                else:
                    v = _per_user_from_vectors(vectors, (metric, method), data)
                    out[metric, method] = (float(v.mean()), v)
    return out


def estimate(metric: str, method: str, data: SampledEvaluation, **options) -> float:
    """The estimate of the mean exact metric by one estimator.

    Parameters
    ----------
    metric : str
        A metric name (``recall@10``, ``ndcg@10``, ``ap``, ``auc``, ...).
    method : str
        An estimator (:func:`parse_estimator`).
    data : SampledEvaluation
    **options
        ``em_iterations``, ``maxent_gamma``, ``nodes`` (see ``ESTIMATOR_DEFAULTS``),
        ``rank_estimate_rounding``, ``cls_constraint`` (as
        :func:`sampled_metrics.estimation.corrections.correction_vectors`).

    Returns
    -------
    float

    Examples
    --------
    Sampling every item (m = n - 1, no replacement), every estimator is exact:

    >>> data = sampled_evaluation([1, 2, 5, 9], m=9, n=10, law="hypergeometric")
    >>> [round(estimate("recall@2", name, data), 6) for name in ("sampled", "em", "mn_em")]
    [0.5, 0.5, 0.5]
    """
    return _estimates(data, [metric], [method], options)[metric, method][0]


def _bootstrap(data, metrics, methods, options, replicates, rng, progress, second=None):
    """{(metric, method): array of ``replicates`` estimates on users resampled with
    replacement (the difference first - second when ``second`` is given, the same
    users for both)."""
    out = {(metric, method): np.empty(replicates) for metric in metrics for method in methods}
    rounds = range(replicates)
    if progress:
        from tqdm.auto import tqdm

        rounds = tqdm(rounds, desc="bootstrap", unit="resample", leave=False)
    for b in rounds:
        users = rng.integers(0, data.n_users, data.n_users)
        found = _estimates(data.take(users), metrics, methods, options)
        if second is not None:
            other = _estimates(second.take(users), metrics, methods, options)
            found = {pair: (found[pair][0] - other[pair][0], None) for pair in found}
        for pair, (point, _) in found.items():
            out[pair][b] = point
    return out


def _normal(values, confidence):
    """(standard error, half width) of the mean of ``values``."""
    error = float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else 0.0
    return error, float(stats.norm.ppf(0.5 + confidence / 2)) * error


def estimate_table(
    data: SampledEvaluation,
    metrics,
    methods,
    *,
    confidence: float = ESTIMATOR_DEFAULTS["confidence"],
    bootstrap: int = ESTIMATOR_DEFAULTS["bootstrap"],
    seed: int = 0,
    progress: bool = False,
    **options,
) -> pd.DataFrame:
    """Every metric by every estimator, with a confidence interval.

    The corrections of the paper are means of per-user values: their interval is the
    normal one of that mean (variance: the users' spread and the law's sampling
    variance together; the bootstrap over users gives the same as it grows). The
    learned estimators are bootstrapped over users (``bootstrap`` resamples, each
    re-learning the distribution; 0: the normal interval of the per-user values
    given the learned prior, and none for ``em`` and ``maxent`` themselves).

    Parameters
    ----------
    data : SampledEvaluation
    metrics : iterable of str
    methods : iterable of str
    confidence : float, default 0.95
    bootstrap : int, default 200
    seed : int, default 0
        Seed of the bootstrap's resamples.
    progress : bool, default False
        A tqdm bar over the bootstrap's resamples.
    **options
        As :func:`estimate`.

    Returns
    -------
    pandas.DataFrame
        ``metric``, ``method``, ``estimate``, ``low``, ``high``, ``standard_error``.

    Examples
    --------
    >>> data = sampled_evaluation([1, 2, 5, 9], m=9, n=10, law="hypergeometric")
    >>> table = estimate_table(data, ["recall@2"], ["sampled"])
    >>> table[["estimate", "low"]].round(3).values.tolist()
    [[0.5, -0.066]]
    """
    metrics, methods = list(metrics), list(methods)
    points = _estimates(data, metrics, methods, options)
    learned = [m for m in methods if parse_estimator(m)[0] != "correction"]
    resampled = (
        _bootstrap(
            data, metrics, learned, options, bootstrap, np.random.default_rng(seed), progress
        )
        if bootstrap and learned
        else {}
    )
    tail = (1 - confidence) / 2
    rows = []
    for metric in metrics:
        for method in methods:
            point, values = points[metric, method]
            if (metric, method) in resampled:
                replicates = resampled[metric, method]
                low, high = (float(x) for x in np.quantile(replicates, [tail, 1 - tail]))
                error = float(replicates.std(ddof=1))
            elif values is not None:
                error, half = _normal(values, confidence)
                low, high = point - half, point + half
            else:
                low = high = error = math.nan
            rows.append((metric, method, point, low, high, error))
    return pd.DataFrame(
        rows, columns=["metric", "method", "estimate", "low", "high", "standard_error"]
    )


def compare(
    metric: str,
    method: str,
    first: SampledEvaluation,
    second: SampledEvaluation,
    *,
    confidence: float = ESTIMATOR_DEFAULTS["confidence"],
    bootstrap: int = ESTIMATOR_DEFAULTS["bootstrap"],
    seed: int = 0,
    progress: bool = False,
    **options,
) -> dict:
    """Two models evaluated on the same users and the same sampled items: the
    estimated difference (first - second) with its interval, and the probability that
    the estimated order is the true one.

    For a correction of the paper the difference is a mean of per-user differences,
    whose normal interval accounts for the pairing; the learned estimators resample
    the same users for both models. The probability is Phi(|d| / se) (normal) or the
    share of bootstrap differences with the sign of d.

    Parameters
    ----------
    metric, method : str
    first, second : SampledEvaluation
        The same users in the same order, with the same m and n.
    confidence, bootstrap, seed, progress, **options
        As :func:`estimate_table`.

    Returns
    -------
    dict
        ``difference``, ``low``, ``high``, ``standard_error``, ``probability_order_right``.

    Examples
    --------
    >>> a = sampled_evaluation([1, 1, 2, 3], m=9, n=10, law="hypergeometric")
    >>> b = sampled_evaluation([2, 3, 2, 9], m=9, n=10, law="hypergeometric")
    >>> result = compare("recall@1", "sampled", a, b)
    >>> result["difference"], round(result["probability_order_right"], 3)
    (0.5, 0.958)
    """
    if not (
        np.array_equal(first.m, second.m)
        and np.array_equal(first.n, second.n)
        and first.law == second.law
    ):
        raise ValueError("the two evaluations must share users, m, n and law (paired)")
    pair = (metric, method)
    d_a, values_a = _estimates(first, [metric], [method], options)[pair]
    d_b, values_b = _estimates(second, [metric], [method], options)[pair]
    d = d_a - d_b
    if parse_estimator(method)[0] == "correction" or (bootstrap == 0 and values_a is not None):
        error, half = _normal(values_a - values_b, confidence)
        low, high = d - half, d + half
        right = float(stats.norm.cdf(abs(d) / error)) if error > 0 else 1.0
    else:
        rng = np.random.default_rng(seed)
        replicates = _bootstrap(
            first, [metric], [method], options, bootstrap, rng, progress, second
        )[pair]
        tail = (1 - confidence) / 2
        low, high = (float(x) for x in np.quantile(replicates, [tail, 1 - tail]))
        error = float(replicates.std(ddof=1))
        right = float(np.mean(np.sign(replicates) == np.sign(d))) if d != 0 else 0.5
    return {
        "difference": float(d),
        "low": float(low),
        "high": float(high),
        "standard_error": error,
        "probability_order_right": right,
    }
