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

# The lambdas of the Chernoff bound on the sum of the users' log-likelihoods: k standard
# deviations are bounded best near lambda = k / sd, about 0.1 to 0.5 at the level.
_CHERNOFF = np.array([0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9])

# The most extreme users a check reports (those of tail probability <= THRESHOLDS[0]).
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
    sampled, m, n : array_like of int
        Sampled ranks s in 1..m + 1, sampled items and ranked-set sizes, broadcast.
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
        raise ValueError(f"exact ranks must have the sampled ranks' shape {shape}: {values.shape}")
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
    exact, sampled : array_like of int
        Exact ranks r (integers) and sampled ranks s in 1..m + 1, one per pair.
    m : int
        Sampled items, one for all pairs.
    n : int or array_like of int
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
    return _tails(*_conditional_laws(exact, sampled, m, n, law, allowed))


def _conditional_laws(
    exact: ArrayLike,
    sampled: ArrayLike,
    m: int,
    n: ArrayLike,
    law: str,
    allowed: ArrayLike | None,
) -> tuple[np.ndarray, np.ndarray]:
    """(log q, log q(s)): each pair's law of the sampled rank given its exact rank (and
    its allowed set), normalised, in log space, and its value at the observed s (-inf
    for a pair outside the support)."""
    s = np.asarray(sampled, dtype=np.int64)
    r = np.asarray(exact, dtype=float)
    n = np.broadcast_to(np.asarray(n, dtype=float), s.shape)
    low, high = exact_rank_bounds(s, m, n.astype(np.int64), law)
    possible = (r >= low) & (r <= high)
    if np.any(possible & (r != np.round(r))):
        raise ValueError("exact ranks must be integers (the 'average' tie policy is not)")
    safe = np.where(possible, r, low).astype(float)  # any rank of the law, then t = 0
    columns = np.arange(m + 1, dtype=float)[None, :]
    log_law = sampling_law(law).log_pmf(
        (safe - 1.0)[:, None], (n - 1.0)[:, None], m, columns, np.zeros((s.size, 1))
    )
    if allowed is not None:
        log_law = np.where(np.asarray(allowed, dtype=bool), log_law, -np.inf)
    log_law -= log_law.max(axis=1, keepdims=True)  # the mode at 0: no overflow
    log_law -= np.log(np.exp(log_law).sum(axis=1, keepdims=True))
    observed = log_law[np.arange(s.size), s - 1]
    return log_law, np.where(possible, observed, -np.inf)


