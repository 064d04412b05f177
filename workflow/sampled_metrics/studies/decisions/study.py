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
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ...estimation.laws import WITH_REPLACEMENT
from ...estimation.metrics import metric_by_name
from .familywise import FAMILY, covers, family_row, outcomes
from .methods import Estimated, Found, Phase1
from .per_model import model_draws, model_work
from .registry import Method

__all__ = ["STUDY_COLUMNS", "StudyRow", "run_study", "seed_phase1", "study_seed"]


class StudyRow(NamedTuple):
    """One seed's estimate by one method of one model's metric or one pair's difference:
    the exact value, the estimate, its interval (NaN for a point estimate), whether it
    covers and its width, a pair's verdict ("" for a model) and whether it is right or
    wrong (NaN for a model), the method's cost (a pair's own where it stops early). A
    row of target "family" judges every pair together: wrong when some verdict is."""

    seed: int
    method: str
    target: str  # "model", "pair" or "family"
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


def study_seed(
    draws: Sequence[Mapping[str, np.ndarray]],
    exact: ArrayLike,
    n: ArrayLike,
    names: Sequence[str],
    *,
    seed: int,
    m: int,
    methods: Sequence[Method],
    metrics: Sequence[str],
    law: str = WITH_REPLACEMENT,
    confidence: float = 0.95,
    skip: Collection[str] = (),
    base_seed: int = 0,
    values: Mapping[str, np.ndarray] | None = None,
    fixed: Mapping[str, Found] | None = None,
) -> dict[str, np.ndarray]:
    """One seed of the study: every method's estimates of every model's metric and every
    pair's difference from the models' own work (``draws``): the columns of its rows.

    Parameters
    ----------
    draws : sequence of mapping
        Each model's :func:`.per_model.model_draws`, in the order of ``exact``.
    exact : array_like of int
        (k, U) every model's exact ranks.
    n : array_like of int
        (U,) ranked-set sizes.
    names : sequence of str
        The k models' names; pairs are "A-B" for A before B in ``names``.
    seed : int
        The seed's number: the users the methods rank exactly are drawn from
        ``(base_seed, seed)``.
    m : int
    methods : sequence of Method
        :func:`.registry.study_methods`'s, run in this order (they draw from the seed's
        generator in turn).
    metrics : sequence of str
        The design is tuned for the first.
    law : {"binomial", "hypergeometric"}
    confidence : float
    skip : collection of str
        Kinds of method that do not run at this seed (a study runs some on fewer).
    base_seed : int
    values : mapping, optional
        {metric: (k, U)} the exact metric values (:func:`exact_values`), computed here
        when None.
    fixed : mapping, optional
        {method name: Found} of the methods that draw nothing, the same at every seed
        (full ranking): found once, not run again.

    Returns
    -------
    dict
        {column of :data:`STUDY_COLUMNS`: array}: the :class:`StudyRow` of each method
        in turn, each metric it judges in turn, the models, the pairs, then their family
        (:func:`.familywise.family_row`) where the method has one.
    """
    phase1 = seed_phase1(draws, exact, n, seed=seed, m=m, law=law, metrics=metrics,
                         confidence=confidence, skip=skip, base_seed=base_seed,
                         values=values)  # fmt: skip
    fixed = fixed or {}
    values = phase1.values
    a, b = phase1.pairs
    pairs = [f"{names[i]}-{names[j]}" for i, j in zip(a, b)]
    blocks = []
    for method in methods:
        if method.kind.name in skip:
            continue
        found = fixed[method.name] if method.name in fixed else method.run(phase1)
        same = {"method": method.name, "cost": found.cost}
        for metric, v in values.items():
            if metric not in found.pairs:
                continue
            truth = v.mean(axis=1)
            if found.models is not None:
                blocks.append(_block(same | {"target": "model", "metric": metric},
                                     list(names), truth, found.models[metric]))  # fmt: skip
            block = _block(same | {"target": "pair", "metric": metric},
                           pairs, truth[a] - truth[b], found.pairs[metric])  # fmt: skip
            if found.pair_cost is not None:
                block["cost"] = found.pair_cost
            blocks.append(block)
            family = family_row(found.pairs[metric], truth[a] - truth[b], confidence,
                                familywise=found.familywise)  # fmt: skip
            if family is not None:
                blocks.append(_family_block(same | {"target": "family", "metric": metric},
                                            family))  # fmt: skip
    rows = {
        column: np.concatenate([block[column] for block in blocks]) for column in STUDY_COLUMNS[1:]
    }
    return {"seed": np.full(rows["name"].size, seed)} | rows


