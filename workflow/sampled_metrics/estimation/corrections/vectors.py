"""Corrections by name (:func:`sampled_metrics.estimation.registry.parse_method`): many
metrics and methods at once, sharing one law and one factorization; per distinct n; and
applied to observed sampled ranks (M^[r~ - 1])."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from threadpoolctl import threadpool_limits

from ..expected import metric_on_sample
from ..laws import WITHOUT_REPLACEMENT
from ..metrics import MetricFn, metric_vector
from ..registry import parse_method
from .law_cache import cached_law
from .methods import rank_estimate_correction
from .solvers import (
    _check_constraint,
    _solve_bias_variance,
    _solve_constrained,
    _solve_least_squares,
)
from .systems import ReducedSystem, normal_equations, reduced_system

__all__ = [
    "apply_correction",
    "corrected_metric",
    "correction_vectors",
    "correction_vectors_by_n",
]


def corrected_metric(
    metric: MetricFn | str,
    method: str,
    n: int,
    m: int,
    law: str = WITHOUT_REPLACEMENT,
    prior: ArrayLike | None = None,
    interpolation: str = "floor",
    cls_constraint: str = "monotone_in_range",
) -> np.ndarray:
    """The vector M^ over r~ = 1..m+1 of a named correction method (section 5).

    For a metric, n items, m samples, the sampling law and a prior over ranks.

    Parameters
    ----------
    metric : callable or str
        A metric ``f(ranks, n)`` or its name (see :func:`.metrics.metric_by_name`).
    method : str
        A method name (see :func:`~sampled_metrics.estimation.registry.parse_method`).
    n : int
        Number of ranked items.
    m : int
        Number of sampled irrelevant items.
    law : {"hypergeometric", "binomial"}, default "hypergeometric"
        The sampling law (unused by ``sampled`` and ``rank_estimate``).
    prior : array_like, optional
        p(r) over r = 1..n, for ``ls``, ``cls`` and ``bv_<gamma>``; uniform when None.
    interpolation : {"floor", "linear"}, default "floor"
        For ``rank_estimate`` (see :func:`.methods.rank_estimate_correction`).
    cls_constraint : {"monotone_in_range", "monotone"}, default "monotone_in_range"
        For ``cls`` (see :func:`.methods.constrained_least_squares_correction`).

    Returns
    -------
    numpy.ndarray
        M^ over r~ = 1..m+1.

    Raises
    ------
    ValueError
        If the method, the metric, the law or a parameter is invalid.

    Examples
    --------
    >>> corrected_metric("recall@1", "sampled", n=10, m=2).tolist()
    [1.0, 0.0, 0.0]
    >>> corrected_metric("recall@10", "rank_estimate", n=3706, m=100)[:3].tolist()
    [1.0, 0.0, 0.0]
    """
    vectors = correction_vectors(
        [metric], [method], n, m, law, prior, interpolation, cls_constraint
    )
    return next(iter(vectors.values()))


def correction_vectors(
    metrics: Iterable[str | MetricFn],
    methods: Iterable[str],
    n: int,
    m: int,
    law: str = WITHOUT_REPLACEMENT,
    prior: ArrayLike | None = None,
    interpolation: str = "floor",
    cls_constraint: str = "monotone_in_range",
) -> dict:
    """{(metric, method): M^ over r~ = 1..m+1} for every pair, sharing the work.

    One law, one QR factorization (for ``ls``, ``cls``, ``bv_0``) and one Gram
    matrix (for ``bv_<gamma>``) serve every metric and method: the systems of
    eqs 21-25 are solved in m + 1 dimensions (:func:`.systems.reduced_system`,
    :func:`.systems.normal_equations`).

    Parameters
    ----------
    metrics : iterable of str or callable
        Metrics (see :func:`.metrics.metric_by_name`).
    methods : iterable of str
        Method names (see :func:`~sampled_metrics.estimation.registry.parse_method`).
    n, m, law, prior, interpolation, cls_constraint
        As :func:`corrected_metric`.

    Returns
    -------
    dict
        {(metric, method): numpy.ndarray of length m + 1}, metric by metric.

    Raises
    ------
    ValueError
        As :func:`corrected_metric`.

    Examples
    --------
    >>> vectors = correction_vectors(["ap"], ["sampled", "rank_estimate"], n=10, m=3)
    >>> np.round(vectors["ap", "rank_estimate"], 4).tolist()  # AP at ranks 1, 4, 7, 10
    [1.0, 0.25, 0.1429, 0.1]
    """
    metrics, parsed = list(metrics), {method: parse_method(method) for method in methods}
    if any(kind == "cls" for kind, _ in parsed.values()):
        _check_constraint(cls_constraint)
    needs_qr = any(kind in ("ls", "cls") or gamma == 0.0 for kind, gamma in parsed.values())
    needs_gram = any(kind == "bv" and (gamma or 0.0) > 0.0 for kind, gamma in parsed.values())
    solutions = {}
    if needs_qr or needs_gram:
        # the QR of ls and cls is ill-conditioned: it needs the law's tails; the
        # bias-variance systems (banded Gram) do not read them
        P = cached_law(int(n), int(m), law, tails=needs_qr)
        exact = np.column_stack([metric_vector(metric, n) for metric in metrics])
        system = None
        if needs_qr:
            system = _reduced_system_of(metrics, exact, P, prior, (int(n), int(m), law))
        if needs_gram:  # A^T A = R^T R: the QR, when there is one, saves the n-row product
            normal = (
                normal_equations(exact, P, prior)
                if system is None
                else (system.R.T @ system.R, system.R.T @ system.Y, system.c)
            )
        for method, (kind, gamma) in parsed.items():
            if kind in ("cls", "ls") or gamma == 0.0:
                assert system is not None  # needs_qr
                if kind == "cls":
                    solutions[method] = _solve_constrained(system, exact, cls_constraint)
                else:
                    solutions[method] = _solve_least_squares(system)
            elif kind == "bv" and gamma is not None:
                gram, rhs, c = normal
                solutions[method] = _solve_bias_variance(gram, rhs, c, gamma)
    vectors = {}
    for j, metric in enumerate(metrics):
        for method, (kind, _) in parsed.items():
            if kind == "sampled":
                vectors[metric, method] = metric_on_sample(metric, m)
            elif kind == "rank_estimate":
                vectors[metric, method] = rank_estimate_correction(metric, n, m, interpolation)
            else:
                vectors[metric, method] = solutions[method][:, j]
    return vectors


# A reduced system under the uniform prior with R of at most this many entries (8 MB) is
# kept until the next one: the toy example's R at m = 9999 has 1e8.
_KEPT_SYSTEM_ENTRIES = 2**20
_KEPT_SYSTEM: dict = {}


def _reduced_system_of(metrics, exact, P, prior, law_key: tuple) -> ReducedSystem:
    """reduced_system(exact, P, prior), the last one under the uniform prior kept (read-only)
    by (metrics, n, m, law): CLS under each constraint at one node (reproduction.sensitivity)
    reads one QR."""
    key = (tuple(metrics), *law_key)
    if prior is None and _KEPT_SYSTEM.get("key") == key:
        return _KEPT_SYSTEM["system"]
    system = reduced_system(exact, P, prior)
    if prior is None and system.R.size <= _KEPT_SYSTEM_ENTRIES:
        for array in (system.R, system.Y, system.c):
            array.setflags(write=False)
        _KEPT_SYSTEM.update(key=key, system=system)
    return system


def apply_correction(values_on_sample: ArrayLike, sampled_ranks: ArrayLike) -> np.ndarray:
    """Per-instance corrected metric: M^[r~ - 1] for each observed sampled rank.

    Parameters
    ----------
    values_on_sample : array_like
        M^ over r~ = 1..m+1.
    sampled_ranks : array_like of int
        Observed sampled ranks r~, integers in 1..m+1.

    Returns
    -------
    numpy.ndarray
        M^(r~) for each sampled rank.

    Raises
    ------
    ValueError
        If a sampled rank is not an integer in 1..m+1.

    Examples
    --------
    >>> apply_correction([1.0, 0.5, 0.0], [1, 3, 3, 2]).tolist()
    [1.0, 0.0, 0.0, 0.5]
    """
    values = np.asarray(values_on_sample, dtype=float)
    r = np.asarray(sampled_ranks)
    if np.any(r != np.round(r)) or np.any(r < 1) or np.any(r > values.size):
        raise ValueError(f"sampled ranks must be integers in 1..{values.size}")
    return values[r.astype(np.int64) - 1]


def correction_vectors_by_n(
    n_values: Iterable[int], *args: Any, workers: int = 1, progress: bool = False, **kwargs: Any
) -> dict:
    """{n: :func:`correction_vectors` (metrics, methods, n, ...)} for every distinct n,
    built in ``workers`` processes: the per-user corrections of a large data set
    build one system per distinct ranked-set size.

    BLAS runs on one thread in every process, so the result does not depend on
    ``workers`` nor on the machine's cores: at large n the last bits of the QR,
    and through them CLS's active set (up to 7e-5 at n = 20001), change with
    BLAS's thread count.

    Parameters
    ----------
    n_values : iterable of int
        The values of n.
    *args, **kwargs
        ``metrics, methods`` and the arguments after ``n`` of :func:`correction_vectors`.
    workers : int, default 1
        Processes (forked; 1 builds in this process).
    progress : bool, default False
        Show a tqdm bar over the values of n.

    Returns
    -------
    dict
        {n: {(metric, method): M^}}.

    Examples
    --------
    >>> by_n = correction_vectors_by_n([10, 12, 10], ["recall@1"], ["sampled"], m=2)
    >>> sorted(by_n), by_n[12]["recall@1", "sampled"].tolist()
    ([10, 12], [1.0, 0.0, 0.0])
    """
    metrics, methods, *rest = args
    distinct = [int(n) for n in np.unique(np.asarray(list(n_values), dtype=np.int64))]
    build = partial(_vectors_at, metrics, methods, rest, kwargs)

    def collect(results) -> dict:
        if progress:
            from tqdm.auto import tqdm

            results = tqdm(results, total=len(distinct), desc="corrections per n", unit="n")
        return dict(zip(distinct, results))

    if workers <= 1 or len(distinct) < 2:
        with threadpool_limits(1):
            return collect(map(build, distinct))
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    chunk = max(1, len(distinct) // (8 * workers))
    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(workers, context, initializer=threadpool_limits, initargs=(1,))
    try:
        return collect(pool.map(build, distinct, chunksize=chunk))
    finally:  # an error or SIGTERM here leaves no queued task running
        pool.shutdown(cancel_futures=True)


def _vectors_at(metrics, methods, rest, kwargs, n):
    """correction_vectors at one n (a top-level function, so that workers can run it)."""
    return correction_vectors(metrics, methods, n, *rest, **kwargs)
