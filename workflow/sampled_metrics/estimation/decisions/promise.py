"""When a two-phase design can promise its intervals' coverage, and what it says when
it cannot.

The interval of :mod:`.estimate` floors each stratum's variance by the proxy's
prediction, whose prior is learned from the sampled ranks; the sampled ranks cannot see
the exact ranks below their resolution (the identification problem of top-k metrics),
so with few users the prior can predict a small share of a stratum's variance and the
floor cannot see what the chosen users missed. The chosen users must then carry the
interval themselves: Student's t holds for the mean of n values of skewness G1 when n >
25 G1^2 (Cochran 1977, section 2.15), and a 0/1 metric with a hit rate between 0.2 and
0.8, where Neyman's allocation puts its users, has G1^2 <= 2.25: n > 56. The n of a
stratified design is the effective degrees of freedom of its predicted variance
(:func:`predicted_degrees`); :func:`.design.draw_design` ranks every user when it is
below ``DECISION_DEFAULTS["degrees"]`` (56). Measured by
``benchmarks/bench_small_populations.py``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["effective_degrees_of_freedom", "full_note", "predicted_degrees"]


def effective_degrees_of_freedom(parts: ArrayLike, degrees: ArrayLike) -> float:
    """Satterthwaite's degrees of freedom of a sum of variance estimates, part i with
    ``degrees[i]`` of its own: (sum a_i)^2 / sum a_i^2 / d_i; inf where the sum is 0
    (Satterthwaite, Biometrics Bulletin 1946; Cochran 1977, eq. 5.16).

    Parameters
    ----------
    parts : array_like of float
        The variance estimates a_i (those not above 0 add nothing to the spread).
    degrees : array_like of float
        d_i, the degrees of freedom of each.

    Returns
    -------
    float

    Examples
    --------
    One part keeps its own; k equal parts of d add up to k d:

    >>> effective_degrees_of_freedom([0.3], [4]), effective_degrees_of_freedom([1, 1, 1], [4, 4, 4])
    (4.0, 12.0)
    """
    parts = np.asarray(parts, dtype=float)
    degrees = np.asarray(degrees, dtype=float)
    spread = np.sum(parts**2 / degrees, where=parts > 0, initial=0.0)
    return float(np.sum(parts) ** 2 / spread) if spread > 0 else math.inf


def predicted_degrees(sizes: ArrayLike, counts: ArrayLike, spreads: ArrayLike) -> float:
    """The effective degrees of freedom of a design's variance as phase 1 predicts it:
    Satterthwaite's nu of the parts a_h = (N_h / U)^2 (1 - n_h / N_h) sigma_h^2 / n_h,
    each with n_h - 1 (:func:`effective_degrees_of_freedom`), U = sum_h N_h; inf when no
    stratum sampled in part is predicted to vary.

    nu counts the chosen users the interval rests on: strata ranked whole and strata
    predicted not to vary carry none of it (the module says why it must reach 56).

    Examples
    --------
    Two strata of 100 sampled in part, one ranked whole (no part), one not varying:

    >>> predicted_degrees([100, 100, 50, 80], [20, 20, 50, 5], [0.5, 0.5, 0.5, 0.0])
    38.0
    """
    sizes = np.asarray(sizes, dtype=float)
    counts = np.asarray(counts, dtype=float)
    spreads = np.asarray(spreads, dtype=float)
    weight = (sizes / sizes.sum()) ** 2 * (1 - counts / np.maximum(sizes, 1)) * spreads**2
    parts = np.divide(weight, counts, out=np.zeros(sizes.size), where=counts > 0)
    return effective_degrees_of_freedom(parts, np.maximum(counts - 1, 1))


def full_note(users: int, budget: float, unit: str, degrees: float, least: float) -> str:
    """The design's note when every user is ranked: why, and about how many users the
    design asked for needs (``degrees`` grows with the users at a given budget, about
    in proportion, to ``least``).

    Examples
    --------
    >>> full_note(94, 0.5, "users", 20.0, 56)
    "94 users are too few to promise the intervals' coverage with 50% of them ranked exactly: every user is ranked (the design needs about 260 users)"
    """  # noqa: E501
    share = f"{100 * budget:g}% of " + ("them" if unit == "users" else "the scored items")
    needed = float(f"{users * least / degrees:.2g}")
    return (
        f"{users} users are too few to promise the intervals' coverage with {share} ranked "
        f"exactly: every user is ranked (the design needs about {needed:.0f} users)"
    )
