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
  same models by one of this package's protocols (``"ncf"``: 1 + 99, ...), drawn by
  :func:`~sampled_metrics.frameworks.rank_files.rank_files` from cornac's own order,
  so that a sampled item counts above the held-out item exactly when cornac's full
  ranking puts it above.

The functions call the model's ``rank`` and read the data sets' ``csr_matrix``,
``uir_tuple``, ``num_items`` and id maps, as ``ranking_eval`` does; they import cornac
only to say, where it is missing, that they run in the environment that trained the
model (``.ci/envs/cornac.sh``): :class:`~.FrameworkNotInstalled`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..rank_files import rank_files as _generic_rank_files
from . import UnknownUser, not_installed
from .cornac_split import evaluation_split, max_cutoff
from .quiet import quiet

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


def cornac_order(model, user_idx: int, item_indices, k: int = -1) -> tuple:
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
    model,
    train_set,
    test_set,
    val_set=None,
    *,
    rating_threshold: float = 1.0,
    exclude_unknowns: bool = True,
    k=-1,
    name: str | None = None,
    users=None,
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
        before = np.cumsum(negative_order) - negative_order  # negatives before each place
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
    columns = {"user": users, "item": items, name: ranks, f"{name}_pessimistic": pessimistic}
    columns["n"] = n
    for key in (name, f"{name}_pessimistic", "n"):
        columns[key] = np.concatenate([np.empty(0), *columns[key]]).astype(np.int64)
    return pd.DataFrame(columns)


class _OrderScores:
    """Scores that order each row's candidates as cornac does and tie nowhere: the
    candidate at place j of cornac's order scores (number of candidates - j), the other
    columns 0 (they are excluded). Float32 holds them exactly below 2 ** 24 items."""

    def __init__(self, model, pools, rows_user, k):
        self.model, self.pools, self.rows_user, self.k = model, pools, rows_user, k
        self.name = model.name

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
    models,
    eval_method=None,
    protocol="ncf",
    *,
    k=-1,
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
        Budget of a block of rows' scores.
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
    RuntimeError
        If the generic path's exact ranks (from cornac's order) differ from
        :func:`exact_ranks`: the sampled ranks would not be cornac's.
    """
    require_cornac()
    models, split, cutoff = _checked(models, eval_method, k, on, split)
    with quiet():
        return _rank_files(models, split, protocol, cutoff, seed, memory_mb)


def exact_rank_table(models, eval_method=None, *, k=-1, on="test", users=None, split=None):
    """The exact file of :func:`rank_files` alone (no sampled ranks), of every evaluated
    user or of ``users`` (raw ids) only: only they are ranked, each as in the evaluation
    of every user (:func:`exact_ranks`; ``models``, ``eval_method``, ``k``, ``on``,
    ``split``: :func:`rank_files`')."""
    require_cornac()
    models, split, cutoff = _checked(models, eval_method, k, on, split)
    with quiet():
        return _exact_table(models, _split_pools(split, users), cutoff)


def _checked(models, eval_method, k, on, split) -> tuple:
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
    exact = None
    for name, model in models.items():
        frame = _exact_ranks(model, pools, cutoff, name)
        exact = frame if exact is None else exact.merge(frame, on=["user", "item", "n"])
    ranks = [c for c in exact.columns if c not in ("user", "item", "n")]
    return exact[["user", "item", *ranks, "n"]]


def _rank_files(models: dict, split: dict, protocol, cutoff: int, seed: int, memory_mb: float):
    """:func:`rank_files` once its arguments are checked."""
    pools = _split_pools(split)
    exact = _exact_table(models, pools, cutoff)
    rows_user, targets, train = _held_out_rows(pools)
    scorers = {
        name: _OrderScores(model, pools, rows_user, cutoff) for name, model in models.items()
    }
    generic_exact, sampled = _generic_rank_files(
        scorers, train, targets, protocol, seed=seed, memory_mb=memory_mb
    )
    for name in models:
        if not np.array_equal(generic_exact[name].to_numpy(), exact[name].to_numpy()):
            raise RuntimeError(f"{name}: the generic path's exact ranks are not cornac's")
    if not np.array_equal(generic_exact["n"].to_numpy(), exact["n"].to_numpy()):
        raise RuntimeError("the generic path's pools are not cornac's")
    sampled.insert(0, "item", exact["item"].to_numpy())
    sampled["user"] = exact["user"].to_numpy()
    return exact, sampled[["user", "item", *models, "m", "n"]]


def _held_out_rows(pools: _Pools) -> tuple:
    """One row per held-out item, in the order of :func:`exact_ranks`' rows: its user's
    position, the item, and a csr matrix (rows, n_columns) of what the row does not
    rank: the items outside its user's candidates and the user's other positives.

    Built in two passes over the users (the sizes, then the entries) into int32 indices
    and int8 ones: no array per row, no copy of the entries."""
    sizes = []  # per user: (its positives, entries of each of its rows)
    for position, pos in enumerate(pools.positives):
        outside = pools.n_columns - pools.candidates(position).size
        sizes.append((pos.size, outside + pos.size - 1))
    rows = np.array([count for count, _ in sizes], dtype=np.int64)
    per_row = np.repeat([size for _, size in sizes], rows)
    indptr = np.concatenate([[0], np.cumsum(per_row)])
    indices = np.empty(int(indptr[-1]), dtype=np.int32)
    start = 0
    for position, pos in enumerate(pools.positives):
        if pos.size == 0:
            continue
        kept = np.ones(pools.n_columns, dtype=bool)
        kept[pools.candidates(position)] = False
        kept[pos] = True
        base = np.flatnonzero(kept).astype(np.int32)  # outside and every positive
        block = np.broadcast_to(base, (pos.size, base.size))
        block = block[block != pos[:, None].astype(np.int32)]  # each row drops its own item
        indices[start : start + block.size] = block
        start += block.size
    data = np.ones(indices.size, dtype=np.int8)
    train = sp.csr_matrix((data, indices, indptr), shape=(int(rows.sum()), pools.n_columns))
    rows_user = np.repeat(np.arange(len(pools.positives)), rows)
    return rows_user, np.concatenate(pools.positives).astype(np.int64), train
