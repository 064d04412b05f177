"""The ranking pass as the workflow runs it: one range of users (a shard) ranked from a
stored model, the draw plan and the split, in one pass over their scores
(``passes.block_pass.rank_users``) that also stores the protocol study's beaten items
(``studies.protocols.beaten_files.BeatenWriter``). Rule ``rank_shard`` runs it for one
shard of several; with one shard, rule ``merge_ranks`` runs it itself, so that no job
reads the split and writes a shard file only for another job to join it."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ..data import Split
from ..passes.block_pass import rank_users, shard_bounds
from ..passes.draw_plan import load_draw_plan
from ..passes.user_ranks import UserRanks
from ..recommenders import load_model
from ..studies.protocols.beaten_files import BeatenWriter

__all__ = ["rank_shard"]


def rank_shard(
    split: Split,
    model_path: str | Path,
    plan_path: str | Path,
    shard: tuple[int, int],
    beaten_path: str | Path,
    *,
    layers: list[bool],
    tie_policy: str,
    tie_seed: int,
    memory_mb: float,
    log: logging.Logger,
) -> UserRanks:
    """The exact, pessimistic and sampled ranks of shard ``index`` of ``shards``
    (``shard = (index, shards)``, users cut by ``block_pass.shard_bounds``), the beaten
    items of its ``layers`` written to ``beaten_path`` on the way.

    Parameters
    ----------
    split : data.Split
    model_path, plan_path : str or pathlib.Path
        A model of ``recommenders.save_model``, a plan of ``passes.draw_plan.save_draw_plan``.
    shard : (int, int)
        (index, shards), the index from 0.
    beaten_path : str or pathlib.Path
    layers : list of bool
        ``beaten_files.study_layers`` of the protocol study.
    tie_policy : str
    tie_seed : int
        The random tie order's seed, shared by exact and sampled ranks.
    memory_mb : float
        The budget of a block of users' scores.
    log : logging.Logger

    Returns
    -------
    passes.user_ranks.UserRanks
    """
    index, shards = shard
    model = load_model(model_path)
    plan = load_draw_plan(plan_path)
    start, stop = shard_bounds(split.n_users, shards)[index]
    log.info("shard %d of %d: users %d..%d", index + 1, shards, start, stop - 1)
    n_items = split.train.shape[1]
    with BeatenWriter(beaten_path, layers, start, stop, split.test_items, n_items) as beaten:
        ranks = rank_users(
            model,
            split.train,
            split.test_items,
            plan,
            start,
            stop,
            tie_policy=tie_policy,
            tie_seed=tie_seed,
            memory_mb=memory_mb,
            user_ids=split.user_ids,
            beaten=beaten,
            progress=True,
        )
    if ranks.rank.size:
        log.info(
            "median rank %.0f, mean sampled rank %.2f",
            np.median(ranks.rank),
            ranks.sampled.mean(),
        )
    return ranks
