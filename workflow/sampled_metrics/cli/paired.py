"""A full ranking's pair of models compared over the users: the paired t-test
(:func:`~sampled_metrics.estimation.decisions.paired_test`), the interval and p-value
that Elliot's and ranx's paired tests report, for ``correct`` on a full ranking's file.
"""

from __future__ import annotations

import math

from ..estimation.decisions import paired_test
from ..estimation.estimators import SampledEvaluation

__all__ = ["paired_fields"]


def paired_fields(
    first: SampledEvaluation, second: SampledEvaluation, metric: str, confidence: float
) -> dict:
    """``low``, ``high`` (Student's t interval of the mean difference first - second)
    and ``p_value`` (two-sided) over the rows of two full rankings' evaluations; None
    for a file of one row (no spread to test against).

    Examples
    --------
    >>> from sampled_metrics.estimation.estimators import sampled_evaluation
    >>> a = sampled_evaluation([1, 1, 20, 3], 99, 100, "hypergeometric")
    >>> b = sampled_evaluation([20, 1, 20, 30], 99, 100, "hypergeometric")
    >>> {k: round(v, 4) for k, v in paired_fields(a, b, "recall@10", 0.95).items()}
    {'low': -0.4187, 'high': 1.4187, 'p_value': 0.1817}
    """
    if first.n_users < 2:
        return {"low": None, "high": None, "p_value": None}
    test = paired_test([first.ranks, second.ranks], first.n, metric, confidence=confidence)
    p_value = test.p_value if math.isfinite(test.p_value) else None
    return {"low": test.low, "high": test.high, "p_value": p_value}
