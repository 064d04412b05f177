"""Group-sequential boundaries: Lan and DeMets' error spending, computed by recursive
numerical integration.

At looks k = 1..K a statistic Z_k = S_k / I_k^(1/2) is observed, S_k a Brownian motion
on the information scale: under "no difference" Z_k ~ N(0, 1) and Corr(Z_j, Z_k) =
(I_j / I_k)^(1/2) for j <= k, the canonical joint law (Jennison and Turnbull, "Group
Sequential Methods with Applications to Clinical Trials", 2000, section 3.1). A
two-sided symmetric test stops at the first look with |Z_k| >= c_k.

Error spending (Lan and DeMets, Biometrika 70, 1983; Jennison and Turnbull, ch. 7): a
function alpha(t), increasing from alpha(0) = 0 to alpha(1) = alpha, gives the error
that may be spent by information fraction t; c_k is the value at which the probability
under "no difference" of stopping first at look k is alpha(t_k) - alpha(t_(k-1)). The
O'Brien-Fleming type (Lan and DeMets 1983; half of alpha on each side, as R's ldbounds)

    alpha(t) = 2 [2 - 2 Phi(z_(1 - alpha/4) / t^(1/2))]

spends almost nothing early and nearly all of alpha at the end: its last boundary is
close to the fixed sample's. The Pocock type, alpha(t) = alpha ln(1 + (e - 1) t) (Lan and
DeMets 1983), spends more early: far-apart pairs stop sooner, close ones later. In
between, Hwang, Shih and DeCani's family (Statist. Med. 9, 1990),

    alpha(t) = alpha (1 - exp(-gamma t)) / (1 - exp(-gamma)),

is close to O'Brien and Fleming's at gamma = -4 and to Pocock's at gamma = 1; at gamma =
:data:`HSD_GAMMA` it spends a quarter of alpha by half the budget. The
looks' information need not be planned: c_k depends only on I_1..I_k and the spending
so far (:func:`next_boundary`).

The probabilities come from the density of Z_k on the paths not stopped before look k,

    p_1(z) = phi(z),
    p_k(z) = int p_(k-1)(u) phi((z I_k^(1/2) - u I_(k-1)^(1/2)) / D^(1/2)) (I_k / D)^(1/2) du,

D = I_k - I_(k-1), integrated over |u| < c_(k-1) by Simpson's rule on a grid in z
(Jennison and Turnbull, ch. 19; a uniform grid, fine enough for the kernel's
width, instead of their grid tuned to the normal tails). Deterministic, no simulation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from .defaults import DECISION_DEFAULTS

__all__ = [
    "HSD_GAMMA",
    "SPENDING",
    "Crossing",
    "crossing_probabilities",
    "next_boundary",
    "spending_boundaries",
    "spent",
]

SPENDING = ("obrien-fleming", "hwang-shih-decani", "pocock")
# Hwang, Shih and DeCani's gamma: between O'Brien and Fleming's early conservatism (gamma
# about -4) and Pocock's wider last interval (about 1).
HSD_GAMMA = -2.0
# The grid's step in z, and its limit where nothing stops: the density beyond |z| = 9
# under "no difference" is below 1e-18, far below any error spent.
STEP, REACH = 0.05, 9.0
# An error to spend at one look below this is not spent (the boundary is infinite): its
# boundary lies beyond the grid's reach, and spending less keeps the error below alpha.
NEGLIGIBLE = 1e-13


def spent(fraction: float, alpha: float, spending: str = DECISION_DEFAULTS["spending"]) -> float:
    """alpha(t), both sides: of the O'Brien-Fleming type 4 [1 - Phi(z_(1 - alpha/4) /
    t^(1/2))] (half of alpha on each side), of the Pocock type alpha ln(1 + (e - 1) t)
    (Lan and DeMets 1983), of Hwang, Shih and DeCani's alpha (1 - exp(-gamma t)) / (1 -
    exp(-gamma)) at gamma = :data:`HSD_GAMMA` (1990); 0 at t = 0, alpha at t >= 1.

    Examples
    --------
    >>> spent(1.0, 0.05), spent(0.0, 0.05), round(spent(0.5, 0.05, "obrien-fleming"), 6)
    (0.05, 0.0, 0.003051)
    >>> round(spent(0.5, 0.05, "pocock"), 6)
    0.031006
    >>> round(spent(0.5, 0.05, "hwang-shih-decani"), 6)  # 0.05 (1 - e) / (1 - e^2)
    0.013447
    """
    if spending not in SPENDING:
        raise ValueError(f"spending must be one of {SPENDING}, got {spending!r}")
    if fraction <= 0:
        return 0.0
    if fraction >= 1:
        return alpha
    if spending == "pocock":
        return alpha * math.log(1 + (math.e - 1) * fraction)
    if spending == "hwang-shih-decani":
        return alpha * math.expm1(-HSD_GAMMA * fraction) / math.expm1(-HSD_GAMMA)
    z = -special.ndtri(alpha / 4)
    return float(4 * special.ndtr(-z / math.sqrt(fraction)))


@dataclass(frozen=True)
class Crossing:
    """The state after a look: the information I_k, the boundary c_k (inf when the look
    could not stop), the density of Z_k on the paths not stopped yet on a grid with its
    Simpson weights, and the probability of having stopped by look k under "no
    difference"."""

    information: float
    boundary: float
    grid: np.ndarray
    density: np.ndarray
    weights: np.ndarray
    spent: float


