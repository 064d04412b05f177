"""Sequential decisions: exact ranks in waves, each pair decided at the first look whose
repeated confidence interval excludes 0, with intervals valid although stopping depends
on the data.

At look k (after wave k, :mod:`.waves`) a pair's difference A - B is estimated by the
design estimator on the users ranked so far (:func:`.estimate_difference`): d_k, its
standard error se_k, the information I_k = 1 / se_k^2, Z_k = d_k / se_k.

The joint law. Within a stratum, the users of look j are a uniform subsample without
replacement of those of look k >= j (given the counts, :mod:`.waves`), so E[ybar_hj |
sample of look k] = ybar_hk and Cov(ybar_hj, ybar_hk) = Var(ybar_hk) = (1/n_hk - 1/N_h)
S_h^2, the finite-population correction included. Summed over the strata with weights
(N_h / U)^2, Cov(d_j, d_k) = Var(d_k): Corr(Z_j, Z_k) = (I_j / I_k)^(1/2), the canonical
joint law of group-sequential tests (Jennison and Turnbull 2000, section 3.1; normal
in the limit by the central limit theorem for sampling without replacement). The ratios
I_j / I_k are taken from one variance estimate, the latest: V_k = sum_h (N_h / U)^2
(1/n_hk - 1/N_h) s_h^2 with every look's counts and the current floored spreads s_h^2
(:func:`stratum_variances`), so that they decrease with the counts as the true ones do.

The boundaries. Lan and DeMets' error spending (Hwang, Shih and DeCani's by default,
O'Brien-Fleming's or Pocock's type; :mod:`.boundaries`) at
t_k = n_k / n_max, the share of the budget's users ranked by look k, planned before any
exact rank is seen (:func:`.wave_totals`); the look at the budget (t = 1) spends what is
left. Not the information fraction I_k / I_max: with the finite-population correction,
a budget that ranks every user of the strata where the metric varies predicts V_max
near 0, t_k near 0 at every look before the last, and nothing would be spent early. Any
t fixed in advance that reaches 1 at the last look keeps the error at alpha (Lan and
DeMets 1983; Jennison and Turnbull, ch. 7, on spending by a share of the
maximum sample); the joint law still uses the information ratios.

The intervals. d_k +- c_k se_k, a repeated confidence interval (Jennison and Turnbull,
ch. 9): P(every look's interval covers the true difference) = P(|Z_k - theta
I_k^(1/2)| < c_k for every k) >= 1 - alpha, so the interval at whatever look the pair
stops covers with probability at least 1 - alpha, however the stopping depended on the
data. The pair stops at the first look with |Z_k| >= c_k, i.e. whose interval excludes
0; the verdict is read from the interval (:func:`.interval_verdict`): they never
contradict.

Several pairs (P of them, every pair of k models; ``family``):

* ``"holm"``: the graphical approach of Maurer and Bretz ("Multiple testing in group
  sequential trials using graphical approaches", Statistics in Biopharmaceutical
  Research 5, 2013; Tamhane, Mehta and Liu, Biometrics 66, 2010) with Holm's graph: at
  each look every pair not decided is tested at alpha / J, J the pairs not decided so
  far; a decided pair's error goes to the others, whose boundaries are recomputed at the
  larger error at the same information and fractions (:func:`next_look`), and the look
  is tested again until it decides no more. It is the shortcut of a closed test whose
  intersection of hypotheses H_J is tested by Bonferroni's split of alpha over J, each
  share by its own group-sequential test, so under "no difference" in any set of pairs
  the probability that one of them is decided is at most alpha, under any dependence
  between the pairs. A decided pair's sign is that of its estimate; as with Holm's
  fixed test (:mod:`.family`), the control of wrong signs among unequal pairs is
  measured by simulation, not proven. Each pair's interval is its repeated interval at
  the error it was last tested at: it excludes 0 exactly when the pair is decided (the
  verdict and the interval agree). It is narrower than Bonferroni's at alpha / P and
  its error grew with the data, so no confidence is promised for it alone, and the
  intervals are not simultaneous (Strassburger and Bretz, Statist. Med. 27, 2008, on
  intervals compatible with Holm's test); ``tests/test_sequential.py`` measures their
  coverage.
* ``"bonferroni"``: every pair at alpha / P: the P sequences of intervals cover together
  with probability at least 1 - alpha, under any dependence, and then every verdict is
  right, signs included; fewer pairs are decided, later.

A pair leaves once decided or once its error is spent (the budget reached).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numpy.typing import ArrayLike

from ..laws import WITH_REPLACEMENT
from ..metrics import metric_by_name
from .boundaries import Crossing, next_boundary, spent
from .defaults import DECISION_DEFAULTS
from .design import Design
from .estimate import difference_variance, estimate_difference
from .family import FAMILY_METHODS
from .proxy import Proxy
from .verdict import Verdict, exact_verdict, interval_verdict
from .waves import Waves, grow

__all__ = [
    "Look",
    "allocation_spreads",
    "family_looks",
    "next_look",
    "next_wave",
    "pair_looks",
    "stratum_variances",
]


@dataclass(frozen=True)
class Look:
    """One pair at one look: the estimate d_k of A - B and its standard error, the
    information fraction t_k, the boundary c_k (inf: the look could not stop), the
    repeated confidence interval d_k +- c_k se_k (cut to [-1, 1]), the users ranked.

    ``variances``: s_h^2 per stratum seen so far and ``variance`` V_k, for the next
    wave's allocation (:func:`allocation_spreads`); ``counts`` (n_h) and ``crossing``
    (the boundaries' state and n_h at the look it is of) and ``alpha`` (the error they
    spend), for the next look (``resume`` of :func:`pair_looks`).

    Examples
    --------
    >>> k = Look(1, 100, 0.02, 0.005, 0.2, 3.5, 0.0025, 0.0375, np.zeros(1), 2.5e-5)
    >>> k.verdict, k.done
    (<Verdict.FIRST: 'A better'>, True)
    """

    wave: int
    n_chosen: int
    value: float
    standard_error: float
    fraction: float
    boundary: float
    low: float
    high: float
    variances: np.ndarray
    variance: float
    counts: np.ndarray | None = None
    crossing: Crossing | None = None
    alpha: float = math.nan

    @property
    def verdict(self) -> Verdict:
        if self.standard_error == 0:
            return exact_verdict(self.value)
        return interval_verdict(self.low, self.high)

    @property
    def done(self) -> bool:
        """Decided, or nothing is left to learn (exact) or to spend (t = 1)."""
        return self.verdict.decided or self.standard_error == 0 or self.fraction >= 1


def stratum_variances(design: Design, residual: ArrayLike, floor: ArrayLike) -> np.ndarray:
    """s_h^2 of each stratum: the sample variance of the chosen users' residuals, at least
    their mean predicted variance (the floor of :mod:`.estimate`); 0 where fewer than two.

    Examples
    --------
    >>> d = Design(np.array([0, 0, 0, 1]), np.ones(4), np.ones(4, bool), np.array([3, 1]))
    >>> stratum_variances(d, [0.0, 1.0, 2.0, 5.0], [0.5, 0.5, 0.5, 9.0]).tolist()
    [1.0, 9.0]
    """
    stratum = design.stratum[design.users]
    strata = design.stratum_sizes.size
    counts = np.bincount(stratum, minlength=strata)
    r = np.asarray(residual, dtype=float)
    mean = np.bincount(stratum, r, minlength=strata) / np.maximum(counts, 1)
    sample = np.bincount(stratum, (r - mean[stratum]) ** 2, minlength=strata)
    sample = np.where(counts > 1, sample / np.maximum(counts - 1, 1), 0.0)
    floors = np.bincount(stratum, np.asarray(floor, dtype=float), minlength=strata)
    return np.maximum(sample, floors / np.maximum(counts, 1))


def _variance(sizes: np.ndarray, counts: np.ndarray, variances: np.ndarray) -> float:
    """sum_h (N_h / U)^2 (1/n_h - 1/N_h) s_h^2 (Cochran 1977, eq. 5.6); strata with no
    chosen user add nothing (none has variance once wave 1 gave each its floor)."""
    fpc = np.where(counts > 0, 1 / np.maximum(counts, 1) - 1 / np.maximum(sizes, 1), 0.0)
    return float(np.sum((sizes / sizes.sum()) ** 2 * fpc * variances))


def pair_looks(
    waves: Waves,
    exact_ranks: ArrayLike,
    sampled_ranks: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    metric: str,
    *,
    proxies: tuple[Proxy, Proxy],
    alpha: float,
    budget: int,
    law: str = WITH_REPLACEMENT,
    spending: str = DECISION_DEFAULTS["spending"],
    resume: Sequence[Look] = (),
) -> list[Look]:
    """One pair's looks after waves 1, 2, ... until the pair is done (decided, exact, or
    its error spent) or the waves end (the module's method).

    Parameters
    ----------
    waves : Waves
    exact_ranks : array_like
        (2, U): A's and B's exact ranks, read only at the users chosen (nan elsewhere).
    sampled_ranks : array_like of int
        (2, U): A's and B's sampled ranks.
    m, n : int or array_like of int
    metric : str
    proxies : (Proxy, Proxy)
        A's and B's proxies of ``metric`` (:func:`.metric_proxy`).
    alpha : float
        The pair's error, both sides (its share of the family's).
    budget : int
        The most users ranked: the look that reaches it spends all of ``alpha``.
    law : {"binomial", "hypergeometric"}, default "binomial"
    spending : {"obrien-fleming", "hwang-shih-decani", "pocock"}, default "hwang-shih-decani"
        The error spending function (:func:`.boundaries.spent`).
    resume : sequence of Look, optional
        The pair's looks at the earlier waves (this function's answer then): only the
        later waves are looked at.

    Returns
    -------
    list of Look
        The last one is where the pair stands.
    """
    looks = list(resume)
    for k in range(len(looks) + 1, waves.count + 1):
        if looks and looks[-1].done:
            break
        looks.append(next_look(waves, k, exact_ranks, sampled_ranks, m, n, metric,
                               proxies=proxies, alpha=alpha, budget=budget, law=law,
                               spending=spending, history=looks))  # fmt: skip
    return looks


def _replayed(history: Sequence[Look], alpha: float, spending: str) -> Crossing | None:
    """The boundaries' state after ``history``'s looks, recomputed at error ``alpha`` at the
    same information and fractions (Maurer and Bretz 2013: a hypothesis whose level grows
    is tested with the boundaries of the larger level at the same information times)."""
    if not history or history[-1].alpha == alpha:
        return history[-1].crossing if history else None
    state: Crossing | None = None
    for look in history:
        crossing = look.crossing
        if crossing is None or (state is not None and crossing.information <= state.information):
            continue  # no boundary at this look (no new information)
        state = next_boundary(state, crossing.information, spent(look.fraction, alpha, spending))
    return state


def next_look(
    waves: Waves,
    k: int,
    exact_ranks: ArrayLike,
    sampled_ranks: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    metric: str,
    *,
    proxies: tuple[Proxy, Proxy],
    alpha: float,
    budget: int,
    law: str = WITH_REPLACEMENT,
    spending: str = DECISION_DEFAULTS["spending"],
    history: Sequence[Look] = (),
) -> Look:
    """One pair's look after wave ``k`` at error ``alpha``, given its looks at waves
    1..k-1 (``history``; its boundaries recomputed when ``alpha`` changed since); the
    parameters as :func:`pair_looks`."""
    exact = np.asarray(exact_ranks, dtype=float)
    a, b = proxies
    state = _replayed(history, alpha, spending)
    before = history[-1].counts if history else None  # n_h at the boundaries' last look
    design = waves.design(k)
    counts = design.stratum_chosen
    e = estimate_difference(design, exact, sampled_ranks, m, n, metric, law=law,
                            proxy=(a, b))  # fmt: skip
    users = design.users
    ra, rb = _residuals(design, exact, n, metric, a, b)
    floor = difference_variance(design, ra, rb, a, b)[users]
    variances = stratum_variances(design, ra - rb, floor)
    variance = _variance(waves.sizes, counts, variances)
    if e.standard_error == 0 or variance == 0:
        return Look(k, design.n_chosen, e.value, 0.0, 1.0, 0.0, e.value, e.value, variances,
                    0.0, before, state, alpha)  # fmt: skip
    fraction = min(1.0, design.n_chosen / min(budget, design.n_users))
    # I_1 = 1: only the ratios I_j / I_k matter
    information = 1.0 if state is None or before is None else state.information * (
        _variance(waves.sizes, before, variances) / variance)  # fmt: skip
    if state is not None and not information > state.information * (1 + 1e-9):
        c = math.inf  # no new information on this pair: nothing to spend
    else:
        state, before = (
            next_boundary(state, information, spent(fraction, alpha, spending)),
            counts,
        )
        c = state.boundary
    half = c * e.standard_error
    low, high = max(e.value - half, -1.0), min(e.value + half, 1.0)
    return Look(k, design.n_chosen, e.value, e.standard_error, fraction, c, low, high,
                variances, variance, before, state, alpha)  # fmt: skip


def _residuals(
    design: Design, exact: np.ndarray, n: ArrayLike, metric: str, a: Proxy, b: Proxy
) -> tuple[np.ndarray, np.ndarray]:
    """y - g of A and of B at the chosen users (in the order of the users)."""
    users = design.users
    n_u = np.broadcast_to(np.asarray(n), (design.n_users,))[users]
    fn = metric_by_name(metric)
    ya = np.asarray(fn(exact[0, users], n_u), dtype=float)
    yb = np.asarray(fn(exact[1, users], n_u), dtype=float)
    return ya - a.mean[users], yb - b.mean[users]


def allocation_spreads(looks: Sequence[Look], strata: int) -> np.ndarray:
    """sigma_h for the next wave: (sum_p s_hp^2 / V_p)^(1/2) over the pairs p not done,
    Neyman's allocation of sum_p V_p(n) / V_p, each pair's variance relative to where it
    stands (the pairs furthest from a verdict weigh alike); 1 when every pair is done.

    Examples
    --------
    >>> k = Look(1, 10, 0.0, 0.1, 0.2, 3.0, -0.3, 0.3, np.array([0.04, 0.01]), 0.01)
    >>> allocation_spreads([k, k], 2).tolist()
    [2.8284271247461903, 1.4142135623730951]
    """
    total = np.zeros(strata)
    for look in looks:
        if not look.done:
            total += look.variances / look.variance
    return np.sqrt(total) if total.any() else np.ones(strata)


def family_looks(
    waves: Waves,
    exact_ranks: ArrayLike,
    sampled_ranks: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    metric: str,
    *,
    proxies: Sequence[Proxy],
    alpha: float,
    budget: int,
    law: str = WITH_REPLACEMENT,
    spending: str = DECISION_DEFAULTS["spending"],
    family: str = DECISION_DEFAULTS["family"],
    resume: dict[tuple[int, int], list[Look]] | None = None,
) -> dict[tuple[int, int], list[Look]]:
    """Every pair's looks, the P = k(k - 1)/2 pairs of the k models at the family's error
    ``alpha`` (the module's docstring): Bonferroni's alpha / P for every pair, or Holm's
    recycling, alpha / (the pairs not decided) at each look, the decided pairs' error passed
    on within the look until none more is decided.

    Parameters
    ----------
    exact_ranks, sampled_ranks : array_like
        (k, U): every model's ranks.
    proxies : sequence of Proxy
        Every model's proxy of ``metric``.
    family : {"holm", "bonferroni"}, default "holm"
    resume : dict, optional
        This function's answer at the earlier waves.
    Other parameters as :func:`pair_looks`.

    Returns
    -------
    dict
        (i, j) -> the looks of model i against model j, i < j.
    """
    if family not in FAMILY_METHODS:
        raise ValueError(f"family must be one of {FAMILY_METHODS}, got {family!r}")
    exact = np.asarray(exact_ranks, dtype=float)
    sampled = np.asarray(sampled_ranks)
    pairs = list(combinations(range(exact.shape[0]), 2))
    looks = {pair: list((resume or {}).get(pair, ())) for pair in pairs}
    for k in range(min(len(pair) for pair in looks.values()) + 1, waves.count + 1):
        going_on = [
            p for p in pairs if len(looks[p]) == k - 1 and not (looks[p] and looks[p][-1].done)
        ]
        new: dict[tuple[int, int], Look] = {}
        while True:
            decided = sum(pair[-1].verdict.decided for pair in looks.values() if pair) + sum(
                look.verdict.decided for look in new.values()
            )
            level = (
                alpha / len(pairs)
                if family == "bonferroni"
                else alpha / max(len(pairs) - decided, 1)
            )
            judged = {
                (i, j): next_look(waves, k, exact[[i, j]], sampled[[i, j]], m, n, metric,
                                  proxies=(proxies[i], proxies[j]), alpha=level, budget=budget,
                                  law=law, spending=spending, history=looks[i, j])
                for i, j in going_on
                if (i, j) not in new or not new[i, j].verdict.decided
            }  # fmt: skip
            new.update(judged)
            if not any(look.verdict.decided for look in judged.values()) or family == "bonferroni":
                break
        for pair, look in new.items():
            looks[pair].append(look)
    return looks


def next_wave(
    waves: Waves,
    looks: dict[tuple[int, int], list[Look]],
    totals: Sequence[int],
    *,
    floor: int = DECISION_DEFAULTS["floor"],
    seed: int = 0,
) -> Waves | None:
    """The next wave (:func:`.grow` to ``totals[waves.count]`` users, allocated by
    :func:`allocation_spreads` of the pairs not done, drawn with the seed (seed, wave));
    None when every pair is done or the budget, ``totals[-1]``, is spent. The next total
    is the first of ``totals`` above the users ranked (wave 1 may hold more than
    ``totals[0]``, its strata's floors).
    """
    last = [pair[-1] for pair in looks.values()]
    ranked = int(waves.chosen.sum())
    if all(look.done for look in last) or ranked >= totals[-1]:
        return None
    spreads = allocation_spreads(last, waves.sizes.size)
    total = next(t for t in totals if t > ranked)
    return grow(waves, spreads, total, floor=floor,
                seed=np.random.default_rng([seed, waves.count + 1]))  # fmt: skip