@dataclass(frozen=True)
class LikelihoodCheck:
    """Whether one model's exact ranks explain its sampled ranks.

    ``users`` were checked; ``extreme`` of them have a tail probability (of their
    sampled rank given their exact rank, :func:`tail_probabilities`) of at most
    ``threshold``, where the truth expects at most ``expected``; ``surprise`` is the
    sum of their -log q_u(s_u) (nats), whose expectation under the truth is
    ``entropy`` (nan when the sum is not tested); ``p_value`` bounds the chance, under
    the truth, that some model of the file looks at least this unlikely (the file is
    ``suspect`` when it is below the level); ``rows`` are the least likely users
    (columns) of tail probability at most 0.1, the least likely first, at most five.
    """

    model: int
    users: int
    extreme: int
    expected: float
    p_value: float
    suspect: bool
    rows: tuple[int, ...]
    threshold: float
    surprise: float
    entropy: float


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

    Each checked user u has a law q_u of its sampled rank given its exact rank r_u:
    p(. | r_u) of eq 15 (binomial) or the hypergeometric law, or that law given the
    user's stratum (below). Two statistics measure how unlikely the sampled ranks are:

    * the counts K_a = #{u : t_u <= a}, a in :data:`THRESHOLDS`, of the tail
      probabilities t_u = P(q_u(S) <= q_u(s_u)), S ~ q_u (:func:`tail_probabilities`):
      under the truth t_u is super-uniform, so K_a is at most Binomial(N, a)
      (stochastically), P(Binomial(N, a) >= K_a) a p-value. Few extremely unlikely
      users (a checkpoint near the right one) or many unlikely ones (another model);
    * the sum of log-likelihoods L = sum_u log q_u(s_u), against Chernoff's bound
      P(L <= l) <= min over lambda in (0, 1) of exp(lambda l) prod_u sum_s
      q_u(s)^(1 - lambda) (exact, for independent users): many users each a little
      unlikely (ranks moved a little, other sampled items).

    A model's p-value is the least of them times the number of statistics and of models
    (Bonferroni): under the truth, the chance that any model of the file is suspect
    (p-value < ``level``) is at most ``level``.

    Which users, which law, and N:

    * without ``strata``, q_u is the plain law and N is every user (U, the columns,
      those not ranked exactly included): the users ranked exactly are a subset of
      all, so their K_a is at most the K_a of everyone, however they were chosen and
      however the models' sampled ranks depend on each other (one shared draw of items).
      The sum is tested only when every user is ranked exactly;
    * with ``strata`` (each user's stratum of the design that chose the users ranked
      exactly, :func:`.design.design_strata`), N is the users ranked exactly and q_u the
      law given the user's stratum: the design drew users uniformly within a stratum,
      so model k's s_u, given r_u, the stratum h_u and the other models' sampled ranks,
      follows p(. | r_u) restricted to {s : the stratum with model k's rank replaced by
      s is h_u}, renormalised. Exact when the models' items are drawn independently;
      with one shared draw of items, measured not to raise false alarms
      (tests/test_consistency.py).

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
    if strata is not None and np.shape(strata) != (ranks.shape[1],):
        raise ValueError(f"strata must be one per user ({ranks.shape[1]}), got {np.shape(strata)}")
    design = {
        "edges": DECISION_DEFAULTS["edges"] if edges is None else edges,
        "cells": DECISION_DEFAULTS["cells"] if cells is None else cells,
    }
    models = ranks.shape[0]
    tails = np.empty((models, users.size))
    observed = np.empty((models, users.size))
    renyi = np.empty((models, users.size, _CHERNOFF.size))
    entropy = np.empty((models, users.size))
    for value in np.unique(m_u[users]):
        group = users[m_u[users] == value]
        where = np.searchsorted(users, group)
        for model in range(models):
            allowed = None
            if strata is not None:
                allowed = _allowed(ranks[:, group], model, int(value), strata, group, design)
            log_law, seen = _conditional_laws(
                exact[model, group], ranks[model, group], int(value), n_u[group], law, allowed
            )
            tails[model, where] = _tails(log_law, seen)
            observed[model, where] = seen
            law_pmf = np.exp(log_law)
            finite = np.where(law_pmf > 0, log_law, 0.0)  # 0 log 0 = 0
            entropy[model, where] = -(law_pmf * finite).sum(axis=1)
            renyi[model, where] = np.log(
                np.exp((1.0 - _CHERNOFF)[None, None, :] * log_law[:, :, None]).sum(axis=1)
            )
    # all users, or users chosen within the given strata independently of their ranks
    summed = strata is not None or users.size == ranks.shape[1]
    reference = users.size if strata is not None else ranks.shape[1]
    return [
        _verdict(
            model,
            users,
            tails[model],
            (observed[model], renyi[model], entropy[model]) if summed else None,
            reference,
            models,
            level,
        )
        for model in range(models)
    ]


def _tails(log_law: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """P(q(S) <= q(s)) under S ~ q, from the normalised log-laws q and log q(s)."""
    law_pmf = np.exp(log_law)
    tail = np.where(log_law <= observed[:, None] + _TIE, law_pmf, 0.0).sum(axis=1)
    return np.where(np.isfinite(observed), np.minimum(tail, 1.0), 0.0)


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
    model: int,
    users: np.ndarray,
    tails: np.ndarray,
    surprise: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    reference: int,
    models: int,
    level: float,
) -> LikelihoodCheck:
    """The Bonferroni p-value over the tests (the counts, the sum) and the models."""
    from scipy import stats  # here only: slow to import, paid by every importer of the package

    counts = [int(np.count_nonzero(tails <= a)) for a in THRESHOLDS]
    p, a, extreme = min(
        (float(stats.binom.sf(k - 1, reference, a)), a, k) for a, k in zip(THRESHOLDS, counts)
    )
    tests = len(THRESHOLDS)
    total, expected_total = np.nan, np.nan
    if surprise is not None:
        observed, renyi, entropy = surprise
        total, expected_total = float(-observed.sum()), float(entropy.sum())
        p = min(p, _surprise_p_value(-total, renyi))
        tests += 1
    p_value = min(1.0, p * tests * models)
    counted = np.flatnonzero(tails <= THRESHOLDS[0])
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
        surprise=total,
        entropy=expected_total,
    )


def _surprise_p_value(log_likelihood: float, renyi: np.ndarray) -> float:
    """Chernoff's bound on P(sum_u log q_u(S_u) <= the observed sum), S_u ~ q_u
    independent: for 0 < lambda < 1, by Markov's inequality on exp(-lambda sum),
    at most exp(lambda c) prod_u sum_s q_u(s)^(1 - lambda) (``renyi``: the logs of
    these sums, one column per lambda of _CHERNOFF); the least over lambda."""
    if not np.isfinite(log_likelihood):
        return 0.0
    bound = _CHERNOFF * log_likelihood + renyi.sum(axis=0)
    return float(np.exp(min(0.0, bound.min())))
