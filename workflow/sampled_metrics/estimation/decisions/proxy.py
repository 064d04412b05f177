"""What phase 1 predicts of a user's exact metric: the posterior mean and variance of
M(r_u, n_u) given the sampled rank r~_u (Krichene & Rendle, eq 26, with its variance).

The prior lives on the relative position theta = (r - 1)/(n - 1), on the grid theta_j =
(j - 1)/(N - 1), j = 1..N, N the largest n, as the learned rank distribution of
:mod:`..estimators.learned`; the likelihood of r~ is eq 15's Binomial(m, theta) (the
hypergeometric law differs by O(m / n)); a user's rank at theta is 1 + theta (n_u - 1).
The posterior moments are computed at a few values of n (:mod:`..nodes`) and
interpolated linearly in n between them.

Nothing here needs to be exact: the design-unbiased estimator of :mod:`.estimate` is
unbiased whatever the proxy, and the design of :mod:`.design` valid whatever the
predicted spread; a better proxy only narrows the interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

from ..corrections.law_cache import cached_law
from ..estimators.data import SampledEvaluation, sampled_evaluation
from ..estimators.learned import ESTIMATOR_DEFAULTS, em_distributions
from ..laws import WITH_REPLACEMENT
from ..metrics import metric_by_name
from ..nodes import bracketing_weights, interpolation_nodes
from .defaults import DECISION_DEFAULTS

__all__ = [
    "PRIORS",
    "Proxy",
    "em_prior",
    "em_priors",
    "metric_proxies",
    "metric_proxy",
    "model_ranks",
    "posterior_moments",
    "predicted_spread",
]

# "em": the maximum-likelihood rank distribution of the users' sampled ranks (Jin et
# al. 2021), fitted to phase 1 alone; "uniform": the paper's p(r) = 1/n (section 5.2).
PRIORS = ("em", "uniform")

# The share of the uniform distribution mixed into the EM prior: EM may leave a grid
# point of no weight where a user's likelihood lives alone; with this share every
# sampled rank has a posterior, and the EM prior's own predictions move by at most it.
_UNIFORM_SHARE = 1e-3


@dataclass(frozen=True)
class Proxy:
    """Each user's predicted exact metric from phase 1: E[M(r_u) | r~_u] and
    Var[M(r_u) | r~_u] under the prior.

    Parameters
    ----------
    mean : numpy.ndarray of float
        (U,): E[M(r_u) | r~_u].
    variance : numpy.ndarray of float
        (U,): Var[M(r_u) | r~_u].

    Examples
    --------
    >>> p = Proxy(np.array([0.5]), np.array([0.25]))
    >>> p.mean.tolist(), p.variance.tolist()
    ([0.5], [0.25])
    """

    mean: np.ndarray  # (U,)
    variance: np.ndarray  # (U,)


def em_prior(data: SampledEvaluation) -> np.ndarray:
    """The ``"em"`` prior of :func:`metric_proxy` (on the grid of theta of the largest
    n): the rank distribution EM learns from the sampled ranks, mixed with a 1e-3 share
    of the uniform one. One prior serves every metric of one evaluation.

    Parameters
    ----------
    data : SampledEvaluation

    Returns
    -------
    numpy.ndarray
        Weights over theta_j = (j - 1)/(N - 1), N the largest n, summing to 1.

    Examples
    --------
    >>> prior = em_prior(sampled_evaluation([1, 1, 2, 4], m=3, n=4, law="hypergeometric"))
    >>> np.round(prior, 4).tolist()
    [0.4998, 0.25, 0.0003, 0.25]
    """
    return em_priors([data])[0]


def em_priors(datas: Sequence[SampledEvaluation]) -> list[np.ndarray]:
    """:func:`em_prior` of several evaluations (several models' sampled ranks), their EM
    iterating together (:func:`..estimators.learned.em_distributions`): the same priors
    to rounding.

    Parameters
    ----------
    datas : sequence of SampledEvaluation

    Returns
    -------
    list of numpy.ndarray
        :func:`em_prior` of each evaluation, in order.

    Examples
    --------
    >>> datas = [sampled_evaluation(r, m=3, n=4, law="hypergeometric")
    ...          for r in ([1, 1, 2, 4], [2, 2, 2, 2])]
    >>> [np.round(prior, 4).tolist() for prior in em_priors(datas)]
    [[0.4998, 0.25, 0.0003, 0.25], [0.0003, 0.9993, 0.0003, 0.0003]]
    """
    return [
        (1.0 - _UNIFORM_SHARE) * em + _UNIFORM_SHARE / em.size for em in em_distributions(datas)
    ]


def _prior_on_grid(prior, data) -> np.ndarray:
    grid = int(data.n.max())
    if isinstance(prior, str):
        if prior not in PRIORS:
            raise ValueError(f"prior must be one of {PRIORS} or {grid} weights, got {prior!r}")
        if prior == "uniform":
            return np.full(grid, 1.0 / grid)
        return em_prior(data)
    p = np.asarray(prior, dtype=float)
    if p.shape != (grid,) or np.any(~np.isfinite(p)) or np.any(p < 0) or p.sum() <= 0:
        raise ValueError(
            f"prior must be one of {PRIORS} or {grid} finite non-negative weights "
            "with a positive sum (over theta_j = (j - 1)/(N - 1), N the largest n)"
        )
    return p / p.sum()


def metric_proxy(
    sampled_ranks: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    metric: str = DECISION_DEFAULTS["metric"],
    *,
    law: str = WITH_REPLACEMENT,
    prior: str | ArrayLike = DECISION_DEFAULTS["prior"],
) -> Proxy:
    """The posterior mean and variance of each user's exact metric given the sampled
    rank (eq 26 of Krichene & Rendle, and its second moment), under a prior on the
    relative rank.

    Parameters
    ----------
    sampled_ranks : array_like of int
        r~_u in 1..m_u + 1, one per user.
    m, n : int or array_like of int
        Sampled items and ranked-set size (the held-out item included), scalars or
        one per user.
    metric : str
        A name of :func:`..metrics.metric_by_name` (``"recall@10"``, ``"ndcg@10"``,
        ``"auc"``, ...).
    law : {"binomial", "hypergeometric"}, default "binomial"
        How the negatives were drawn: checks m <= n - 1 without replacement and sets
        how the EM prior is fitted (the posterior reads eq 15's binomial likelihood).
    prior : {"em", "uniform"} or array_like, default "em"
        ``"em"``: the distribution of theta learned by EM from these sampled ranks
        (mixed with a 1e-3 share of the uniform one, :func:`em_prior`); ``"uniform"``;
        or N weights over theta_j = (j - 1)/(N - 1), N the largest n.

    Returns
    -------
    Proxy
        ``mean`` and ``variance``, arrays of one value per user.

    Raises
    ------
    ValueError
        Naming the argument and user that is wrong (as :func:`sampled_evaluation`).

    Examples
    --------
    Under the uniform prior with n = 3, m = 1, a sampled rank of 1 comes from rank 1
    (likelihood 1), 2 (1/2) or 3 (0): Recall@1 is 1 with probability 2/3.

    >>> p = metric_proxy([1, 2], m=1, n=3, metric="recall@1", prior="uniform")
    >>> np.round(p.mean, 4).tolist(), np.round(p.variance, 4).tolist()
    ([0.6667, 0.0], [0.2222, 0.0])
    """
    return metric_proxies(sampled_ranks, m, n, [metric], law=law, prior=prior)[metric]


def metric_proxies(
    sampled_ranks: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    metrics: Sequence[str],
    *,
    law: str = WITH_REPLACEMENT,
    prior: str | ArrayLike = DECISION_DEFAULTS["prior"],
) -> dict[str, Proxy]:
    """:func:`metric_proxy` of several metrics of one model: the prior, the posterior
    over the grid and the users' node weights computed once for all of them.

    Parameters
    ----------
    sampled_ranks : array_like of int
    m, n : int or array_like of int
    metrics : sequence of str
    law : {"binomial", "hypergeometric"}, default "binomial"
    prior : {"em", "uniform"} or array_like, default "em"
        As :func:`metric_proxy`'s.

    Returns
    -------
    dict
        {metric: Proxy}.

    Examples
    --------
    >>> p = metric_proxies([1, 2], m=1, n=3, metrics=["recall@1", "recall@2"], prior="uniform")
    >>> [np.round(p[k].mean, 4).tolist() for k in p]
    [[0.6667, 0.0], [1.0, 0.3333]]
    """
    data = sampled_evaluation(sampled_ranks, m, n, law)
    return posterior_moments([data], [_prior_on_grid(prior, data)], metrics)[0]


def posterior_moments(
    datas: Sequence[SampledEvaluation], priors: Sequence[np.ndarray], metrics: Sequence[str]
) -> list[dict[str, Proxy]]:
    """:func:`metric_proxies` of several evaluations of one set of users (the seeds of a
    study), each under its own prior weights on the grid: the users' nodes of n and
    their weights are found once for all of them.

    Per sampled-rank size m and evaluation, every metric's posterior first and second
    moments at every node, sum_j M(theta_j) pi_j p(r~ | theta_j) / p(r~) for each r~,
    are one product of the nodes' metric values weighted by the prior with the
    likelihood table; a user's moments are its two bracketing nodes' (linear in n).

    Parameters
    ----------
    datas : sequence of SampledEvaluation
        Evaluations whose ``n`` are the same users' (the first's nodes serve all).
    priors : sequence of numpy.ndarray
        One weight vector over the grid of theta per evaluation, summing to 1
        (:func:`em_prior`, or ``_prior_on_grid``'s).
    metrics : sequence of str

    Returns
    -------
    list of dict
        {metric: Proxy} of each evaluation, in order.

    Examples
    --------
    Two seeds' sampled ranks under the uniform prior (as :func:`metric_proxy`'s example):

    >>> datas = [sampled_evaluation(r, m=1, n=3) for r in ([1, 2], [2, 2])]
    >>> found = posterior_moments(datas, [np.full(3, 1 / 3)] * 2, ["recall@1"])
    >>> [np.round(one["recall@1"].mean, 4).tolist() for one in found]
    [[0.6667, 0.0], [0.0, 0.0]]
    """
    metrics = list(metrics)
    for metric in metrics:
        metric_by_name(metric)  # an unknown metric named before any work
    if not datas:
        return []
    first = datas[0]
    nodes = tuple(interpolation_nodes(first.n, ESTIMATOR_DEFAULTS["nodes"]).tolist())
    bracket = bracketing_weights(first.n, np.asarray(nodes))
    for data in datas[1:]:
        if not np.array_equal(data.n, first.n):
            raise ValueError("posterior_moments: every evaluation must have the same users' n")
    pairs = zip(datas, priors, strict=True)  # one prior an evaluation
    return [_moments(data, prior, metrics, nodes, bracket) for data, prior in pairs]


def _moments(data, weights, metrics, nodes, bracket) -> dict[str, Proxy]:
    """:func:`posterior_moments` of one evaluation under ``weights``."""
    grid, k = weights.size, len(nodes)
    low, w_low, high, w_high = bracket
    mean = {metric: np.empty(data.n_users) for metric in metrics}
    second = {metric: np.empty(data.n_users) for metric in metrics}
    for size in np.unique(data.m):
        users = np.flatnonzero(data.m == size)
        law = cached_law(grid, int(size), WITH_REPLACEMENT)
        # p(r~); a sampled rank the prior cannot produce gets the prediction 0
        evidence = weights @ law
        scale = np.divide(1.0, evidence, out=np.zeros_like(evidence), where=evidence > 0)
        tables = (_moments_at_nodes(tuple(metrics), grid, nodes) * weights) @ law * scale
        columns = data.ranks[users] - 1
        below, above, w_below, w_above = low[users], high[users], w_low[users], w_high[users]
        for i, metric in enumerate(metrics):
            for out, table in ((mean, tables[2 * i * k :]), (second, tables[(2 * i + 1) * k :])):
                out[metric][users] = (
                    w_below * table[below, columns] + w_above * table[above, columns]
                )
    return {
        metric: Proxy(mean[metric], np.maximum(second[metric] - mean[metric] ** 2, 0.0))
        for metric in metrics
    }


@lru_cache(maxsize=16)
def _moments_at_nodes(metrics: tuple, grid: int, nodes: tuple) -> np.ndarray:
    """(2 len(metrics) nodes, grid): each metric's values at the nodes, then their
    squares, read-only (the seeds of a study share them)."""
    rows = []
    for metric in metrics:
        values = _metric_at_nodes(metric, grid, nodes)
        rows += [values, values**2]
    stacked = np.vstack(rows)
    stacked.setflags(write=False)
    return stacked


@lru_cache(maxsize=16)
def _metric_at_nodes(metric: str, grid: int, nodes: tuple) -> np.ndarray:
    """(nodes, grid): M(1 + theta_j (n - 1), n) at each node n, read-only (the seeds of a
    study and the models of a plan share their nodes)."""
    fn = metric_by_name(metric)
    theta = np.linspace(0.0, 1.0, grid)
    values = np.array([np.asarray(fn(1.0 + theta * (node - 1), node), dtype=float)
                       for node in nodes])  # fmt: skip
    values.setflags(write=False)
    return values


def model_ranks(
    sampled_ranks: ArrayLike, m: ArrayLike, n: ArrayLike, law: str = WITH_REPLACEMENT
) -> tuple:
    """Check the sampled ranks of one or several models and their m and n.

    Parameters
    ----------
    sampled_ranks : array_like of int
        Shape (n_users,) or (n_models, n_users): r~ in 1..m_u + 1.
    m, n : int or array_like of int
        Scalars or one per user.
    law : {"binomial", "hypergeometric"}, default "binomial"

    Returns
    -------
    tuple
        (ranks (n_models, U) int64, m (U,) int64, n (U,) int64).

    Raises
    ------
    ValueError
        Naming the argument: a shape that does not match, a rank outside 1..m + 1.

    Examples
    --------
    >>> r, m, n = model_ranks([[1, 2], [3, 1]], m=10, n=[50, 60])
    >>> r.shape, m.tolist(), n.tolist()
    ((2, 2), [10, 10], [50, 60])
    """
    ranks = np.asarray(sampled_ranks)
    if ranks.ndim == 1:
        ranks = ranks[None, :]
    if ranks.ndim != 2 or ranks.shape[1] == 0:
        raise ValueError(
            f"sampled_ranks must have shape (n_users,) or (n_models, n_users), got {ranks.shape}"
        )
    users = ranks.shape[1]
    for name, value in (("m", m), ("n", n)):
        if np.ndim(value) not in (0, 1) or np.size(value) not in (1, users):
            raise ValueError(
                f"{name} must be a scalar or one value per user ({users}), "
                f"got shape {np.shape(value)}"
            )
    models = ranks.shape[0]
    m_u, n_u = (np.broadcast_to(np.asarray(value), (users,)) for value in (m, n))
    if np.issubdtype(ranks.dtype, np.integer) and ranks.min() >= 1:
        # whole ranks of at least 1 are in 1..m + 1 when each user's largest is
        try:
            every = sampled_evaluation(ranks.max(axis=0), m_u, n_u, law)
            return ranks.astype(np.int64), every.m, every.n
        except ValueError:
            pass  # the checks below name the model
    try:  # every model at once: the checks are per user, so they pass or fail alike
        every = sampled_evaluation(ranks.ravel(), np.tile(m_u, models), np.tile(n_u, models), law)
    except ValueError:
        for model, row in enumerate(ranks):  # the first model that fails, named
            try:
                sampled_evaluation(row, m, n, law)
            except ValueError as error:
                raise ValueError(f"sampled_ranks of model {model}: {error}") from None
        raise
    return every.ranks.reshape(models, users).copy(), every.m[:users], every.n[:users]


def predicted_spread(
    sampled_ranks: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    metric: str = DECISION_DEFAULTS["metric"],
    *,
    law: str = WITH_REPLACEMENT,
    prior: str | ArrayLike = DECISION_DEFAULTS["prior"],
) -> np.ndarray:
    """Each user's predicted variance of the exact metric given phase 1: the sum over the
    models of Var[M(r_u) | r~_u] (:func:`.proxy.metric_proxy`), the variance of a paired
    difference of two of them when their exact ranks are independent given the sampled
    ones, and of one model's metric when there is one.

    Parameters
    ----------
    sampled_ranks : array_like of int
        Shape (n_users,) or (n_models, n_users).
    m, n : int or array_like of int
    metric : str, default "recall@10"
    law : {"binomial", "hypergeometric"}, default "binomial"
    prior : {"em", "uniform"} or array_like, default "em"

    Returns
    -------
    numpy.ndarray
        (U,) non-negative.

    Examples
    --------
    >>> v = predicted_spread([[1, 2], [2, 2]], m=1, n=3, metric="recall@1", prior="uniform")
    >>> v.round(4).tolist()
    [0.2222, 0.0]
    """
    ranks, m_u, n_u = model_ranks(sampled_ranks, m, n, law)
    return np.asarray(
        sum(metric_proxy(row, m_u, n_u, metric, law=law, prior=prior).variance for row in ranks)
    )
