"""The design study: every way of deciding between models, simulated from exact ranks.

Given every model's exact rank r_u of every user's held-out item (and n_u, the ranked-set
size), one *seed* simulates phase 1, each model's sampled rank among m sampled items
(:func:`.methods.simulate_sampled_ranks`), then every method of :data:`METHOD_KINDS` estimates
each model's mean metric and each pair's difference over these users:

* ``full``: every user ranked exactly: the metric itself (an interval of zero width
  about these users) and the verdict of the paired t-test (:func:`.paired_test`);
* ``uniform-<b>``: a simple random subset of round(b U) users ranked exactly, their
  mean with the finite-population correction (the design of one stratum, no proxy);
* ``design-<b>``: two-phase sampling (:func:`.draw_design`, :func:`.estimate_metric`,
  :func:`.estimate_difference`) at a budget of b of the users, one design for every
  model (strata from all their sampled ranks);
* ``pair-design-<b>``: the same planned for one pair (strata from its two models'
  sampled ranks), as a comparison of two models would be: pairs only;
* ``range``: the identification interval from the sampled ranks alone
  (:func:`sampled_metrics.estimation.estimators.identification_intervals`; pairs as
  :func:`sampled_metrics.estimation.estimators.difference_interval`, Bonferroni over the
  two models);
* ``adaptive-em``: Li et al.'s adaptive sampling ("Towards Reliable Item Sampling for
  Recommendation Evaluation", AAAI 2023): a user whose held-out item beat every sampled
  item gets more sampled items, cumulatively ``steps`` more (100, 200, 400, 800, 1600
  by default), until one ranks above it or the steps end
  (:func:`.methods.adaptive_ranks`); the
  metric is then the EM estimate over the sampled ranks with their own m_u: a point
  estimate, its pairs ordered by the estimates' signs.

The cost of a method is its scored items as a share of full ranking's sum_u n_u:
phase 1 scores m_u + 1 items of each user, an exact ranking n_u
(:func:`.methods.method_cost`).

**The simplification.** Each model's sampled rank is drawn independently given its exact
rank (the law the corrections assume, eq 15 or its hypergeometric form). A real paired
protocol scores one shared draw of sampled items under every model, so their sampled
ranks are dependent; simulating that needs each model's set of items above the held-out
one, which the exact ranks do not hold.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd

from ...estimation.decisions.defaults import DECISION_DEFAULTS
from ...estimation.decisions.verdict import exact_verdict
from ...estimation.laws import WITH_REPLACEMENT
from ...estimation.metrics import metric_by_name
from .methods import (
    ADAPTIVE_STEPS,
    SeedMethods,
    simulate_sampled_ranks,
)

__all__ = [
    "METHOD_KINDS",
    "STUDY_COLUMNS",
    "left_out_methods",
    "method_names",
    "run_study",
    "study_seed",
]

METHOD_KINDS = ("full", "uniform", "design", "pair-design", "range", "adaptive-em")
# One row per seed, method, model or pair, and metric.
STUDY_COLUMNS = [
    "seed", "method", "target", "name", "metric", "exact", "estimate", "low", "high",
    "covered", "width", "verdict", "right", "wrong", "cost",
]  # fmt: skip


def method_names(run, budgets, uniform_budgets) -> list:
    """The methods of a study: each kind of ``run`` with its budgets.

    Examples
    --------
    >>> method_names(["full", "uniform", "design", "range"], [0.05, 0.1], [0.25])
    ['full', 'uniform-0.25', 'design-0.05', 'design-0.1', 'range']
    """
    unknown = [kind for kind in run if kind not in METHOD_KINDS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; known: {list(METHOD_KINDS)}")
    names = []
    for kind in run:
        if kind == "uniform":
            names += [f"uniform-{b:g}" for b in uniform_budgets]
        elif kind in ("design", "pair-design"):
            names += [f"{kind}-{b:g}" for b in budgets]
        else:
            names.append(kind)
    return names


def left_out_methods(methods, users: int) -> dict:
    """{method: why} of the methods that ``users`` users cannot support: a design whose
    budget cannot give every possible stratum (one per bin of
    ``DECISION_DEFAULTS["edges"]``) its floor of users, a subset of fewer than 2.

    Examples
    --------
    >>> left_out_methods(["full", "design-0.05", "design-0.5", "uniform-0.01"], 90)
    {'design-0.05': 'its budget ranks 4 of the 90 users, fewer than the 30 its strata need (5 in each of 6)', 'uniform-0.01': 'its budget ranks 1 of the 90 users, fewer than 2'}
    """  # noqa: E501
    strata = len(DECISION_DEFAULTS["edges"]) + 1
    needed = DECISION_DEFAULTS["floor"] * strata
    out = {}
    for method in methods:
        kind, budget = _parsed(method)
        chosen = 0 if budget is None else round(budget * users)
        if kind in ("design", "pair-design") and chosen < needed:
            out[method] = (
                f"its budget ranks {chosen} of the {users} users, fewer than the {needed} its "
                f"strata need ({DECISION_DEFAULTS['floor']} in each of {strata})"
            )
        elif kind == "uniform" and chosen < 2:
            out[method] = f"its budget ranks {chosen} of the {users} users, fewer than 2"
    return out


def _row(seed, method, target, name, metric, exact, low, high, estimate, verdict, cost):
    """One row of :data:`STUDY_COLUMNS`; ``verdict`` None for a model's metric."""
    interval = low is not None
    row = {
        "seed": seed, "method": method, "target": target, "name": name, "metric": metric,
        "exact": float(exact), "estimate": estimate,
        "low": low if interval else np.nan, "high": high if interval else np.nan,
        "covered": float(low <= exact <= high) if interval else np.nan,
        "width": high - low if interval else np.nan,
        "verdict": "" if verdict is None else verdict.value,
        "right": np.nan, "wrong": np.nan, "cost": cost,
    }  # fmt: skip
    if verdict is not None:
        truth = exact_verdict(exact)
        row["right"] = float(verdict == truth and truth.decided)
        row["wrong"] = float(verdict.decided and verdict != truth)
    return row


