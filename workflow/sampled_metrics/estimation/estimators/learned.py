"""The learned rank distribution (Jin et al., "On Estimating Recommendation Evaluation
Metrics under Sampling", AAAI 2021): ``em``, the maximum-likelihood distribution p(r) by
EM over the mixture r~_u ~ sum_r p(r) p(r~ | r), and ``maxent``, their maximum-entropy
estimate; the metric's expectation under it (the plug-in estimate); and the options'
defaults of every estimator.

The distribution lives on the relative position theta = (r - 1)/(n - 1), on the grid
theta_j = (j - 1)/(N - 1), j = 1..N, N the largest n (see
:mod:`sampled_metrics.estimation.estimators`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypedDict

import numpy as np
from scipy import special

from ..corrections.law_cache import cached_law
from ..corrections.solvers import solve_positive_definite
from ..laws import (
    WITH_REPLACEMENT,
    WITHOUT_REPLACEMENT,
    sampled_rank_law,
    sampling_law,
    significant_blocks,
)
from ..metrics import metric_by_name
from ..registry import LEARNED_DISTRIBUTIONS
from .data import (
    SampledEvaluation,
    _distinct_counts,
    _distinct_rows,
    _distinct_rows_of_each,
)

__all__ = ["ESTIMATOR_DEFAULTS", "em_distributions", "learned_rank_distribution"]


class _EstimatorDefaults(TypedDict):
    """The type of each default, read by the type checker where a parameter takes one."""

    em_iterations: int
    maxent_gamma: float
    nodes: int
    bootstrap: int
    confidence: float


# The defaults of the estimators' options. Jin et al.'s code runs EM for 100 iterations
# from the uniform distribution (no tolerance) and weights the entropy by gamma = 0.01;
# both kept, so that the numbers are theirs.
ESTIMATOR_DEFAULTS: _EstimatorDefaults = {
    "em_iterations": 100,
    "maxent_gamma": 0.01,
    "nodes": 5,
    "bootstrap": 200,
    "confidence": 0.95,
}


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
    # (m, r~ - 1 of each group) when the rows are eq 15's Bernstein polynomials of one
    # degree m on the grid (bernstein.py), else None
    bernstein: tuple | None = None


def _likelihood(data: SampledEvaluation) -> _Likelihood:
    grid, exact_n = _grid_of(data)
    distinct, group, counts = _distinct_rows(
        data.m, data.n if exact_n else np.zeros_like(data.n), data.ranks
    )
    rows = _likelihood_rows(distinct, grid, exact_n)
    class_keys, classes, _ = _distinct_rows(distinct[:, 0], distinct[:, 1])
    one_degree = not exact_n and len(class_keys) == 1
    bernstein = (int(class_keys[0, 0]), distinct[:, 2] - 1) if one_degree else None
    return _Likelihood(rows, counts, group, classes, class_keys[:, 0] + 1, grid, bernstein)


def _grid_of(data: SampledEvaluation) -> tuple:
    """(N, exact_n): the grid's size, the largest n, and whether the likelihood is the
    exact law on the ranks (one n, no replacement) rather than eq 15 on the grid."""
    exact_n = not sampling_law(data.law).replacement and data.n.min() == data.n.max()
    return int(data.n.max()), bool(exact_n)


def _likelihood_rows(distinct: np.ndarray, grid: int, exact_n: bool) -> np.ndarray:
    """p(r~ | theta_j; m, n) on the grid for each distinct (m, n, r~) row."""
    rows = np.empty((len(distinct), grid))
    for g, (m, n, r) in enumerate(distinct):
        if exact_n:  # one n, no replacement: the grid is the ranks, the law exact
            rows[g] = cached_law(int(n), int(m), WITHOUT_REPLACEMENT)[:, r - 1]
        else:  # eq 15: r~ - 1 ~ Binomial(m, theta)
            rows[g] = _binomial_on_grid(int(m), grid)[r - 1]
    return rows


# Adaptive sampling (Li et al. 2023) gives six sample sizes a user: every one of them
# kept, so that EM over many evaluations of those sizes builds each table once.
@lru_cache(maxsize=8)
def _binomial_on_grid(m: int, grid: int) -> np.ndarray:
    """p(r~ | theta_j) = Binomial(r~ - 1; m, theta_j) for r~ = 1..m + 1 (rows), read-only:
    the binomial law at n = grid (theta_j = (j - 1)/(grid - 1) is eq 15's (r - 1)/(n - 1)
    at r = j), from laws.py, transposed."""
    table = np.ascontiguousarray(sampled_rank_law(grid, m, WITH_REPLACEMENT).T)
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
    solved in its dual by Newton's method (:func:`_maxent`).

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
    >>> from sampled_metrics import sampled_evaluation

    With every sampled item drawn (m = n - 1, no replacement) the sampled rank is the
    rank, and EM returns the observed distribution:

    >>> data = sampled_evaluation([1, 1, 2, 4], m=3, n=4, law="hypergeometric")
    >>> np.round(learned_rank_distribution(data, "em"), 3).tolist()
    [0.5, 0.25, 0.0, 0.25]
    """
    if kind == "em":
        return em_distributions([data], em_iterations)[0]
    if kind == "maxent":
        return _maxent(_likelihood(data), maxent_gamma)
    raise ValueError(
        f"unknown learned distribution {kind!r}; choose one of {LEARNED_DISTRIBUTIONS}"
    )


