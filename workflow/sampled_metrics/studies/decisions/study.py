"""The design study: every way of deciding between models, simulated from exact ranks.

Given every model's exact rank r_u of every user's held-out item (and n_u, the ranked-set
size), one *seed* simulates phase 1, each model's sampled rank among m sampled items
(:func:`.methods.simulate_sampled_ranks`), then every method of the study
(:mod:`.registry`) estimates each model's mean metric and each pair's difference over
these users. The cost of a method is its scored items as a share of full ranking's
sum_u n_u: phase 1 scores m_u + 1 items of each user, an exact ranking n_u
(:func:`.methods.method_cost`).

**The simplification.** Each model's sampled rank is drawn independently given its exact
rank (the law the corrections assume, eq 15 or its hypergeometric form). A real paired
protocol scores one shared draw of sampled items under every model, so their sampled
ranks are dependent; simulating that needs each model's set of items above the held-out
one, which the exact ranks do not hold.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...estimation.decisions.verdict import EQUAL_WITHIN, exact_verdict
from ...estimation.laws import WITH_REPLACEMENT
from ...estimation.metrics import metric_by_name
from .methods import Estimated, Found, Phase1, simulate_sampled_ranks
from .registry import Method

__all__ = ["STUDY_COLUMNS", "StudyRow", "run_study", "study_seed"]


class StudyRow(NamedTuple):
    """One seed's estimate by one method of one model's metric or one pair's difference:
    the exact value, the estimate, its interval (NaN for a point estimate), whether it
    covers and its width, a pair's verdict ("" for a model) and whether it is right or
    wrong (NaN for a model), the method's cost."""

    seed: int
    method: str
    target: str  # "model" or "pair"
    name: str
    metric: str
    exact: float
    estimate: float
    low: float
    high: float
    covered: float
    width: float
    verdict: str
    right: float
    wrong: float
    cost: float


STUDY_COLUMNS = list(StudyRow._fields)


def _row(
    seed: int, method: str, target: str, name: str, metric: str, exact: float,
    found: Estimated, cost: float,
) -> StudyRow:  # fmt: skip
    """One :class:`StudyRow`; ``found.verdict`` None for a model's metric."""
    low = high = covered = width = np.nan
    if found.low is not None and found.high is not None:
        low, high = found.low, found.high
        # an interval of zero width (every user ranked) holds the exact value to rounding
        covered = float(low - EQUAL_WITHIN <= exact <= high + EQUAL_WITHIN)
        width = high - low
    right = wrong = np.nan
    if found.verdict is not None:
        truth = exact_verdict(exact)
        right = float(found.verdict == truth and truth.decided)
        wrong = float(found.verdict.decided and found.verdict != truth)
    return StudyRow(
        seed, method, target, name, metric, float(exact), found.value, low, high, covered,
        width, "" if found.verdict is None else found.verdict.value,
        right, wrong, cost,
    )  # fmt: skip