def seed_phase1(
    draws: Sequence[Mapping[str, np.ndarray]],
    exact: ArrayLike,
    n: ArrayLike,
    *,
    seed: int,
    m: int,
    metrics: Sequence[str],
    law: str = WITH_REPLACEMENT,
    confidence: float = 0.95,
    skip: Collection[str] = (),
    base_seed: int = 0,
    values: Mapping[str, np.ndarray] | None = None,
) -> Phase1:
    """What the methods of one seed share (:class:`.Phase1`): the models' own work at
    that seed (``draws``, :func:`.per_model.model_draws`), the exact metric values, and
    the seed's generator, ``(base_seed, seed)``; the parameters as :func:`study_seed`'s."""
    rng = np.random.default_rng([base_seed, seed])
    exact = np.atleast_2d(np.asarray(exact, dtype=np.int64))
    n = np.asarray(n, dtype=np.int64)
    values = exact_values(exact, n, metrics) if values is None else dict(values)
    return Phase1(
        exact, n, np.stack([one["sampled"][seed] for one in draws]).astype(np.int64), m, law,
        values, confidence, rng, **_models_at(draws, seed, metrics, skip),
    )  # fmt: skip


def exact_values(exact: ArrayLike, n: ArrayLike, metrics: Sequence[str]) -> dict:
    """{metric: (k, U)} every model's exact metric of every user, float64, row-major:
    each model's sums over users are those of its row alone.

    Examples
    --------
    >>> exact_values([[1, 20]], [100, 100], ["recall@10"])["recall@10"].tolist()
    [[1.0, 0.0]]
    """
    exact = np.atleast_2d(np.asarray(exact, dtype=np.int64))
    n = np.asarray(n, dtype=np.int64)
    return {metric: np.ascontiguousarray(metric_by_name(metric)(exact, n), dtype=float)
            for metric in metrics}  # fmt: skip


def _models_at(
    draws: Sequence[Mapping[str, np.ndarray]], seed: int, metrics: Sequence[str],
    skip: Collection[str],
) -> dict[str, Any]:  # fmt: skip
    """The models' own work at one seed, stacked model by model, as :class:`.Phase1`
    takes it (in float64, as the methods compute)."""
    found: dict[str, Any] = {"moments": {}}
    if "means" in draws[0]:
        found["moments"] = {
            metric: tuple(np.stack([one[key][j, seed] for one in draws]).astype(float)
                          for key in ("means", "variances"))
            for j, metric in enumerate(metrics)
        }  # fmt: skip
    if "range" in draws[0] and "range" not in skip:
        found["ranges"] = np.stack([one["range"][seed] for one in draws])
    if "adaptive" in draws[0] and "adaptive-em" not in skip:
        found["adaptive"] = tuple(np.stack([one[key][seed] for one in draws])
                                  for key in ("adaptive", "adaptive_m"))  # fmt: skip
    return found


