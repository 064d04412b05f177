"""Identification intervals: what the sampled ranks say about the exact metric, bias
included (partial identification: sharp bounds over a confidence region).

**The claim.** Fix the users' exact ranks r_u (and n_u, m_u); nothing is assumed about
them. The only randomness is the sampling of each user's negatives, independent across
users. :func:`identification_interval` returns [low, high] with P(low <= M* <= high) >=
the confidence, M* = (1/U) sum_u M(r_u, n_u) the exact metric of these users, whatever
the ranks: the bias of every point estimator is included (and ranks drawn from a
population first change nothing: the guarantee holds for every draw).

**The construction.** Let x be the share of users in each cell of (stratum of n, theta
= (r - 1)/(n - 1)) (below). Per sample size m (a class of U_c users) the statistics T_f
= (1/U_c) sum_u f(r~_u), f the indicators 1[r~ <= k] at ``thresholds`` values of k
(every k when m is smaller, else spread geometrically) and f = (r~ - 1)/m, have
expectations linear in x; so is M*. The **confidence region**: for every statistic,
[lo_f, hi_f] that misses E T_f with probability at most alpha_f, the alpha_f summing to
1 - confidence (Bonferroni). They are Chernoff's bounds in Kullback-Leibler form
(Hoeffding 1963, Theorem 1): a mean of U independent variables in [0, 1] with mean mu
has P(mean >= a) <= exp(-U KL(a || mu)) for a > mu, and the same below. They need
independence only, and the users' r~_u are not identically distributed (each has its
own rank): that rules out a Dvoretzky-Kiefer-Wolfowitz band on the CDF of r~ (i.i.d.
draws from one law), and per-threshold Clopper-Pearson bounds, exact for a binomial
count, can undercover a sum of Bernoulli variables of different probabilities, whose
tail can be the heavier near 0 (p = 2e-4 and 0: P(S >= 1) = 2e-4 > 1 - (1 - 1e-4)^2).
The mean statistic gets m U trials instead of U: given r_u, r~_u - 1 is Binomial(m,
theta_u), or hypergeometric with the same mean and a moment generating function at most
the binomial's (Hoeffding 1963, Theorem 4): +-0.0014 on MovieLens 1M's mean theta at m =
100, where the DKW band gives +-0.018.

The interval is [min, max] of M*(x) over every x >= 0 whose expected statistics lie in
the region: two linear programs (HiGHS). With probability >= confidence every E T_f
lies in its bounds; then the users' own x is feasible, and low <= M* <= high.

**Cells and strata keep the guarantee.** A cell holds several (n, r), so every
coefficient is an interval over what the cell holds and each constraint takes the end
that makes it weaker (the cell's lowest metric value in the minimum, its highest in the
maximum; for E T_f its lowest value against hi_f, its highest against lo_f): the users'
own x stays feasible and its metric between the two objectives whatever the cells;
coarser cells widen the interval, never break it. The extremes are exact:

* cells of theta: one per rank of the largest n, N, while a rank is wider than
  ``resolution`` times its theta, then of relative width ``resolution``; edges a_j /
  (N - 1), a_j integers, so the cell of (n, r) (the largest j with a_j (n - 1) <= (r -
  1)(N - 1)) is exact. ``resolution=0``: a cell per rank of N, and with one n every
  coefficient is exact. A metric's extremes are at the cell's largest and smallest rank
  of each n (the metrics are non-increasing in r; another is refused);
* with replacement, P(r~ <= k | theta) = P(Binomial(m, theta) <= k - 1) decreases in
  theta: extremes at the cell's smallest and largest theta. E[(r~ - 1)/m] = theta;
* without replacement, r~ - 1 ~ Hypergeometric(population n - 1, successes r - 1, m) is
  stochastically increasing in the successes and decreasing in the population, so over
  a cell's (n, r) with n within a factor 1 + ``resolution`` of each other P(r~ <= k)
  lies between its values at (most successes, smallest population) and (fewest
  successes, largest population). Exact with one n; rigorous with several (not eq 15's
  binomial approximation), wider by about ``resolution`` in theta.

**Strata**: the users of each m cut into ``strata`` groups of neighbouring n with about
equal numbers of users; each stratum's cells sum to its known share. For metrics of r
rather than theta (Recall@10 at theta = 9/3000 holds at n = 3001, not at n = 3701) this
keeps the maximum from placing every user at the smallest n.

Each bound returned is the objective of HiGHS's dual solution made dual feasible, valid
by weak duality whatever the solver's tolerance. If the region contradicts every x
(probability at most 1 - confidence) the interval is the widest the cells allow.

**The difference of two models** (:func:`difference_interval`): [low_X - high_Y, high_X -
low_Y], each at confidence 1 - (1 - confidence)/2: both hold together with probability
>= confidence (Bonferroni) whatever the dependence between the models' sampled ranks.
Conservative: an interval of the difference itself would need the joint law of (r~_X,
r~_Y).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, sparse, special

from ..laws import sampled_rank_pmf, sampling_law
from ..metrics import metric_by_name
from .data import SampledEvaluation

__all__ = [
    "BOUNDS_DEFAULTS",
    "difference_interval",
    "identification_interval",
    "identification_intervals",
]

# strata: groups of neighbouring n per sample size (at most); resolution: the relative
# width of the cells of theta (and of the groups of n of the hypergeometric bounds);
# thresholds: how many k of 1[r~ <= k] per sample size (at most).
BOUNDS_DEFAULTS = {"strata": 8, "resolution": 0.005, "thresholds": 12}


def identification_interval(
    data: SampledEvaluation,
    metric: str,
    confidence: float = 0.95,
    **options: Any,
) -> tuple:
    """The identification interval of the exact metric: the smallest and the largest
    value of (1/U) sum_u M(r_u, n_u) over every set of ranks whose sampled ranks'
    expected statistics lie in their confidence region (see the module).

    Parameters
    ----------
    data : SampledEvaluation
    metric : str
        A name of :func:`sampled_metrics.estimation.metrics.metric_by_name`.
    confidence : float, default 0.95
        The probability, whatever the users' ranks, that the interval covers the exact
        metric of these users.
    **options
        ``strata`` (groups of neighbouring n per sample size, default 8),
        ``resolution`` (relative width of the cells of theta, default 0.005; 0: a cell
        per rank of the largest n; any value keeps the guarantee), ``thresholds`` (at
        most this many k of 1[r~ <= k] per sample size, default 12; every k when m is
        smaller): :data:`BOUNDS_DEFAULTS`.

    Returns
    -------
    (float, float)
        low, high.

    Raises
    ------
    ValueError
        For data that is not a :class:`SampledEvaluation`, an unknown metric or option,
        a metric that increases with the rank, or a confidence outside (0, 1).

    Examples
    --------
    With every other item sampled (m = n - 1, without replacement) the sampled rank is
    the rank, and the interval closes on the exact metric as users are added:

    >>> from sampled_metrics import sampled_evaluation
    >>> round(float(np.mean(1 / np.log2(np.array([1, 2, 3, 5, 8]) + 1))), 3)
    0.567
    >>> for copies in (200, 2000, 20000):
    ...     ranks = np.tile([1, 2, 3, 5, 8], copies)
    ...     data = sampled_evaluation(ranks, m=9, n=10, law="hypergeometric")
    ...     low, high = identification_interval(data, "ndcg@10")
    ...     print(data.n_users, round(low, 3), round(high, 3))
    1000 0.539 0.596
    10000 0.558 0.576
    100000 0.564 0.569
    """
    return identification_intervals(data, [metric], confidence, **options)[metric]


def identification_intervals(
    data: SampledEvaluation, metrics: Iterable[str], confidence: float = 0.95, **options: Any
) -> dict:
    """:func:`identification_interval` of several metrics, one region for all.

    Parameters
    ----------
    data : SampledEvaluation
    metrics : sequence of str
    confidence : float, default 0.95
        Of each interval (not of all of them together).
    **options
        As :func:`identification_interval`.

    Returns
    -------
    dict
        {metric: (low, high)}.

    Examples
    --------
    >>> from sampled_metrics import sampled_evaluation
    >>> data = sampled_evaluation(np.tile([1, 2, 6], 500), m=5, n=6, law="hypergeometric")
    >>> {k: tuple(round(v, 2) for v in b)
    ...  for k, b in identification_intervals(data, ["recall@1", "auc"]).items()}
    {'recall@1': (0.29, 0.37), 'auc': (0.58, 0.62)}
    """
    if not isinstance(data, SampledEvaluation):
        raise ValueError(
            f"data must be a SampledEvaluation (build it with sampled_evaluation), "
            f"got {type(data).__name__}"
        )
    if isinstance(metrics, str):
        metrics = [metrics]
    unknown = set(options) - set(BOUNDS_DEFAULTS)
    if unknown:
        raise ValueError(f"unknown options {sorted(unknown)}; known: {sorted(BOUNDS_DEFAULTS)}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    settings = {**BOUNDS_DEFAULTS, **options}
    functions = {metric: metric_by_name(metric) for metric in metrics}
    resolution, strata, most = (settings[key] for key in ("resolution", "strata", "thresholds"))
    if not (0.0 <= resolution < 1.0 and int(strata) >= 1 and int(most) >= 1):
        raise ValueError(
            f"resolution must lie in [0, 1) (got {resolution!r}), strata and thresholds "
            f"must be at least 1 (got {strata!r}, {most!r})"
        )
    region = _region(data, 1.0 - confidence, float(resolution), int(strata), int(most))
    return {metric: region.bounds(fn) for metric, fn in functions.items()}


def difference_interval(
    first: SampledEvaluation,
    second: SampledEvaluation,
    metric: str,
    confidence: float = 0.95,
    **options: Any,
) -> tuple:
    """An interval of the difference of the exact metrics of two models, first minus
    second: [low_1 - high_2, high_1 - low_2] from their identification intervals, each at
    confidence 1 - (1 - confidence) / 2, which hold together with probability at least
    ``confidence`` (Bonferroni), whatever the ranks and however the two models' sampled
    ranks depend on each other. Conservative: the pairing is not used.

    Parameters
    ----------
    first, second : SampledEvaluation
        The two models' evaluations (usually the same users and sampled items).
    metric : str
    confidence : float, default 0.95
    **options
        As :func:`identification_interval`.

    Returns
    -------
    (float, float)
        low, high.

    Examples
    --------
    >>> from sampled_metrics import sampled_evaluation
    >>> a = sampled_evaluation(np.tile([1, 2, 3], 1000), m=9, n=10, law="hypergeometric")
    >>> b = sampled_evaluation(np.tile([4, 6, 8], 1000), m=9, n=10, law="hypergeometric")
    >>> low, high = difference_interval(a, b, "auc")
    >>> bool(0 < low < 4 / 9 < high)
    True
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence!r}")
    half = 1.0 - (1.0 - confidence) / 2.0
    low_1, high_1 = identification_interval(first, metric, half, **options)
    low_2, high_2 = identification_interval(second, metric, half, **options)
    return low_1 - high_2, high_1 - low_2


