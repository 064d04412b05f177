"""The linear programs of :mod:`.bounds`' identification intervals: the cells of theta
and the strata of n, the coefficients of the statistics over each cell, Chernoff's
bounds on the statistics, and the confidence region relaxed over the cells (see
:mod:`.bounds` for the construction and why it keeps the guarantee).

What n, m and the law fix (the cells, the coefficients, the matrices; each metric's
extremes over the cells) is built once per set of users and shared by every
evaluation of them (:func:`_shape`, cached): only the bounds of the region depend on
the sampled ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import sparse, special

from ..laws import sampled_rank_pmf, sampling_law
from ..metrics import MetricFn, metric_by_name
from .data import SampledEvaluation

__all__ = ["Region", "confidence_region"]


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


def _strata(n: np.ndarray, sizes: np.ndarray, strata: int, edges: np.ndarray) -> list:
    """The users (their n and m, ``sizes``) cut by m (classes), then into at most
    ``strata`` groups of neighbouring n with about equal numbers of users."""
    out = []
    for klass, m in enumerate(np.unique(sizes)):
        values, counts = np.unique(n[sizes == m], return_counts=True)
        group = (np.cumsum(counts) - counts) * strata // counts.sum()
        for g in np.unique(group):
            keep = group == g
            share = counts[keep].sum() / n.size
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
class _Shape:
    """What a region's linear programs share whatever the sampled ranks (they depend on
    n, m and the law alone): the strata, A_ub (the confidence region's rows, relaxed
    over the cells), A_eq x = b_eq (each stratum's share), each column's largest value,
    each stratum's columns, per class its m, thresholds k and share of the users, and
    each named metric's extremes in every column (filled as they are asked for)."""

    strata: list
    a_ub: Any  # scipy.sparse matrix
    a_eq: Any
    b_eq: np.ndarray
    upper: np.ndarray  # each column's largest value (its stratum's share)
    slices: list  # each stratum's columns
    classes: list  # per class: (m, thresholds k, share of the users)
    extremes_of: dict = field(default_factory=dict)  # {metric name: its extremes}

    def extremes(self, metric: str) -> tuple:
        """:meth:`metric_extremes` of a metric by its name, kept for the next evaluation."""
        if metric not in self.extremes_of:
            self.extremes_of[metric] = self.metric_extremes(metric_by_name(metric))
        return self.extremes_of[metric]

    def metric_extremes(self, fn: MetricFn) -> tuple:
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


@dataclass(frozen=True)
class Region:
    """The linear programs of one evaluation: the shared :class:`_Shape`, b_ub (the
    confidence region is A_ub x <= b_ub) and the statistics' bounds it holds."""

    shape: _Shape
    b_ub: np.ndarray
    statistics: list  # per class: (m, thresholds k, lo, hi), the mean's bounds last

    def bounds(self, metric: str) -> tuple:
        """(low, high) of the metric (its name) over the region."""
        low, high = self.shape.extremes(metric)
        return self._minimum(low), -self._minimum(-high)

    def _minimum(self, c: np.ndarray) -> float:
        """A lower bound on min c x over the region: the dual objective of HiGHS's dual
        solution, made feasible (weak duality), or the cells' minimum if the region is
        empty or the solver fails."""
        from scipy import optimize  # here only: slow to import, and few jobs solve

        shape = self.shape
        trivial = sum(
            cells.share * float(c[part].min()) for cells, part in zip(shape.strata, shape.slices)
        )
        result = optimize.linprog(
            c,
            A_ub=shape.a_ub,
            b_ub=self.b_ub,
            A_eq=shape.a_eq,
            b_eq=shape.b_eq,
            method="highs-ds",
            options={"presolve": False},  # a few rows: presolve costs more than it saves
        )
        if result.status != 0:
            return trivial
        y = np.minimum(result.ineqlin.marginals, 0.0)
        z = result.eqlin.marginals
        reduced = c - shape.a_ub.T @ y - shape.a_eq.T @ z
        dual = self.b_ub @ y + shape.b_eq @ z + np.minimum(reduced, 0.0) @ shape.upper
        return max(float(dual), trivial)


def confidence_region(
    data: SampledEvaluation, alpha: float, resolution: float, strata: int, most: int
) -> Region:
    """The confidence region of every class's statistics, relaxed over the cells: the
    shape of these n and m (built once, :func:`_shape`), the bounds of these ranks."""
    shape = _shape(
        data.law, data.n.tobytes(), data.m.tobytes(), data.n.dtype.str, data.m.dtype.str,
        resolution, strata, most,
    )  # fmt: skip
    b_ub, statistics = [], []
    for m, ks, weight in shape.classes:
        ranks = data.ranks[data.m == m]
        observed = np.append((ranks[:, None] <= ks[None, :]).mean(axis=0), (ranks - 1).mean() / m)
        trials = np.append(np.full(ks.size, float(ranks.size)), float(ranks.size) * m)
        level = alpha / len(shape.classes) / observed.size / 2.0
        lo, hi = _kl_bounds(observed, trials, level)
        statistics.append((int(m), ks, lo, hi))
        b_ub.append(np.column_stack([weight * hi, -weight * lo]).ravel())
    return Region(shape, np.concatenate(b_ub), statistics)


@lru_cache(maxsize=4)
def _shape(
    law: str, n_bytes: bytes, m_bytes: bytes, n_type: str, m_type: str, resolution: float,
    strata: int, most: int,
) -> _Shape:  # fmt: skip
    """The region's parts that n, m and the law fix (given as bytes, to be cached: the
    many evaluations of one set of users share them)."""
    n, m = np.frombuffer(n_bytes, dtype=n_type), np.frombuffer(m_bytes, dtype=m_type)
    replacement = sampling_law(law).replacement
    parts = _strata(n, m, strata, _edges(int(n.max()), resolution))
    sizes = [cells.theta[0].size for cells in parts]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    slices = [slice(a, b) for a, b in zip(starts[:-1], starts[1:])]
    values = np.unique(m)
    rows, cols, vals, row_index, classes = 0, [], [], [], []
    for klass, size in enumerate(values):
        ks = _thresholds(int(size), most)
        classes.append((size, ks, float(np.mean(m == size))))
        for cells, part in zip(parts, slices):
            if cells.klass != klass:
                continue
            low, high = _coefficients(cells, ks, replacement, resolution)
            columns = np.arange(part.start, part.stop)
            for f in range(ks.size + 1):  # low . x <= w hi and -high . x <= -w lo
                row_index += [
                    np.full(columns.size, rows + 2 * f),
                    np.full(columns.size, rows + 2 * f + 1),
                ]
                cols += [columns, columns]
                vals += [low[f] - 1e-12, -(high[f] + 1e-12)]
        rows += 2 * (ks.size + 1)
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
    return _Shape(parts, a_ub, a_eq, b_eq, upper, slices, classes)
