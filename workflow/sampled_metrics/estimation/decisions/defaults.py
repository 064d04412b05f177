"""The defaults of the two-phase design and its estimators, in one place."""

from __future__ import annotations

from typing import TypedDict

from ..estimators.learned import ESTIMATOR_DEFAULTS

__all__ = ["DECISION_DEFAULTS"]


class _DecisionDefaults(TypedDict):
    """The type of each default, read by the type checker where a parameter takes one."""

    budget: float
    unit: str
    edges: tuple[int, ...]
    cells: str
    floor: int
    degrees: int
    metric: str
    prior: str
    confidence: float
    tuning: str
    population: str
    family: str
    sequential_budget: float
    first_wave: float
    growth: float
    spending: str


# Edges aim at top-k metrics at k = 10 with m = 100 and n of a few thousand: Recall@10 is
# non-zero only where r <= 10, which a sampled rank of 1 holds about 80 % of the time, 2
# about 20 %, 3 and above rarely; the strata's upper edges 1, 2, 3, 5, 10 separate those.
# The floor gives every non-empty stratum a few chosen users, so that every stratum's
# variance is estimated. The prior of the proxy is learned from phase 1 (EM). lambda = 1
# ("fixed") keeps the estimator exactly design-unbiased; "power" (PPI++) is an option.
# "degrees": the fewest effective degrees of freedom a design's predicted variance must
# rest on to promise its intervals' coverage, else every user is ranked (its reason and
# measurement: the module promise). "family": many pairs are decided with Holm's step-down,
# which decides every pair Bonferroni decides and often more (the module family).
# A sequential design ranks "first_wave" of the users at its first look, then "growth"
# times as many at each next (the module waves), up to "sequential_budget": a pair far
# apart is decided at a few per cent, a close one may use the budget. The ratio is a
# trade: a pair stops at the first look past the users it needs, so coarse looks overshoot
# (by up to the ratio), while each look costs a little of the error; with Neyman's
# allocation the information grows faster than the users (the strata where the metric
# varies are ranked whole), so the looks must be close. "spending": by half the budget
# O'Brien-Fleming's type has spent almost nothing, which holds close pairs to the budget;
# Pocock's type stops them sooner but widens the last interval; Hwang, Shih and DeCani's
# (gamma -2) lies in between (the module boundaries).
DECISION_DEFAULTS: _DecisionDefaults = {
    "budget": 0.1,
    "unit": "users",
    "edges": (1, 2, 3, 5, 10),
    "cells": "min",
    "floor": 5,
    "degrees": 56,
    "metric": "recall@10",
    "prior": "em",
    "confidence": ESTIMATOR_DEFAULTS["confidence"],
    "tuning": "fixed",
    "population": "finite",
    "family": "holm",
    "sequential_budget": 0.5,
    "first_wave": 0.025,
    "growth": 1.3,
    "spending": "hwang-shih-decani",
}
