"""cornac's full-ranking evaluation, rank by rank, as the files ``sampled-metrics
correct`` reads (docs/cornac.md).

cornac (PreferredAI/cornac, version 3.0.1) evaluates ranking metrics in
``cornac/eval_methods/base_method.py`` (``ranking_eval``): for every test user with a
positive test item (rating >= ``rating_threshold``) it ranks the user's positive test
items and every *negative*, each item but the user's positive training, validation and
test items (with ``exclude_unknowns``, only items of the training set), by
``model.rank(user_idx, item_indices, k=max_k)``, ``max_k`` the largest cut-off of the
metric list. ``Recommender.rank`` (``cornac/models/recommender.py``) sorts the
scores with ``np.argpartition`` and ``np.argsort`` (numpy's unstable quicksort) and
reverses them: its order among tied items is numpy's, and it depends on ``max_k``. The
metrics (``cornac/metrics/ranking.py``) read that order (Recall, NDCG, HitRatio,
Precision, NCRR, MRR) or the scores (AUC: negatives scored strictly below; MAP:
``rankdata(-scores, "max")``, so both count every tie against the held-out item).

cornac has no sampled evaluation: every metric ranks the whole pool. This module
writes

- :func:`exact_ranks`: each held-out item's rank in cornac's own order (the order its
  metrics read, ties included) and its rank with every tie above (what its AUC and MAP
  read), and the pool size n;
- :func:`rank_files`: those ranks for several models, and a sampled evaluation of the
  same models by one of this package's protocols (``"ncf"``: 1 + 99, ...), drawn as
  :func:`~sampled_metrics.frameworks.rank_files.rank_files` draws them
  (:func:`~sampled_metrics.frameworks.protocol_pass.simulate_protocols`) from cornac's own
  order, so that a sampled item counts above the held-out item exactly when cornac's
  full ranking puts it above; a block of held-out items at a time, within ``memory_mb``.

The functions call the model's ``rank`` and read the data sets' ``csr_matrix``,
``uir_tuple``, ``num_items`` and id maps, as ``ranking_eval`` does; they import cornac
only to say, where it is missing, that they run in the environment that trained the
model (``.ci/envs/cornac.sh``): :class:`~.FrameworkNotInstalled`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..protocol_pass import simulate_protocols
from ..rank_files import sampled_protocol
from ..simulate import interaction_counts
from . import UnknownUser, not_installed
from .cornac_rows import BYTES_PER_ENTRY, excluded_rows, held_out_rows, row_blocks
from .cornac_split import evaluation_split, max_cutoff
from .quiet import quiet

if TYPE_CHECKING:  # cornac has no type information: to mypy these are Any
    from cornac.data import Dataset
    from cornac.eval_methods import BaseMethod
    from cornac.models import Recommender

    from ..registry import Protocol
    from .cornac_split import Cutoff

__all__ = [
    "cornac_order",
    "evaluation_split",
    "exact_rank_table",
    "exact_ranks",
    "max_cutoff",
    "rank_files",
    "require_cornac",
]


def require_cornac() -> None:
    """Raise :class:`~.FrameworkNotInstalled` unless cornac imports (where a model
    was trained, it is imported already: nothing to load)."""
    try:
        import cornac  # noqa: F401
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] != "cornac":
            raise
        raise not_installed("cornac", "cornac", "your cornac environment") from None


@dataclass
class _Pools:
    """ranking_eval's sets of every evaluated user, in user order. A user's
    candidates are made when asked for (:meth:`candidates`): no list of every user's
    items is kept."""

    users: np.ndarray  # cornac's user indices
    positives: list  # each user's positive test items (ground truth) below n_columns
    n_columns: int  # the items a row of scores covers
    user_ids: dict  # user index -> raw id
    item_ids: dict  # item index -> raw id
    matrices: tuple  # test, train, validation csr matrices (validation may be None)
    n_items: int  # the test set's items
    rating_threshold: float

    def positive(self, matrix, user: int) -> np.ndarray:
        """The items ``user`` rated at least the threshold in ``matrix``."""
        if matrix is None or user >= matrix.shape[0]:
            return np.empty(0, dtype=np.int64)
        start, end = matrix.indptr[user], matrix.indptr[user + 1]
        return matrix.indices[start:end][matrix.data[start:end] >= self.rating_threshold]

    def candidates(self, position: int) -> np.ndarray:
        """The item_indices ranking_eval ranks for the user at ``position``: its
        positives and every item but its positive test, validation and training items."""
        user = int(self.users[position])
        candidate = np.ones(self.n_items, dtype=bool)
        for matrix in self.matrices:
            candidate[self.positive(matrix, user)] = False
        candidate[self.positives[position]] = True
        return np.flatnonzero(candidate[: self.n_columns])


def _pools(train_set, test_set, val_set, rating_threshold, exclude_unknowns, users=None) -> _Pools:
    """What ``ranking_eval`` (cornac/eval_methods/base_method.py) ranks for each user, or
    for ``users`` (raw ids) alone, in the same order."""
    matrices = (
        test_set.csr_matrix,
        train_set.csr_matrix,
        None if val_set is None else val_set.csr_matrix,
    )
    n_columns = train_set.num_items if exclude_unknowns else test_set.num_items
    pools = _Pools(
        np.empty(0, dtype=np.int64), [], n_columns, {}, {}, matrices, test_set.num_items,
        rating_threshold,
    )  # fmt: skip
    pools.user_ids.update({index: raw for raw, index in test_set.uid_map.items()})
    evaluated = np.unique(np.asarray(test_set.uir_tuple[0]))
    chosen = None if users is None else _indices(test_set.uid_map, evaluated, users)
    users = []
    for user in evaluated.tolist() if chosen is None else chosen:
        pos = pools.positive(matrices[0], user)
        if pos.size == 0 and chosen is not None:
            raise UnknownUser(pools.user_ids[user])  # not evaluated: no positive test item
        if pos.size == 0:
            continue  # ranking_eval: a user without positive test items is skipped
        users.append(user)
        pools.positives.append(np.unique(pos[pos < n_columns]))
    if not users:
        raise ValueError("no test user has a positive test item: nothing is evaluated")
    pools.users = np.array(users)
    for dataset in (train_set, test_set, val_set):
        if dataset is not None:
            pools.item_ids.update({index: raw for raw, index in dataset.iid_map.items()})
    return pools


def _indices(uid_map: dict, evaluated, users) -> list:
    """cornac's indices of the raw user ids ``users``, in the evaluation's order."""
    found = []
    for raw in users:
        index = uid_map.get(raw, uid_map.get(str(raw)))
        if index is None or index not in evaluated:
            raise UnknownUser(raw)
        found.append(int(index))
    return sorted(found)


def cornac_order(
    model: Recommender, user_idx: int, item_indices: ArrayLike, k: int = -1
) -> tuple[np.ndarray, np.ndarray]:
    """The candidates in cornac's order for one user, and their scores.

    ``model.rank(user_idx, item_indices, k)`` as ``ranking_eval`` calls it: with k = -1
    its full sort; with k > 0 its top k (what the metrics at k read), then the other
    items in the order of its full sort (``rank`` leaves them unsorted past k).

    Parameters
    ----------
    model : cornac.models.Recommender
    user_idx : int
    item_indices : array of int
        The candidates (positives and negatives).
    k : int, default -1
        cornac's ``max_k`` (:func:`max_cutoff`).

    Returns
    -------
    order : int array
        The candidates, best first.
    scores : array
        The candidates' scores, in the order of ``item_indices``.
    """
    require_cornac()
    item_indices = np.asarray(item_indices)
    ranked, scores = model.rank(user_idx=user_idx, item_indices=item_indices, k=k)
    ranked = np.asarray(ranked)
    if k != -1 and k < item_indices.size:
        top = ranked[:k]
        full, _ = model.rank(user_idx=user_idx, item_indices=item_indices, k=-1)
        full = np.asarray(full)
        ranked = np.concatenate([top, full[~np.isin(full, top)]])
    if ranked.size != item_indices.size or not np.array_equal(
        np.sort(ranked), np.sort(item_indices)
    ):
        raise ValueError(f"user {user_idx}: model.rank did not return every candidate once")
    return ranked, np.asarray(scores)


def exact_ranks(
    model: Recommender,
    train_set: Dataset,
    test_set: Dataset,
    val_set: Dataset | None = None,
    *,
    rating_threshold: float = 1.0,
    exclude_unknowns: bool = True,
    k: Cutoff = -1,
    name: str | None = None,
    users: Iterable[object] | None = None,
) -> pd.DataFrame:
    """Every held-out item's exact rank as cornac's ``ranking_eval`` ranks it.

    Parameters
    ----------
    model : cornac.models.Recommender
        A fitted model (and ``transform``-ed on the test set, for the models that need
        it, as ``BaseMethod.evaluate`` does).
    train_set, test_set, val_set : cornac.data.Dataset
        As ``ranking_eval`` gets them (:func:`evaluation_split` reads them off an
        evaluation method).
    rating_threshold : float, default 1.0
        Positive items have a rating >= it; training items rated lower stay candidates
        (as in cornac).
    exclude_unknowns : bool, default True
        Rank only items of the training set.
    k : int or list of cornac metrics, default -1
        cornac's ``max_k`` (:func:`max_cutoff`): the ranks are in the order of
        ``model.rank(..., k=max_k)``, whose ties depend on it. Give the metric list (or
        its largest k) of the evaluation you reproduce.
    name : str, optional
        The rank column's name (default ``model.name``).
    users : iterable, optional
        Raw user ids: rank only those users (each as in the evaluation of every user);
        :class:`~.UnknownUser` names one cornac does not evaluate.

    Returns
    -------
    pandas.DataFrame
        One row per positive test item of every evaluated user: ``user``, ``item``
        (raw ids), ``<name>`` (1 + the negatives before the item in cornac's order),
        ``<name>_pessimistic`` (1 + the negatives scored at least as high: the rank
        cornac's AUC and MAP read), ``n`` (the negatives + 1). With one held-out item
        per user (leave-one-out) the mean of a metric of ``<name>`` over the rows is
        cornac's Recall@k, NDCG@k, HitRatio@k, Precision@k and MRR (in cornac alone
        only with no k > 0 beside it: docs/cornac.md), and of ``<name>_pessimistic``
        cornac's AUC and MAP.
    """
    require_cornac()
    cutoff = max_cutoff(k)
    with quiet():
        pools = _pools(train_set, test_set, val_set, rating_threshold, exclude_unknowns, users)
        return _exact_ranks(model, pools, cutoff, model.name if name is None else name)


def _exact_ranks(model, pools: _Pools, cutoff: int, name: str) -> pd.DataFrame:
    """:func:`exact_ranks` of the users of ``pools``, one user's candidates at a time."""
    users, items, ranks, pessimistic, n = [], [], [], [], []
    for position, (user, pos) in enumerate(zip(pools.users, pools.positives)):
        if pos.size == 0:
            continue
        candidates = pools.candidates(position)
        order, scores = cornac_order(model, int(user), candidates, cutoff)
        negative_order = ~np.isin(order, pos)
        # the negatives before each place
        before: np.ndarray = np.cumsum(negative_order) - negative_order
        place = np.empty(pools.n_columns, dtype=np.int64)
        place[order] = before
        held_out = np.isin(candidates, pos)
        negative_scores = np.sort(scores[~held_out])
        # ties count against the held-out item: the negatives scored at least as high
        at_least = negative_scores.size - np.searchsorted(
            negative_scores, scores[np.searchsorted(candidates, pos)], side="left"
        )
        users += [pools.user_ids[int(user)]] * pos.size
        items += [pools.item_ids.get(item, item) for item in pos.tolist()]
        ranks.append(1 + place[pos])
        pessimistic.append(1 + at_least)
        n.append(np.full(pos.size, 1 + negative_scores.size))
    counts = {name: ranks, f"{name}_pessimistic": pessimistic, "n": n}
    stacked = {
        key: np.concatenate([np.empty(0), *parts]).astype(np.int64) for key, parts in counts.items()
    }
    return pd.DataFrame({"user": users, "item": items, **stacked})


class _OrderScores:
    """Scores that order each row's candidates as cornac does and tie nowhere: the
    candidate at place j of cornac's order scores (number of candidates - j), the other
    columns 0 (they are excluded). Float32 holds them exactly below 2 ** 24 items.
    Row r is held-out item r of a block, of the user at position ``rows_user[r]``."""

    def __init__(self, name, model, pools, rows_user, k):
        self.model, self.pools, self.rows_user, self.k = model, pools, rows_user, k
        self.name = name

    def scores(self, rows) -> np.ndarray:
        out = np.zeros((len(rows), self.pools.n_columns), dtype=np.float32)
        cache = {}
        for r, row in enumerate(rows):
            position = self.rows_user[row]
            if position not in cache:
                user, candidates = self.pools.users[position], self.pools.candidates(position)
                cache[position] = cornac_order(self.model, int(user), candidates, self.k)[0]
            order = cache[position]
            out[r, order] = np.arange(order.size, 0, -1, dtype=np.float32)
        return out


def rank_files(
    models: dict[str, Recommender] | Sequence[Recommender],
    eval_method: BaseMethod | None = None,
    protocol: str | Protocol = "ncf",
    *,
    k: Cutoff = -1,
    on: str = "test",
    seed: int = 0,
    memory_mb: float = 256,
    split: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """cornac's exact ranks of every model, and one protocol's sampled ranks.

    Parameters
    ----------
    models : dict or list
        name -> fitted cornac model, or a list of models (named by ``model.name``).
    eval_method : cornac.eval_methods.BaseMethod, optional
        The evaluation method the models were evaluated with (or ``split``).
    protocol : str or Protocol, default "ncf"
        A protocol of :data:`~sampled_metrics.frameworks.registry.FRAMEWORK_PROTOCOLS`
        (cornac has none of its own); ``sampled-metrics correct`` reads the sampled file
        with that protocol (``--protocol ncf``).
    k : int or list of cornac metrics, default -1
        cornac's ``max_k`` (:func:`max_cutoff`).
    on : {"test", "validation"}, default "test"
    seed : int, default 0
        Seed of the protocol's draws (the same items for every model).
    memory_mb : float, default 256
        Budget of a block of held-out items: half for the items they do not rank, half
        for their scores and masks (what else grows with the data: the two frames).
    split : dict, optional
        Instead of ``eval_method``: the keyword arguments of :func:`exact_ranks`
        (``train_set``, ``test_set``, ``val_set``, ``rating_threshold``,
        ``exclude_unknowns``).

    Returns
    -------
    exact : pandas.DataFrame
        ``user``, ``item``, per model its rank and ``<name>_pessimistic``, ``n``
        (:func:`exact_ranks`).
    sampled : pandas.DataFrame
        ``user``, ``item``, per model its sampled rank, ``m``, ``n``: the file for
        ``sampled-metrics correct FILE --protocol ncf --rank-column <name> ...``.

    Raises
    ------
    ValueError
        If the items cornac's order puts above a held-out item are not as many as
        :func:`exact_ranks` says: the sampled ranks would not be cornac's.
    RuntimeError
        If a held-out item's pool is not the one :func:`exact_ranks` ranks.
    """
    require_cornac()
    models, split, cutoff = _checked(models, eval_method, k, on, split)
    with quiet():
        return _rank_files(models, split, protocol, cutoff, seed, memory_mb)


def exact_rank_table(
    models: dict[str, Recommender] | Sequence[Recommender],
    eval_method: BaseMethod | None = None,
    *,
    k: Cutoff = -1,
    on: str = "test",
    users: Iterable[object] | None = None,
    split: dict | None = None,
) -> pd.DataFrame:
    """The exact file of :func:`rank_files` alone (no sampled ranks), of every evaluated
    user or of ``users`` (raw ids) only: only they are ranked, each as in the evaluation
    of every user (:func:`exact_ranks`; ``models``, ``eval_method``, ``k``, ``on``,
    ``split``: :func:`rank_files`')."""
    require_cornac()
    models, split, cutoff = _checked(models, eval_method, k, on, split)
    with quiet():
        return _exact_table(models, _split_pools(split, users), cutoff)


def _checked(
    models: dict[str, Recommender] | Sequence[Recommender],
    eval_method: BaseMethod | None,
    k: Cutoff,
    on: str,
    split: dict | None,
) -> tuple[dict[str, Recommender], dict, int]:
    if split is None:
        if eval_method is None:
            raise ValueError("give eval_method or split")
        split = evaluation_split(eval_method, on)
    if not isinstance(models, dict):
        models = {model.name: model for model in models}
    if not models:
        raise ValueError("models is empty")
    return models, split, max_cutoff(k)


def _split_pools(split: dict, users=None) -> _Pools:
    return _pools(
        split["train_set"],
        split["test_set"],
        split.get("val_set"),
        split.get("rating_threshold", 1.0),
        split.get("exclude_unknowns", True),
        users,
    )


def _exact_table(models: dict, pools: _Pools, cutoff: int) -> pd.DataFrame:
    """``user``, ``item``, each model's two rank columns, ``n``: one row per held-out item."""
    frames = [_exact_ranks(model, pools, cutoff, name) for name, model in models.items()]
    exact = frames[0]
    for frame in frames[1:]:
        exact = exact.merge(frame, on=["user", "item", "n"])
    ranks = [c for c in exact.columns if c not in ("user", "item", "n")]
    return exact[["user", "item", *ranks, "n"]]


def _rank_files(
    models: dict, split: dict, protocol: str | Protocol, cutoff: int, seed: int, memory_mb: float
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`rank_files` once its arguments are checked: the exact ranks, then the
    protocol's draws a block of held-out items at a time (``cornac_rows.row_blocks``), each
    with its draws and tie order among all (``simulate_protocols``' ``start``)."""
    protocol = sampled_protocol(protocol)
    pools = _split_pools(split)
    exact = _exact_table(models, pools, cutoff)
    rows = held_out_rows(pools)
    blocks = row_blocks(rows.entries, memory_mb / 2 * 2**20 / BYTES_PER_ENTRY)
    popularity = None  # uniform draws weigh no item
    if protocol.alpha:  # the counts of every block's rows, not the block's own
        popularity = np.zeros(pools.n_columns)
        for a, b in blocks:
            popularity += interaction_counts(excluded_rows(pools, rows, a, b), rows.targets[a:b])
    n = exact["n"].to_numpy()
    sampled: dict = {name: [] for name in models}
    for a, b in blocks:
        excluded = excluded_rows(pools, rows, a, b)
        if not np.array_equal(pools.n_columns - np.diff(excluded.indptr), n[a:b]):
            raise RuntimeError("the pools of the sampled ranks are not cornac's")
        scorers = [
            _OrderScores(name, model, pools, rows.user[a:b], cutoff)
            for name, model in models.items()
        ]
        simulated = simulate_protocols(
            scorers, excluded, rows.targets[a:b], [protocol], repetitions=1, seed=seed,
            tie_policy="random", tie_seed=0, memory_mb=memory_mb / 2,
            exact_ranks=[exact[name].to_numpy()[a:b] for name in models], start=a,
            popularity=popularity,
        )[protocol.name]  # fmt: skip
        for k, name in enumerate(models):
            sampled[name].append(simulated.sampled[0, k])
        del excluded, simulated  # before the next block's
    columns = {
        name: np.concatenate([np.empty(0, np.int16), *parts]) for name, parts in sampled.items()
    }
    frame = {"user": exact["user"].to_numpy(), "item": exact["item"].to_numpy(), **columns}
    return exact, pd.DataFrame({**frame, "m": protocol.m, "n": n})
