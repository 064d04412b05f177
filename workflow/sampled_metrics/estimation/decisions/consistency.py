"""Do the exact ranks explain the sampled ranks? Checks of phase 2 against phase 1.

A user's sampled rank s in 1..m + 1 is 1 + the number of the m sampled items scored
above the held-out item, its exact rank r in 1..n is 1 + the number of all n - 1 others
scored above it. Given r, s - 1 ~ Binomial(m, (r - 1)/(n - 1)) with replacement (eq 15
of Krichene & Rendle, KDD 2020) and s - 1 ~ Hypergeometric(population n - 1, successes
r - 1, draws m) without (:mod:`..laws`). Two checks follow:

* :func:`exact_rank_bounds`, :func:`first_impossible`: an exact rank outside the support
  of the law cannot have produced the sampled rank (an error in the inputs, surely);
* :func:`likelihood_check`: exact ranks under which the sampled ranks are far less
  likely than they should be (another model's or checkpoint's exact ranks, other
  sampled items, swapped columns), a test of level ``level`` for each file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ..laws import sampling_law
from .defaults import DECISION_DEFAULTS
from .design import design_strata
from .proxy import model_ranks

__all__ = [
    "LEVEL",
    "THRESHOLDS",
    "Impossible",
    "LikelihoodCheck",
    "exact_rank_bounds",
    "first_impossible",
    "likelihood_check",
    "tail_probabilities",
]

# The chance, under the truth, that a file of exact ranks is called suspect: low, since a
# suspect file stops the command (an option goes on).
LEVEL = 1e-6

# A user is extreme at a when its tail probability is at most a. Several a: a wrong file
# shows either many moderately unlikely users (another model's ranks) or a few extremely
# unlikely ones (a checkpoint close to the right one).
THRESHOLDS = tuple(10.0**-j for j in range(1, 9))

# Sampled ranks whose probabilities differ by less than this relative amount are taken
# as equally likely (rounding in the law), which only makes the tail larger.
_TIE = 1e-9

# The fewest, most extreme users a check reports.
_REPORTED = 5


def exact_rank_bounds(
    sampled: ArrayLike, m: ArrayLike, n: ArrayLike, law: str
) -> tuple[np.ndarray, np.ndarray]:
    """The smallest and largest exact rank that can produce each sampled rank.

    Without replacement, s - 1 ~ Hypergeometric(n - 1, r - 1, m) is positive exactly
    on max(0, m - (n - r)) <= s - 1 <= min(m, r - 1), that is s <= r <= n - m + s - 1.
    With replacement, s - 1 ~ Binomial(m, (r - 1)/(n - 1)) (eq 15) is positive
    everywhere on 0..m when 1 < r < n, and a point mass at s = 1 (r = 1) or at s = m + 1
    (r = n): s = 1 allows r in 1..n - 1, 1 < s < m + 1 allows 2..n - 1, s = m + 1 allows
    2..n. An empty range (low > high: with replacement, n = 2 and 1 < s < m + 1) means
    no exact rank produces s.

    Parameters
    ----------
    sampled : array_like of int
        Sampled ranks s in 1..m + 1.
    m, n : int or array_like of int
        Sampled items (at least 1) and ranked-set size (at least 2), broadcast with
        ``sampled``.
    law : {"binomial", "hypergeometric"}

    Returns
    -------
    low, high : numpy.ndarray of int64
        Of the broadcast shape: p(s | r) > 0 exactly when low <= r <= high.

    Raises
    ------
    ValueError
        If a sampled rank is not an integer in 1..m + 1, or the law is unknown.

    Examples
    --------
    >>> [b.tolist() for b in exact_rank_bounds([1, 3, 11], 10, 100, "hypergeometric")]
    [[1, 3, 11], [90, 92, 100]]
    >>> [b.tolist() for b in exact_rank_bounds([1, 3, 11], 10, 100, "binomial")]
    [[1, 2, 2], [99, 99, 100]]
    """
    replacement = sampling_law(law).replacement
    s, m, n = np.broadcast_arrays(*(np.asarray(x) for x in (sampled, m, n)))
    if np.any(s != np.round(s)) or np.any(s < 1) or np.any(s > m + 1):
        raise ValueError("sampled ranks must be integers in 1..m + 1")
    s, m, n = (np.asarray(x, dtype=np.int64) for x in (s, m, n))
    if not replacement:
        return s.copy(), n - m + s - 1
    return np.where(s == 1, 1, 2), np.where(s == m + 1, n, n - 1)


@dataclass(frozen=True)
class Impossible:
    """An exact rank that cannot have produced its sampled rank: user ``index`` (a
    column of the arrays), ``model`` (a row), both ranks and the exact ranks that could
    (``low``..``high``, empty when low > high)."""

    index: int
    model: int
    sampled: int
    exact: int
    low: int
    high: int


def first_impossible(
    exact: ArrayLike, sampled: ArrayLike, m: ArrayLike, n: ArrayLike, law: str
) -> Impossible | None:
    """The first pair (exact, sampled) outside the support of the law, or None.

    The law is eq 15's binomial (with replacement) or the hypergeometric (without);
    :func:`exact_rank_bounds` gives its support. Users are scanned in order, the models
    of a user in order.

    Parameters
    ----------
    exact : array_like of float
        Exact ranks, shape (n_models, U) or (U,); nan for a user not ranked exactly
        (skipped).
    sampled : array_like of int
        Sampled ranks of the same shape.
    m, n : int or array_like of int
        Scalars or one per user.
    law : {"binomial", "hypergeometric"}

    Returns
    -------
    Impossible or None

    Examples
    --------
    >>> first_impossible([[1, np.nan, 5], [30, 2, 3]], [[1, 4, 6], [2, 1, 1]], 10, 40,
    ...                  "hypergeometric")
    Impossible(index=2, model=0, sampled=6, exact=5, low=6, high=35)
    >>> first_impossible([[1, 2]], [[1, 2]], 10, 40, "binomial") is None
    True
    """
    ranks, m_u, n_u = model_ranks(sampled, m, n, law)
    exact = _exact_array(exact, ranks.shape)
    low, high = exact_rank_bounds(ranks, m_u, n_u, law)
    known = ~np.isnan(exact)
    bad = known & ((exact < low) | (exact > high))
    if not bad.any():
        return None
    model, user = np.nonzero(bad.T)[::-1]
    k, u = int(model[0]), int(user[0])
    return Impossible(u, k, int(ranks[k, u]), int(exact[k, u]), int(low[k, u]), int(high[k, u]))


def _exact_array(exact: ArrayLike, shape: tuple[int, ...]) -> np.ndarray:
    """The exact ranks as floats of the sampled ranks' shape (one model: a row)."""
    values = np.asarray(exact, dtype=float)
    if values.ndim == 1:
        values = values[None, :]
    if values.shape != shape:
        raise ValueError(
            f"exact ranks must have the sampled ranks' shape {shape}, got {values.shape}"
        )
    return values


