"""Correction vectors built once per data set, read by the jobs of each recommender.

A correction depends on the split (its values of n), m, the law and the metrics, never on
a model: one job builds them beside the fits, and each recommender's job applies them. A
build (a distinct n, or a sample size and a node of n) is named by a tuple of integers;
its vectors are stored in float64, so that a job reading them computes what one job
building them itself would, bit for bit.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ..io.atomic import read_npz, write_npz

__all__ = ["read_vector_builds", "write_vector_builds"]

_WHAT = "file of correction vectors"


def write_vector_builds(builds: Mapping[tuple, Mapping[tuple, object]], path: str | Path) -> None:
    """Write {build: {(metric, method): M^}}.

    Parameters
    ----------
    builds : mapping
        {tuple of int: {(metric, method): vector over r~}}; a build's vectors share a length.
    path : str or Path
        An .npz file.
    """
    arrays = {"builds": np.array(list(builds), dtype=np.int64).reshape(len(builds), -1)}
    for i, vectors in enumerate(builds.values()):
        arrays[f"k{i}"] = np.array(list(vectors), dtype=str).reshape(len(vectors), 2)
        arrays[f"v{i}"] = np.array([np.asarray(vector, float) for vector in vectors.values()])
    write_npz(arrays, path)


def read_vector_builds(path: str | Path) -> dict:
    """The {build: {(metric, method): M^}} of :func:`write_vector_builds`.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        If the file is cut, damaged or incomplete.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "v.npz"
    >>> write_vector_builds({(10,): {("ap", "cls"): [0.5, 0.25]}}, path)
    >>> read_vector_builds(path)[10,]["ap", "cls"].tolist()
    [0.5, 0.25]
    """
    names = [tuple(int(v) for v in row) for row in read_npz(path, ["builds"], _WHAT)["builds"]]
    arrays = read_npz(path, [f"{a}{i}" for i in range(len(names)) for a in "kv"], _WHAT)
    return {
        name: {
            (str(metric), str(method)): vector
            for (metric, method), vector in zip(arrays[f"k{i}"], arrays[f"v{i}"])
        }
        for i, name in enumerate(names)
    }