def run_study(
    exact: ArrayLike,
    n: ArrayLike,
    names: Sequence[str],
    *,
    seeds: int,
    fewer_seeds: Mapping[str, int] | None = None,
    mapper: Callable[[Callable[[int], dict], Iterable[int]], Iterable] | None = None,
    draws: Sequence[Mapping[str, np.ndarray]] | None = None,
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
    draws : sequence of mapping, optional
        Each model's :func:`.per_model.model_draws` for these seeds and methods
        (:func:`.per_model.model_work`); computed here when None.
    **options
        Of :func:`study_seed`.

    Returns
    -------
    pandas.DataFrame
        :data:`STUDY_COLUMNS`.

    Examples
    --------
    >>> from sampled_metrics.studies.decisions.registry import study_methods
    >>> rows = run_study([[1, 5, 30, 2], [40, 9, 1, 60]], [100] * 4, ["A", "B"], seeds=3,
    ...                  m=10, metrics=["recall@10"],
    ...                  methods=study_methods(["full"], [], []))
    >>> rows.shape  # per seed: 2 models, 1 pair, their family
    (12, 15)
    >>> [(str(name), float(e), float(w)) for name, e, w in
    ...  zip(rows["name"][:3], rows["exact"], rows["width"])]
    [('A', 0.75, 0.0), ('B', 0.5, 0.0), ('A-B', 0.25, 0.0)]
    """

    fewer = dict(fewer_seeds or {})
    keys = ("m", "law", "metrics", "confidence", "base_seed")
    shared = {key: options[key] for key in keys if key in options}
    if draws is None:
        work = model_work(options["methods"], seeds, fewer)
        exact = np.atleast_2d(np.asarray(exact))
        draws = [model_draws(row, n, name, seeds=seeds, **shared, **work)
                 for row, name in zip(exact, names)]  # fmt: skip
    models = draws
    options["values"] = exact_values(exact, n, options["metrics"])
    unseeded = [method for method in options["methods"] if not method.kind.seeded]
    if unseeded:  # what draws nothing is the same at every seed: found once
        phase1 = seed_phase1(models, exact, n, seed=0, skip=set(fewer),  # nothing seed-limited
                             values=options["values"], **shared)  # fmt: skip
        options["fixed"] = {method.name: method.run(phase1) for method in unseeded}

    def one(seed: int) -> dict[str, np.ndarray]:
        skip = {kind for kind, first in fewer.items() if seed >= first}
        return study_seed(models, exact, n, names, seed=seed, skip=skip, **options)

    found = list((mapper or map)(one, range(seeds)))
    return pd.DataFrame(
        {column: np.concatenate([rows[column] for rows in found]) for column in STUDY_COLUMNS}
    )


def _block(same: dict, names: list, exact: np.ndarray, found: Estimated) -> dict:
    """The columns of one method's rows of one metric, of the models or of the pairs
    ``names`` (``same`` gives the columns equal on every row): covered when the interval
    holds the exact value to rounding (an interval of zero width, every user ranked,
    holds it), a pair's verdict right when it names the better model, wrong when it is
    decided otherwise."""
    size = len(names)
    nothing = np.full(size, np.nan)
    low = high = covered = width = right = wrong = nothing
    if found.low is not None and found.high is not None:
        low, high = found.low, found.high
        covered = covers(low, high, exact)
        width = high - low
    verdict = np.full(size, "", dtype=object)
    if found.verdict is not None:
        verdict = found.verdict
        right, wrong = outcomes(verdict, exact)
    columns = {
        "name": np.array(names, dtype=object), "exact": exact, "estimate": found.value,
        "low": low, "high": high, "covered": covered, "width": width, "verdict": verdict,
        "right": right, "wrong": wrong,
    }  # fmt: skip
    for column, value in same.items():  # text as text, the cost as a number
        columns[column] = np.full(size, value, dtype=object if isinstance(value, str) else None)
    return columns


def _family_block(same: dict, family: dict) -> dict:
    """The columns of one family's row: its wrong and covered (:func:`.family_row`), NaN
    or "" elsewhere."""
    nothing = np.full(1, np.nan)
    columns = {column: nothing for column in STUDY_COLUMNS[1:]}
    columns |= {"name": np.array([FAMILY], dtype=object),
                "verdict": np.array([""], dtype=object),
                "covered": np.array([family["covered"]]),
                "wrong": np.array([family["wrong"]])}  # fmt: skip
    for column, value in same.items():
        columns[column] = np.full(1, value, dtype=object if isinstance(value, str) else None)
    return columns
