"""Phase 2 of two-phase sampling: which users to rank exactly, with known probabilities.

Strata from every model's sampled rank (:func:`design_strata`), a budget allocated
across them by Neyman's rule n_h proportional to N_h sigma_h / sqrt(c_h) (Cochran,
"Sampling Techniques", 3rd ed., section 5.5; c_h the cost of ranking a user of stratum
h fully) with a floor and a cap (:func:`.allocation.allocate`), sigma_h predicted from
phase 1 alone (:func:`predicted_spread`), then n_h users drawn without replacement in each stratum:
user u of stratum h is chosen with probability pi_u = n_h / N_h (:func:`draw_design`).
A design whose predicted variance rests on too few chosen users cannot promise its
intervals' coverage (:func:`.promise.predicted_degrees`): then every user is ranked, and the
design's ``note`` says why.

The budget is a share of the users (``unit="users"``: sum_u pi_u = round(budget U)) or
of the scored items of ranking every user fully (``unit="items"``: ranking user u costs
n_u scored items, so sum_u pi_u n_u = budget sum_u n_u up to rounding); phase 1's m + 1
scored items per user are spent already and not counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike

from ..laws import WITH_REPLACEMENT
from .allocation import allocate
from .defaults import DECISION_DEFAULTS
from .promise import full_note, predicted_degrees
from .proxy import model_ranks, predicted_spread

__all__ = [
    "CELLS",
    "UNITS",
    "Design",
    "design_from_table",
    "design_on_strata",
    "design_strata",
    "design_table",
    "draw_design",
    "min_strata",
    "rank_bins",
]

# Strata of the smallest sampled rank over the models ("min") or of every model's
# (the cells of their product, "joint").
CELLS = ("min", "joint")
UNITS = ("users", "items")


@dataclass(frozen=True)
class Design:
    """A phase-2 design: each user's stratum and inclusion probability, who was chosen.

    The estimators read only the chosen users' strata and probabilities and every
    stratum's size.

    Parameters
    ----------
    stratum : int64 numpy.ndarray (U,)
        Each user's stratum; -1 where unknown (a design rebuilt from the table of the
        chosen users, :func:`design_from_table`).
    probability : float numpy.ndarray (U,)
        pi_u = n_h / N_h, the user's inclusion probability; nan where unknown.
    chosen : bool numpy.ndarray (U,)
        The users chosen to be ranked exactly.
    stratum_sizes : int numpy.ndarray (H,)
        N_h, the users of each stratum.
    note : str, optional
        In one sentence for the user, why the design is not the one asked for (e.g.
        every user ranked because too few were there to promise the intervals'
        coverage); None when it is.

    Examples
    --------
    >>> d = Design(np.array([0, 0, 1]), np.array([0.5, 0.5, 1.0]),
    ...            np.array([True, False, True]), np.array([2, 1]))
    >>> d.n_users, d.n_chosen, d.stratum_chosen.tolist()
    (3, 2, [1, 1])
    """

    stratum: np.ndarray
    probability: np.ndarray
    chosen: np.ndarray
    stratum_sizes: np.ndarray
    note: str | None = None

    @property
    def n_users(self) -> int:
        return int(self.chosen.size)

    @property
    def n_chosen(self) -> int:
        return int(self.users.size)

    @cached_property
    def users(self) -> np.ndarray:
        """The chosen users' indices, in order: what the estimators index by (a design's
        arrays are not changed once drawn)."""
        return np.flatnonzero(self.chosen)

    @property
    def stratum_chosen(self) -> np.ndarray:
        """n_h, the chosen users of each stratum."""
        chosen = self.stratum[self.users]
        return np.bincount(chosen, minlength=self.stratum_sizes.size)


def design_strata(
    sampled_ranks: ArrayLike,
    *,
    edges: Sequence[int] = DECISION_DEFAULTS["edges"],
    cells: str = DECISION_DEFAULTS["cells"],
) -> tuple[np.ndarray, int]:
    """Each user's stratum from the models' sampled ranks.

    A model's sampled rank falls in bin b when edges[b - 1] < r~ <= edges[b] (bin 0: r~ <=
    edges[0]; the last bin: r~ > edges[-1]). ``"min"``: the stratum is the bin of the
    smallest sampled rank over the models (a user where either model ranks the held-out
    item near the top); ``"joint"``: the cell of every model's bin, (B + 1)^k strata for
    k models and B edges, numbered sum_j b_j (B + 1)^(k - 1 - j) (model 0's bin first).

    Parameters
    ----------
    sampled_ranks : array_like of int
        Shape (n_users,) or (n_models, n_users).
    edges : sequence of int, default (1, 2, 3, 5, 10)
        Increasing upper edges of the bins, positive integers.
    cells : {"min", "joint"}, default "min"

    Returns
    -------
    tuple
        (stratum (U,) int64, number of strata H): strata may be empty.

    Raises
    ------
    ValueError
        If the edges are not increasing positive integers or ``cells`` is unknown.

    Examples
    --------
    >>> s, h = design_strata([[1, 4, 9], [7, 2, 12]], edges=(1, 3))
    >>> s.tolist(), h
    ([0, 1, 2], 3)
    >>> design_strata([[1, 4, 9], [7, 2, 12]], edges=(1, 3), cells="joint")[0].tolist()
    [2, 7, 8]
    """
    bounds = np.asarray(edges)
    if (
        bounds.ndim != 1
        or bounds.size == 0
        or np.any(bounds != np.round(bounds))
        or np.any(bounds < 1)
        or np.any(np.diff(bounds) <= 0)
    ):
        raise ValueError(f"edges must be increasing positive integers, got {edges!r}")
    if cells not in CELLS:
        raise ValueError(f"cells must be one of {CELLS}, got {cells!r}")
    ranks = np.atleast_2d(np.asarray(sampled_ranks))
    width = bounds.size + 1
    if cells == "min":  # the bins rise with the rank: the smallest rank's is the smallest
        return rank_bins(ranks.min(axis=0), bounds).astype(np.int64), width
    bins = rank_bins(ranks, bounds)  # (k, U) in 0..B
    codes = np.zeros(ranks.shape[1], dtype=np.int64)
    for row in bins:
        codes = codes * width + row
    return codes, width ** ranks.shape[0]


def rank_bins(
    sampled_ranks: ArrayLike, edges: ArrayLike = DECISION_DEFAULTS["edges"]
) -> np.ndarray:
    """Each sampled rank's bin of :func:`design_strata`: b when edges[b - 1] < r~ <=
    edges[b]. The bins rise with the rank, so the "min" stratum of several models is
    the smallest of their bins.

    Parameters
    ----------
    sampled_ranks : array_like of int
        Any shape.
    edges : array_like of int, default (1, 2, 3, 5, 10)
        Increasing upper edges of the bins (checked by :func:`design_strata`).

    Returns
    -------
    numpy.ndarray
        The bins, 0..len(edges), in the shape of ``sampled_ranks``.

    Examples
    --------
    >>> rank_bins([[1, 4, 9], [7, 2, 12]], edges=(1, 3)).tolist()
    [[0, 2, 2], [2, 1, 2]]
    """
    return np.searchsorted(np.asarray(edges), sampled_ranks, side="left")


def min_strata(
    bins: np.ndarray, edges: Sequence[int] = DECISION_DEFAULTS["edges"]
) -> tuple[np.ndarray, int]:
    """:func:`design_strata`'s ``"min"`` strata from the models' :func:`rank_bins`
    (k, U): (each user's smallest bin, the number of bins).

    Parameters
    ----------
    bins : numpy.ndarray of int
        (k, U) or (U,): :func:`rank_bins` of the models' sampled ranks.
    edges : sequence of int, default (1, 2, 3, 5, 10)
        The edges the bins were found with.

    Returns
    -------
    tuple
        (stratum (U,) int64, number of strata H).

    Examples
    --------
    >>> ranks = [[1, 4, 9], [7, 2, 12]]
    >>> min_strata(rank_bins(ranks, (1, 3)), (1, 3))[0].tolist(), design_strata(ranks, edges=(1, 3))[0].tolist()
    ([0, 1, 2], [0, 1, 2])
    """  # noqa: E501
    return np.atleast_2d(bins).min(axis=0).astype(np.int64), len(edges) + 1


def _draw(stratum: np.ndarray, counts: np.ndarray, rng) -> np.ndarray:
    """Stratified simple random sampling without replacement: counts[h] users of h."""
    chosen = np.zeros(stratum.size, dtype=bool)
    for h in np.flatnonzero(counts):
        members = np.flatnonzero(stratum == h)
        chosen[rng.choice(members, size=int(counts[h]), replace=False)] = True
    return chosen


def draw_design(
    sampled_ranks: ArrayLike,
    m: ArrayLike,
    n: ArrayLike,
    *,
    budget: float = DECISION_DEFAULTS["budget"],
    unit: str = DECISION_DEFAULTS["unit"],
    metric: str = DECISION_DEFAULTS["metric"],
    edges: Sequence[int] = DECISION_DEFAULTS["edges"],
    cells: str = DECISION_DEFAULTS["cells"],
    floor: int = DECISION_DEFAULTS["floor"],
    law: str = WITH_REPLACEMENT,
    prior: str | ArrayLike = DECISION_DEFAULTS["prior"],
    spread: ArrayLike | None = None,
    degrees: float = DECISION_DEFAULTS["degrees"],
    seed: int | np.random.Generator | None = None,
) -> Design:
    """Choose the users to rank exactly: strata from the sampled ranks of every model,
    Neyman's allocation of the budget, stratified sampling without replacement.

    Parameters
    ----------
    sampled_ranks : array_like of int
        Shape (n_users,) or (n_models, n_users): each model's sampled rank r~ in
        1..m_u + 1 of each user's held-out item.
    m, n : int or array_like of int
        Sampled items and ranked-set size (the held-out item included), scalars or
        one per user.
    budget : float, default 0.1
        The share, in (0, 1], of the users (``unit="users"``) or of the scored items of
        ranking every user fully (``unit="items"``, user u costing n_u).
    unit : {"users", "items"}, default "users"
    metric : str, default "recall@10"
        The metric whose predicted spread allocates the budget (any metric can be
        estimated from the design afterwards; it is only tuned for this one).
    edges : sequence of int, default (1, 2, 3, 5, 10)
        Upper edges of the sampled-rank bins (:func:`design_strata`).
    cells : {"min", "joint"}, default "min"
    floor : int, default 5
        The fewest users chosen in every non-empty stratum.
    law : {"binomial", "hypergeometric"}, default "binomial"
    prior : {"em", "uniform"} or array_like, default "em"
        The prior of the predicted spread (:func:`.proxy.metric_proxy`).
    spread : array_like, optional
        Each user's predicted variance, instead of :func:`.proxy.predicted_spread`'s
        (any function of phase 1).
    degrees : float, default 56
        The fewest effective degrees of freedom of the predicted variance
        (:func:`.promise.predicted_degrees`) for the design to promise its coverage;
        below, every user is ranked (probability 1) and ``note`` says why. 0 draws the
        design asked for whatever it promises.
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    Design
        pi_u = n_h / N_h for every user: sum_u pi_u is the budget's count of users (or
        sum_u pi_u n_u its items) up to rounding; or every user, probability 1, with a
        ``note``.

    Raises
    ------
    ValueError
        Naming the argument: a budget outside (0, 1] or too small for the floors, an
        unknown unit or cells, shapes that do not match, ranks outside 1..m + 1.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> ranks = rng.integers(1, 12, size=(2, 500))
    >>> d = draw_design(ranks, m=10, n=100, budget=0.25, seed=1)
    >>> d.n_chosen, bool(np.isclose(d.probability.sum(), 125)), d.note
    (125, True, None)

    On 200 of these users the chosen would carry too little of the variance:

    >>> small = draw_design(ranks[:, :200], m=10, n=100, budget=0.25, seed=1)
    >>> small.n_chosen, small.note
    (200, "200 users are too few to promise the intervals' coverage with 25% of them ranked exactly: every user is ranked (the design needs about 300 users)")
    """  # noqa: E501
    if not 0.0 < budget <= 1.0:
        raise ValueError(f"budget must lie in (0, 1], got {budget!r}")
    if unit not in UNITS:
        raise ValueError(f"unit must be one of {UNITS}, got {unit!r}")
    ranks, m_u, n_u = model_ranks(sampled_ranks, m, n, law)
    stratum, strata = design_strata(ranks, edges=edges, cells=cells)
    if spread is None:
        spread = predicted_spread(ranks, m_u, n_u, metric, law=law, prior=prior)
    spread = np.asarray(spread, dtype=float)
    if spread.shape != stratum.shape or np.any(~np.isfinite(spread)) or np.any(spread < 0):
        raise ValueError(f"spread must be {stratum.size} finite non-negative numbers")
    return design_on_strata(stratum, strata, spread, budget, unit=unit, n=n_u, floor=floor,
                            degrees=degrees, seed=seed)  # fmt: skip


def design_on_strata(
    stratum: np.ndarray,
    strata: int,
    spread: np.ndarray,
    budget: float,
    *,
    unit: str = DECISION_DEFAULTS["unit"],
    n: np.ndarray | None = None,
    floor: int = DECISION_DEFAULTS["floor"],
    degrees: float = DECISION_DEFAULTS["degrees"],
    seed: int | np.random.Generator | None = None,
) -> Design:
    """:func:`draw_design` from the users' strata (:func:`design_strata`'s) and predicted
    spread, checked already: what a study drawing many designs from the same phase 1
    calls with strata it derives once (the same design, draw for draw).

    Parameters
    ----------
    stratum : numpy.ndarray of int (U,)
    strata : int
    spread : numpy.ndarray of float (U,)
    budget : float
    unit, floor, degrees, seed
        As :func:`draw_design`'s.
    n : numpy.ndarray of int (U,), optional
        The ranked-set sizes: needed when ``unit`` is ``"items"``.

    Returns
    -------
    Design

    Examples
    --------
    >>> ranks = np.random.default_rng(0).integers(1, 12, size=(2, 500))
    >>> stratum, strata = design_strata(ranks)
    >>> d = design_on_strata(stratum, strata, np.full(500, 0.1), 0.25, seed=1)
    >>> e = draw_design(ranks, m=10, n=100, budget=0.25, spread=np.full(500, 0.1), seed=1)
    >>> bool(np.array_equal(d.chosen, e.chosen)), d.n_chosen
    (True, 125)
    """
    sizes = np.bincount(stratum, minlength=strata)
    occupied = np.maximum(sizes, 1)
    sigma = np.sqrt(np.bincount(stratum, spread, minlength=strata) / occupied)
    if unit == "users":
        counts = allocate(sizes, sigma, round(budget * stratum.size), floor=floor)
    else:
        # an empty stratum costs what it is never asked to pay: 1, not 0 (a division)
        if n is None:
            raise ValueError("n, the users' ranked-set sizes, is needed with unit 'items'")
        costs = np.where(sizes > 0, np.bincount(stratum, n, minlength=strata) / occupied, 1.0)
        counts = allocate(sizes, sigma, budget * n.sum(), costs=costs, floor=floor)
    note, nu = None, predicted_degrees(sizes, counts, sigma)
    if nu < degrees:
        counts = sizes
        note = full_note(stratum.size, budget, unit, nu, degrees)
    chosen = _draw(stratum, counts, np.random.default_rng(seed))
    probability = (counts / occupied)[stratum]
    return Design(stratum, probability, chosen, sizes, note)


def design_table(design: Design) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The chosen users as three columns, (user, probability, stratum): what a design
    is rebuilt from (:func:`design_from_table`), e.g. the CLI's ``chosen.csv``.

    Parameters
    ----------
    design : Design

    Returns
    -------
    tuple of numpy.ndarray
        The chosen users (int64), their inclusion probabilities and their strata.

    Examples
    --------
    >>> d = Design(np.array([0, 0, 1]), np.array([0.5, 0.5, 1.0]),
    ...            np.array([True, False, True]), np.array([2, 1]))
    >>> [column.tolist() for column in design_table(d)]
    [[0, 2], [0.5, 1.0], [0, 1]]
    """
    users = np.flatnonzero(design.chosen)
    return users, design.probability[users], design.stratum[users]


