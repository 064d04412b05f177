"""The verdict on a paired difference A - B: the one type and the one rule that the
command line, the design study and the reports read.

Every metric here is higher for a better model, so an interval of A - B that lies
above 0 says A is better, one below 0 says B is; an interval that holds 0 decides
nothing. When the interval covers at confidence 1 - alpha, a verdict is wrong with
probability at most alpha / 2 on each side (a two-sided interval's tails).
"""

from __future__ import annotations

import enum

__all__ = ["EQUAL_WITHIN", "Verdict", "exact_verdict", "interval_verdict"]

# Two exact metrics closer than this are equal (a mean over users of values in [0, 1]
# computed two ways differs by rounding, far below 1e-12, never by a real difference).
EQUAL_WITHIN = 1e-12


class Verdict(enum.StrEnum):
    """Which of two models, A (first) and B (second), a difference A - B says is better.

    The value is the verdict's text about the models named A and B; :meth:`label` names
    them.

    Parameters
    ----------
    value : {"A better", "B better", "undecided"}
        The verdict's text.

    Examples
    --------
    >>> Verdict.FIRST.label("iALS", "Pop"), Verdict.UNDECIDED.label("iALS", "Pop")
    ('iALS better', 'undecided')
    >>> Verdict("B better") is Verdict.SECOND
    True
    """

    FIRST = "A better"
    SECOND = "B better"
    UNDECIDED = "undecided"

    def label(self, first: str, second: str) -> str:
        """The verdict in the models' names: "<first> better", "<second> better" or
        "undecided"."""
        if self is Verdict.FIRST:
            return f"{first} better"
        if self is Verdict.SECOND:
            return f"{second} better"
        return self.value

    @property
    def decided(self) -> bool:
        """Whether the verdict names a better model."""
        return self is not Verdict.UNDECIDED


def interval_verdict(low: float, high: float) -> Verdict:
    """The verdict an interval [low, high] of A - B supports: A when it lies above 0, B
    when below, else undecided; 0 is any value within :data:`EQUAL_WITHIN` of it (so
    that an interval of zero width, every user ranked, gives :func:`exact_verdict`).

    Parameters
    ----------
    low, high : float
        The interval's ends.

    Returns
    -------
    Verdict

    Examples
    --------
    >>> interval_verdict(0.001, 0.02), interval_verdict(-0.03, -0.01)
    (<Verdict.FIRST: 'A better'>, <Verdict.SECOND: 'B better'>)
    >>> interval_verdict(-0.01, 0.01).decided
    False
    """
    if low > EQUAL_WITHIN:
        return Verdict.FIRST
    if high < -EQUAL_WITHIN:
        return Verdict.SECOND
    return Verdict.UNDECIDED


def exact_verdict(difference: float) -> Verdict:
    """The verdict an exact difference A - B gives: the truth a verdict is judged by
    (equal within :data:`EQUAL_WITHIN`: undecided).

    Parameters
    ----------
    difference : float
        The exact difference of the two models' metric, A - B.

    Returns
    -------
    Verdict

    Examples
    --------
    >>> exact_verdict(0.002), exact_verdict(1e-17)
    (<Verdict.FIRST: 'A better'>, <Verdict.UNDECIDED: 'undecided'>)
    """
    if abs(difference) <= EQUAL_WITHIN:
        return Verdict.UNDECIDED
    return Verdict.FIRST if difference > 0 else Verdict.SECOND
