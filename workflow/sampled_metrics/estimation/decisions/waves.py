"""The waves of a sequential design: how many users are ranked exactly by each look,
and which.

The strata are phase 1's (:func:`.design_strata`), fixed for every wave. Wave 1 is a
two-phase design of a small share of the users (:func:`.draw_design`); each next wave
brings the users ranked so far to ``growth`` times as many (:func:`wave_totals`), up to
the budget, allocated by Neyman's rule over the strata with the spreads seen so far
(:func:`grow`) and drawn without replacement from the users not chosen yet.

Why the estimator of :mod:`.estimate` is unbiased, and where only nearly: within stratum
h the users are drawn in a uniformly random order without replacement, so a count
n_h^(k) fixed before the draws gives a uniform sample of n_h^(k) of its N_h users, a
stratified simple random sample with pi_u = n_h^(k) / N_h, and the difference
estimator with these probabilities is unbiased (Sarndal, Swensson and Wretman 1992,
ch. 9). Here the counts of wave k + 1 depend on the spreads of the residuals seen in
waves 1..k (Neyman's rule), so given the counts the sample is not exactly uniform: the
estimator can be biased at second order, through the spreads (which set the counts),
not through the residuals' mean. The simulations of ``tests/test_sequential.py`` run
the loop to its stopping time and measure the final intervals' coverage.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..laws import WITH_REPLACEMENT
from .allocation import allocate
from .defaults import DECISION_DEFAULTS
from .design import Design, design_strata, draw_design

__all__ = ["Waves", "first_wave", "grow", "wave_totals"]


@dataclass(frozen=True)
class Waves:
    """A sequential design so far: each user's stratum (phase 1's, fixed), the strata's
    sizes N_h, and the wave each user was chosen in (1, 2, ...; 0: not chosen).

    Examples
    --------
    >>> w = Waves(np.array([0, 0, 1, 1]), np.array([2, 2]), np.array([1, 2, 1, 0]))
    >>> w.count, w.design(1).probability.tolist(), w.design(2).probability.tolist()
    (2, [0.5, 0.5, 0.5, 0.5], [1.0, 1.0, 0.5, 0.5])
    """

    stratum: np.ndarray
    sizes: np.ndarray
    wave: np.ndarray

    @property
    def count(self) -> int:
        """The waves drawn so far."""
        return int(self.wave.max(initial=0))

    @cached_property
    def chosen(self) -> np.ndarray:
        return self.wave > 0

    def design(self, look: int) -> Design:
        """The cumulative design at look ``look``: the users of waves 1..look, pi_u =
        n_h / N_h of their stratum (the module's argument)."""
        chosen = (self.wave >= 1) & (self.wave <= look)
        counts = np.bincount(self.stratum[chosen], minlength=self.sizes.size)
        probability = (counts / np.maximum(self.sizes, 1))[self.stratum]
        return Design(self.stratum, probability, chosen, self.sizes)


def wave_totals(
    users: int,
    budget: float,
    *,
    first: float = DECISION_DEFAULTS["first_wave"],
    growth: float = DECISION_DEFAULTS["growth"],
) -> tuple[int, ...]:
    """The users ranked by each look: round(first U), then ``growth`` times as many at each
    next look, the last one round(budget U).

    Examples
    --------
    >>> wave_totals(1000, 0.5, growth=1.6)
    (25, 40, 64, 102, 163, 261, 418, 500)
    >>> wave_totals(100, 0.01)
    (1,)
    """
    if not 0 < budget <= 1:
        raise ValueError(f"budget must lie in (0, 1], got {budget!r}")
    if not 0 < first <= 1 or not growth > 1:
        raise ValueError(f"first must lie in (0, 1] and growth above 1, got {first}, {growth}")
    last = max(1, round(budget * users))
    totals = [min(max(1, round(first * users)), last)]
    while totals[-1] < last:
        totals.append(min(max(round(totals[-1] * growth), totals[-1] + 1), last))
    return tuple(totals)


def _shares(deficit: np.ndarray, total: int) -> np.ndarray:
    """``total`` split in proportion to ``deficit``, each share at most its deficit, as
    integers by largest remainder."""
    exact = deficit * total / deficit.sum()
    whole = np.floor(exact).astype(np.int64)
    order = np.argsort(-(exact - whole), kind="stable")
    whole[order[: total - int(whole.sum())]] += 1  # fractions < 1 each: within deficits
    return whole


def grow(
    waves: Waves,
    spreads: ArrayLike,
    total: int,
    *,
    floor: int = DECISION_DEFAULTS["floor"],
    seed: int | np.random.Generator | None = None,
) -> Waves:
    """The next wave: the users ranked brought to ``total``, Neyman's allocation of
    ``total`` over the strata (:func:`.allocate`, with the spreads seen so far) less what
    each stratum has, drawn without replacement from its users not chosen yet.

    The allocation of the cumulative sample is the one Neyman's rule gives ``total``
    users; a stratum that has more already keeps them, and the wave is split among the
    others in proportion to what each lacks.

    Parameters
    ----------
    waves : Waves
    spreads : array_like of float
        sigma_h, the spread of each stratum to allocate by.
    total : int
        The users ranked after this wave, more than now and at most U.
    floor : int, default 5
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    Waves
        With the new wave numbered ``waves.count + 1``.

    Examples
    --------
    >>> w = Waves(np.repeat([0, 1], 50), np.array([50, 50]), np.repeat([1, 0, 1, 0], 25))
    >>> g = grow(w, [1.0, 0.0], 60, floor=2, seed=0)
    >>> np.bincount(g.stratum[g.chosen]).tolist(), g.count
    ([35, 25], 2)
    """
    counts = np.bincount(waves.stratum[waves.chosen], minlength=waves.sizes.size)
    wave = int(total - counts.sum())
    if wave <= 0 or total > waves.stratum.size:
        raise ValueError(f"total must lie in {counts.sum() + 1}..{waves.stratum.size}, got {total}")
    # every stratum has its floor since wave 1: allocate's floor costs nothing more
    target = allocate(waves.sizes, spreads, total, floor=floor)
    shares = _shares(np.maximum(target - counts, 0), wave)
    rng = np.random.default_rng(seed)
    new = waves.wave.copy()
    for h in np.flatnonzero(shares):
        left = np.flatnonzero((waves.stratum == h) & ~waves.chosen)
        new[rng.choice(left, size=int(shares[h]), replace=False)] = waves.count + 1
    return Waves(waves.stratum, waves.sizes, new)


def first_wave(
    sampled_ranks: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    users: int,
    *,
    law: str = WITH_REPLACEMENT,
    seed: int | np.random.Generator | None = None,
    **options: Any,
) -> Waves:
    """Wave 1: a two-phase design of ``users`` users (:func:`.draw_design` with its
    strata, Neyman's allocation by the predicted spread and its floor; ``options`` are its
    ``metric``, ``edges``, ``cells``, ``floor``, ``prior``), more where the strata's floors
    need more. Its promise of coverage at a fixed size does not apply (the repeated
    intervals make their own): it is not checked.

    Examples
    --------
    >>> ranks = np.random.default_rng(0).integers(1, 12, size=(2, 500))
    >>> w = first_wave(ranks, 10, 100, 40, seed=1)
    >>> w.count, int(w.chosen.sum())
    (1, 40)
    >>> int(first_wave(ranks, 10, 100, 10, seed=1).chosen.sum())  # 5 in each stratum (3 in one)
    28
    """
    count = np.asarray(sampled_ranks).shape[-1]
    strata = {key: options[key] for key in ("edges", "cells") if key in options}
    stratum, width = design_strata(sampled_ranks, **strata)
    floor = options.get("floor", DECISION_DEFAULTS["floor"])
    users = max(users, int(np.minimum(np.bincount(stratum, minlength=width), floor).sum()))
    design = draw_design(sampled_ranks, m, n, budget=users / count, law=law, degrees=0,
                         seed=seed, **options)  # fmt: skip
    return Waves(design.stratum, design.stratum_sizes, design.chosen.astype(np.int64))
