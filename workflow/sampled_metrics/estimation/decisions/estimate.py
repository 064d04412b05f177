"""The design-unbiased difference estimator of the mean exact metric over the users, from
a phase-2 design (:mod:`.design`) and a proxy from phase 1 (:mod:`.proxy`).

With y_u the exact metric of user u, g_u its proxy (a function of phase 1 alone) and
lambda a number, the estimator of theta = (1/U) sum_u y_u is

    theta^ = (1/U) sum_u lambda g_u + (1/U) sum_{u chosen} (y_u - lambda g_u) / pi_u
           = (1/U) sum_u lambda g_u + sum_h (N_h / U) mean_{chosen of h} (y - lambda g),

the difference (generalized regression) estimator of Sarndal, Swensson and Wretman
("Model Assisted Survey Sampling", 1992, ch. 6 and 9) and the prediction-powered mean
of Angelopoulos et al. (Science 2023; PPI++, Angelopoulos, Duchi and Zrnic 2023, for
the tuned lambda). For a fixed lambda it is unbiased over the design whatever g; its
variance under stratified sampling without replacement is

    V = sum_h (N_h / U)^2 (1 - n_h / N_h) S_h^2 / n_h,

estimated with s_h^2, the sample variance of the residuals y - lambda g among the chosen
users of stratum h (Cochran 1977, section 5.3).

A few chosen users can miss a stratum's rare values (a hit among users the proxy calls
misses) and estimate its variance near 0. Given each user's predicted variance
Var[y_u | phase 1] under the proxy's model, s_h^2 is floored at its chosen users' mean
of it: the sample decides where it saw more, the model where the sample may have missed
what is rare. The estimator and its unbiasedness are unchanged; the interval is wider
only where the sample saw less than the model predicts.

The interval theta^ +- t V^(1/2) takes Student's t quantile at Satterthwaite's
effective degrees of freedom of the estimated V,

    nu = (sum_h a_h)^2 / sum_h a_h^2 / (n_h - 1),   a_h the term of stratum h in V

(Satterthwaite, Biometrics Bulletin 1946; Cochran 1977, eq. 5.16): where a few chosen
users carry most of the variance it widens, with many it is the normal interval.

It is about these U users (``population="finite"``); ``"superpopulation"`` adds the
phase-1 term S_y^2 / U (S_y^2 estimated with weights 1/pi, its degrees of freedom the
chosen users less one) for the mean over users like them: the U users are then a sample
too, and the estimator's variance about the population mean is Var(mean of y over the
U users) + E[V].

lambda: ``tuning="fixed"`` (the default) takes lambda = 1, exactly design-unbiased, and
the best lambda when g is the posterior mean E[y | phase 1] under the right prior;
``"power"`` takes PPI++'s lambda = sum_h c_h s_h(y, g) / sum_h c_h s_h(g, g), c_h = (N_h /
U)^2 (1 - n_h / N_h) / n_h, the minimizer of the estimated V, estimated from the same
users (a bias of order 1 / n, not in the interval).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ..laws import WITH_REPLACEMENT
from ..metrics import metric_by_name
from .defaults import DECISION_DEFAULTS
from .design import Design
from .promise import effective_degrees_of_freedom
from .proxy import Proxy, metric_proxy, model_ranks
from .verdict import Verdict, interval_verdict

__all__ = [
    "POPULATIONS",
    "TUNINGS",
    "Estimate",
    "chosen_counts",
    "difference_variance",
    "estimate_difference",
    "estimate_mean",
    "estimate_metric",
]

TUNINGS = ("fixed", "power")
POPULATIONS = ("finite", "superpopulation")


@dataclass(frozen=True)
class Estimate:
    """An estimate of a mean over users with its interval.

    ``verdict`` reads the interval of a difference A - B (:func:`.interval_verdict`).

    Parameters
    ----------
    value : float
        The estimate.
    standard_error : float
        The square root of the estimated variance V.
    low, high : float
        The interval.
    confidence : float
        The interval's confidence.
    weight : float
        lambda, the proxy's weight.
    n_chosen : int
        The users ranked exactly.
    degrees_of_freedom : float, default inf
        Those of the interval's t quantile (Satterthwaite's).

    Examples
    --------
    >>> e = Estimate(0.02, 0.005, 0.0102, 0.0298, 0.95, 1.0, 100)
    >>> e.verdict
    <Verdict.FIRST: 'A better'>
    """

    value: float
    standard_error: float
    low: float
    high: float
    confidence: float
    weight: float  # lambda, the proxy's weight
    n_chosen: int
    degrees_of_freedom: float = math.inf  # of the interval's t quantile

    @property
    def verdict(self) -> Verdict:
        return interval_verdict(self.low, self.high)


def _chosen(design: Design, values, name: str) -> np.ndarray:
    """The chosen users' entries of ``values``: given for every user, or for the chosen
    ones in the order of the users."""
    values = np.asarray(values, dtype=float)
    if values.ndim == 1 and values.size == design.n_users:
        return values[design.users]
    if values.ndim == 1 and values.size == design.n_chosen:
        return values
    raise ValueError(
        f"{name} must hold every user's value ({design.n_users}) or the chosen users' "
        f"({design.n_chosen}), got shape {values.shape}"
    )


def chosen_counts(design: Design) -> np.ndarray:
    """The chosen users in each stratum; a stratum with one chosen user of several has
    no variance estimate (Cochran 1977, eq. 5.9 needs n_h >= 2), so it is refused.

    Parameters
    ----------
    design : Design

    Returns
    -------
    numpy.ndarray
        (H,): the chosen users of each stratum.

    Raises
    ------
    ValueError
        If a stratum of several users has one chosen.

    Examples
    --------
    >>> d = Design(np.array([0, 0, 1]), np.ones(3), np.ones(3, bool), np.array([2, 1]))
    >>> chosen_counts(d).tolist()
    [2, 1]
    """
    sizes = design.stratum_sizes
    counts = np.bincount(design.stratum[design.users], minlength=sizes.size)
    single = np.flatnonzero((counts == 1) & (sizes > 1))
    if single.size:
        raise ValueError(
            f"stratum {single[0]} has one chosen user of {sizes[single[0]]}: "
            "its variance cannot be estimated"
        )
    return counts


def _by_stratum(stratum: np.ndarray, counts: np.ndarray, x: np.ndarray, y: np.ndarray):
    """The sample covariance of x and y within each stratum (0 where fewer than 2)."""
    strata = counts.size
    occupied = np.maximum(counts, 1)
    dx = x - (np.bincount(stratum, x, minlength=strata) / occupied)[stratum]
    dy = y - (np.bincount(stratum, y, minlength=strata) / occupied)[stratum]
    return np.bincount(stratum, dx * dy, minlength=strata) / np.maximum(counts - 1, 1)


def estimate_mean(
    design: Design,
    values: ArrayLike,
    proxy: ArrayLike,
    *,
    confidence: float = DECISION_DEFAULTS["confidence"],
    tuning: str = DECISION_DEFAULTS["tuning"],
    population: str = DECISION_DEFAULTS["population"],
    predicted_variance: ArrayLike | None = None,
) -> Estimate:
    """The difference estimator of (1/U) sum_u y_u from the chosen users' y and every
    user's proxy g (the module's formula), with its interval (Student's t at
    Satterthwaite's degrees of freedom).

    Parameters
    ----------
    design : Design
    values : array_like of float
        y of the chosen users (in the order of the users), or of every user (only the
        chosen ones are read).
    proxy : array_like of float
        g_u of every user, a function of phase 1 alone.
    confidence : float, default 0.95
    tuning : {"fixed", "power"}, default "fixed"
        lambda = 1, or PPI++'s power-tuned lambda.
    population : {"finite", "superpopulation"}, default "finite"
        The mean over these U users, or over users like them.
    predicted_variance : array_like of float, optional
        Var[y_u | phase 1] of every user (or of the chosen ones) under the proxy's
        model: each stratum's residual variance is then at least its chosen users' mean
        of it (the module's floor).

    Returns
    -------
    Estimate

    Raises
    ------
    ValueError
        Naming the argument that is wrong, or the stratum of one chosen user among more.

    Examples
    --------
    Every user chosen: the estimate is the mean, the interval of zero width.

    >>> d = Design(np.array([0, 0, 1]), np.ones(3), np.ones(3, bool), np.array([2, 1]))
    >>> e = estimate_mean(d, [1.0, 0.0, 1.0], proxy=[0.5, 0.5, 0.2])
    >>> round(e.value, 12), e.standard_error
    (0.666666666667, 0.0)
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if tuning not in TUNINGS:
        raise ValueError(f"tuning must be one of {TUNINGS}, got {tuning!r}")
    if population not in POPULATIONS:
        raise ValueError(f"population must be one of {POPULATIONS}, got {population!r}")
    g = np.asarray(proxy, dtype=float)
    if g.shape != (design.n_users,) or np.any(~np.isfinite(g)):
        raise ValueError(f"proxy must hold {design.n_users} finite numbers, got shape {g.shape}")
    y = _chosen(design, values, "values")
    if np.any(~np.isfinite(y)):
        raise ValueError("values of the chosen users must be finite")
    users = design.n_users
    stratum = design.stratum[design.users]
    pi = design.probability[design.users]
    sizes = design.stratum_sizes
    counts = chosen_counts(design)
    gc = g[design.users]
    # c_h: the weight of stratum h's residual variance in V (0 where fully observed)
    c = (sizes / users) ** 2 * (1 - counts / np.maximum(sizes, 1)) / np.maximum(counts, 1)
    weight = 1.0
    if tuning == "power":
        spread = np.sum(c * _by_stratum(stratum, counts, gc, gc))
        if spread > 0:
            weight = float(np.sum(c * _by_stratum(stratum, counts, y, gc)) / spread)
    residual = y - weight * gc
    value = float(weight * g.mean() + np.sum(residual / pi) / users)
    parts = c * _by_stratum(stratum, counts, residual, residual)
    degrees = np.maximum(counts - 1, 1)
    if predicted_variance is not None:
        v = _chosen(design, predicted_variance, "predicted_variance")
        if np.any(~np.isfinite(v)) or np.any(v < 0):
            raise ValueError("predicted_variance must be finite and non-negative")
        floor = np.bincount(stratum, v, minlength=sizes.size) / np.maximum(counts, 1)
        parts = np.maximum(parts, c * floor)
    if population == "superpopulation" and users > 1:
        w = 1.0 / pi
        centre = np.sum(w * y) / np.sum(w)
        phase_one = float(np.sum(w * (y - centre) ** 2) / np.sum(w)) / (users - 1)
        parts = np.append(parts, phase_one)
        degrees = np.append(degrees, max(design.n_chosen - 1, 1))
    error = math.sqrt(max(float(np.sum(parts)), 0.0))
    freedom = effective_degrees_of_freedom(parts, degrees)
    half = float(special.stdtrit(freedom, 0.5 + confidence / 2)) * error
    return Estimate(
        value, error, value - half, value + half, confidence, weight, design.n_chosen, freedom
    )


def _exact_metric(design: Design, exact_ranks, n, fn, name: str) -> np.ndarray:
    ranks = _chosen(design, exact_ranks, name)
    n_u = np.broadcast_to(np.asarray(n), (design.n_users,))[design.users]
    if np.any(~np.isfinite(ranks)) or np.any(ranks < 1) or np.any(ranks > n_u):
        raise ValueError(f"{name} of the chosen users must lie in 1..n")
    return np.asarray(fn(ranks, n_u), dtype=float)


def estimate_metric(
    design: Design,
    exact_ranks: ArrayLike,
    sampled_ranks: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    metric: str = DECISION_DEFAULTS["metric"],
    *,
    law: str = WITH_REPLACEMENT,
    prior: str | ArrayLike = DECISION_DEFAULTS["prior"],
    proxy: ArrayLike | Proxy | None = None,
    **options: Any,
) -> Estimate:
    """One model's exact metric over the users, (1/U) sum_u M(r_u, n_u), from the chosen
    users' exact ranks and every user's sampled rank; the interval cut to [0, 1].

    Parameters
    ----------
    design : Design
    exact_ranks : array_like
        r_u in 1..n_u of the chosen users (in the order of the users), or of every user
        (the others are not read, nan allowed).
    sampled_ranks : array_like of int
        (U,): r~_u of every user, the proxy's input.
    m, n : int or array_like of int
        Scalars or one per user.
    metric : str, default "recall@10"
        A name of :func:`..metrics.metric_by_name`.
    law : {"binomial", "hypergeometric"}, default "binomial"
    prior : {"em", "uniform"} or array_like, default "em"
        The proxy's prior (:func:`.proxy.metric_proxy`).
    proxy : array_like or Proxy, optional
        g_u of every user instead of the posterior mean under ``prior``; a
        :class:`.proxy.Proxy` brings its variance as the floor (``predicted_variance``
        of :func:`estimate_mean`), as the default does.
    **options
        ``confidence``, ``tuning``, ``population`` of :func:`estimate_mean`.

    Returns
    -------
    Estimate

    Examples
    --------
    >>> d = Design(np.zeros(4, int), np.full(4, 0.5), np.array([1, 0, 1, 0], bool), np.array([4]))
    >>> e = estimate_metric(d, [3, 40], [1, 2, 3, 1], m=10, n=100, proxy=np.zeros(4))
    >>> e.value
    0.5
    """
    ranks, m_u, n_u = model_ranks(sampled_ranks, m, n, law)
    if ranks.shape[0] != 1:
        raise ValueError(f"sampled_ranks must be one model's (n_users,), got {ranks.shape}")
    if ranks.shape[1] != design.n_users:
        raise ValueError(f"sampled_ranks must hold the design's {design.n_users} users")
    fn = metric_by_name(metric)
    y = _exact_metric(design, exact_ranks, n_u, fn, "exact_ranks")
    if proxy is None:
        proxy = metric_proxy(ranks[0], m_u, n_u, metric, law=law, prior=prior)
    if isinstance(proxy, Proxy):
        options = {"predicted_variance": proxy.variance, **options}
        proxy = proxy.mean
    return _within(estimate_mean(design, y, proxy, **options), 0.0, 1.0)


def estimate_difference(
    design: Design,
    exact_ranks: ArrayLike,
    sampled_ranks: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    metric: str = DECISION_DEFAULTS["metric"],
    *,
    law: str = WITH_REPLACEMENT,
    prior: str | ArrayLike = DECISION_DEFAULTS["prior"],
    proxy: ArrayLike | tuple[Proxy, Proxy] | list[Proxy] | None = None,
    **options: Any,
) -> Estimate:
    """The paired difference of two models' exact metric, A - B, over the same chosen
    users: y = M(r_A) - M(r_B), g = g_A - g_B; the interval cut to [-1, 1].
    ``.verdict`` says which is better.

    Parameters
    ----------
    design : Design
    exact_ranks : array_like
        (2, n_chosen) or (2, U): the exact ranks of A (row 0) and B (row 1), as
        :func:`estimate_metric`'s.
    sampled_ranks : array_like of int
        (2, U): A's and B's sampled ranks of every user.
    m, n, metric, law, prior
        As :func:`estimate_metric`.
    proxy : array_like or (Proxy, Proxy), optional
        (U,): g_A - g_B of every user, instead of the posterior means' difference; or
        A's and B's :class:`.proxy.Proxy`, whose variances give the floor
        (:func:`difference_variance`), as the default does.
    **options
        ``confidence``, ``tuning``, ``population`` of :func:`estimate_mean`.

    Returns
    -------
    Estimate

    Examples
    --------
    >>> d = Design(np.zeros(4, int), np.full(4, 0.5), np.array([1, 0, 1, 0], bool), np.array([4]))
    >>> e = estimate_difference(d, [[3, 5], [3, 5]], [[1, 2, 3, 1], [1, 2, 3, 1]], m=10, n=100)
    >>> e.value, e.standard_error, e.verdict.value
    (0.0, 0.0, 'undecided')
    """
    ranks, m_u, n_u = model_ranks(sampled_ranks, m, n, law)
    exact = np.asarray(exact_ranks, dtype=float)
    if ranks.shape != (2, design.n_users) or exact.ndim != 2 or exact.shape[0] != 2:
        raise ValueError(
            f"sampled_ranks must have shape (2, {design.n_users}) and exact_ranks 2 rows, "
            f"got {ranks.shape} and {exact.shape}"
        )
    fn = metric_by_name(metric)
    ya = _exact_metric(design, exact[0], n_u, fn, "exact_ranks of A")
    yb = _exact_metric(design, exact[1], n_u, fn, "exact_ranks of B")
    if proxy is None:
        proxy = [metric_proxy(row, m_u, n_u, metric, law=law, prior=prior) for row in ranks]
    if isinstance(proxy, (tuple, list)) and all(isinstance(p, Proxy) for p in proxy):
        a, b = proxy
        options = {
            "predicted_variance": difference_variance(design, ya - a.mean[design.users],
                                                      yb - b.mean[design.users], a, b),
            **options,
        }  # fmt: skip
        proxy = a.mean - b.mean
    # proxy: g_A - g_B of every user by now
    return _within(estimate_mean(design, ya - yb, cast(ArrayLike, proxy), **options), -1.0, 1.0)


def _within(estimate: Estimate, low: float, high: float) -> Estimate:
    """The interval cut to the values the mean can take: every metric lies in [0, 1] for
    each user, a paired difference in [-1, 1] (the coverage is the same)."""
    return replace(estimate, low=max(estimate.low, low), high=min(estimate.high, high))


def difference_variance(
    design: Design, residual_a: ArrayLike, residual_b: ArrayLike, a: Proxy, b: Proxy
) -> np.ndarray:
    """Each user's predicted variance of y_A - y_B given phase 1,

        v_A + v_B - 2 rho (v_A v_B)^(1/2),

    v the proxies' posterior variances and rho the correlation of the two models'
    residuals y - g, pooled within strata over the chosen users: each proxy's model
    takes its own exact rank alone, and two models ranking one user's held-out item are
    correlated (0 where either residual never varies).

    Parameters
    ----------
    design : Design
    residual_a, residual_b : array_like of float
        y - g of model A and of model B, for the chosen users (in the order of the users).
    a, b : Proxy
        The two models' proxies (their variances v_A, v_B of every user).

    Returns
    -------
    numpy.ndarray of float
        (U,): each user's predicted variance of y_A - y_B.

    Examples
    --------
    >>> d = Design(np.zeros(3, int), np.ones(3), np.ones(3, bool), np.array([3]))
    >>> p = Proxy(np.zeros(3), np.full(3, 0.25))
    >>> difference_variance(d, [0.0, 1, 2], [0.0, 1, 2], p, p).tolist()  # identical models
    [0.0, 0.0, 0.0]
    >>> difference_variance(d, [0.0, 1, 2], [0.0, 0, 0], p, p).tolist()
    [0.5, 0.5, 0.5]
    """
    stratum = design.stratum[design.users]
    counts = np.bincount(stratum, minlength=design.stratum_sizes.size)
    pooled = np.maximum(counts - 1, 0)
    ra, rb = np.asarray(residual_a, dtype=float), np.asarray(residual_b, dtype=float)
    ab, aa, bb = (np.sum(pooled * _by_stratum(stratum, counts, x, y)) for x, y in
                  ((ra, rb), (ra, ra), (rb, rb)))  # fmt: skip
    rho = min(ab / np.sqrt(aa * bb), 1.0) if aa > 0 and bb > 0 else 0.0
    total = a.variance + b.variance
    v = total - 2 * rho * np.sqrt(a.variance) * np.sqrt(b.variance)  # no underflow
    # what a correlation of 1 leaves of equal variances is the cancellation's rounding
    return np.where(v > 1e-12 * total, v, 0.0)