def tail_probabilities(
    exact: ArrayLike,
    sampled: ArrayLike,
    m: int,
    n: ArrayLike,
    law: str,
    allowed: ArrayLike | None = None,
) -> np.ndarray:
    """Each pair's tail probability t = P(p(S | r) <= p(s | r)), S ~ p(. | r).

    p(s | r) is eq 15's binomial law (with replacement) or the hypergeometric law
    (without) of :mod:`..laws`, restricted to the sampled ranks ``allowed`` and
    renormalised when given. Under the truth (s drawn from that law), t is
    super-uniform: P(t <= a) <= a for every a (the tail of a discrete statistic). A pair
    outside the support has t = 0. Computed in log space, so that a law restricted to
    sampled ranks of probability below the smallest double stays exact.

    Parameters
    ----------
    exact : array_like of int
        Exact ranks r (integers; outside the support: t = 0).
    sampled : array_like of int
        Sampled ranks s in 1..m + 1, of the same length.
    m : int
        Sampled items, one for all pairs.
    n : int or array_like of int
        Ranked-set sizes.
    law : {"binomial", "hypergeometric"}
    allowed : array_like of bool, optional
        Shape (pairs, m + 1): column j says whether s = j + 1 is in the restricted set
        (s itself must be).

    Returns
    -------
    numpy.ndarray
        t in [0, 1], one per pair.

    Examples
    --------
    >>> np.round(tail_probabilities([2, 2, 2], [1, 2, 3], 2, 3, "binomial"), 3).tolist()
    [0.5, 1.0, 0.5]
    >>> tail_probabilities([2], [1], 2, 3, "binomial", allowed=[[True, False, False]]).tolist()
    [1.0]
    """
    s = np.asarray(sampled, dtype=np.int64)
    r = np.asarray(exact, dtype=float)
    n = np.broadcast_to(np.asarray(n, dtype=float), s.shape)
    low, high = exact_rank_bounds(s, m, n.astype(np.int64), law)
    possible = (r >= low) & (r <= high)
    if np.any(possible & (r != np.round(r))):
        raise ValueError("exact ranks must be integers (the 'average' tie policy is not)")
    safe = np.where(possible, r, low).astype(float)  # any rank of the law, then t = 0
    columns = np.arange(m + 1, dtype=float)[None, :]
    log_pmf = sampling_law(law).log_pmf(
        (safe - 1.0)[:, None], (n - 1.0)[:, None], m, columns, np.zeros((s.size, 1))
    )
    if allowed is not None:
        log_pmf = np.where(np.asarray(allowed, dtype=bool), log_pmf, -np.inf)
    log_pmf -= log_pmf.max(axis=1, keepdims=True)  # the mode at 0: no overflow
    observed = log_pmf[np.arange(s.size), s - 1][:, None]
    pmf = np.exp(log_pmf)
    tail = np.where(log_pmf <= observed + _TIE, pmf, 0.0).sum(axis=1) / pmf.sum(axis=1)
    return np.where(possible & np.isfinite(observed[:, 0]), np.minimum(tail, 1.0), 0.0)


