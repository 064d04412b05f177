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

Nothing here imports cornac: the functions call the model's ``rank`` and read the
data sets' ``csr_matrix``, ``uir_tuple``, ``num_items`` and id maps, as
``ranking_eval`` does; they run in the environment that trained the model
(``.ci/envs/cornac.sh``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ..rank_files import rank_files as _generic_rank_files

__all__ = ["cornac_order", "evaluation_split", "exact_ranks", "max_cutoff", "rank_files"]


def max_cutoff(k) -> int:
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


def evaluation_split(eval_method, on: str = "test") -> dict:
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


@dataclass
class _Pools:
    """ranking_eval's sets of every evaluated user, in user order."""

    users: np.ndarray  # cornac's user indices
    positives: list  # each user's positive test items (ground truth)
    candidates: list  # each user's item_indices: positives and negatives
    n_columns: int  # the items a row of scores covers
    user_ids: dict  # user index -> raw id
    item_ids: dict  # item index -> raw id


def _pools(train_set, test_set, val_set, rating_threshold, exclude_unknowns) -> _Pools:
    """What ``ranking_eval`` (cornac/eval_methods/base_method.py) ranks for each user."""
    test_mat, train_mat = test_set.csr_matrix, train_set.csr_matrix
    val_mat = None if val_set is None else val_set.csr_matrix

    def positive(matrix, user):
        if matrix is None or user >= matrix.shape[0]:
            return np.empty(0, dtype=np.int64)
        start, end = matrix.indptr[user], matrix.indptr[user + 1]
        return matrix.indices[start:end][matrix.data[start:end] >= rating_threshold]

    n_columns = train_set.num_items if exclude_unknowns else test_set.num_items
    users, positives, candidates = [], [], []
    for user in sorted({int(u) for u in test_set.uir_tuple[0]}):
        pos = positive(test_mat, user)
        if pos.size == 0:
            continue  # ranking_eval: a user without positive test items is skipped
        pos_mask = np.zeros(test_set.num_items, dtype=bool)
        pos_mask[pos] = True
        neg_mask = np.ones(test_set.num_items, dtype=bool)
        neg_mask[pos] = False
        neg_mask[positive(val_mat, user)] = False
        neg_mask[positive(train_mat, user)] = False
        pos_mask, neg_mask = pos_mask[:n_columns], neg_mask[:n_columns]
        users.append(user)
        positives.append(np.flatnonzero(pos_mask))
        candidates.append(np.flatnonzero(pos_mask | neg_mask))
    if not users:
        raise ValueError("no test user has a positive test item: nothing is evaluated")
    item_ids = {}
    for dataset in (train_set, test_set, val_set):
        if dataset is not None:
            item_ids.update({index: raw for raw, index in dataset.iid_map.items()})
    user_ids = {index: raw for raw, index in test_set.uid_map.items()}
    return _Pools(np.array(users), positives, candidates, n_columns, user_ids, item_ids)


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
    cutoff = max_cutoff(k)
    name = model.name if name is None else name
    pools = _pools(train_set, test_set, val_set, rating_threshold, exclude_unknowns)
    rows = []
    for user, pos, candidates in zip(pools.users, pools.positives, pools.candidates):
        order, scores = cornac_order(model, int(user), candidates, cutoff)
        negative_order = ~np.isin(order, pos)
        before = np.cumsum(negative_order) - negative_order  # negatives before each place
        place = dict(zip(order.tolist(), before.tolist()))
        negative_scores = scores[~np.isin(candidates, pos)]
        for item in pos:
            score = scores[np.searchsorted(candidates, item)]
            rows.append(
                (
                    pools.user_ids[int(user)],
                    pools.item_ids.get(int(item), int(item)),
                    1 + place[int(item)],
                    1 + int(np.count_nonzero(negative_scores >= score)),
                    1 + negative_scores.size,
                )
            )
    return pd.DataFrame(rows, columns=["user", "item", name, f"{name}_pessimistic", "n"])


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
                user, candidates = self.pools.users[position], self.pools.candidates[position]
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
    if split is None:
        if eval_method is None:
            raise ValueError("give eval_method or split")
        split = evaluation_split(eval_method, on)
    cutoff = max_cutoff(k)
    if not isinstance(models, dict):
        models = {model.name: model for model in models}
    if not models:
        raise ValueError("models is empty")
    exact = None
    for name, model in models.items():
        frame = exact_ranks(model, **split, k=cutoff, name=name)
        exact = frame if exact is None else exact.merge(frame, on=["user", "item", "n"])
    exact = exact[
        ["user", "item", *[c for c in exact.columns if c not in ("user", "item", "n")], "n"]
    ]
    pools = _pools(
        split["train_set"],
        split["test_set"],
        split.get("val_set"),
        split.get("rating_threshold", 1.0),
        split.get("exclude_unknowns", True),
    )
    # One row per held-out item: its user's row, with the user's other positives
    # excluded as the pool excludes them.
    rows_user, targets, excluded_rows = [], [], []
    for position, (pos, candidates) in enumerate(zip(pools.positives, pools.candidates)):
        outside = np.setdiff1d(np.arange(pools.n_columns), candidates)
        for item in pos:
            rows_user.append(position)
            targets.append(int(item))
            excluded_rows.append(np.union1d(outside, pos[pos != item]))
    indptr = np.concatenate([[0], np.cumsum([e.size for e in excluded_rows])])
    indices = np.concatenate(excluded_rows).astype(np.int64)
    train = sp.csr_matrix(
        (np.ones(indices.size), indices, indptr), shape=(len(targets), pools.n_columns)
    )
    scorers = {
        name: _OrderScores(model, pools, rows_user, cutoff) for name, model in models.items()
    }
    generic_exact, sampled = _generic_rank_files(
        scorers, train, np.array(targets), protocol, seed=seed, memory_mb=memory_mb
    )
    for name in models:
        if not np.array_equal(generic_exact[name].to_numpy(), exact[name].to_numpy()):
            raise RuntimeError(f"{name}: the generic path's exact ranks are not cornac's")
    if not np.array_equal(generic_exact["n"].to_numpy(), exact["n"].to_numpy()):
        raise RuntimeError("the generic path's pools are not cornac's")
    sampled.insert(0, "item", exact["item"].to_numpy())
    sampled["user"] = exact["user"].to_numpy()
    return exact, sampled[["user", "item", *models, "m", "n"]]