def design_from_table(
    users: ArrayLike, probability: ArrayLike, stratum: ArrayLike, n_users: int
) -> Design:
    """Rebuild a design from its chosen users (:func:`design_table`'s columns).

    Each stratum's size is N_h = n_h / pi_h, n_h its chosen users and pi_h their
    common probability; users not in the table get stratum -1 (unknown) and
    probability nan, which no estimator reads.

    Parameters
    ----------
    users : array_like of int
        The chosen users, indices in 0..n_users - 1, each once.
    probability : array_like of float
        Their inclusion probabilities, in (0, 1], equal within a stratum.
    stratum : array_like of int
        Their strata, non-negative integers.
    n_users : int
        U, every user of phase 1.

    Returns
    -------
    Design

    Raises
    ------
    ValueError
        Naming the column that is wrong: a user out of range or twice, a probability
        outside (0, 1] or different within a stratum, n_h / pi_h not an integer.

    Examples
    --------
    >>> d = design_from_table([0, 2], [0.5, 1.0], [0, 1], n_users=3)
    >>> d.stratum_sizes.tolist(), d.stratum.tolist(), d.n_chosen
    ([2, 1], [0, -1, 1], 2)
    """
    users = np.asarray(users)
    probability = np.asarray(probability, dtype=float)
    stratum = np.asarray(stratum)
    if not (users.shape == probability.shape == stratum.shape) or users.ndim != 1:
        raise ValueError("user, probability and stratum must be columns of one length")
    for name, column in (("user", users), ("stratum", stratum)):
        if column.size and (np.any(column != np.round(column)) or np.any(column < 0)):
            raise ValueError(f"{name} must hold non-negative integers")
    users, stratum = users.astype(np.int64), stratum.astype(np.int64)
    if np.any(users >= n_users) or np.unique(users).size != users.size:
        raise ValueError(f"user must hold distinct users in 0..{n_users - 1}")
    if np.any(~(probability > 0)) or np.any(probability > 1):
        raise ValueError("probability must lie in (0, 1]")
    strata = int(stratum.max(initial=-1)) + 1
    chosen_of = np.bincount(stratum, minlength=strata)
    first = np.zeros(strata)
    first[stratum[::-1]] = probability[::-1]
    if np.any(np.abs(probability - first[stratum]) > 1e-12):
        raise ValueError("probability must be the same for every user of a stratum")
    sizes = np.divide(chosen_of, first, out=np.zeros(strata), where=chosen_of > 0)
    whole = np.round(sizes)
    if np.any(np.abs(sizes - whole) > 1e-6 * np.maximum(sizes, 1)) or whole.sum() > n_users:
        raise ValueError(
            "probability must be n_h / N_h, the stratum's chosen users over its size, "
            "written with full precision"
        )
    chosen = np.zeros(n_users, dtype=bool)
    chosen[users] = True
    full_stratum = np.full(n_users, -1, dtype=np.int64)
    full_stratum[users] = stratum
    full_probability = np.full(n_users, np.nan)
    # n_h / N_h again, so that the rebuilt design holds the drawn one's numbers exactly
    full_probability[users] = (chosen_of / np.maximum(whole, 1))[stratum]
    return Design(full_stratum, full_probability, chosen, whole.astype(np.int64))
