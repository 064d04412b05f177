"""The design study's family-wise verdicts: every pair of the models judged together,
one row a seed, method and metric saying whether some verdict among the pairs was
wrong (the family-wise error the issue's goal bounds).

A method whose pairs bring standard errors is judged by Holm's step-down over them
(:func:`.family_verdicts`; a full ranking's paired tests over users are
:func:`.paired_family`'s); a method whose verdicts are already the family's (the
sequential design's Holm recycling) is read as it is.
"""

from __future__ import annotations

import numpy as np

from ...estimation.decisions.batched import exact_verdicts
from ...estimation.decisions.family import family_verdicts
from ...estimation.decisions.verdict import EQUAL_WITHIN, Verdict
from .methods import Estimated

__all__ = ["FAMILY", "covers", "family_row", "outcomes"]

# The name of a family's row (its target is "family").
FAMILY = "all pairs"


def covers(low: np.ndarray, high: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """Whether each interval holds the exact value to rounding (an interval of zero width,
    every user ranked, holds it), 1.0 or 0.0.

    Examples
    --------
    >>> covers(np.array([0.0, 0.1]), np.array([0.2, 0.2]), np.array([0.2, 0.05])).tolist()
    [1.0, 0.0]
    """
    return ((low - EQUAL_WITHIN <= exact) & (exact <= high + EQUAL_WITHIN)).astype(float)


def outcomes(verdict: np.ndarray, exact: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(right, wrong) of each pair's verdict, 1.0 or 0.0: right when it names the model
    whose exact metric is higher, wrong when decided otherwise (the other model, or any
    on equal metrics).

    Examples
    --------
    >>> right, wrong = outcomes(np.array(["A better", "B better", "undecided"], dtype=object),
    ...                         np.array([0.02, 0.0, -0.01]))
    >>> right.tolist(), wrong.tolist()
    ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    """
    truth = exact_verdicts(exact)
    decided = verdict != Verdict.UNDECIDED.value
    right = ((verdict == truth) & (truth != Verdict.UNDECIDED.value)).astype(float)
    wrong = (decided & (verdict != truth)).astype(float)
    return right, wrong


def family_row(
    pairs: Estimated, exact: np.ndarray, confidence: float, *, familywise: bool
) -> dict | None:
    """One seed's family of pairs (``pairs``, their exact differences ``exact``) at the
    family-wise ``confidence``: {column: value} of the study's row, ``wrong`` 1.0 when
    some verdict is wrong, ``covered`` (the verdicts' own family only) 1.0 when every
    pair's interval covers; None when the method's pairs bring neither family-wise
    verdicts nor standard errors.

    Examples
    --------
    Two pairs 3 and 2.5 standard errors from 0, their truth of the same signs: Holm
    decides both, rightly; the second's truth 0 makes its verdict wrong.

    >>> pairs = Estimated(None, None, np.array([0.03, 0.025]), None, np.full(2, 0.01),
    ...                   np.full(2, np.inf))
    >>> family_row(pairs, np.array([0.02, 0.02]), 0.95, familywise=False)["wrong"]
    0.0
    >>> family_row(pairs, np.array([0.02, 0.0]), 0.95, familywise=False)["wrong"]
    1.0
    """
    covered = np.nan
    if familywise and pairs.verdict is not None:
        verdict = pairs.verdict
        if pairs.low is not None and pairs.high is not None:
            covered = float(covers(pairs.low, pairs.high, exact).all())
    elif pairs.standard_error is not None:
        freedom = np.inf if pairs.freedom is None else pairs.freedom
        found = family_verdicts(pairs.value, pairs.standard_error, freedom,
                                confidence=confidence, method="holm")  # fmt: skip
        verdict = np.array([v.value for v in found.verdicts], dtype=object)
    else:
        return None
    _, wrong = outcomes(verdict, exact)
    return {"covered": covered, "wrong": float(wrong.any())}
