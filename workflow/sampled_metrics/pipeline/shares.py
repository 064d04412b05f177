"""One recommender's share of a table, written by its own job, and the join of the shares:
sampling.csv (rules sampling_recommender, sampling_table) and Figure 6's curves (rules
fig6_recommender, fig6_curves).

Each recommender's work runs in a job of its own, so that the recommenders whose models
are ranked early are done while a slow fit still runs; the join only lays the shares side
by side. A share holds its values in float64: the joined table is the one a single job
would have written, bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..io.atomic import read_npz, write_npz
from .intermediates import SAMPLING_COLUMNS

__all__ = [
    "joined_sampling_table",
    "read_curve_share",
    "read_sampling_share",
    "write_curve_share",
    "write_sampling_share",
]

_WHAT = "recommender's share of the sampled evaluation"
_CURVE_WHAT = "recommender's share of Figure 6's curves"


def write_sampling_share(
    tables: Iterable[pd.DataFrame],
    expected: Mapping[tuple, float],
    metrics: Sequence[str],
    estimators: Sequence[str],
    repetitions: int,
    path: str | Path,
) -> None:
    """Write one recommender's values and the expectations of its fixed corrections.

    Parameters
    ----------
    tables : iterable of pandas.DataFrame
        Columns metric, method, rep, value (a fraction): together every (metric,
        estimator, repetition) exactly once.
    expected : mapping
        {(metric, method): expected value (a fraction)} of the fixed corrections.
    metrics, estimators : sequence of str
        The configured orders.
    repetitions : int
    path : str or Path

    Raises
    ------
    ValueError
        If a cell is missing or given twice.
    """
    table = pd.concat(list(tables), ignore_index=True)
    values = np.full((len(metrics), len(estimators), repetitions), np.nan)
    index = (
        table["metric"].map({m: i for i, m in enumerate(metrics)}).to_numpy(),
        table["method"].map({m: i for i, m in enumerate(estimators)}).to_numpy(),
        table["rep"].to_numpy(),
    )
    values[index] = table["value"].to_numpy(float)
    if len(table) != values.size or np.isnan(values).any():
        raise ValueError("a share must give every (metric, estimator, repetition) once")
    fixed = [method for method in estimators if (metrics[0], method) in expected]
    means = np.array([[expected[metric, method] for method in fixed] for metric in metrics])
    write_npz({"values": values, "expected": means, "fixed": np.array(fixed, dtype=str)}, path)


def read_sampling_share(
    path: str | Path, metrics: Sequence[str], estimators: Sequence[str]
) -> tuple[np.ndarray, dict]:
    """(values (metrics x estimators x repetitions), {(metric, method): expected}) of a
    share written by :func:`write_sampling_share` with these orders.

    Raises
    ------
    ValueError
        If the file is cut, damaged or written for other metrics or estimators.
    """
    arrays = read_npz(path, ["values", "expected", "fixed"], _WHAT)
    values, fixed = arrays["values"], [str(method) for method in arrays["fixed"]]
    if values.shape[:2] != (len(metrics), len(estimators)) or not set(fixed) <= set(estimators):
        raise ValueError(f"{path}: written for other metrics or estimators; delete it and rerun")
    expected = {
        (metric, method): float(arrays["expected"][i, j])
        for i, metric in enumerate(metrics)
        for j, method in enumerate(fixed)
    }
    return values, expected


def joined_sampling_table(
    dataset: str,
    shares: Mapping[str, np.ndarray],
    metrics: Sequence[str],
    estimators: Sequence[str],
) -> pd.DataFrame:
    """sampling.csv's table: rows by recommender (in ``shares``' order), metric, method and
    repetition in the configured orders, values in percent.

    Parameters
    ----------
    dataset : str
    shares : mapping
        {recommender: values (metrics x estimators x repetitions), fractions}.
    metrics, estimators : sequence of str

    Returns
    -------
    pandas.DataFrame
        Columns :data:`~.intermediates.SAMPLING_COLUMNS`.

    Examples
    --------
    >>> values = np.array([[[0.25, 0.5]]])  # 1 metric x 1 estimator x 2 repetitions
    >>> joined_sampling_table("d", {"X": values}, ["ap"], ["sampled"]).values.tolist()
    [['d', 'X', 'ap', 'sampled', 0, 25.0], ['d', 'X', 'ap', 'sampled', 1, 50.0]]
    """
    names = list(shares)
    values = np.stack([shares[name] for name in names])
    r, k, e, reps = values.shape
    return pd.DataFrame(
        {
            "dataset": dataset,
            "recommender": np.repeat(names, k * e * reps),
            "metric": np.tile(np.repeat(list(metrics), e * reps), r),
            "method": np.tile(np.repeat(list(estimators), reps), r * k),
            "rep": np.tile(np.arange(reps), r * k * e),
            "value": values.ravel() * 100,
        },
        columns=list(SAMPLING_COLUMNS),
    )


def write_curve_share(
    values: Mapping[int, Mapping[tuple, float]],
    keys: Sequence[tuple],
    exact: float,
    path: str | Path,
) -> None:
    """Write one recommender's Figure 6 values {m: {(metric, method): expected}} (the
    ``keys`` in order) and its exact metric."""
    grid = list(values)
    table = np.array([[values[m][key] for key in keys] for m in grid], dtype=float)
    write_npz(
        {"m": np.array(grid, dtype=np.int64), "values": table, "exact": np.float64(exact)}, path
    )


def read_curve_share(path: str | Path, keys: Sequence[tuple]) -> tuple[dict, float]:
    """({m: {(metric, method): expected}}, exact metric) of :func:`write_curve_share`.

    Raises
    ------
    ValueError
        If the file is cut, damaged or written for other keys.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "X.npz"
    >>> write_curve_share({5: {("ap", "sampled"): 0.25}}, [("ap", "sampled")], 0.5, path)
    >>> read_curve_share(path, [("ap", "sampled")])
    ({5: {('ap', 'sampled'): 0.25}}, 0.5)
    """
    arrays = read_npz(path, ["m", "values", "exact"], _CURVE_WHAT)
    if arrays["values"].shape != (arrays["m"].size, len(keys)):
        raise ValueError(f"{path}: written for other methods; delete it and rerun")
    values = {
        int(m): {key: float(value) for key, value in zip(keys, row)}
        for m, row in zip(arrays["m"], arrays["values"])
    }
    return values, float(arrays["exact"])
