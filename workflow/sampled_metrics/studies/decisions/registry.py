"""The design study's methods: one record per kind of method (:data:`KINDS`), and one
per method a study runs (:class:`Method`: a kind at one budget), built from the
configuration's ``decisions`` section by :func:`study_methods`.

* ``full``: every user ranked exactly (:func:`.run_full`);
* ``uniform``: a simple random subset of the users ranked exactly, one method per
  ``uniform_budgets`` (:func:`.run_uniform`);
* ``design``: two-phase sampling, one design for every model, one method per
  ``budgets`` (:func:`.run_design`);
* ``pair-design``: the same planned for one pair at a time, pairs only
  (:func:`.run_pair_design`);
* ``range``: the identification interval from the sampled ranks alone
  (:func:`.run_range`);
* ``sequential``: the two-phase design in waves, every pair judged at each look with
  Holm's recycling, stopping when every pair is decided or the budget spent
  (:func:`.run_sequential`);
* ``sequential-pair``: the same, each pair alone in its own design
  (:func:`.run_sequential_pair`);
* ``adaptive-em``: Li et al.'s adaptive sampling ("Towards Reliable Item Sampling for
  Recommendation Evaluation", AAAI 2023) and EM: point estimates
  (:func:`.run_adaptive_em`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from ...estimation.decisions.defaults import DECISION_DEFAULTS
from .methods import (
    Found,
    Parameters,
    Phase1,
    run_adaptive_em,
    run_design,
    run_full,
    run_pair_design,
    run_range,
    run_uniform,
)
from .sequential import run_sequential, run_sequential_pair

__all__ = ["FEWER_SEEDS", "KINDS", "Kind", "Method", "left_out_methods", "study_methods"]


@dataclass(frozen=True)
class Kind:
    """A kind of method.

    Parameters
    ----------
    name : str
        As ``decisions.run`` names it.
    run : callable
        ``run(phase1, method) -> Found``.
    budgets : str or None
        The ``decisions`` key whose shares of the users give one method each; None for
        a kind without a budget.
    stratified : bool
        Whether it draws a stratified design from phase 1 (it needs every stratum's
        floor of users).
    intervals : bool
        Whether it gives intervals (else point estimates).
    seeded : bool
        Whether it draws from the seed (else it finds the same at every seed, and a
        study runs it once).

    Examples
    --------
    >>> KINDS["pair-design"].budgets, KINDS["adaptive-em"].intervals
    ('budgets', False)
    """

    name: str
    run: Callable[[Phase1, Parameters], Found]
    budgets: str | None = None
    stratified: bool = False
    intervals: bool = True
    seeded: bool = True


# In the order the study runs them and the figure's legend lists them.
KINDS = {
    kind.name: kind
    for kind in (
        Kind("full", run_full, seeded=False),
        Kind("uniform", run_uniform, budgets="uniform_budgets"),
        Kind("design", run_design, budgets="budgets", stratified=True),
        Kind("pair-design", run_pair_design, budgets="budgets", stratified=True),
        Kind("sequential", run_sequential, stratified=True),
        Kind("sequential-pair", run_sequential_pair, stratified=True),
        Kind("range", run_range),
        Kind("adaptive-em", run_adaptive_em, intervals=False),
    )
}

# kinds whose measures need fewer seeds (docs/decisions_study.md, "How many seeds"): the
# ``decisions`` key of the first seeds each runs on
FEWER_SEEDS = {
    "sequential": "sequential_seeds",
    "sequential-pair": "sequential_pair_seeds",
    "range": "range_seeds",
    "adaptive-em": "adaptive_seeds",
}


@dataclass(frozen=True)
class Method:
    """One method of a study: a kind with its parameters.

    Parameters
    ----------
    kind : Kind
    budget : float or None
        The share of the users it ranks exactly (kinds with budgets).
    steps : tuple of int
        ``adaptive-em``'s cumulative extra sample sizes.

    Examples
    --------
    >>> method = Method(KINDS["design"], budget=0.1)
    >>> method.name, method.label
    ('design-0.1', '10 %')
    >>> Method(KINDS["full"]).name, Method(KINDS["full"]).label
    ('full', '')
    """

    kind: Kind
    budget: float | None = None
    steps: tuple[int, ...] = ()

    @property
    def name(self) -> str:
        """Its name in the outputs: the kind, and the budget when it has one."""
        return self.kind.name if self.budget is None else f"{self.kind.name}-{self.budget:g}"

    @property
    def label(self) -> str:
        """Its label beside its kind's in the figure: the budget as a share."""
        return "" if self.budget is None else f"{100 * self.budget:g} %"

    def run(self, phase1: Phase1) -> Found:
        """The method on one simulated phase 1."""
        return self.kind.run(phase1, self)


def study_methods(
    run: Sequence[str],
    budgets: Sequence[float],
    uniform_budgets: Sequence[float],
    adaptive_steps: Sequence[int] = (),
) -> list[Method]:
    """The methods of a study: each kind of ``run`` at each of its budgets (the
    ``decisions`` section's keys of the same names).

    Examples
    --------
    >>> methods = study_methods(["full", "uniform", "design", "range"], [0.05, 0.1], [0.25])
    >>> [method.name for method in methods]
    ['full', 'uniform-0.25', 'design-0.05', 'design-0.1', 'range']
    """
    unknown = [kind for kind in run if kind not in KINDS]
    if unknown:
        raise ValueError(f"unknown methods {unknown}; known: {list(KINDS)}")
    shares = {"budgets": budgets, "uniform_budgets": uniform_budgets}
    steps = tuple(int(step) for step in adaptive_steps)
    methods = []
    for name in run:
        kind = KINDS[name]
        for budget in [None] if kind.budgets is None else shares[kind.budgets]:
            methods.append(Method(kind, budget, steps if name == "adaptive-em" else ()))
    return methods


def left_out_methods(methods: Sequence[Method], users: int) -> dict[str, str]:
    """{name: why} of the methods that ``users`` users cannot support: a stratified
    design whose budget cannot give every possible stratum (one per bin of
    ``DECISION_DEFAULTS["edges"]``) its floor of users, a subset of fewer than 2.

    Examples
    --------
    >>> methods = study_methods(["full", "design", "uniform"], [0.05, 0.5], [0.01])
    >>> left_out_methods(methods, 90)
    {'design-0.05': 'its budget ranks 4 of the 90 users, fewer than the 30 its strata need (5 in each of 6)', 'uniform-0.01': 'its budget ranks 1 of the 90 users, fewer than 2'}
    """  # noqa: E501
    strata = len(cast(Sequence[int], DECISION_DEFAULTS["edges"])) + 1
    floor = DECISION_DEFAULTS["floor"]
    needed = floor * strata
    out = {}
    for method in methods:
        if method.budget is None:
            continue
        chosen = round(method.budget * users)
        if method.kind.stratified and chosen < needed:
            out[method.name] = (
                f"its budget ranks {chosen} of the {users} users, fewer than the {needed} its "
                f"strata need ({floor} in each of {strata})"
            )
        elif not method.kind.stratified and chosen < 2:
            out[method.name] = f"its budget ranks {chosen} of the {users} users, fewer than 2"
    return out