@dataclass(frozen=True)
class LikelihoodCheck:
    """Whether one model's exact ranks explain its sampled ranks.

    ``users`` were checked; ``extreme`` of them have a tail probability (of their
    sampled rank given their exact rank, :func:`tail_probabilities`) of at most
    ``threshold``, where the truth expects at most ``expected``; ``p_value`` bounds the
    chance, under the truth, that some model of the file looks at least this extreme
    (a file is ``suspect`` when it is below the level); ``rows`` are the users (columns)
    counted, the least likely first, at most five.
    """

    model: int
    users: int
    extreme: int
    expected: float
    p_value: float
    suspect: bool
    rows: tuple[int, ...]
    threshold: float


def likelihood_check(
    exact: ArrayLike,
    sampled: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    law: str,
    *,
    strata: ArrayLike | None = None,
    edges: Sequence[int] | None = None,
    cells: str | None = None,
    level: float = LEVEL,
) -> list[LikelihoodCheck]:
    """A test, for each model, that its exact ranks explain its sampled ranks.

    Each checked user u has a tail probability t_u = P(p(S | r_u) <= p(s_u | r_u)) under
    S ~ p(. | r_u), the law of eq 15 (binomial) or the hypergeometric law: under the
    truth t_u is super-uniform, so K_a = #{u : t_u <= a} is at most Binomial(N, a)
    (stochastically) for each a of :data:`THRESHOLDS`. A model's p-value is
    min_a P(Binomial(N, a) >= K_a) times the number of thresholds and of models
    (Bonferroni): under the truth, the chance that any model of the file is suspect
    (p-value < ``level``) is at most ``level``.

    Which users, and N:

    * without ``strata``, t_u is of the plain law and N is every user (U, the columns,
      those not ranked exactly included): the users ranked exactly are a subset of
      all, so their K_a is at most the K_a of everyone, however they were chosen and
      however the models' sampled ranks depend on each other (one shared draw of items);
    * with ``strata`` (each user's stratum of the design that chose the users ranked
      exactly, :func:`.design.design_strata`), N is the users ranked exactly and t_u is
      of the law given the user's stratum: the design drew users uniformly within a
      stratum, so model k's s_u, given r_u, the stratum h_u and the other models'
      sampled ranks, follows p(. | r_u) restricted to {s : the stratum with model k's
      rank replaced by s is h_u}. Exact when the models' items are drawn independently;
      with one shared draw, measured not to raise false alarms (tests/test_consistency).

    Parameters
    ----------
    exact : array_like of float
        Exact ranks, shape (n_models, U) or (U,), nan for users not ranked exactly.
    sampled : array_like of int
        Sampled ranks, the same shape: every user of phase 1.
    m, n : int or array_like of int
        Scalars or one per user.
    law : {"binomial", "hypergeometric"}
    strata : array_like of int, optional
        Shape (U,): each user's stratum (-1 allowed for users not ranked exactly).
    edges : sequence of int, optional
    cells : {"min", "joint"}, optional
        The design's strata (:func:`.design.design_strata`); None: the design's
        defaults (:data:`.defaults.DECISION_DEFAULTS`).
    level : float, default 1e-6

    Returns
    -------
    list of LikelihoodCheck
        One per model.

    Raises
    ------
    ValueError
        If shapes do not match, no user is ranked exactly, a user ranked exactly for one
        model is not for another, an exact rank is not an integer, or a stratum is not
        the one the sampled ranks give.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> exact = rng.integers(1, 500, size=(2, 300))
    >>> sampled = 1 + rng.binomial(50, (exact - 1) / 499)
    >>> [c.suspect for c in likelihood_check(exact, sampled, 50, 500, "binomial")]
    [False, False]
    >>> [c.suspect for c in likelihood_check(exact[::-1], sampled, 50, 500, "binomial")]
    [True, True]
    """
    ranks, m_u, n_u = model_ranks(sampled, m, n, law)
    exact = _exact_array(exact, ranks.shape)
    known = ~np.isnan(exact)
    checked = known.any(axis=0)
    if not checked.any():
        raise ValueError("no user is ranked exactly")
    if np.any(known[:, checked] != checked[None, checked]):
        user = int(np.flatnonzero((known != checked[None, :]).any(axis=0))[0])
        raise ValueError(f"user {user} is ranked exactly for some models, not all")
    users = np.flatnonzero(checked)
    design = {
        "edges": DECISION_DEFAULTS["edges"] if edges is None else edges,
        "cells": DECISION_DEFAULTS["cells"] if cells is None else cells,
    }
    tails = np.empty((ranks.shape[0], users.size))
    for value in np.unique(m_u[users]):
        group = users[m_u[users] == value]
        where = np.searchsorted(users, group)
        for model in range(ranks.shape[0]):
            allowed = None
            if strata is not None:
                allowed = _allowed(ranks[:, group], model, int(value), strata, group, design)
            tails[model, where] = tail_probabilities(
                exact[model, group], ranks[model, group], int(value), n_u[group], law, allowed
            )
    reference = users.size if strata is not None else ranks.shape[1]
    return [
        _verdict(model, tails[model], users, reference, ranks.shape[0], level)
        for model in range(ranks.shape[0])
    ]


