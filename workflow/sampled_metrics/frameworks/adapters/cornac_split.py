"""What cornac's ``BaseMethod.evaluate`` evaluates with, for the adapter
(:mod:`.cornac`): the cut-off its ``ranking_eval`` passes to ``model.rank``
(:func:`max_cutoff`) and the data sets and settings of an evaluation method
(:func:`evaluation_split`). Neither imports cornac.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # cornac has no type information: to mypy these are Any
    from cornac.eval_methods import BaseMethod
    from cornac.metrics import RankingMetric, RatingMetric

    # cornac's max_k as given: a cut-off, or the metrics whose largest k it is
    Cutoff = int | np.integer | Iterable[RankingMetric | RatingMetric]

__all__ = ["evaluation_split", "max_cutoff"]


def max_cutoff(k: Cutoff) -> int:
    """The ``k`` that cornac's ``ranking_eval`` passes to ``model.rank``.

    Parameters
    ----------
    k : int or iterable of cornac metrics
        A cut-off (-1: a full sort), or the metric list of the evaluation, whose
        largest ``.k`` it is (``max(m.k for m in metrics)``; AUC, MAP and MRR have -1).

    Returns
    -------
    int

    Examples
    --------
    >>> class Metric:
    ...     def __init__(self, k):
    ...         self.k = k
    >>> max_cutoff(10), max_cutoff([Metric(-1), Metric(5), Metric(20)]), max_cutoff([Metric(-1)])
    (10, 20, -1)
    """
    if isinstance(k, int | np.integer):
        cutoff = int(k)
    else:
        cutoffs = [int(metric.k) for metric in k if getattr(metric, "type", "ranking") == "ranking"]
        if not cutoffs:
            raise ValueError("no ranking metric in the list: give k or cornac ranking metrics")
        cutoff = max(cutoffs)
    if cutoff != -1 and cutoff < 1:
        raise ValueError(f"k must be -1 (a full sort) or positive, not {cutoff}")
    return cutoff


def evaluation_split(eval_method: BaseMethod, on: str = "test") -> dict:
    """The data sets and settings cornac's ``BaseMethod.evaluate`` evaluates with.

    On the test set the validation positives are excluded too; on the validation set
    (``on="validation"``) cornac passes no other set, so the test items are negatives.

    Parameters
    ----------
    eval_method : cornac.eval_methods.BaseMethod
        A built evaluation method (``RatioSplit``, ``BaseMethod.from_splits``, ...).
    on : {"test", "validation"}, default "test"

    Returns
    -------
    dict
        ``train_set``, ``test_set``, ``val_set``, ``rating_threshold``,
        ``exclude_unknowns``: the keyword arguments of :func:`exact_ranks`.
    """
    if on not in ("test", "validation"):
        raise ValueError(f"on must be 'test' or 'validation', not {on!r}")
    if eval_method.train_set is None or eval_method.test_set is None:
        raise ValueError("the evaluation method is not built: no train_set or test_set")
    if on == "validation" and eval_method.val_set is None:
        raise ValueError("the evaluation method has no validation set")
    test, val = (
        (eval_method.test_set, eval_method.val_set) if on == "test" else (eval_method.val_set, None)
    )
    return {
        "train_set": eval_method.train_set,
        "test_set": test,
        "val_set": val,
        "rating_threshold": eval_method.rating_threshold,
        "exclude_unknowns": eval_method.exclude_unknowns,
    }
