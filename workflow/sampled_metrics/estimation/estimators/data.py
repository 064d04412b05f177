"""The inputs every estimator reads: per user the sampled rank r~_u, the sample size m_u,
the ranked-set size n_u, and the sampling law (checked once by
:func:`sampled_evaluation`); and users grouped by equal values of such columns."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..laws import WITH_REPLACEMENT, sampling_law

__all__ = ["EvaluationError", "SampledEvaluation", "sampled_evaluation"]


class EvaluationError(ValueError):
    """A value :func:`sampled_evaluation` refuses, as data: the user (0-based index),
    the field (``sampled rank``, ``m`` or ``n``), its value and the bound it breaks (the
    clause said after the value); the message says the same in words.

    Parameters
    ----------
    user : int
        The first user (0-based index) whose value is refused.
    field : {"sampled rank", "m", "n"}
    value : object
        The refused value.
    bound : str
        The bound it breaks, as said after the value (", below 1").

    Examples
    --------
    >>> error = EvaluationError(user=2, field="m", value=0, bound=", below 1")
    >>> error.user, error.field, str(error), error.problem
    (2, 'm', 'm of user 2 is 0, below 1', 'm is 0, below 1')
    """

    def __init__(self, *, user: int, field: str, value: object, bound: str) -> None:
        self.user = user
        self.field = field
        self.value = value
        self.bound = bound
        super().__init__(f"{field} of user {user} is {value}{bound}")

    @property
    def problem(self) -> str:
        """The message without the user: the field, its value and the bound."""
        return f"{self.field} is {self.value}{self.bound}"


@dataclass(frozen=True)
class SampledEvaluation:
    """One sampled evaluation: per user the sampled rank, m and n, and the law
    (build it with :func:`sampled_evaluation`, which checks them).

    Parameters
    ----------
    ranks : numpy.ndarray
        r~_u in 1..m_u + 1 (int64).
    m : numpy.ndarray
        Sampled items of each user (int64).
    n : numpy.ndarray
        Ranked-set size of each user, the held-out item included (int64).
    law : str
        ``binomial`` (with replacement) or ``hypergeometric`` (without).

    Examples
    --------
    >>> data = sampled_evaluation([1, 5, 2], m=10, n=100)
    >>> data.take([0, 0, 2]).ranks.tolist()
    [1, 1, 2]
    """

    ranks: np.ndarray  # r~_u in 1..m_u + 1 (int64)
    m: np.ndarray  # sampled items of each user (int64)
    n: np.ndarray  # ranked-set size of each user, the held-out item included (int64)
    law: str  # "binomial" (with replacement) or "hypergeometric" (without)

    @property
    def n_users(self) -> int:
        return int(self.ranks.size)

    def take(self, users: np.ndarray) -> SampledEvaluation:
        """The evaluation restricted to (or resampled as) ``users`` (indices)."""
        return SampledEvaluation(self.ranks[users], self.m[users], self.n[users], self.law)


def sampled_evaluation(
    ranks: ArrayLike, m: ArrayLike, n: ArrayLike, law: str = WITH_REPLACEMENT
) -> SampledEvaluation:
    """Check and bundle the inputs every estimator shares.

    Parameters
    ----------
    ranks : array_like of int
        Each user's sampled rank r~ in 1..m + 1 (1 + the sampled items scored above
        the held-out item).
    m : int or array_like of int
        Sampled items per user (one value for all, or one per user).
    n : int or array_like of int
        Ranked-set size per user: the held-out item and every item it could be
        ranked against (e.g. the catalogue minus the user's training items).
    law : {"binomial", "hypergeometric"}, default "binomial"
        Sampling with or without replacement.

    Returns
    -------
    SampledEvaluation

    Raises
    ------
    EvaluationError
        A ValueError naming the field that does not hold, its first user, its value
        and the bound (as attributes too).
    ValueError
        The ranks are not a non-empty 1-d array.

    Examples
    --------
    >>> data = sampled_evaluation([1, 3, 101], m=100, n=3706)
    >>> data.n_users, data.m.tolist(), data.law
    (3, [100, 100, 100], 'binomial')
    >>> try:
    ...     sampled_evaluation([1, 102], m=100, n=3706)
    ... except ValueError as error:
    ...     print(f"{error}; user {error.user}, field {error.field!r}")
    sampled rank of user 1 is 102, outside 1..m + 1 = 101; user 1, field 'sampled rank'
    """
    replacement = sampling_law(law).replacement
    r = np.asarray(ranks)
    if r.ndim != 1 or r.size == 0:
        raise ValueError(f"sampled ranks must be a non-empty 1-d array, got shape {r.shape}")
    m_u, n_u = (np.broadcast_to(np.asarray(x), r.shape) for x in (m, n))
    for name, values in (("sampled rank", r), ("m", m_u), ("n", n_u)):
        if np.issubdtype(values.dtype, np.integer):
            continue  # integers are finite and whole
        bad = np.flatnonzero(~np.isfinite(values.astype(float)) | (values != np.round(values)))
        if bad.size:
            u = int(bad[0])
            raise EvaluationError(user=u, field=name, value=values[u], bound=", not an integer")
    r, m_u, n_u = (np.asarray(x, dtype=np.int64) for x in (r, m_u, n_u))
    for name, values, low in (("m", m_u, 1), ("n", n_u, 2)):
        bad = np.flatnonzero(values < low)
        if bad.size:
            u = int(bad[0])
            raise EvaluationError(user=u, field=name, value=values[u], bound=f", below {low}")
    bad = np.flatnonzero((r < 1) | (r > m_u + 1))
    if bad.size:
        u = int(bad[0])
        raise EvaluationError(user=u, field="sampled rank", value=r[u],
                              bound=f", outside 1..m + 1 = {m_u[u] + 1}")  # fmt: skip
    if not replacement:
        bad = np.flatnonzero(m_u > n_u - 1)
        if bad.size:
            u = int(bad[0])
            bound = f" > n - 1 = {n_u[u] - 1}: impossible without replacement"
            raise EvaluationError(user=u, field="m", value=m_u[u], bound=bound)
    return SampledEvaluation(r, m_u.copy(), n_u.copy(), law)


def _distinct_rows(*columns):
    """np.unique(..., axis=0) of non-negative integer columns, through one int64 code
    per row (a sort of 1-d codes: much faster than sorting rows; counting the codes
    instead when they span few values, as sampled ranks and sample sizes do)."""
    bases = [int(column.max()) + 1 for column in columns]
    codes, group, counts = _code_counts(_row_codes(columns, bases), bases, inverse=True)
    return _decoded(codes, bases), group.ravel(), counts


def _distinct_rows_of_each(evaluations) -> tuple:
    """(distinct, counts): the distinct rows of the evaluations' columns together, as
    :func:`_distinct_rows` of their concatenation gives them, and how often each
    evaluation has each (len(evaluations), len(distinct)), counted evaluation by
    evaluation: EM's 100 repetitions of 138,493 users are not concatenated and sorted.

    Parameters
    ----------
    evaluations : sequence of tuple of numpy.ndarray
        The columns (non-negative integers) of each evaluation, the same number each.
    """
    bases = [max(int(columns[j].max()) for columns in evaluations) + 1
             for j in range(len(evaluations[0]))]  # fmt: skip
    each = [_code_counts(_row_codes(columns, bases), bases) for columns in evaluations]
    codes = np.unique(np.concatenate([found for found, _ in each]))
    counts = np.zeros((len(each), codes.size), dtype=np.int64)
    for e, (found, count) in enumerate(each):
        counts[e, np.searchsorted(codes, found)] = count
    return _decoded(codes, bases), counts


def _distinct_counts(values: np.ndarray) -> tuple:
    """np.unique(values, return_counts=True) of non-negative integers (by counting when
    they span few values: the users' n of every repetition, the sample sizes)."""
    return _code_counts(np.asarray(values, dtype=np.int64), [int(np.max(values)) + 1])


def _row_codes(columns, bases) -> np.ndarray:
    """One int64 per row: the columns as the digits of a number in the bases given."""
    code = np.zeros(columns[0].size, dtype=np.int64)
    for column, base in zip(columns, bases):
        code = code * base + column
    return code


def _code_counts(code: np.ndarray, bases, inverse: bool = False) -> tuple:
    """(sorted distinct codes, [each code's index among them,] their counts): by
    np.unique, or by counting when the codes span few values."""
    span = int(np.prod(bases, dtype=object))
    if span > max(4 * code.size, 2**16):
        if inverse:
            return np.unique(code, return_inverse=True, return_counts=True)
        return np.unique(code, return_counts=True)
    per_code = np.bincount(code, minlength=span)
    codes = np.flatnonzero(per_code)
    if not inverse:
        return codes, per_code[codes]
    index = np.zeros(span, dtype=np.int64)
    index[codes] = np.arange(codes.size)
    return codes, index[code], per_code[codes]


def _decoded(codes: np.ndarray, bases) -> np.ndarray:
    """The rows of :func:`_row_codes`' codes (their digits, last column first)."""
    distinct = np.empty((codes.size, len(bases)), dtype=np.int64)
    for j in range(len(bases) - 1, -1, -1):
        codes, distinct[:, j] = np.divmod(codes, bases[j])
    return distinct