def em_distributions(
    datas: Sequence[SampledEvaluation], iterations: int = ESTIMATOR_DEFAULTS["em_iterations"]
) -> list:
    """:func:`learned_rank_distribution` ``em`` of many evaluations at once (the
    repetitions of a pipeline, the resamples of a bootstrap): those that share a grid
    iterate together, two matrix products an iteration for all of them.

    Parameters
    ----------
    datas : sequence of SampledEvaluation
    iterations : int, default 100

    Returns
    -------
    list of numpy.ndarray
        pi of each evaluation, in order.

    Examples
    --------
    >>> from sampled_metrics import sampled_evaluation
    >>> datas = [sampled_evaluation(r, m=3, n=4, law="hypergeometric")
    ...          for r in ([1, 1, 2, 4], [2, 2, 2, 2])]
    >>> [np.round(pi, 3).tolist() for pi in em_distributions(datas)]
    [[0.5, 0.25, 0.0, 0.25], [0.0, 1.0, 0.0, 0.0]]
    """
    datas = list(datas)
    shared: dict = {}
    for i, data in enumerate(datas):
        shared.setdefault(_grid_of(data), []).append(i)
    out: list = [None] * len(datas)
    for (grid, exact_n), members in shared.items():
        pis = _em_together([datas[i] for i in members], grid, exact_n, iterations)
        for i, pi in zip(members, pis):
            out[i] = pi
    return out


def _em_together(datas: list, grid: int, exact_n: bool, iterations: int) -> np.ndarray:
    """EM of each evaluation (rows of the result): pi_j <- pi_j sum_g w_g p(r~_g |
    theta_j) / sum_k pi_k p(r~_g | theta_k), w_g the share of the evaluation's users in
    group g; groups are the distinct (m, n, r~) of all the evaluations together."""
    distinct, counts = _distinct_rows_of_each(
        [(d.m, d.n if exact_n else np.zeros_like(d.n), d.ranks) for d in datas]
    )
    rows = _likelihood_rows(distinct, grid, exact_n)
    weights = counts / np.array([d.n_users for d in datas], dtype=np.int64)[:, None]
    present = weights > 0
    blocks = _row_blocks(rows)
    pi = np.full((len(datas), grid), 1.0 / grid)
    ratio = np.zeros_like(weights)
    predicted, update = np.empty_like(weights), np.empty_like(pi)
    for _ in range(iterations):
        for groups, span, block in blocks:  # predicted = pi @ rows.T
            np.matmul(pi[:, span], block.T, out=predicted[:, groups])
        np.divide(weights, predicted, out=ratio, where=present)
        update[:] = 0.0
        for groups, span, block in blocks:  # update = ratio @ rows
            update[:, span] += ratio[:, groups] @ block
        pi = pi * update
        pi /= pi.sum(axis=1, keepdims=True)  # exact in theory; keeps rounding from drifting
    return pi


