"""Any model's ranks in the CLI's format: scores in, the exact ranks from full sorting
and a framework protocol's sampled ranks out.

A model is anything that scores a block of users (``scores(users) -> (len(users),
n_items)``), a plain function of the users, or an array of every user's scores. The
exact ranks come from :func:`~sampled_metrics.passes.ranking.exact_ranks` and the
sampled ranks from :func:`~.protocol_pass.simulate_protocols`, both block by block (no
users x items array unless one is given), so the two files describe the same model;
the sampled ranks do what the framework does: its tie order where it has one
(``beaten``), the same draws for every model under a paired protocol, each model its
own under RecBole's and DaisyRec's (``registry.Protocol.paired``); ``sampled-metrics
correct`` reads the second by the protocol its sidecar names and compares with the
first (docs/cli.md, "Any model"). :func:`write_rank_files` writes both with their
sidecars (:mod:`.rank_meta`). To decide between models a few users ranked exactly are
enough (docs/deciding.md): ``users=`` ranks only those, :func:`exact_rank_frame` without
the sampled frame.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..passes.ranking import exact_ranks
from ..recommenders.scores import PrecomputedScores
from .beaten import tie_order_for
from .protocol_pass import simulate_protocols
from .rank_meta import check_overwrite, rank_meta, write_rank_file
from .registry import FULL, Protocol, protocol_by_name

__all__ = ["exact_rank_frame", "rank_files", "sampled_protocol", "write_rank_files"]


def rank_files(
    models: dict,
    train: sp.spmatrix,
    test_items: ArrayLike,
    protocol: str | Protocol,
    *,
    seed: int = 0,
    tie_policy: str = "random",
    tie_seed: int = 0,
    memory_mb: float = 1024,
    user_ids: ArrayLike | None = None,
    users: ArrayLike | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The exact ranks and one sampled evaluation of every model, as the CLI reads them.

    Parameters
    ----------
    models : dict
        name -> a model with ``scores(users)``, a function ``users -> scores`` (an
        array (len(users), n_items)), or an array (n_users, n_items) of scores; the
        scores are taken in float32, as the pipeline's, for both files.
    train : scipy.sparse matrix (n_users, n_items)
        The users' training items: neither ranked nor drawn.
    test_items : array_like of int (n_users,)
        Each user's held-out item.
    protocol : str or Protocol
        A protocol name (:func:`~.registry.protocol_by_name`: ``"ncf"``,
        ``"recbole-uni100"``, ``"elliot-50"``, ...) or one of your own.
    seed : int, default 0
        Seed of the protocol's draws (a paired protocol's are every model's).
    tie_policy : str, default "random"
        How items scored like the held-out item count, in both files.
    tie_seed : int, default 0
        Seed of the "random" tie order.
    memory_mb : float, default 1024
        Budget of a block of users' scores.
    user_ids : array_like, optional
        The users' ids (default 0..n_users - 1).
    users : array_like of int, optional
        The users to rank exactly (rows of ``train``; default every user; ``[]`` for the
        sampled frame alone): only they are scored for the exact frame
        (:func:`exact_rank_frame`); the sampled frame has every user.

    Returns
    -------
    exact : pandas.DataFrame
        ``user``, a column of exact ranks per model, ``n`` (the ranked-set size).
    sampled : pandas.DataFrame
        ``user``, a column of sampled ranks per model, ``m``, ``n``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> rng = np.random.default_rng(0)
    >>> train = sp.random(64, 300, density=0.05, format="csr", random_state=1)
    >>> train.data[:] = 1
    >>> test = np.array([rng.choice(np.flatnonzero(row == 0))
    ...                  for row in train.toarray()])
    >>> taste = rng.normal(size=(64, 8)) @ rng.normal(size=(8, 300))
    >>> exact, sampled = rank_files({"A": taste, "B": lambda users: taste[users] ** 2},
    ...                             train, test, "ncf", seed=1)
    >>> list(exact.columns), list(sampled.columns)
    (['user', 'A', 'B', 'n'], ['user', 'A', 'B', 'm', 'n'])
    >>> bool((sampled["A"] <= exact["A"]).all()), int(sampled["m"].iloc[0])
    (True, 99)
    """
    protocol = sampled_protocol(protocol)
    if not models:
        raise ValueError("models is empty: give at least one name -> model")
    scorers = {name: _scorer(name, model) for name, model in models.items()}
    test_items = np.asarray(test_items)
    ids = np.arange(test_items.size) if user_ids is None else np.asarray(user_ids)
    exact_frame = _exact_frame(scorers, train, test_items, users, tie_policy, tie_seed, ids)
    simulated = simulate_protocols(
        list(scorers.values()),
        train,
        test_items,
        [protocol],
        repetitions=1,
        seed=seed,
        tie_policy=tie_policy,
        tie_seed=tie_seed,
        memory_mb=memory_mb,
        # every user's exact rank checks the beaten items; a few users' cannot
        exact_ranks=None if users is not None else [exact_frame[name] for name in scorers],
    )[protocol.name]
    sampled = {name: simulated.sampled[0, k] for k, name in enumerate(scorers)}
    n = _ranked_set_sizes(train)
    sampled_frame = pd.DataFrame({"user": ids, **sampled, "m": protocol.m, "n": n})
    return exact_frame, sampled_frame


