"""Two models compared when every user is ranked exactly: the paired test over users.

With every user ranked exactly (pi_u = 1) the design's interval about these users has
zero width: the exact metric is known. What remains is the question of users like them
(a new draw of users from the same population): the mean of the per-user differences
d_u = M(r_A,u) - M(r_B,u), its standard error sd(d) / sqrt(U), Student's t (or the
normal) interval and the two-sided p-value of the paired t-test, what Elliot's and
ranx's paired tests report (Student 1908; scipy.stats.ttest_rel).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ..metrics import metric_by_name
from .defaults import DECISION_DEFAULTS
from .verdict import Verdict, interval_verdict

__all__ = ["DISTRIBUTIONS", "PairedTest", "paired_test"]

DISTRIBUTIONS = ("t", "normal")


@dataclass(frozen=True)
class PairedTest:
    """The paired comparison A - B over users like these.

    Parameters
    ----------
    difference : float
        The mean over users of d_u = M(r_A,u) - M(r_B,u).
    standard_error : float
        sd(d) / sqrt(U).
    low, high : float
        The interval of the difference.
    p_value : float
        The two-sided p-value of "no difference".
    confidence : float
        The interval's confidence.
    n_users : int
        U.

    Examples
    --------
    >>> PairedTest(0.01, 0.002, 0.006, 0.014, 1e-6, 0.95, 500).verdict
    <Verdict.FIRST: 'A better'>
    """

    difference: float
    standard_error: float
    low: float
    high: float
    p_value: float
    confidence: float
    n_users: int

    @property
    def verdict(self) -> Verdict:
        """Whether the interval lies above 0 (A better), below (B better) or holds it."""
        return interval_verdict(self.low, self.high)


def paired_test(
    exact_ranks: ArrayLike,
    n: ArrayLike,
    metric: str = DECISION_DEFAULTS["metric"],
    *,
    confidence: float = DECISION_DEFAULTS["confidence"],
    distribution: str = "t",
) -> PairedTest:
    """The paired t-test (or z-test) of two models' exact metric over the same users.

    Parameters
    ----------
    exact_ranks : array_like
        (2, U): every user's exact rank r in 1..n_u under A (row 0) and B (row 1).
    n : int or array_like of int
        Ranked-set size, a scalar or one per user.
    metric : str, default "recall@10"
    confidence : float, default 0.95
    distribution : {"t", "normal"}, default "t"
        Student's t with U - 1 degrees of freedom, or the normal law.

    Returns
    -------
    PairedTest
        The mean difference, sd / sqrt(U), the interval, the two-sided p-value (1 when
        every difference is 0, 0 when they are all one non-zero number).

    Raises
    ------
    ValueError
        Naming the argument that is wrong.

    Examples
    --------
    >>> t = paired_test([[1, 1, 20, 3], [20, 1, 20, 30]], n=100, metric="recall@10")
    >>> t.difference, round(t.standard_error, 4), round(t.p_value, 4)
    (0.5, 0.2887, 0.1817)
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if distribution not in DISTRIBUTIONS:
        raise ValueError(f"distribution must be one of {DISTRIBUTIONS}, got {distribution!r}")
    ranks = np.asarray(exact_ranks, dtype=float)
    if ranks.ndim != 2 or ranks.shape[0] != 2 or ranks.shape[1] < 2:
        raise ValueError(f"exact_ranks must have shape (2, n_users >= 2), got {ranks.shape}")
    users = ranks.shape[1]
    if np.ndim(n) not in (0, 1) or np.size(n) not in (1, users):
        raise ValueError(f"n must be a scalar or one value per user ({users})")
    fn = metric_by_name(metric)
    d = np.asarray(fn(ranks[0], n), dtype=float) - np.asarray(fn(ranks[1], n), dtype=float)
    mean = float(d.mean())
    error = float(d.std(ddof=1)) / math.sqrt(users)
    tail = 0.5 + confidence / 2
    if distribution == "t":
        quantile = float(special.stdtrit(users - 1, tail))
    else:
        quantile = float(special.ndtri(tail))
    if error > 0:
        z = abs(mean) / error
        upper = special.stdtr(users - 1, -z) if distribution == "t" else special.ndtr(-z)
        p_value = float(2 * upper)
    else:
        p_value = 1.0 if mean == 0 else 0.0
    half = quantile * error
    return PairedTest(mean, error, mean - half, mean + half, p_value, confidence, users)