# Likelihood rows (groups) multiplied at a time by EM: a block of consecutive sampled
# ranks spans their windows together (at m = 999 a block of 64 adds ~64 (N / m) columns).
_GROUP_BLOCK = 64


def _row_blocks(rows: np.ndarray) -> list:
    """[(groups, span, rows[groups, span])]: blocks of ``_GROUP_BLOCK`` rows, each
    restricted to the columns where one of its rows is above ``laws.NEGLIGIBLE``
    (:func:`~sampled_metrics.estimation.laws.significant_blocks`; every column for a block
    with none), stored contiguously. A row's likelihood over theta is unimodal and, at
    large m, narrow: EM's two products over these blocks skip the negligible entries
    (2.6 times faster at m = 999 on a grid of 3706; the same distributions to 6e-14)."""
    blocks = []
    for groups, low, high in significant_blocks(rows, _GROUP_BLOCK):
        span = slice(low, high) if low < high else slice(0, rows.shape[1])
        blocks.append((groups, span, np.ascontiguousarray(rows[groups, span])))
    return blocks


def _maxent(likelihood: _Likelihood, gamma: float) -> np.ndarray:
    """The maximum-entropy distribution, from its Fenchel dual.

    The primal, min over the simplex of f(A pi) + gamma sum_j pi_j log pi_j with
    f(y) = sum_g c_g (y_g - p^_g)^2 (A the likelihood rows of the observed groups), has
    the dual max over lambda of D(lambda) = -sum_g (lambda_g^2 / (4 c_g) + lambda_g p^_g)
    - gamma log sum_j exp(-(A^T lambda)_j / gamma), and the minimum is
    pi = softmax(-A^T lambda* / gamma) (f* and the log-partition are the conjugates of
    f and of the entropy on the simplex). D is smooth and strictly concave in as many
    variables as distinct sampled ranks, so Newton's method with backtracking reaches
    the optimum in a few steps, to the gradient's rounding (the primal's L-BFGS over
    the N-point grid stopped about 5e-5 away in L1). Once the Newton decrement grad^T
    H^-1 grad (twice D's gain from the full step; Boyd & Vandenberghe, *Convex
    Optimization*, 2004, section 9.5.1) is below D's rounding, backtracking cannot see
    a gain: full steps are taken while they lower the gradient (138,493 users on a grid
    of 26,725 points: 13 evaluations of D, where backtracking in D's rounding took
    2,879 and stopped with the primal's optimality gap 5e-8 instead of 3e-15).
    """
    rows, counts = likelihood.rows, likelihood.counts
    class_users = np.bincount(likelihood.classes, weights=counts)
    observed = counts / class_users[likelihood.classes]  # p^_c(r~) of each group
    coef = (class_users / counts.sum() * likelihood.class_sizes)[likelihood.classes] * observed
    if gamma == 0:
        return _least_squares_on_simplex(rows, observed, coef)

    def negative_dual(lam):
        """(-D, -grad D, pi) at lambda."""
        u = -(rows.T @ lam) / gamma
        log_partition = _log_sum_exp(u)
        pi = np.exp(u - log_partition)
        value = np.sum(lam**2 / (4 * coef) + lam * observed) + gamma * log_partition
        return value, lam / (2 * coef) + observed - rows @ pi, pi

    lam = np.zeros(len(observed))
    value, grad, pi = negative_dual(lam)
    for _ in range(_NEWTON_STEPS):
        if np.abs(grad).max() <= _DUAL_TOLERANCE:
            break
        implied = rows @ pi
        second = _second_moments(likelihood, pi)
        hessian = np.diag(1 / (2 * coef)) + (second - np.outer(implied, implied)) / gamma
        step = solve_positive_definite(hessian, grad)
        decrease, size = grad @ step, 1.0
        if decrease <= _ROUNDING * abs(value):
            # D's rounding hides the step's gain (the Newton decrement): near the
            # optimum, the full step is taken while it lowers the gradient
            trial = negative_dual(lam - step)
            if not np.abs(trial[1]).max() < np.abs(grad).max():
                break  # the gradient at its rounding: the optimum
        else:
            while size > 1e-12:  # backtracking (Armijo)
                trial = negative_dual(lam - size * step)
                if trial[0] <= value - 1e-4 * size * decrease:
                    break
                size /= 2
            else:
                break  # no decrease left at the rounding of D: the optimum
        lam = lam - size * step
        value, grad, pi = trial
    return pi