def sampled_protocol(protocol: str | Protocol) -> Protocol:
    """The sampled protocol ``protocol`` names (:func:`~.registry.protocol_by_name`), or
    ``protocol`` itself when it is one.

    Parameters
    ----------
    protocol : str or Protocol

    Returns
    -------
    Protocol

    Raises
    ------
    ValueError
        For ``"full"``: the exact frame, not a sampled protocol.
    TypeError
        For anything else than a name or a Protocol.

    Examples
    --------
    >>> sampled_protocol("ncf").m
    99
    """
    sampled = protocol_by_name(protocol) if isinstance(protocol, str) else protocol
    if sampled is None:
        raise ValueError(f"protocol {FULL!r} is the exact frame: give a sampled protocol")
    if not isinstance(sampled, Protocol):
        raise TypeError(f"protocol must be a name or a Protocol, not {type(sampled).__name__}")
    return sampled


def exact_rank_frame(
    models: dict,
    train: sp.spmatrix,
    test_items: ArrayLike,
    *,
    users: ArrayLike | None = None,
    tie_policy: str = "random",
    tie_seed: int = 0,
    user_ids: ArrayLike | None = None,
) -> pd.DataFrame:
    """The exact ranks of some users (default all) from full sorting: the exact file of
    :func:`rank_files` without its sampled one, only ``users`` scored, e.g. the users a
    design chose (``sampled-metrics plan``, docs/deciding.md).

    Parameters
    ----------
    models, train, test_items, tie_policy, tie_seed, user_ids
        As :func:`rank_files`'s; each user keeps the tie order it has among all.
    users : array_like of int, optional
        The rows of ``train`` to rank (distinct); default every user.

    Returns
    -------
    pandas.DataFrame
        ``user`` (the id of each ranked user), a column of exact ranks per model, ``n``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> scores = np.random.default_rng(0).normal(size=(6, 50))
    >>> train = sp.csr_matrix(np.eye(6, 50))
    >>> every = exact_rank_frame({"A": scores}, train, [9] * 6)
    >>> some = exact_rank_frame({"A": scores}, train, [9] * 6, users=[4, 1])
    >>> some["user"].tolist(), some["A"].tolist() == every["A"][[4, 1]].tolist()
    ([4, 1], True)
    """
    if not models:
        raise ValueError("models is empty: give at least one name -> model")
    scorers = {name: _scorer(name, model) for name, model in models.items()}
    test_items = np.asarray(test_items)
    ids = np.arange(test_items.size) if user_ids is None else np.asarray(user_ids)
    return _exact_frame(scorers, train, test_items, users, tie_policy, tie_seed, ids)


def _ranked_set_sizes(train) -> np.ndarray:
    """n of every user: the items but the user's training items (as exact_ranks')."""
    X = sp.csr_matrix(train, copy=True)
    X.sum_duplicates()
    X.eliminate_zeros()
    return (X.shape[1] - np.diff(X.indptr)).astype(np.int64)