def study_seed(
    exact: ArrayLike,
    n: ArrayLike,
    names: Sequence[str],
    *,
    seed: int,
    m: int,
    methods: Sequence[Method],
    law: str = WITH_REPLACEMENT,
    metrics: Sequence[str] = ("recall@10", "ndcg@10"),
    confidence: float = 0.95,
    skip: Collection[str] = (),
    base_seed: int = 0,
) -> list[StudyRow]:
    """One seed of the study: phase 1 simulated, every method's estimates of every
    model's metric and every pair's difference.

    Parameters
    ----------
    exact : array_like of int
        (k, U) every model's exact ranks.
    n : array_like of int
        (U,) ranked-set sizes.
    names : sequence of str
        The k models' names; pairs are "A-B" for A before B in ``names``.
    seed : int
        The seed's number: its draws come from ``(base_seed, seed)``.
    m : int
    methods : sequence of Method
        :func:`.registry.study_methods`'s, run in this order (they draw from the seed's
        generator in turn).
    law : {"binomial", "hypergeometric"}
    metrics : sequence of str
        The design is tuned for the first.
    confidence : float
    skip : collection of str
        Kinds of method that do not run at this seed (a study runs some on fewer).
    base_seed : int

    Returns
    -------
    list of StudyRow

    Examples
    --------
    >>> from sampled_metrics.studies.decisions.registry import study_methods
    >>> rows = study_seed([[1, 5, 30, 2], [40, 9, 1, 60]], [100] * 4, ["A", "B"], seed=0,
    ...                   m=10, metrics=["recall@10"], methods=study_methods(["full"], [], []))
    >>> [(r.target, r.name, r.exact, r.width) for r in rows]
    [('model', 'A', 0.75, 0.0), ('model', 'B', 0.5, 0.0), ('pair', 'A-B', 0.25, 0.0)]
    """
    rng = np.random.default_rng([base_seed, seed])
    exact = np.atleast_2d(np.asarray(exact, dtype=np.int64))
    n = np.asarray(n, dtype=np.int64)
    sampled = simulate_sampled_ranks(exact, n, m, law, rng)
    values = {
        metric: np.asarray(metric_by_name(metric)(exact, n), dtype=float) for metric in metrics
    }
    phase1 = Phase1(exact, n, sampled, m, law, values, confidence, rng)
    rows: list[StudyRow] = []
    for method in methods:
        if method.kind.name in skip:
            continue
        rows += _rows(seed, method.name, names, values, method.run(phase1))
    return rows


def run_study(
    exact: ArrayLike,
    n: ArrayLike,
    names: Sequence[str],
    *,
    seeds: int,
    fewer_seeds: Mapping[str, int] | None = None,
    mapper: Callable[[Callable[[int], list[StudyRow]], Iterable[int]], Iterable] | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Every seed of the study (:func:`study_seed`), some kinds of method on the first
    seeds only: those their measures need.

    Parameters
    ----------
    exact, n, names
        As :func:`study_seed`.
    seeds : int
    fewer_seeds : mapping, optional
        {kind: the seeds it runs on, the first ones}; every seed for the others.
    mapper : callable, optional
        ``mapper(function, seeds) -> results`` (e.g. over forked processes); ``map``
        when None.
    **options
        Of :func:`study_seed`.

    Returns
    -------
    pandas.DataFrame
        :data:`STUDY_COLUMNS`.

    Examples
    --------
    >>> from sampled_metrics.studies.decisions.registry import study_methods
    >>> rows = run_study([[1, 2, 30, 4], [9, 1, 1, 70]], [100] * 4, ["A", "B"], seeds=3,
    ...                  m=10, metrics=["recall@10"],
    ...                  methods=study_methods(["full"], [], []))
    >>> rows.shape
    (9, 15)
    """

    fewer = dict(fewer_seeds or {})

    def one(seed: int) -> list[StudyRow]:
        skip = {kind for kind, first in fewer.items() if seed >= first}
        return study_seed(exact, n, names, seed=seed, skip=skip, **options)

    found = (mapper or map)(one, range(seeds))
    rows = [row._asdict() for rows in found for row in rows]
    return pd.DataFrame(rows, columns=STUDY_COLUMNS)


def _rows(
    seed: int, method: str, names: Sequence[str], values: dict, found: Found
) -> list[StudyRow]:
    rows = []
    for metric, v in values.items():
        truth = v.mean(axis=1)
        if found.model_of is not None:
            for k, name in enumerate(names):
                estimated = found.model_of(metric, k)
                rows.append(
                    _row(seed, method, "model", name, metric, truth[k], estimated, found.cost)
                )
        for a, b in combinations(range(len(names)), 2):
            estimated = found.pair_of(metric, a, b)
            difference = truth[a] - truth[b]
            pair = f"{names[a]}-{names[b]}"
            rows.append(_row(seed, method, "pair", pair, metric, difference, estimated, found.cost))
    return rows