def _grid(limit: float, width: float) -> tuple[np.ndarray, np.ndarray]:
    """An odd number of points in [-limit, limit] and Simpson's weights, the step at most
    :data:`STEP` and a sixth of the kernel's width."""
    step = min(STEP, width / 6)
    intervals = 2 * max(1, math.ceil(limit / step))
    grid = np.linspace(-limit, limit, intervals + 1)
    weights = np.ones(intervals + 1)
    weights[1:-1:2], weights[2:-1:2] = 4.0, 2.0
    return grid, weights * (grid[1] - grid[0]) / 3


def _stop_probability(previous: Crossing | None, information: float, c: float) -> float:
    """P(not stopped before, |Z_k| >= c) under "no difference"."""
    if previous is None:
        return float(2 * special.ndtr(-c))
    root, drift = math.sqrt(information), math.sqrt(previous.information) * previous.grid
    width = math.sqrt(information - previous.information)
    tails = special.ndtr((drift - c * root) / width) + special.ndtr((-drift - c * root) / width)
    return float(np.sum(previous.weights * previous.density * tails))


def _state(previous: Crossing | None, information: float, c: float, total: float) -> Crossing:
    """The density of Z_k on |Z_k| < c (the paths going on), by the recursion."""
    if previous is None:
        grid, weights = _grid(min(c, REACH), 1.0)
        density = np.exp(-(grid**2) / 2) / math.sqrt(2 * math.pi)
        return Crossing(information, c, grid, density, weights, total)
    width = math.sqrt((information - previous.information) / information)
    grid, weights = _grid(min(c, REACH), width)
    shift = math.sqrt(previous.information / information) * previous.grid
    kernel = np.exp(-(((grid[:, None] - shift[None, :]) / width) ** 2) / 2)
    density = kernel @ (previous.weights * previous.density) / (width * math.sqrt(2 * math.pi))
    return Crossing(information, c, grid, density, weights, total)


def next_boundary(previous: Crossing | None, information: float, target: float) -> Crossing:
    """The boundary c_k of the next look, at information I_k, such that the probability
    of stopping by look k under "no difference" is ``target`` (alpha(t_k)); infinite
    when what is left to spend, ``target`` less what was spent, is negligible.

    Parameters
    ----------
    previous : Crossing or None
        The state after the previous look (None at the first).
    information : float
        I_k, more than the previous look's.
    target : float
        The error spent by look k in all, at most 1.

    Returns
    -------
    Crossing

    Examples
    --------
    One look spending 0.05 is the fixed sample's two-sided boundary:

    >>> round(next_boundary(None, 1.0, 0.05).boundary, 6)
    1.959964
    """
    from scipy import optimize  # here only: slow to import, and few jobs solve

    before = 0.0 if previous is None else previous.spent
    if previous is not None and not information > previous.information:
        raise ValueError(
            f"information must grow from look to look, got {information} after "
            f"{previous.information}"
        )
    left = target - before
    if left < NEGLIGIBLE:
        return _state(previous, information, math.inf, before)
    if previous is None:
        c = float(-special.ndtri(left / 2))
    else:
        going_on = 1.0 - before
        if left >= going_on:
            c = 0.0
        else:
            c = optimize.brentq(
                lambda x: (
                    math.log(max(_stop_probability(previous, information, x), 1e-300))
                    - math.log(left)
                ),
                0.0,
                REACH + 1.0,
                xtol=1e-10,
            )
    return _state(previous, information, c, before + left)


def spending_boundaries(
    information: Sequence[float],
    fractions: Sequence[float],
    alpha: float,
    spending: str = DECISION_DEFAULTS["spending"],
) -> list[float]:
    """The boundaries c_1..c_K of looks at ``information`` I_k where the error spent
    by look k is alpha(t_k), t_k = ``fractions[k]`` (:func:`spent` of ``spending``).

    Parameters
    ----------
    information : sequence of float
        I_1 < ... < I_K (any scale: only their ratios matter).
    fractions : sequence of float
        t_1..t_K in [0, 1], e.g. I_k / I_K.
    alpha : float
        The error of the whole test, both sides.

    Returns
    -------
    list of float

    Examples
    --------
    >>> [round(c, 3) for c in spending_boundaries([1, 2], [0.5, 1.0], 0.05, "obrien-fleming")]
    [2.963, 1.969]
    """
    state: Crossing | None = None
    bounds = []
    for info, t in zip(information, fractions, strict=True):
        state = next_boundary(state, float(info), spent(float(t), alpha, spending))
        bounds.append(state.boundary)
    return bounds


def crossing_probabilities(
    boundaries: Sequence[float], information: Sequence[float]
) -> list[float]:
    """P(first |Z_k| >= c_k at look k) under "no difference", for given boundaries (e.g.
    Pocock's or O'Brien and Fleming's constants, Jennison and Turnbull, tables 2.1, 2.3).

    Examples
    --------
    >>> [round(p, 4) for p in crossing_probabilities([1.96], [1.0])]
    [0.05]
    """
    state: Crossing | None = None
    probabilities = []
    for c, info in zip(boundaries, information, strict=True):
        p = _stop_probability(state, float(info), float(c))
        state = _state(state, float(info), float(c), (0.0 if state is None else state.spent) + p)
        probabilities.append(p)
    return probabilities