def _allowed(
    ranks: np.ndarray,
    model: int,
    m: int,
    strata: ArrayLike,
    users: np.ndarray,
    design: dict[str, Any],
) -> np.ndarray:
    """(users, m + 1): whether s = j + 1 in place of this model's sampled rank leaves
    each user in its stratum (a user's own ranks must give its stratum)."""
    stratum = np.asarray(strata)[users]
    own = design_strata(ranks, **design)[0]
    if np.any(own != stratum):
        u = int(users[np.flatnonzero(own != stratum)[0]])
        raise ValueError(
            f"stratum of user {u} is {int(np.asarray(strata)[u])}, but its sampled "
            f"ranks give {int(own[users == u][0])}"
        )
    candidates = np.repeat(ranks[:, :, None], m + 1, axis=2)
    candidates[model] = np.arange(1, m + 2)[None, :]
    flat = candidates.reshape(ranks.shape[0], -1)
    moved = design_strata(flat, **design)[0].reshape(ranks.shape[1], m + 1)
    return moved == stratum[:, None]


def _verdict(
    model: int, tails: np.ndarray, users: np.ndarray, reference: int, models: int, level: float
) -> LikelihoodCheck:
    """The Bonferroni p-value over the thresholds and models, with its counts."""
    counts = [int(np.count_nonzero(tails <= a)) for a in THRESHOLDS]
    p, a, extreme = min(
        (float(stats.binom.sf(k - 1, reference, a)), a, k) for a, k in zip(THRESHOLDS, counts)
    )
    p_value = min(1.0, p * len(THRESHOLDS) * models)
    counted = np.flatnonzero(tails <= a)
    order = counted[np.argsort(tails[counted], kind="stable")][:_REPORTED]
    return LikelihoodCheck(
        model=model,
        users=int(users.size),
        extreme=extreme,
        expected=reference * a,
        p_value=p_value,
        suspect=p_value < level,
        rows=tuple(int(u) for u in users[order]),
        threshold=a,
    )