def study_seed(
    exact,
    n,
    names,
    *,
    seed,
    m: int,
    law: str = WITH_REPLACEMENT,
    metrics=("recall@10", "ndcg@10"),
    methods=("full", "design-0.1"),
    confidence: float = 0.95,
    ranges: bool = True,
    steps=ADAPTIVE_STEPS,
    base_seed: int = 0,
) -> list:
    """One seed of the study: phase 1 simulated, every method's estimates of every
    model's metric and every pair's difference, as rows of :data:`STUDY_COLUMNS`.

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
    law : {"binomial", "hypergeometric"}
    metrics : sequence of str
        The design is tuned for the first.
    methods : sequence of str
        Names of :func:`method_names`.
    confidence : float
    ranges : bool
        Whether ``range`` runs at this seed (it is slow: a study runs it on fewer).
    steps : sequence of int
        ``adaptive-em``'s extra sample sizes (:func:`adaptive_ranks`).
    base_seed : int

    Returns
    -------
    list of dict

    Examples
    --------
    >>> rows = study_seed([[1, 5, 30, 2], [40, 9, 1, 60]], [100] * 4, ["A", "B"], seed=0,
    ...                   m=10, metrics=["recall@10"], methods=["full"])
    >>> [(r["target"], r["name"], r["exact"], r["width"]) for r in rows]
    [('model', 'A', 0.75, 0.0), ('model', 'B', 0.5, 0.0), ('pair', 'A-B', 0.25, 0.0)]
    """
    rng = np.random.default_rng([base_seed, seed])
    exact = np.atleast_2d(np.asarray(exact, dtype=np.int64))
    n = np.asarray(n, dtype=np.int64)
    sampled = simulate_sampled_ranks(exact, n, m, law, rng)
    values = {
        metric: np.asarray(metric_by_name(metric)(exact, n), dtype=float) for metric in metrics
    }
    study = SeedMethods(exact, n, sampled, m, law, values, confidence, rng, steps)
    rows = []
    for method in methods:
        kind, budget = _parsed(method)
        if kind == "range" and not ranges:
            continue
        found = getattr(study, kind.replace("-", "_"))(*([] if budget is None else [budget]))
        rows += _rows(seed, method, names, values, *found)
    return rows


def run_study(exact, n, names, *, seeds: int, range_seeds: int, mapper=None, **options):
    """Every seed of the study (:func:`study_seed`), the identification range on the
    first ``range_seeds`` only.

    Parameters
    ----------
    exact, n, names
        As :func:`study_seed`.
    seeds, range_seeds : int
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
    >>> rows = run_study([[1, 2, 30, 4], [9, 1, 1, 70]], [100] * 4, ["A", "B"], seeds=3,
    ...                  range_seeds=0, m=10, metrics=["recall@10"], methods=["full"])
    >>> rows.shape
    (9, 15)
    """

    def one(seed):
        return study_seed(exact, n, names, seed=seed, ranges=seed < range_seeds, **options)

    found = (mapper or map)(one, range(seeds))
    return pd.DataFrame([row for rows in found for row in rows], columns=STUDY_COLUMNS)


def _rows(seed, method, names, values, cost, model_of, pair_of) -> list:
    rows = []
    for metric, v in values.items():
        truth = v.mean(axis=1)
        for k, name in enumerate(names if model_of is not None else []):
            low, high, point = model_of(metric, k)
            rows.append(
                _row(seed, method, "model", name, metric, truth[k], low, high, point, None, cost)
            )
        for a, b in combinations(range(len(names)), 2):
            low, high, point, verdict = pair_of(metric, a, b)
            rows.append(
                _row(seed, method, "pair", f"{names[a]}-{names[b]}", metric, truth[a] - truth[b],
                     low, high, point, verdict, cost)
            )  # fmt: skip
    return rows


def _parsed(method: str) -> tuple:
    """(kind, budget or None) of a name of :func:`method_names`."""
    for kind in ("uniform", "design", "pair-design"):
        if method.startswith(f"{kind}-"):
            return kind, float(method[len(kind) + 1 :])
    if method not in METHOD_KINDS:
        raise ValueError(f"unknown method {method!r}; known: {list(METHOD_KINDS)} (with budgets)")
    return method, None
