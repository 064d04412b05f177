"""The files one stage of the pipeline writes and a later one reads, read back
with a check of what they must be.

Two guards stand between a damaged file and a wrong table. The checksum recorded
when a file was written (``sampled_metrics.io.atomic.verify_checksum``, run on every
input of every job) catches a file changed since. The readers here check the
content itself, whatever wrote it: the columns, one row per user of the split in
its order (:class:`~sampled_metrics.data.SplitUsers`), ranks within their range,
the shape of the sampled ranks, every cell of a table exactly once. A file that
fails raises one ValueError naming it and what is wrong.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..data.split import SplitUsers
from ..io.atomic import CORRUPT_FILE_ERRORS, read_npz

if TYPE_CHECKING:
    from ..frameworks.registry import Protocol
    from ..frameworks.simulate import ProtocolRanks

__all__ = [
    "EXACT_COLUMNS",
    "SAMPLING_COLUMNS",
    "exact_keys",
    "read_pessimistic_ranks",
    "read_protocol_ranks",
    "read_ranks",
    "read_sampled_ranks",
    "read_table",
]

# The columns of the long tables: sampling.csv (rule sampling_table, every metric and
# correction on every repetition) and exact_metrics.csv (rule exact_metrics).
SAMPLING_COLUMNS = ("dataset", "recommender", "metric", "method", "rep", "value")
EXACT_COLUMNS = ("recommender", "metric", "value", "paper")

_REBUILD = "delete it and rerun"


def exact_keys(sampling_keys: Mapping[str, Sequence]) -> dict[str, Sequence]:
    """The cells of exact_metrics.csv (recommender x metric) from those of sampling.csv.

    Parameters
    ----------
    sampling_keys : mapping
        ``recommender``, ``metric``, ``method``, ``rep`` -> their values.

    Returns
    -------
    dict

    Examples
    --------
    >>> exact_keys({"recommender": ["X"], "metric": ["auc"], "method": ["cls"], "rep": [0]})
    {'recommender': ['X'], 'metric': ['auc']}
    """
    return {key: sampling_keys[key] for key in ("recommender", "metric")}


def read_ranks(path: str | Path, users: SplitUsers) -> pd.DataFrame:
    """The exact ranks of one recommender (rule ``merge_ranks``): ``user``, ``rank``,
    ``n_candidates``, one row per user of the split in its order, ``n_candidates``
    the user's own count, ``rank`` an integer in 1..n_candidates.

    Parameters
    ----------
    path : str or Path
        ``results/<data set>/ranks/<recommender>.csv``.
    users : SplitUsers
        The split's users (``sampled_metrics.data.split_users``).

    Returns
    -------
    pandas.DataFrame
        ``user`` (as text), ``rank``, ``n_candidates``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "X.csv"
    >>> _ = path.write_text("user,rank,n_candidates\\n1,3,5\\n2,1,4\\n")
    >>> users = SplitUsers(np.array([1, 2]), np.array([5, 4]), 6)
    >>> read_ranks(path, users)["rank"].tolist()
    [3, 1]
    >>> _ = path.write_text("user,rank,n_candidates\\n1,3,5\\n")
    >>> read_ranks(path, users)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...X.csv: 1 rows, expected one per user of the split (2); delete it and rerun
    """
    frame = _read_csv(path, ["user", "rank", "n_candidates"], {"user": str})
    _check_users(path, frame, users)
    if not np.array_equal(frame["n_candidates"].to_numpy(), users.n_candidates):
        row = int(np.flatnonzero(frame["n_candidates"].to_numpy() != users.n_candidates)[0])
        _fail(path, f"row {row + 2}: n_candidates differs from the split's")
    _check_ranks(path, frame["rank"], 1, users.n_candidates)
    return frame


def read_pessimistic_ranks(path: str | Path, users: SplitUsers) -> pd.DataFrame:
    """The pessimistic ranks of one recommender (Figure 5): ``user``, ``rank``, one
    row per user of the split in its order, ranks integers in 1..n_candidates.

    Parameters
    ----------
    path : str or Path
        ``results/<data set>/pessimistic_ranks/<recommender>.csv``.
    users : SplitUsers
        The split's users.

    Returns
    -------
    pandas.DataFrame
        ``user`` (as text), ``rank``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "X.csv"
    >>> _ = path.write_text("user,rank\\n1,6\\n2,1\\n")
    >>> read_pessimistic_ranks(path, SplitUsers(np.array([1, 2]), np.array([5, 4]), 6))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...X.csv: row 2: rank 6 outside 1..5; delete it and rerun
    """
    frame = _read_csv(path, ["user", "rank"], {"user": str})
    _check_users(path, frame, users)
    _check_ranks(path, frame["rank"], 1, users.n_candidates)
    return frame


def read_sampled_ranks(path: str | Path, n_users: int, repetitions: int, m: int) -> np.ndarray:
    """The sampled ranks of one recommender (rule ``merge_ranks``): an integer array
    of shape (repetitions, n_users), each rank in 1..m + 1.

    Parameters
    ----------
    path : str or Path
        ``results/<data set>/sampled_ranks/<recommender>.npy``.
    n_users : int
        Users of the split.
    repetitions : int
        ``sampling.repetitions``.
    m : int
        ``sampling.m``.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "X.npy"
    >>> np.save(path, np.array([[1, 4], [2, 3]], dtype=np.int8))
    >>> read_sampled_ranks(path, 2, 2, 3).tolist()
    [[1, 4], [2, 3]]
    >>> read_sampled_ranks(path, 2, 3, 3)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...X.npy: shape (2, 2), expected (3, 2) (repetitions, users); delete it and rerun
    """
    try:
        ranks = np.load(path, allow_pickle=False)
    except (*CORRUPT_FILE_ERRORS, ValueError) as error:
        _fail(path, f"not an array of sampled ranks ({error})")
    if ranks.shape != (repetitions, n_users):
        _fail(
            path,
            f"shape {ranks.shape}, expected {(repetitions, n_users)} (repetitions, users)",
        )
    if not np.issubdtype(ranks.dtype, np.integer):
        _fail(path, f"ranks of type {ranks.dtype}, expected integers")
    low, high = int(ranks.min()), int(ranks.max())
    if low < 1 or high > m + 1:
        _fail(path, f"ranks from {low} to {high}, outside 1..m + 1 = {m + 1}")
    return ranks


def read_table(
    path: str | Path, columns: Sequence[str], keys: Mapping[str, Sequence]
) -> pd.DataFrame:
    """A long table (one value per cell): exactly ``columns``, and the key columns
    ``keys`` holding every combination of their values exactly once, nothing else.

    Parameters
    ----------
    path : str or Path
        A csv written by an earlier stage (``sampling.csv``, ``exact_metrics.csv``, ...).
    columns : sequence of str
        Its columns, in order.
    keys : mapping of str to sequence
        Key column -> the values it must hold (e.g. ``{"recommender": ["X", "Y"]}``).

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = path.write_text("recommender,rep,value\\nX,0,1.5\\nX,1,2.5\\nY,0,0.5\\n")
    >>> keys = {"recommender": ["X", "Y"], "rep": [0, 1]}
    >>> read_table(path, ["recommender", "rep", "value"], keys)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...t.csv: 3 rows, expected 4 (recommender x rep), e.g. ('Y', '1') is missing; ...
    """
    frame = _read_csv(path, list(columns), {key: str for key in keys})
    expected = set(itertools.product(*([str(v) for v in values] for values in keys.values())))
    found = list(zip(*(frame[key] for key in keys)))
    if len(found) != len(expected) or set(found) != expected:
        missing = sorted(expected - set(found))
        problem = (
            f"e.g. {missing[0]} is missing"
            if missing
            else f"e.g. {sorted(set(found) - expected or found)[0]} is unexpected or repeated"
        )
        _fail(
            path,
            f"{len(found)} rows, expected {len(expected)} ({' x '.join(keys)}), {problem}",
        )
    for key, values in keys.items():  # the keys' own types back
        frame[key] = frame[key].map({str(v): v for v in values})
    return frame


def _read_csv(path, columns: list[str], dtype: dict) -> pd.DataFrame:
    try:
        frame = pd.read_csv(path, dtype=dtype, keep_default_na=False, na_values=[""])
    except (*CORRUPT_FILE_ERRORS, pd.errors.ParserError, pd.errors.EmptyDataError) as error:
        _fail(path, f"not a readable csv ({error})")
    if list(frame.columns) != columns:
        _fail(path, f"columns {list(frame.columns)}, expected {columns}")
    return frame


def _check_users(path, frame: pd.DataFrame, users: SplitUsers) -> None:
    if len(frame) != len(users.user_ids):
        _fail(
            path, f"{len(frame)} rows, expected one per user of the split ({len(users.user_ids)})"
        )
    expected = users.user_ids.astype(str)
    differ = np.flatnonzero(frame["user"].to_numpy(dtype=str) != expected)
    if len(differ):
        row = int(differ[0])
        _fail(
            path, f"row {row + 2}: user {frame['user'].iat[row]!r}, expected {str(expected[row])!r}"
        )


def _check_ranks(path, ranks: pd.Series, low: int, high: np.ndarray) -> None:
    if not pd.api.types.is_integer_dtype(ranks):
        _fail(path, f"ranks of type {ranks.dtype}, expected integers")
    values = ranks.to_numpy()
    outside = np.flatnonzero((values < low) | (values > high))
    if len(outside):
        row = int(outside[0])
        _fail(path, f"row {row + 2}: rank {values[row]} outside {low}..{high[row]}")


def read_protocol_ranks(
    path: str | Path,
    protocol: Protocol,
    n_users: int,
    repetitions: int,
    recommenders: int,
    smallest_pool: int | None = None,
) -> ProtocolRanks | str:
    """One protocol's simulated ranks (rule ``protocol_ranks``), checked: sampled ranks
    integers in 1..m + 1 of shape (repetitions, recommenders, users), Hansen-Hurwitz
    estimates finite and >= 1 of that shape (protocols with replacement, else none),
    weighted ranks in [1, n_items] of shape (recommenders, users). Or, for a protocol
    the data set cannot support, the record that it was left out
    (``studies.protocols.files.save_left_out``): its reason is returned.

    With ``smallest_pool`` (the split's) the file must be what that pool calls for:
    ranks of a protocol it supports, the record of a protocol it does not, with the
    reason ``studies.protocols.files.left_out_reason`` gives.

    Parameters
    ----------
    path : str or Path
        ``results/<data set>/protocols/<protocol>.npz``.
    protocol : sampled_metrics.frameworks.registry.Protocol
    n_users, repetitions, recommenders : int
    smallest_pool : int, optional
        The split's fewest items outside a user's history.

    Returns
    -------
    sampled_metrics.frameworks.simulate.ProtocolRanks, or str
        The ranks, or why the protocol was left out.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ncf.npz"
    >>> np.savez(path, sampled=np.full((2, 1, 3), 101), hansen_hurwitz=np.ones((0, 1, 3)),
    ...          weighted_rank=np.ones((1, 3)))
    >>> read_protocol_ranks(path, FRAMEWORK_PROTOCOLS["ncf"], 3, 2, 1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...ncf.npz: sampled ranks outside 1..100; delete it and rerun
    >>> np.savez(path, sampled=np.full((2, 1, 3), 1), hansen_hurwitz=np.ones((0, 1, 3)),
    ...          weighted_rank=np.ones((1, 3)))
    >>> read_protocol_ranks(path, FRAMEWORK_PROTOCOLS["ncf"], 3, 2, 1, smallest_pool=50)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...ncf.npz: ranks of a protocol the split leaves out (draws 99 distinct ...
    """
    from ..frameworks.simulate import ProtocolRanks
    from ..studies.protocols.files import left_out_reason

    expected_reason = None if smallest_pool is None else left_out_reason(protocol, smallest_pool)
    if "left_out" in _npz_names(path):
        record = read_npz(path, ("left_out", "smallest_pool"), "record of a left-out protocol")
        reason, pool = str(record["left_out"]), int(record["smallest_pool"])
        if smallest_pool is not None and (reason != expected_reason or pool != smallest_pool):
            _fail(
                path,
                f"records {protocol.name} as left out ({reason}; smallest pool {pool}), but the "
                f"split's smallest pool, {smallest_pool} items, "
                + (f"leaves it out for: {expected_reason}" if expected_reason else "supports it"),
            )
        return reason
    if expected_reason is not None:
        _fail(path, f"ranks of a protocol the split leaves out ({expected_reason})")
    arrays = read_npz(path, ("sampled", "hansen_hurwitz", "weighted_rank"), "file of ranks")
    sampled, hh, weighted = arrays["sampled"], arrays["hansen_hurwitz"], arrays["weighted_rank"]
    shape = (repetitions, recommenders, n_users)
    hh_shape = (repetitions if protocol.replacement else 0, recommenders, n_users)
    for what, array, expected in (
        ("sampled ranks", sampled, shape),
        ("Hansen-Hurwitz estimates", hh, hh_shape),
        ("weighted ranks", weighted, shape[1:]),
    ):
        if array.shape != expected:
            _fail(path, f"{what} of shape {array.shape}, expected {expected}")
    if not np.issubdtype(sampled.dtype, np.integer):
        _fail(path, f"sampled ranks of type {sampled.dtype}, expected integers")
    if sampled.size and (sampled.min() < 1 or sampled.max() > protocol.m + 1):
        _fail(path, f"sampled ranks outside 1..{protocol.m + 1}")
    for what, array in (("Hansen-Hurwitz estimates", hh), ("weighted ranks", weighted)):
        if not np.all(np.isfinite(array)) or (array.size and array.min() < 1):
            _fail(path, f"{what} not finite numbers >= 1")
    return ProtocolRanks(0, sampled, hh, weighted)


def _npz_names(path) -> list:
    """The names of the arrays of an .npz file (a damaged one: none, so that its reader
    names the problem)."""
    try:
        with np.load(path) as data:
            return list(data.files)
    except (*CORRUPT_FILE_ERRORS, ValueError, AttributeError, TypeError):
        return []


def _fail(path, problem: str):
    raise ValueError(f"{path}: {problem}; {_REBUILD}")