@dataclass(frozen=True)
class _Cells:
    """What the cells of one stratum (users of one m and neighbouring n) hold: for each
    of its n (rows) and cell (columns), the ranks r - 1 in [low, high] (empty when low >
    high); and per cell its extreme theta over the stratum's n."""

    m: int
    share: float  # the stratum's users / all users
    klass: int  # its sample-size class
    n: np.ndarray  # its distinct n (a column)
    low: np.ndarray  # (n, cell): the smallest r - 1 the cell holds at that n
    high: np.ndarray  # (n, cell): the largest
    theta: tuple  # (smallest, largest) theta per cell


def _edges(largest: int, resolution: float) -> np.ndarray:
    """The cells' edges a_j / D, D = largest - 1, as the integers a_j: every rank of the
    largest n while a cell of one rank is wider than ``resolution`` times its theta, then
    cells of relative width ``resolution`` (at most); the last cell is theta = 1."""
    denominator = largest - 1
    edges = [0]
    while edges[-1] < denominator:
        edges.append(min(denominator, max(edges[-1] + 1, int(edges[-1] * (1.0 + resolution)))))
    return np.array([*edges, denominator + 1], dtype=np.int64)


def _stratum_cells(m, n_values, share, klass, edges) -> _Cells:
    """The rank range of every (n, cell), in integers: the cell j of r at n is the
    largest j with a_j (n - 1) <= (r - 1) D (the last cell: r = n)."""
    denominator = int(edges[-2])
    n = n_values[:, None].astype(np.int64)
    low = -((-edges[None, :-1] * (n - 1)) // denominator)  # ceil(a_j (n - 1) / D)
    high = -((-edges[None, 1:] * (n - 1)) // denominator) - 1
    high[:, -1] = n[:, 0] - 1
    held = low <= high
    keep = held.any(axis=0)  # cells that hold a rank of some n of the stratum
    low, high, held = low[:, keep], high[:, keep], held[:, keep]
    theta = [np.where(held, low / (n - 1.0), np.inf).min(axis=0)]
    theta.append(np.where(held, high / (n - 1.0), -np.inf).max(axis=0))
    return _Cells(int(m), float(share), int(klass), n, low, high, tuple(theta))


def _strata(data: SampledEvaluation, strata: int, edges: np.ndarray) -> list:
    """The users cut by m (classes), then into at most ``strata`` groups of neighbouring
    n with about equal numbers of users."""
    out = []
    for klass, m in enumerate(np.unique(data.m)):
        values, counts = np.unique(data.n[data.m == m], return_counts=True)
        group = (np.cumsum(counts) - counts) * strata // counts.sum()
        for g in np.unique(group):
            keep = group == g
            share = counts[keep].sum() / data.n_users
            out.append(_stratum_cells(m, values[keep], share, klass, edges))
    return out


def _check_monotone(fn, n_values) -> None:
    """Refuse a metric that is not non-increasing in the rank (checked at every rank of
    the stratum's smallest and largest n): the cells' extremes assume it."""
    for n in {int(n_values.min()), int(n_values.max())}:
        values = fn(np.arange(1.0, n + 1.0), float(n))
        if np.any(np.diff(values) > 1e-12):
            raise ValueError("identification intervals need a metric non-increasing in the rank")


def _thresholds(m: int, most: int) -> np.ndarray:
    """The k of the statistics 1[r~ <= k]: every k in 1..m when m <= ``most``, else
    ``most`` of them spread geometrically (every small k, then ever sparser)."""
    if m <= most:
        return np.arange(1, m + 1)
    points = most
    while True:
        ks = np.unique(np.round(np.geomspace(1, m, points)).astype(np.int64))
        if ks.size >= most:
            return ks
        points += 1


def _coefficients(cells: _Cells, ks: np.ndarray, replacement: bool, resolution: float) -> tuple:
    """(low, high): the extremes over each cell of E[f(r~) | r, n] for f = 1[r~ <= k],
    k in ``ks`` (rows), then the mean (r~ - 1)/m (last row)."""
    m = cells.m
    if replacement:  # Binomial(m, theta): P(r~ <= k) decreases in theta
        low = special.bdtr(ks[:, None] - 1, m, cells.theta[1][None, :])
        high = special.bdtr(ks[:, None] - 1, m, cells.theta[0][None, :])
    else:
        low, high = _hypergeometric_coefficients(cells, ks, resolution)
    low = np.vstack([np.clip(low, 0.0, 1.0), cells.theta[0]])
    high = np.vstack([np.clip(high, 0.0, 1.0), cells.theta[1]])
    return low, high


def _hypergeometric_coefficients(cells: _Cells, ks: np.ndarray, resolution: float) -> tuple:
    """P(r~ <= k) is decreasing in the successes r - 1 and increasing in the population
    n - 1: over the (n, r) of a group of n within 1 + ``resolution`` of each other, it
    lies between its values at (most successes, smallest population) and (fewest
    successes, largest population); the extremes over the groups of the stratum."""
    n = cells.n[:, 0]
    low = np.full((ks.size, cells.low.shape[1]), np.inf)
    high = np.full_like(low, -np.inf)
    start = 0
    while start < n.size:
        stop = start + int(np.searchsorted(n[start:], n[start] * (1.0 + resolution), "right"))
        held = cells.low[start:stop] <= cells.high[start:stop]
        present = held.any(axis=0)
        most = np.where(held, cells.high[start:stop], -1).max(axis=0)[present]
        fewest = np.where(held, cells.low[start:stop], n[stop - 1]).min(axis=0)[present]
        smallest, largest = int(n[start]), int(n[stop - 1])
        tail = sampled_rank_pmf(np.minimum(most, smallest - 1) + 1, smallest, cells.m)
        head = sampled_rank_pmf(fewest + 1, largest, cells.m)
        low[:, present] = np.minimum(low[:, present], np.cumsum(tail, axis=1)[:, ks - 1].T)
        high[:, present] = np.maximum(high[:, present], np.cumsum(head, axis=1)[:, ks - 1].T)
        start = stop
    return low, high


def _kl_bounds(mean: np.ndarray, trials: np.ndarray, level: float) -> tuple:
    """[lo, hi] with trials KL(mean || lo) = trials KL(mean || hi) = log(1/level), lo <=
    mean <= hi: Chernoff's bounds on the mean mu of independent [0, 1] variables, each
    side failing with probability at most ``level``. Bisection, keeping the outer end of
    the bracket (the bounds are never narrower than the exact roots)."""
    target = np.log(1.0 / level) / trials
    a = np.clip(mean, 0.0, 1.0)

    def kl(mu):
        return special.rel_entr(a, mu) + special.rel_entr(1.0 - a, 1.0 - mu)

    out = []
    for low, high, outer in ((np.zeros_like(a), a, 0), (a, np.ones_like(a), 1)):
        bracket = [low.copy(), high.copy()]  # [outside the bound, inside] or reverse
        for _ in range(60):
            middle = (bracket[0] + bracket[1]) / 2.0
            beyond = kl(middle) > target  # the middle is outside the bound
            if outer == 0:
                bracket = [
                    np.where(beyond, middle, bracket[0]),
                    np.where(beyond, bracket[1], middle),
                ]
            else:
                bracket = [
                    np.where(beyond, bracket[0], middle),
                    np.where(beyond, middle, bracket[1]),
                ]
        out.append(bracket[outer])
    return out[0], out[1]


@dataclass(frozen=True)
class _Region:
    """The linear programs' shared parts: A_ub x <= b_ub (the confidence region, relaxed
    over the cells), A_eq x = b_eq (each stratum's share), and the strata."""

    strata: list
    a_ub: Any  # scipy.sparse matrix
    b_ub: np.ndarray
    a_eq: Any
    b_eq: np.ndarray
    upper: np.ndarray  # each column's largest value (its stratum's share)
    slices: list  # each stratum's columns
    statistics: list  # per class: (m, thresholds k, lo, hi), the mean's bounds last

    def bounds(self, fn) -> tuple:
        """(low, high) of the metric ``fn`` over the region."""
        low, high = self.metric_extremes(fn)
        return self._minimum(low), -self._minimum(-high)

    def metric_extremes(self, fn) -> tuple:
        """The metric's smallest and largest value in every column (cell of a stratum):
        at the cell's largest and smallest rank of each n, the metric being
        non-increasing in r."""
        lows, highs = [], []
        for cells in self.strata:
            _check_monotone(fn, cells.n)
            n = np.broadcast_to(cells.n, cells.low.shape).astype(float)
            held = cells.low <= cells.high
            best = fn(np.where(held, cells.low + 1.0, 1.0), n)
            worst = fn(np.where(held, cells.high + 1.0, 1.0), n)
            lows.append(np.where(held, worst, np.inf).min(axis=0))
            highs.append(np.where(held, best, -np.inf).max(axis=0))
        return np.concatenate(lows), np.concatenate(highs)

    def _minimum(self, c: np.ndarray) -> float:
        """A lower bound on min c x over the region: the dual objective of HiGHS's dual
        solution, made feasible (weak duality), or the cells' minimum if the region is
        empty or the solver fails."""
        trivial = sum(
            cells.share * float(c[part].min()) for cells, part in zip(self.strata, self.slices)
        )
        result = optimize.linprog(
            c,
            A_ub=self.a_ub,
            b_ub=self.b_ub,
            A_eq=self.a_eq,
            b_eq=self.b_eq,
            method="highs-ds",
            options={"presolve": False},  # a few rows: presolve costs more than it saves
        )
        if result.status != 0:
            return trivial
        y = np.minimum(result.ineqlin.marginals, 0.0)
        z = result.eqlin.marginals
        reduced = c - self.a_ub.T @ y - self.a_eq.T @ z
        dual = self.b_ub @ y + self.b_eq @ z + np.minimum(reduced, 0.0) @ self.upper
        return max(float(dual), trivial)


def _region(
    data: SampledEvaluation, alpha: float, resolution: float, strata: int, most: int
) -> _Region:
    """The confidence region of every class's statistics, relaxed over the cells."""
    replacement = sampling_law(data.law).replacement
    parts = _strata(data, strata, _edges(int(data.n.max()), resolution))
    sizes = [cells.theta[0].size for cells in parts]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    slices = [slice(a, b) for a, b in zip(starts[:-1], starts[1:])]
    classes = np.unique(data.m)
    rows, b_ub, cols, vals, row_index, statistics = 0, [], [], [], [], []
    for klass, m in enumerate(classes):
        mine = data.m == m
        ranks, users = data.ranks[mine], int(mine.sum())
        ks = _thresholds(int(m), most)
        observed = np.append((ranks[:, None] <= ks[None, :]).mean(axis=0), (ranks - 1).mean() / m)
        trials = np.append(np.full(ks.size, float(users)), float(users) * m)
        level = alpha / classes.size / observed.size / 2.0
        lo, hi = _kl_bounds(observed, trials, level)
        statistics.append((int(m), ks, lo, hi))
        weight = users / data.n_users
        for cells, part in zip(parts, slices):
            if cells.klass != klass:
                continue
            low, high = _coefficients(cells, ks, replacement, resolution)
            columns = np.arange(part.start, part.stop)
            for f in range(observed.size):  # low . x <= w hi and -high . x <= -w lo
                row_index += [
                    np.full(columns.size, rows + 2 * f),
                    np.full(columns.size, rows + 2 * f + 1),
                ]
                cols += [columns, columns]
                vals += [low[f] - 1e-12, -(high[f] + 1e-12)]
        b_ub += [np.column_stack([weight * hi, -weight * lo]).ravel()]
        rows += 2 * observed.size
    a_ub = sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(row_index), np.concatenate(cols))),
        shape=(rows, starts[-1]),
    )
    eq_rows = np.concatenate([np.full(size, i) for i, size in enumerate(sizes)])
    a_eq = sparse.csr_matrix(
        (np.ones(starts[-1]), (eq_rows, np.arange(starts[-1]))), shape=(len(parts), starts[-1])
    )
    b_eq = np.array([cells.share for cells in parts])
    upper = np.concatenate([np.full(size, cells.share) for size, cells in zip(sizes, parts)])
    return _Region(parts, a_ub, np.concatenate(b_ub), a_eq, b_eq, upper, slices, statistics)
