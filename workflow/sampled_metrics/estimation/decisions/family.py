"""Many models at once: the verdicts of all K = k(k-1)/2 pairs with the family-wise
error controlled, and the set of models that may be best.

Each pair j brings an estimate d_j of its difference A - B, a standard error s_j and
the degrees of freedom nu_j of its t quantile (infinite: the normal law): the design's
:func:`.estimate_difference` (Satterthwaite's), or a full ranking's paired test over
users (U - 1; :func:`paired_family`). Its two-sided p-value of "no difference" is
p_j = 2 F_nu(-|d_j| / s_j). A verdict is wrong when it names a model that is not better
(the two are equal, or the other is better); the family-wise error is the probability
of at least one wrong verdict among the K.

Methods (``method``):

* ``"holm"``, Holm's step-down (Holm, "A simple sequentially rejective multiple test
  procedure", Scand. J. Statist. 6, 1979): order the p-values p_(1) <= ... <= p_(K) and
  decide the pairs p_(1), ..., p_(r) for the largest r with p_(i) <= alpha / (K - i + 1)
  for every i <= r; the adjusted p-value is max_{i' <= i} min(1, (K - i' + 1) p_(i')),
  and a pair is decided when it is at most alpha. Under any dependence between the
  pairs it decides no pair of equal models with probability at least 1 - alpha, and
  it decides every pair Bonferroni decides, and often more. A decided pair's sign is
  that of d_j; Holm's control of wrong signs among unequal pairs is proven for
  independent tests (Shaffer, JASA 75, 1980), not for every dependence: the
  simulations of ``tests/test_family.py`` measure it on paired differences over users.
* ``"bonferroni"``: every pair's interval at 1 - alpha / K; by Bonferroni's inequality
  the K intervals cover together with probability at least 1 - alpha under any
  dependence, and then every verdict is right, signs included.

The intervals (``low``, ``high``) are d_j +- t_nu(1 - a / 2) s_j at one level a for
the whole family, cut to ``limits``. Bonferroni's a = alpha / K gives simultaneous
intervals. Holm's a is the level of its last step, alpha / (K - r) (alpha when every
pair is decided): the interval of a pair decided at step i <= r is narrower than at
its step's alpha / (K - i + 1), so it excludes 0, and every pair left undecided has
p_j > alpha / (K - r), so its interval holds 0. The verdict is read from that interval
(:func:`.interval_verdict`), so a verdict and its interval never contradict each other.
Holm's intervals are not simultaneous: each has confidence 1 - a, and what the family
promises about a decided pair is its sign (Strassburger and Bretz, Statist. Med. 27,
2008, on the intervals compatible with Holm's test; measured on paired tests, the
decided signs right and the undecided pairs' intervals covering hold together at the
family's level); simultaneous intervals are Bonferroni's, at the cost of fewer
decisions.

The set that may be best (:func:`may_be_best`): the models that no verdict of the
family says another model beats. A model whose metric is the highest leaves the set
only by a wrong verdict, so every best model is in the set with probability at least
1 - (the family-wise error), at least 1 - alpha where the method controls it. One
family per metric.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .defaults import DECISION_DEFAULTS
from .verdict import EQUAL_WITHIN, Verdict, interval_verdict

__all__ = [
    "FAMILY_METHODS",
    "FamilyVerdicts",
    "adjusted_p_values",
    "family_verdicts",
    "may_be_best",
    "paired_family",
]

FAMILY_METHODS = ("holm", "bonferroni")


@dataclass(frozen=True)
class FamilyVerdicts:
    """The verdicts of a family of K pairs, their intervals and p-values.

    Parameters
    ----------
    method : {"holm", "bonferroni"}
    confidence : float
        1 - alpha: the family-wise level (see the module).
    level : float
        The intervals' confidence, 1 - a (the module).
    difference, standard_error, low, high, p_value, adjusted_p_value : tuple of float
        Per pair, in the order given.
    verdicts : tuple of Verdict
        Per pair, read from its interval.

    Examples
    --------
    >>> f = family_verdicts([0.03, 0.001], [0.005, 0.004])
    >>> f.level, [v.value for v in f.verdicts]
    (0.95, ['A better', 'undecided'])
    """

    method: str
    confidence: float
    level: float
    difference: tuple[float, ...]
    standard_error: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    p_value: tuple[float, ...]
    adjusted_p_value: tuple[float, ...]
    verdicts: tuple[Verdict, ...]

    @property
    def decided(self) -> int:
        """How many pairs the family decides."""
        return sum(v.decided for v in self.verdicts)


def _p_values(difference: np.ndarray, error: np.ndarray, freedom: np.ndarray) -> np.ndarray:
    """Two-sided p-values 2 F_nu(-|d| / s); an exact difference (s = 0) has p = 0, or 1
    when it is 0 within :data:`.EQUAL_WITHIN` (as :func:`.exact_verdict` reads it)."""
    exact = error <= 0
    z = -np.abs(difference) / np.where(exact, 1.0, error)
    tail = special.stdtr(freedom, z)
    p = np.minimum(2 * tail, 1.0)
    return np.where(exact, np.where(np.abs(difference) > EQUAL_WITHIN, 0.0, 1.0), p)


def adjusted_p_values(p_values: ArrayLike, method: str = DECISION_DEFAULTS["family"]) -> np.ndarray:
    """Holm's (1979) step-down adjusted p-values, max_{i' <= i} min(1, (K - i' + 1)
    p_(i')) in the order of the sorted p_(i), or Bonferroni's min(1, K p).

    A pair is decided at family-wise level alpha when its adjusted p-value is at most
    alpha (Wright, "Adjusted P-values for simultaneous inference", Biometrics 48, 1992).

    Parameters
    ----------
    p_values : array_like of float
        The K pairs' p-values, in [0, 1].
    method : {"holm", "bonferroni"}, default "holm"

    Returns
    -------
    numpy.ndarray of float
        (K,), in the order given.

    Examples
    --------
    >>> adjusted_p_values([0.01, 0.04, 0.03, 0.005]).round(4).tolist()
    [0.03, 0.06, 0.06, 0.02]
    >>> adjusted_p_values([0.01, 0.04, 0.03, 0.005], "bonferroni").round(4).tolist()
    [0.04, 0.16, 0.12, 0.02]
    """
    if method not in FAMILY_METHODS:
        raise ValueError(f"method must be one of {FAMILY_METHODS}, got {method!r}")
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1 or np.any(~(p >= 0)) or np.any(p > 1):
        raise ValueError("p_values must be a vector of numbers in [0, 1]")
    k = p.size
    if method == "bonferroni":
        return np.minimum(k * p, 1.0)
    order = np.argsort(p, kind="stable")
    steps = np.minimum((k - np.arange(k)) * p[order], 1.0)
    adjusted = np.empty(k)
    adjusted[order] = np.maximum.accumulate(steps)
    return adjusted


def family_verdicts(
    difference: ArrayLike,
    standard_error: ArrayLike,
    degrees_of_freedom: ArrayLike = math.inf,
    *,
    confidence: float = DECISION_DEFAULTS["confidence"],
    method: str = DECISION_DEFAULTS["family"],
    limits: tuple[float, float] = (-1.0, 1.0),
) -> FamilyVerdicts:
    """The family-wise verdicts of K pairs from their estimates and standard errors
    (the module's methods; Holm 1979, Bonferroni).

    Parameters
    ----------
    difference : array_like of float
        (K,): each pair's estimate of A - B.
    standard_error : array_like of float
        (K,): each estimate's standard error (0: an exact difference).
    degrees_of_freedom : float or array_like of float, default inf
        Of each pair's t quantile: Satterthwaite's of the design
        (:attr:`.Estimate.degrees_of_freedom`), U - 1 of a paired t-test, inf for the
        normal law.
    confidence : float, default 0.95
        1 - alpha, the family-wise level.
    method : {"holm", "bonferroni"}, default "holm"
    limits : (float, float), default (-1, 1)
        The values a difference can take (a paired difference of metrics in [0, 1]): the
        intervals are cut to them.

    Returns
    -------
    FamilyVerdicts

    Raises
    ------
    ValueError
        Naming the argument that is wrong.

    Examples
    --------
    Three pairs: Bonferroni's level 1 - 0.05 / 3 decides the first alone; Holm then
    tests the second at 0.05 / 2, decides it, and the third at 0.05.

    >>> d, s = [0.05, 0.023, 0.01], [0.01, 0.01, 0.01]
    >>> [v.value for v in family_verdicts(d, s, method="bonferroni").verdicts]
    ['A better', 'undecided', 'undecided']
    >>> f = family_verdicts(d, s)
    >>> [v.value for v in f.verdicts], round(f.level, 4)
    (['A better', 'A better', 'undecided'], 0.95)
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    if method not in FAMILY_METHODS:
        raise ValueError(f"method must be one of {FAMILY_METHODS}, got {method!r}")
    d = np.asarray(difference, dtype=float)
    if d.ndim != 1 or d.size == 0 or np.any(~np.isfinite(d)):
        raise ValueError("difference must be a non-empty vector of finite numbers")
    s = np.asarray(standard_error, dtype=float)
    if s.shape != d.shape or np.any(~np.isfinite(s)) or np.any(s < 0):
        raise ValueError(f"standard_error must hold {d.size} finite numbers >= 0")
    nu = np.broadcast_to(np.asarray(degrees_of_freedom, dtype=float), d.shape)
    if np.any(~(nu > 0)):
        raise ValueError("degrees_of_freedom must be positive (inf: the normal law)")
    alpha, k = 1.0 - confidence, d.size
    p = _p_values(d, s, nu)
    adjusted = adjusted_p_values(p, method)
    if method == "bonferroni":
        share = alpha / k
    else:
        steps = int(np.count_nonzero(adjusted <= alpha))
        share = alpha / max(k - steps, 1)
    half = special.stdtrit(nu, 1.0 - share / 2) * s
    low = np.maximum(d - half, limits[0])
    high = np.minimum(d + half, limits[1])
    return FamilyVerdicts(
        method,
        confidence,
        1.0 - share,
        tuple(d.tolist()),
        tuple(s.tolist()),
        tuple(low.tolist()),
        tuple(high.tolist()),
        tuple(p.tolist()),
        tuple(adjusted.tolist()),
        tuple(interval_verdict(a, b) for a, b in zip(low.tolist(), high.tolist())),
    )


def may_be_best(
    models: Sequence[str], pairs: Sequence[tuple[int, int]], verdicts: Sequence[Verdict]
) -> list[str]:
    """The models that no verdict says another beats: every best model is among them
    with probability at least 1 - the family-wise error of ``verdicts`` (the module).

    Parameters
    ----------
    models : sequence of str
    pairs : sequence of (int, int)
        Each verdict's first (A) and second (B) model, as indices into ``models``.
    verdicts : sequence of Verdict

    Returns
    -------
    list of str
        In the order of ``models``.

    Examples
    --------
    >>> pairs = [(0, 1), (0, 2), (1, 2)]
    >>> may_be_best(["X", "Y", "Pop"], pairs, [Verdict.UNDECIDED, Verdict.FIRST, Verdict.FIRST])
    ['X', 'Y']
    """
    if len(pairs) != len(verdicts):
        raise ValueError(f"pairs ({len(pairs)}) and verdicts ({len(verdicts)}) must match")
    beaten = {b if v is Verdict.FIRST else a for (a, b), v in zip(pairs, verdicts) if v.decided}
    return [model for i, model in enumerate(models) if i not in beaten]


def paired_family(
    values: ArrayLike,
    *,
    confidence: float = DECISION_DEFAULTS["confidence"],
    method: str = DECISION_DEFAULTS["family"],
    distribution: str = "t",
) -> tuple[list[tuple[int, int]], FamilyVerdicts]:
    """A full ranking's family: every pair of k models' paired test over the same U
    users (d_u = M_A,u - M_B,u; mean, sd(d) / sqrt(U), Student's t with U - 1 degrees of
    freedom or the normal law; Student 1908, as ranx's and Elliot's paired t-tests),
    decided with family-wise control (:func:`family_verdicts`).

    Parameters
    ----------
    values : array_like of float
        (k, U): each model's metric of each user, e.g. ``metric_by_name(name)(ranks, n)``.
    confidence : float, default 0.95
    method : {"holm", "bonferroni"}, default "holm"
    distribution : {"t", "normal"}, default "t"

    Returns
    -------
    pairs : list of (int, int)
        The pairs (i, j), i < j, in the order of :func:`itertools.combinations`.
    FamilyVerdicts
        Their verdicts on model i - model j.

    Examples
    --------
    >>> pairs, f = paired_family([[1, 1, 0, 1], [0, 1, 0, 0], [0, 0, 0, 0]])
    >>> pairs, [round(x, 4) for x in f.p_value]
    ([(0, 1), (0, 2), (1, 2)], [0.1817, 0.0577, 0.391])
    """
    if distribution not in ("t", "normal"):
        raise ValueError(f"distribution must be 't' or 'normal', got {distribution!r}")
    y = np.asarray(values, dtype=float)
    if y.ndim != 2 or y.shape[0] < 2 or y.shape[1] < 2 or np.any(~np.isfinite(y)):
        raise ValueError(f"values must be finite with shape (k >= 2, U >= 2), got {y.shape}")
    users = y.shape[1]
    pairs = list(combinations(range(y.shape[0]), 2))
    first, second = (np.array(side) for side in zip(*pairs))
    d = y[first] - y[second]
    error = d.std(axis=1, ddof=1) / math.sqrt(users)
    freedom = users - 1 if distribution == "t" else math.inf
    family = family_verdicts(d.mean(axis=1), error, freedom, confidence=confidence, method=method)
    return pairs, family
