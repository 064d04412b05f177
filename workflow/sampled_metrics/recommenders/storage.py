"""Fitted models on disk: the pipeline stores a model (factors, similarities),
never its users x items scores, and scores blocks of users from it when ranking."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

from ..io.atomic import write_atomic

__all__ = ["load_model", "save_model"]


def save_model(model: object, path: str | Path) -> None:
    """Write a fitted model to ``path`` atomically (pickle, protocol 5: arrays are
    written from their buffers without a copy).

    Parameters
    ----------
    model : object
        A fitted model with ``scores(users)`` (see :func:`.fit_recommender`).
    path : str or pathlib.Path
        The file to write.

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np
    >>> from sampled_metrics.recommenders import IALSModel
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "X.pkl"
    >>> save_model(IALSModel(np.ones((2, 3)), np.ones((4, 3)), name="X"), path)
    >>> load_model(path).scores([1]).tolist()
    [[3.0, 3.0, 3.0, 3.0]]
    """

    def write(tmp) -> None:
        with open(tmp, "wb") as f:
            pickle.dump(model, f, protocol=5)

    write_atomic(path, write)


def load_model(path: str | Path) -> Any:
    """Read a model written by :func:`save_model`.

    Parameters
    ----------
    path : str or pathlib.Path
        A file written by :func:`save_model` (only load files you wrote: pickle
        runs code).

    Returns
    -------
    object
        The model, with ``scores(users)``.

    Raises
    ------
    ValueError
        Naming the file when it is cut, damaged or holds no model.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bad.pkl"
    >>> _ = path.write_bytes(b"not a model")
    >>> load_model(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...bad.pkl: not a fitted model (damaged or cut file: ...); delete it and rerun
    """
    try:
        with open(path, "rb") as f:
            model = pickle.load(f)
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, IndexError) as error:
        raise ValueError(
            f"{path}: not a fitted model (damaged or cut file: {error}); delete it and rerun"
        ) from None
    if not callable(getattr(model, "scores", None)):
        raise ValueError(f"{path}: not a fitted model (no scores method); delete it and rerun")
    return model
