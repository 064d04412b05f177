"""The sequential loop in memory: plan wave 1, rank its users exactly, look, plan the next
wave, until every pair is done or the budget is spent (:func:`run_waves`).

The exact ranks come from a function the caller gives (``rank(rows) -> (k, len(rows))``),
so one loop serves a framework's checkpoints and any scoring function alike. Each step is
the one the file loop takes (``plan --sequential``, ``plan --continue``, ``correct
--design``; :mod:`sampled_metrics.cli.sequential`): the same wave 1 (:func:`plan_first_wave`),
the looks recomputed from the waves and the exact ranks (:func:`design_looks`), the same
next wave (:func:`.next_wave`), so that with the same seed both give the same verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..laws import WITH_REPLACEMENT
from .defaults import DECISION_DEFAULTS
from .proxy import metric_proxy
from .sequential import Look, family_looks, next_wave
from .waves import Waves, first_wave, wave_totals

__all__ = [
    "Looks",
    "SequentialRun",
    "design_looks",
    "loop_state",
    "plan_first_wave",
    "run_waves",
    "waves_to_the_end",
]

Ranker = Callable[[np.ndarray], np.ndarray]
Looks = dict[tuple[int, int], list[Look]]


@dataclass(frozen=True)
class SequentialRun:
    """A sequential design run to its end: the waves, the users each look planned
    (``totals``), every model's exact ranks (k, U; nan for the users not ranked), each
    pair's looks at the design's metric, and the state (:func:`loop_state`)."""

    waves: Waves
    totals: tuple[int, ...]
    exact: np.ndarray
    looks: dict[tuple[int, int], list[Look]]
    state: str


def plan_first_wave(
    sampled_ranks: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    *,
    budget: float,
    seed: int,
    law: str = WITH_REPLACEMENT,
    metric: str = DECISION_DEFAULTS["metric"],
) -> tuple[Waves, tuple[int, ...]]:
    """Wave 1 of a sequential design of at most ``budget`` of the users and the users
    planned by each look (:func:`.wave_totals`, :func:`.first_wave` with the seed
    (seed, 1) and the defaults' strata and floor)."""
    sampled = np.asarray(sampled_ranks)
    totals = wave_totals(sampled.shape[-1], budget)
    waves = first_wave(sampled, m, n, totals[0], law=law,
                       seed=np.random.default_rng([seed, 1]), metric=metric,
                       edges=DECISION_DEFAULTS["edges"], cells=DECISION_DEFAULTS["cells"],
                       floor=DECISION_DEFAULTS["floor"])  # fmt: skip
    return waves, totals


def design_looks(
    waves: Waves,
    exact_ranks: ArrayLike,
    sampled_ranks: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    metric: str,
    *,
    confidence: float,
    budget: int,
    law: str = WITH_REPLACEMENT,
    spending: str = DECISION_DEFAULTS["spending"],
    family: str = DECISION_DEFAULTS["family"],
) -> dict[tuple[int, int], list[Look]]:
    """Every pair's looks at ``metric`` after the waves so far (:func:`.family_looks`
    with every model's proxy from its sampled ranks, :func:`.metric_proxy`), at the
    family's error 1 - ``confidence``; ``budget`` is the most users the waves rank."""
    sampled = np.asarray(sampled_ranks)
    proxies = [metric_proxy(row, m, n, metric, law=law) for row in sampled]
    return family_looks(waves, exact_ranks, sampled, m, n, metric, proxies=proxies,
                        alpha=1 - confidence, budget=budget, law=law, spending=spending,
                        family=family)  # fmt: skip


def loop_state(looks: dict[tuple[int, int], list[Look]], waves: Waves, budget: int) -> str:
    """``"decided"`` (every pair done), ``"budget spent"`` or ``"open"`` (a wave is due)."""
    if all(pair[-1].done for pair in looks.values()):
        return "decided"
    return "budget spent" if int(waves.chosen.sum()) >= budget else "open"


def run_waves(
    sampled_ranks: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    rank: Ranker,
    *,
    budget: float = DECISION_DEFAULTS["sequential_budget"],
    seed: int = 0,
    law: str = WITH_REPLACEMENT,
    metric: str = DECISION_DEFAULTS["metric"],
    confidence: float = DECISION_DEFAULTS["confidence"],
    spending: str = DECISION_DEFAULTS["spending"],
    family: str = DECISION_DEFAULTS["family"],
    on_look: Callable[[Waves, dict[tuple[int, int], list[Look]]], None] | None = None,
) -> SequentialRun:
    """The sequential loop: each wave's new users ranked exactly by ``rank``, the looks,
    the next wave, until every pair is done or the budget is spent.

    Parameters
    ----------
    sampled_ranks : array_like of int (k, U)
        Every model's sampled rank of every user (k >= 2 models).
    m, n : array_like
        The sampled evaluation's m and n (scalars or per user).
    rank : callable
        ``rank(rows)``: the exact ranks (k, len(rows)) of the users at positions
        ``rows`` (each user is asked for once).
    budget : float, default 0.5
        The most of the users the waves may rank.
    seed : int
        The seed of every wave's draw (the file loop's ``plan --seed``).
    on_look : callable, optional
        Called with the waves and the looks after each look (e.g. to write the design
        file of each wave).
    Other parameters as :func:`.family_looks`.

    Returns
    -------
    SequentialRun

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> exact = np.stack([rng.integers(1, 40, 2000), rng.integers(30, 200, 2000)])
    >>> sampled = np.ceil(exact / 4).astype(int)
    >>> run = run_waves(sampled, 99, 400, lambda rows: exact[:, rows], seed=1)
    >>> run.state, run.looks[0, 1][-1].verdict.value, int(run.waves.chosen.sum()) < 1000
    ('decided', 'A better', True)
    """
    sampled = np.asarray(sampled_ranks)
    if sampled.ndim != 2 or sampled.shape[0] < 2:
        raise ValueError(f"sampled_ranks must be (k >= 2 models, users), got {sampled.shape}")
    waves, totals = plan_first_wave(sampled, m, n, budget=budget, seed=seed, law=law,
                                    metric=metric)  # fmt: skip
    exact = np.full(sampled.shape, np.nan)

    def look(waves: Waves, _: Looks | None) -> Looks:
        new = np.flatnonzero(waves.chosen & np.isnan(exact[0]))
        exact[:, new] = _ranked(rank, new, sampled.shape[0])
        looks = design_looks(waves, exact, sampled, m, n, metric, confidence=confidence,
                             budget=totals[-1], law=law, spending=spending,
                             family=family)  # fmt: skip
        if on_look is not None:
            on_look(waves, looks)
        return looks

    waves, looks = waves_to_the_end(waves, totals, look, seed=seed)
    return SequentialRun(waves, totals, exact, looks, loop_state(looks, waves, totals[-1]))


def waves_to_the_end(
    waves: Waves,
    totals: Sequence[int],
    look: Callable[[Waves, Looks | None], Looks],
    *,
    seed: int,
) -> tuple[Waves, Looks]:
    """The loop every sequential design runs: ``look(waves, the previous looks)`` after
    each wave, then the next wave (:func:`.next_wave`, drawn with ``seed``) where the
    pairs not done are least certain, until every pair is done or ``totals[-1]`` users
    are ranked; the last waves and looks."""
    looks = None
    while True:
        looks = look(waves, looks)
        grown = next_wave(waves, looks, totals, seed=seed)
        if grown is None:
            return waves, looks
        waves = grown


def _ranked(rank: Ranker, rows: np.ndarray, models: int) -> np.ndarray:
    """``rank(rows)`` checked: (models, len(rows)) ranks of at least 1."""
    values = np.asarray(rank(rows), dtype=float)
    if values.shape != (models, rows.size):
        raise ValueError(f"rank(rows) must give ({models}, {rows.size}) ranks, got {values.shape}")
    if rows.size and not np.all(values >= 1):
        raise ValueError("rank(rows) gave a rank below 1 (or nan)")
    return values