def _log_sum_exp(u: np.ndarray) -> float:
    """log sum_j exp(u_j) of a finite vector, in the arithmetic of
    scipy.special.logsumexp (its largest terms apart, log1p of the others' sum over
    them) without its array-API dispatch and second, direct sum: one exponential a
    point for each of Newton's evaluations of maxent's dual."""
    top = u.max()
    at_top = u == top
    rest = np.exp(np.where(at_top, -np.inf, u) - top).sum()
    count = float(np.count_nonzero(at_top))
    return float(np.log1p(rest / count if rest != 0 else rest) + np.log(count) + top)


def _second_moments(likelihood: _Likelihood, pi: np.ndarray) -> np.ndarray:
    """sum_j pi_j A_g(theta_j) A_h(theta_j) for every pair of groups (rows A): for
    Bernstein rows of one degree m from the 2m + 1 sums S_s = sum_j pi_j
    B^(2m)_s(theta_j) (bernstein.py: (m + 1)^2 / (2m + 1) times fewer products, 50 at
    m = 100; 3 times faster per maxent at a grid of 3706 and of 26,725), else the rows'
    product."""
    if likelihood.bernstein is None:
        return (likelihood.rows * pi) @ likelihood.rows.T
    from ..bernstein import bernstein_gram, doubled_law

    m, degrees = likelihood.bernstein
    # the grid's theta_j are the ranks' (r - 1)/(n - 1) at n = grid
    return bernstein_gram(pi @ doubled_law(likelihood.grid, m), m, degrees)


def _least_squares_on_simplex(rows, observed, coef) -> np.ndarray:
    """gamma = 0 (no entropy, no dual): min over the simplex of sum_g c_g ((A pi)_g -
    p^_g)^2, by L-BFGS over pi = softmax(z) from the uniform distribution."""
    from scipy import optimize  # here only: slow to import, and few jobs solve

    def objective(z):
        pi = special.softmax(z)
        gap = rows @ pi - observed
        grad_pi = 2.0 * rows.T @ (coef * gap)
        return np.sum(coef * gap**2), pi * (grad_pi - pi @ grad_pi)

    result = optimize.minimize(
        objective,
        np.zeros(rows.shape[1]),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 10000, "ftol": 1e-12, "gtol": 1e-10},
    )
    return special.softmax(result.x)


# Newton's method on the maximum-entropy dual: at most this many steps (7-8 reach the
# tolerance on MovieLens 1M), stopping when every dual gradient component is below it.
_NEWTON_STEPS = 100
_DUAL_TOLERANCE = 1e-13
_ROUNDING = 4 * np.finfo(float).eps  # relative rounding of D's value


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
    values, counts = _distinct_counts(data.n)
    return _metric_on_grid_at(metric, grid, values.tobytes(), counts.tobytes())


@lru_cache(maxsize=64)
def _metric_on_grid_at(metric: str, grid: int, n_bytes: bytes, count_bytes: bytes) -> np.ndarray:
    """One array of the distinct n at once, in blocks of 256 (bounded memory)."""
    fn = metric_by_name(metric)
    values = np.frombuffer(n_bytes, dtype=np.int64)
    counts = np.frombuffer(count_bytes, dtype=np.int64)
    theta = np.linspace(0.0, 1.0, grid)
    total = np.zeros(grid)
    for start in range(0, values.size, 256):
        n = values[start : start + 256, None].astype(float)
        total += counts[start : start + 256] @ fn(1.0 + theta * (n - 1.0), n)
    total /= counts.sum()
    total.setflags(write=False)
    return total
