"""The protocol study's pass over blocks of users: every protocol's sampled ranks of
every user for every model, the scores of a block computed once.

Each block's scores give every model's beaten items (``beaten.beaten_items``) under
each tie order a protocol asks for (``registry.Protocol.ties``; the pipeline's tie
policy where the framework's order is unspecified), the exact ranks' order checked
against the exact ranks; protocols whose pool holds the user's history
(``history_in_pool``, RecBole's sequential models) get them from the unmasked scores.
Then each protocol is simulated by its pairing: paired protocols by one draw for all
models (``cells.simulate_cells`` for uniform draws, ``simulate.simulate`` otherwise),
unpaired ones by each model's own law (``unpaired.simulate_unpaired``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..io.forked import forked_map
from ..passes.block_pass import SCORE_CHUNK, score_users, users_per_block
from ..passes.ranking import mask_training_items
from .beaten import beaten_items, tie_order_for
from .cells import simulator
from .simulate import ProtocolRanks, interaction_counts
from .unpaired import simulate_unpaired

__all__ = ["simulate_protocols"]


def simulate_protocols(
    models: list,
    train,
    test_items,
    protocols: list,
    *,
    repetitions: int,
    seed: int,
    tie_policy: str,
    tie_seed: int,
    memory_mb: float,
    exact_ranks: list | None = None,
    workers: int = 1,
    progress: bool = False,
) -> dict:
    """Every protocol's sampled ranks of every user for every model, in one pass over
    blocks of users whose scores are computed once (as ``block_pass.rank_users``).

    Parameters
    ----------
    models : list
        Fitted models (``scores(users)``, optionally ``name``).
    train : scipy.sparse.csr_matrix (n_users, n_items)
    test_items : array_like of int (n_users,)
    protocols : list of Protocol
    repetitions, seed : int
        Repetitions of each protocol; the seed of the draws.
    tie_policy : str
        As the exact ranks'.
    tie_seed : int
        The seed of the exact ranks' "random" tie order.
    memory_mb : float
        Budget of a block's arrays.
    exact_ranks : list of array_like, optional
        Each model's exact ranks: checked against 1 + the beaten items.
    workers : int, default 1
        Processes (forked) over the blocks, each within ``memory_mb / workers``; the
        draws are seeded by chunks of users, so the result is the same.
    progress : bool, default False
        A tqdm bar over blocks.

    Returns
    -------
    dict
        {protocol name: ProtocolRanks of all users}.

    Raises
    ------
    ValueError
        When the beaten items of a model disagree with its exact ranks.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from sampled_metrics.recommenders import PrecomputedScores
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
    >>> model = PrecomputedScores(np.tile(np.arange(40.0), (3, 1)))  # item 39 first
    >>> train = sp.csr_matrix(np.eye(3, 40))
    >>> out = simulate_protocols([model], train, [30, 31, 32],
    ...                          [FRAMEWORK_PROTOCOLS["recbole-uni100"]], repetitions=2,
    ...                          seed=0, tie_policy="random", tie_seed=0, memory_mb=8)
    >>> out["recbole-uni100"].weighted_rank.tolist()  # 9, 8, 7 items above
    [[10.0, 9.0, 8.0]]
    """
    X = train.tocsr()
    n_users, n_items = X.shape
    test_items = np.asarray(test_items, dtype=np.int64)
    counts = interaction_counts(X, test_items)
    weights = {p.name: counts**p.alpha if p.alpha else np.ones(n_items) for p in protocols}
    # the beaten masks each protocol reads: (tie order, history in the pool); the exact
    # ranks' order (history masked) always, to check them
    own = (tie_order_for("random", tie_policy), False)
    orders = list(dict.fromkeys([own] + [_mask_key(p, tie_policy) for p in protocols]))
    # bytes per user: the models' beaten masks, two exclusion masks, float32 scores and
    # the float64 product of a mask with the weights
    per_user = n_items * (len(models) * len(orders) + 3 + 4 + 8)
    workers = max(1, min(workers, -(-n_users // SCORE_CHUNK)))
    size = users_per_block(-(-per_user // 8), memory_mb / workers, bytes_per_score=8)
    if workers > 1:  # at least one block a worker
        size = min(size, SCORE_CHUNK * -(-n_users // (SCORE_CHUNK * workers)))
    work = _StudyWork(
        models, X, test_items, protocols, weights, orders, own,
        dict(repetitions=repetitions, seed=seed), tie_policy, tie_seed, exact_ranks,
    )  # fmt: skip
    blocks = [(a, min(a + size, n_users)) for a in range(0, n_users, size)]
    parts: dict = {p.name: [] for p in protocols}
    done = forked_map(
        _simulate_block, work, blocks, workers, progress="protocol study" if progress else None
    )
    for simulated in done:
        for name, ranks in simulated.items():
            parts[name].append(ranks)
    return {name: _concatenate(blocks) for name, blocks in parts.items()}


class _StudyWork(NamedTuple):
    """What every block of :func:`simulate_protocols` reads (inherited at fork)."""

    models: list
    X: object
    test_items: np.ndarray
    protocols: list
    weights: dict
    orders: list
    own: tuple
    draws: dict  # repetitions, seed
    tie_policy: str
    tie_seed: int
    exact_ranks: list | None


def _simulate_block(w: _StudyWork, block: tuple) -> dict:
    """{protocol name: ProtocolRanks} of users a..b-1: their scores computed once."""
    a, b = block
    X, test_items, n_items = w.X, w.test_items, w.X.shape[1]
    users = np.arange(a, b)
    beaten: dict = {key: [] for key in w.orders}
    for k, model in enumerate(w.models):
        S = score_users(model, a, b)
        for order, history in w.orders:
            if history:  # scored as the model scores them, before masking
                beaten[order, history].append(
                    beaten_items(S, test_items[a:b], users, order, w.tie_seed)
                )
        mask_training_items(S, X, a, b)
        for order, history in w.orders:
            if not history:
                beaten[order, history].append(
                    beaten_items(S, test_items[a:b], users, order, w.tie_seed)
                )
        if w.exact_ranks is not None:
            _check_ranks(beaten[w.own][-1], np.asarray(w.exact_ranks[k])[a:b], model, a)
    training = np.zeros((b - a, n_items), dtype=bool)
    rows = np.repeat(np.arange(b - a), np.diff(X.indptr[a : b + 1]))
    training[rows, X.indices[X.indptr[a] : X.indptr[b]]] = True
    without_target = training.copy()
    without_target[np.arange(b - a), test_items[a:b]] = True
    target_only = np.zeros((b - a, n_items), dtype=bool)
    target_only[np.arange(b - a), test_items[a:b]] = True
    out = {}
    for protocol in w.protocols:
        if protocol.history_in_pool:
            excluded = target_only
        else:
            excluded = training if protocol.target_in_pool else without_target
        masks = beaten[_mask_key(protocol, w.tie_policy)]
        if protocol.paired:
            simulate = simulator(protocol, w.weights[protocol.name], len(w.models))
        else:
            simulate = simulate_unpaired
        out[protocol.name] = simulate(
            protocol, masks, excluded, w.weights[protocol.name], test_items[a:b], start=a,
            **w.draws,
        )  # fmt: skip
    return out


def _mask_key(protocol, tie_policy: str) -> tuple:
    """(tie order, history in the pool): the beaten masks ``protocol`` reads."""
    return tie_order_for(protocol.ties, tie_policy), protocol.history_in_pool


def _check_ranks(beaten: np.ndarray, ranks: np.ndarray, model, start: int) -> None:
    counted = 1 + np.count_nonzero(beaten, axis=1)
    wrong = np.flatnonzero(counted != ranks)
    if wrong.size:
        name = getattr(model, "name", type(model).__name__)
        user = start + int(wrong[0])
        raise ValueError(
            f"recommender {name!r}: {wrong.size} users' items ranked above the held-out item "
            f"disagree with the exact ranks, first user {user}: {counted[wrong[0]]} vs "
            f"{ranks[wrong[0]]:g} (a model or split other than the ranks')"
        )


def _concatenate(blocks: list) -> ProtocolRanks:
    return ProtocolRanks(
        0,
        np.concatenate([b.sampled for b in blocks], axis=2),
        np.concatenate([b.hansen_hurwitz for b in blocks], axis=2),
        np.concatenate([b.weighted_rank for b in blocks], axis=1),
    )
