"""Estimates of the mean exact metric by any estimator, from a
:class:`~.data.SampledEvaluation`: a point estimate (:func:`estimate`), every metric by
every estimator with a confidence interval (:func:`estimate_table`: the normal interval
of a mean of per-user values, or the bootstrap over users), and two models compared on
the same users (:func:`compare`)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
from scipy import special
from threadpoolctl import threadpool_limits

from ..corrections.vectors import correction_vectors
from ..registry import LEARNED_DISTRIBUTIONS, parse_estimator
from .data import (
    SampledEvaluation,
    _distinct_rows,
)
from .learned import ESTIMATOR_DEFAULTS, _plug_in, em_distributions, learned_rank_distribution
from .learned_prior import _learned_prior_vectors, _per_user_from_vectors

__all__ = ["compare", "estimate", "estimate_table", "point_estimates"]


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


def _estimates(
    data: SampledEvaluation, metrics, methods, options, cache=None, distributions=None
) -> dict:
    """{(metric, method): (estimate, per-user values or None)} for every pair; each
    learned distribution is learned once (or given in ``distributions``, {kind: pi})
    and serves every metric and method."""
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
        pi = (distributions or {}).get(kind)
        if pi is None:
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
            keys = [(metric, method) for method in specs for metric in metrics]
            per_user = _per_user_from_vectors(vectors, keys, data)
        for method, (family, _, _) in mine.items():
            for metric in metrics:
                if family == "distribution":
                    out[metric, method] = (float(_plug_in(metric, pi, data)), None)
                else:
                    v = per_user[metric, method]
                    out[metric, method] = (float(v.mean()), v)
    return out


def point_estimates(
    data: SampledEvaluation,
    metrics: Iterable[str],
    methods: Iterable[str],
    *,
    distributions: dict | None = None,
    **options: Any,
) -> dict:
    """{(metric, method): estimate} of every metric by every estimator, without
    intervals; ``distributions`` ({"em": pi, ...}) gives learned distributions already
    learned (e.g. by :func:`~.learned.em_distributions` for many evaluations at once).

    Parameters
    ----------
    data : SampledEvaluation
    metrics, methods : iterable of str
    distributions : dict, optional
    **options
        As :func:`estimate`.

    Returns
    -------
    dict

    Examples
    --------
    >>> from sampled_metrics import sampled_evaluation
    >>> data = sampled_evaluation([1, 2, 5, 9], m=9, n=10, law="hypergeometric")
    >>> point_estimates(data, ["recall@2"], ["sampled", "em"])
    {('recall@2', 'sampled'): 0.5, ('recall@2', 'em'): 0.5}
    """
    pairs = _estimates(data, list(metrics), list(methods), options, None, distributions)
    return {pair: point for pair, (point, _) in pairs.items()}


def estimate(metric: str, method: str, data: SampledEvaluation, **options: Any) -> float:
    """The estimate of the mean exact metric by one estimator.

    Parameters
    ----------
    metric : str
        A metric name (``recall@10``, ``ndcg@10``, ``ap``, ``auc``, ...).
    method : str
        An estimator (:func:`~sampled_metrics.estimation.registry.parse_estimator`).
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
    >>> from sampled_metrics import sampled_evaluation

    Sampling every item (m = n - 1, no replacement), every estimator is exact:

    >>> data = sampled_evaluation([1, 2, 5, 9], m=9, n=10, law="hypergeometric")
    >>> [round(estimate("recall@2", name, data), 6) for name in ("sampled", "em", "mn_em")]
    [0.5, 0.5, 0.5]
    """
    return _estimates(data, [metric], [method], options)[metric, method][0]


def _bootstrap(data, metrics, methods, options, replicates, rng, progress, second=None):
    """{(metric, method): array of ``replicates`` estimates on users resampled with
    replacement (the difference first - second when ``second`` is given, the same
    users for both). EM is learned for a batch of resamples at once
    (:func:`~.learned.em_distributions`), batches of about 2e7 resampled users."""
    out = {(metric, method): np.empty(replicates) for metric in metrics for method in methods}
    with_em = any(parse_estimator(method)[1] == "em" for method in methods)
    iterations = options.get("em_iterations", ESTIMATOR_DEFAULTS["em_iterations"])
    batch = max(1, _BOOTSTRAP_BATCH_USERS // max(1, data.n_users))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=replicates, desc="bootstrap", unit="resample", leave=False)
    for first in range(0, replicates, batch):
        rounds = range(first, min(first + batch, replicates))
        resamples = [rng.integers(0, data.n_users, data.n_users) for _ in rounds]
        sides = [data] if second is None else [data, second]
        taken = [[side.take(users) for users in resamples] for side in sides]
        learned = [em_distributions(side, iterations) if with_em else None for side in taken]
        for i, b in enumerate(rounds):
            found = [
                _estimates(side[i], metrics, methods, options, None, _em_of(pis, i))
                for side, pis in zip(taken, learned)
            ]
            for pair in out:
                point = found[0][pair][0]
                out[pair][b] = point if second is None else point - found[1][pair][0]
            if bar is not None:
                bar.update()
    if bar is not None:
        bar.close()
    return out


# Resampled users held at once by the bootstrap (a batch of resamples learns EM together).
_BOOTSTRAP_BATCH_USERS = 20_000_000


def _em_of(pis, i) -> dict | None:
    return None if pis is None else {"em": pis[i]}


def _normal(values, confidence):
    """(standard error, half width) of the mean of ``values``."""
    from scipy import stats  # here: importing scipy.stats is slow, and most jobs never need it

    error = float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else 0.0
    return error, float(stats.norm.ppf(0.5 + confidence / 2)) * error


def estimate_table(
    data: SampledEvaluation,
    metrics: Iterable[str],
    methods: Iterable[str],
    *,
    confidence: float = ESTIMATOR_DEFAULTS["confidence"],
    bootstrap: int = ESTIMATOR_DEFAULTS["bootstrap"],
    seed: int = 0,
    progress: bool = False,
    **options: Any,
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
    >>> from sampled_metrics import sampled_evaluation
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
    **options: Any,
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
    >>> from sampled_metrics import sampled_evaluation
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
        right = float(special.ndtr(abs(d) / error)) if error > 0 else 1.0  # normal CDF
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
