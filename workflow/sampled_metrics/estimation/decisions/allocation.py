"""Neyman's allocation of a budget across strata, with a floor and a cap (Cochran,
"Sampling Techniques", 3rd ed., section 5.5): the users of each stratum a design
(:mod:`.design`) ranks exactly."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .defaults import DECISION_DEFAULTS

__all__ = ["allocate"]


def allocate(
    sizes: ArrayLike,
    spreads: ArrayLike,
    total: float,
    *,
    costs: ArrayLike | None = None,
    floor: int = DECISION_DEFAULTS["floor"],
) -> np.ndarray:
    """Neyman's allocation of a budget across strata, with a floor and a cap.

    n_h proportional to N_h sigma_h / sqrt(c_h) minimizes the variance of the
    stratified mean, sum_h (N_h/U)^2 (1 - n_h/N_h) sigma_h^2 / n_h, at a cost sum_h n_h
    c_h = ``total`` (Cochran 1977, section 5.5). Every non-empty stratum gets at least
    min(floor, N_h) users and at most N_h: n_h = clip(t N_h sigma_h / sqrt(c_h), floor,
    N_h) with t that spends the budget (the optimum under these bounds); strata predicted
    not to vary (sigma_h = 0) get the floor, and in proportion to N_h what the others
    cannot take. The shares are rounded to integers by largest remainder (their sum is
    the rounded sum).

    Parameters
    ----------
    sizes : array_like of int
        N_h, the users of each stratum (0 for an empty one).
    spreads : array_like of float
        sigma_h, the predicted standard deviation of the metric in each stratum.
    total : float
        The budget in cost units: users when ``costs`` is None.
    costs : array_like of float, optional
        c_h, the mean cost of ranking a user of stratum h fully; 1 when None.
    floor : int, default 5
        The fewest users chosen in a non-empty stratum (at least 2: a stratum's variance
        needs two).

    Returns
    -------
    numpy.ndarray
        n_h (int64), 0 <= n_h <= N_h.

    Raises
    ------
    ValueError
        If the floor is below 2 or the budget cannot pay for it.

    Examples
    --------
    >>> allocate([100, 100, 1000], [0.5, 0.1, 0.0], 60).tolist()
    [46, 9, 5]
    >>> allocate([10, 100, 0], [5.0, 0.5, 0.0], 50).tolist()  # the first stratum capped
    [10, 40, 0]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    spreads = np.asarray(spreads, dtype=float)
    costs = np.ones(sizes.size) if costs is None else np.asarray(costs, dtype=float)
    if int(floor) != floor or floor < 2:
        raise ValueError(f"floor must be an integer of at least 2, got {floor!r}")
    low, high = np.minimum(floor, sizes).astype(float), sizes.astype(float)
    if np.sum(low * costs) > total * (1 + 1e-12):
        raise ValueError(
            f"budget too small: {floor} users in each of the {np.count_nonzero(sizes)} "
            f"non-empty strata cost {np.sum(low * costs):g}, the budget {total:g}"
        )
    weight = sizes * spreads / np.sqrt(costs)
    shares = _clipped(weight, low, high, costs, total)
    # strata predicted not to vary take what the others cannot: in proportion to N_h
    rest = (weight == 0) & (sizes > 0)
    left = total - np.sum(shares * costs)
    if left > 1e-9 * total and rest.any():
        spent_there = np.sum(low[rest] * costs[rest])
        shares[rest] = _clipped(
            (sizes / np.sqrt(costs))[rest], low[rest], high[rest], costs[rest], left + spent_there
        )
    return _rounded(shares, high)


def _clipped(weight, low, high, costs, total: float) -> np.ndarray:
    """clip(t weight, low, high) with the t at which their cost sum c_h n_h is ``total``
    (or every share at ``high`` when that costs less): the Karush-Kuhn-Tucker solution of
    Neyman's problem with bounds. The cost increases with t, in floating point too (each
    share and the sum of the shares are monotone in t), so the shares are those of the
    smallest double t with cost(t) >= total: found from the piecewise-linear cost's
    root, then bisected among the doubles next to it (:func:`_first_reaching`)."""

    def shares(t):
        return np.minimum(np.maximum(t * weight, low), high)  # np.clip's, without its checks

    def cost(t):
        return np.add.reduce(shares(t) * costs)  # np.sum's, without its dispatch

    top = float(np.max(high / np.where(weight > 0, weight, np.inf), initial=0.0))
    if cost(top) <= total:
        return shares(top)
    return shares(_first_reaching(cost, total, _linear_root(weight, low, high, costs, total), top))


def _linear_root(weight, low, high, costs, total: float) -> float:
    """The t at which sum_h c_h clip(t w_h, l_h, u_h) = total in exact arithmetic: the
    cost is linear between the breakpoints l_h / w_h and u_h / w_h, with slope the sum of
    c_h w_h over the strata clipped at neither bound."""
    free = weight > 0
    enter, leave = low[free] / weight[free], high[free] / weight[free]
    breaks = np.sort(np.concatenate([enter, leave]))
    at = np.minimum(np.maximum(breaks[:, None] * weight, low), high) @ costs
    below = np.flatnonzero(at < total)
    start = float(breaks[below[-1]]) if below.size else 0.0
    spent = float(at[below[-1]]) if below.size else float(np.sum(low * costs))
    inside = np.zeros(weight.size, dtype=bool)
    inside[free] = (enter <= start) & (leave > start)  # the same quotients as the breaks
    slope = float(np.sum(weight[inside] * costs[inside]))
    return start + (total - spent) / slope if slope > 0 else start


def _first_reaching(cost, total: float, guess: float, top: float) -> float:
    """The smallest double t in (0, top] with cost(t) >= total, cost non-decreasing and
    cost(top) >= total, by bisection over the doubles' bit patterns (which order
    non-negative doubles as integers), bracketed by steps doubling away from ``guess``."""
    as_bits = lambda t: int(np.float64(t).view(np.int64))  # noqa: E731
    as_double = lambda bits: float(np.int64(bits).view(np.float64))  # noqa: E731
    high_bits = as_bits(min(max(guess, 0.0), top))
    step = 1
    if cost(as_double(high_bits)) >= total:  # step down until below
        low_bits = max(high_bits - step, 0)
        while low_bits > 0 and cost(as_double(low_bits)) >= total:
            high_bits, step = low_bits, step * 2
            low_bits = max(high_bits - step, 0)
    else:  # step up until reaching
        low_bits, top_bits = high_bits, as_bits(top)
        high_bits = min(low_bits + step, top_bits)
        while cost(as_double(high_bits)) < total:
            low_bits, step = high_bits, step * 2
            high_bits = min(low_bits + step, top_bits)
    while high_bits - low_bits > 1:  # cost(low) < total <= cost(high), or low = 0
        middle = (low_bits + high_bits) // 2
        if cost(as_double(middle)) >= total:
            high_bits = middle
        else:
            low_bits = middle
    return as_double(high_bits)


def _rounded(shares: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Integers summing to round(sum(shares)), each the share rounded down or up
    (largest remainder first), none above ``high``."""
    whole = np.floor(shares + 1e-9)
    extra = int(round(shares.sum() - whole.sum()))
    room = np.flatnonzero(whole < high)
    order = room[np.argsort(-(shares - whole)[room], kind="stable")]
    whole[order[: max(extra, 0)]] += 1
    return whole.astype(np.int64)