def _exact_frame(scorers, train, test_items, users, tie_policy, tie_seed, ids) -> pd.DataFrame:
    exact, n = {}, None
    for name, scorer in scorers.items():
        exact[name], n = exact_ranks(
            scorer, train, test_items, tie_policy=tie_policy, seed=tie_seed, users=users
        )
    rows = np.arange(test_items.size) if users is None else np.asarray(users, dtype=np.int64)
    return pd.DataFrame({"user": ids[rows], **exact, "n": n})


def write_rank_files(
    exact: pd.DataFrame,
    sampled: pd.DataFrame,
    protocol: str,
    exact_path: str | Path,
    sampled_path: str | Path,
    *,
    tie_policy: str = "random",
    tie_seed: int = 0,
    writer: str = "sampled_metrics.frameworks.rank_files",
    framework: str | None = None,
    force: bool = False,
) -> tuple[Path, ...]:
    """Write :func:`rank_files`' two frames as csv files, each with its sidecar.

    Parameters
    ----------
    exact, sampled : pandas.DataFrame
        :func:`rank_files`' frames (every column but ``user``, ``item``, ``m``, ``n``
        is a model's ranks).
    protocol : str
        The name of the sampled frame's protocol (:func:`~.registry.protocol_by_name`).
    exact_path, sampled_path : str or pathlib.Path
    tie_policy, tie_seed : as given to :func:`rank_files`.
    writer, framework : str
        What produced the files (the sidecar's ``produced_by``).
    force : bool, default False
        Replace files of other ranks (:func:`~.rank_meta.check_overwrite`); without it
        neither file is written when one of them would replace another writer's.

    Returns
    -------
    tuple of pathlib.Path
        The two files.

    Examples
    --------
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> import scipy.sparse as sp
    >>> train = sp.csr_matrix(np.eye(4, 300))
    >>> scores = np.random.default_rng(0).normal(size=(4, 300))
    >>> frames = rank_files({"A": scores}, train, [5, 6, 7, 8], "ncf", seed=1)
    >>> folder = Path(tempfile.mkdtemp())
    >>> _, sampled = write_rank_files(*frames, "ncf", folder / "full.csv", folder / "ncf.csv")
    >>> meta = json.loads((folder / "ncf.csv.meta.json").read_text())
    >>> meta["protocol"], meta["law"], meta["m_column"], meta["ties"]
    ('ncf', 'hypergeometric', 'm', {'order': 'pessimistic'})
    """
    # The sampled ranks take the framework's tie order where it has one (beaten).
    sampled_ties = tie_order_for(sampled_protocol(protocol).ties, tie_policy)
    files = []
    for frame, path, name, ties in (
        (exact, exact_path, FULL, tie_policy),
        (sampled, sampled_path, protocol, sampled_ties),
    ):
        models = [c for c in frame.columns if c not in ("user", "item", "m", "n")]
        m_column = None if name == FULL else "m"
        meta = rank_meta(
            name,
            rank_columns=models,
            m_column=m_column,
            ties=ties,
            tie_seed=tie_seed,
            writer=writer,
            framework=framework,
        )
        check_overwrite(path, meta, force=force)  # both checked before either is written
        files.append((frame, path, meta))
    return tuple(write_rank_file(frame, path, meta, force=force) for frame, path, meta in files)


class _Float32Scores:
    """A model, a scoring function or a score array, scored in float32 (as the
    pipeline's block pass): the exact ranks and the simulation see the same ties."""

    def __init__(self, name, function):
        self.name, self.function = name, function

    def scores(self, users) -> np.ndarray:
        return np.asarray(self.function(np.asarray(users, dtype=np.int64)), dtype=np.float32)


def _scorer(name: str, model) -> _Float32Scores:
    if hasattr(model, "scores"):
        return _Float32Scores(name, model.scores)
    if callable(model):
        return _Float32Scores(name, model)
    return _Float32Scores(name, PrecomputedScores(np.asarray(model), name=name).scores)
