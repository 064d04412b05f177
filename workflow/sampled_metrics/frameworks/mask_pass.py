"""The pass over blocks of users that simulates every protocol for every model from
their beaten masks, wherever the masks come from (a :class:`MaskSource`): the models'
scores (:func:`.protocol_pass.simulate_protocols`) or masks stored earlier
(:mod:`sampled_metrics.studies.protocols.stored`).

Each protocol is simulated by its pairing: paired protocols by one draw for all models
(``cells.simulate_cells`` for uniform draws, ``simulate.simulate`` otherwise), unpaired
ones by each model's own law (``unpaired.simulate_unpaired``). Each block's masks are
checked against the exact ranks (:func:`check_beaten_ranks`).
"""

from __future__ import annotations

from typing import NamedTuple
from typing import Protocol as Interface

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..io.forked import forked_imap
from ..passes.block_pass import SCORE_CHUNK, users_per_block
from ..passes.entries import row_counts
from .beaten import check_tie_order, tie_order_for
from .cells import simulator
from .simulate import ProtocolRanks, interaction_counts
from .unpaired import simulate_unpaired

__all__ = ["BlockWork", "MaskSource", "check_beaten_ranks", "simulate_masks"]


def simulate_masks(
    source: MaskSource,
    train: sp.spmatrix,
    test_items: ArrayLike,
    protocols: list,
    *,
    repetitions: int,
    seed: int,
    tie_policy: str,
    tie_seed: int,
    memory_mb: float,
    workers: int = 1,
    progress: bool = False,
    start: int = 0,
    popularity: np.ndarray | None = None,
    first_recommender: int = 0,
) -> dict:
    """Every protocol's sampled ranks of every user for every model of ``source``, over
    blocks of users within ``memory_mb``.

    Parameters
    ----------
    source : MaskSource
        Every model's beaten masks of a block of users.
    train, test_items, protocols, repetitions, seed, tie_policy, tie_seed, memory_mb,
    workers, progress, start, popularity
        As :func:`.protocol_pass.simulate_protocols`.
    first_recommender : int, default 0
        The index of the source's first model among the study's: the unpaired
        protocols' draws of a model depend on it (``unpaired.simulate_unpaired``), so a
        model simulated alone draws as among all. Paired protocols share their draws
        over the models given: simulate them with all of them.

    Returns
    -------
    dict
        {protocol name: ProtocolRanks of all users}.
    """
    if start % SCORE_CHUNK:
        raise ValueError(f"start must be a multiple of {SCORE_CHUNK} users, not {start}")
    X = train.tocsr()
    n_users, n_items = X.shape
    test_items = np.asarray(test_items, dtype=np.int64)
    counts = interaction_counts(X, test_items) if popularity is None else popularity
    weights = {p.name: counts**p.alpha if p.alpha else np.ones(n_items) for p in protocols}
    # the beaten masks each protocol reads: (tie order, history in the pool); the exact
    # ranks' order (history masked) always, to check them
    own = (tie_order_for("random", tie_policy), False)
    orders = list(dict.fromkeys([own] + [_mask_key(p, tie_policy) for p in protocols]))
    for order, _ in orders:
        check_tie_order(order)
    # bytes per user: the source's masks and arrays, two exclusion masks and the float64
    # product of a mask with the weights
    per_user = n_items * (source.bytes_per_score(len(orders)) + 3 + 8)
    workers = max(1, min(workers, -(-n_users // SCORE_CHUNK)))
    size = users_per_block(-(-per_user // 8), memory_mb / workers, bytes_per_score=8)
    size = min(size, max(1, _BLOCK_ARRAY_BYTES // (8 * n_items * SCORE_CHUNK)) * SCORE_CHUNK)
    if workers > 1:  # at least one block a worker
        size = min(size, SCORE_CHUNK * -(-n_users // (SCORE_CHUNK * workers)))
    work = BlockWork(
        source, X, test_items, protocols, weights, orders, own,
        dict(repetitions=repetitions, seed=seed), tie_policy, tie_seed, start, first_recommender,
    )  # fmt: skip
    blocks = [(a, min(a + size, n_users)) for a in range(0, n_users, size)]
    out: dict = {}
    done = forked_imap(
        _simulate_block, work, blocks, workers, progress="protocol study" if progress else None
    )
    for simulated in done:  # each block into the whole, as it comes
        for name, ranks in simulated.items():
            if name not in out:
                out[name] = _allocate(ranks, n_users, start)
            _fill(out[name], ranks, start)
    return out


# A block's largest arrays (users x items, float64) stay within this size, below glibc's
# mmap threshold (io.allocator): served from memory the process reuses, where larger ones
# are fresh pages the kernel zeroes every time.
_BLOCK_ARRAY_BYTES = 16 * 2**20


class MaskSource(Interface):
    """Where a block's beaten masks come from: every model's, one list per (tie order,
    history in the pool) key of ``BlockWork.orders``."""

    def bytes_per_score(self, n_orders: int) -> int:
        """Bytes a user's item costs the source while a block is made."""
        ...

    def beaten(self, w: BlockWork, a: int, b: int) -> dict:
        """{(order, history): [every model's beaten mask]} of users a..b-1."""
        ...


class BlockWork(NamedTuple):
    """What every block of :func:`simulate_masks` reads (inherited at fork)."""

    source: MaskSource
    X: sp.csr_matrix
    test_items: np.ndarray
    protocols: list
    weights: dict
    orders: list
    own: tuple  # (tie order, history): the masks the exact ranks are checked against
    draws: dict  # repetitions, seed
    tie_policy: str
    tie_seed: int
    start: int  # the first row's user in the population (draws and tie order)
    first_recommender: int  # the first model's index in the study (unpaired draws)


def _simulate_block(w: BlockWork, block: tuple) -> dict:
    """{protocol name: ProtocolRanks} of users a..b-1: their masks made once."""
    a, b = block
    X, test_items, n_items = w.X, w.test_items, w.X.shape[1]
    beaten = w.source.beaten(w, a, b)
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
        draws = dict(w.draws, start=w.start + a)
        if protocol.paired:
            simulate = simulator(protocol, w.weights[protocol.name], len(masks))
        else:
            simulate, draws["first_recommender"] = simulate_unpaired, w.first_recommender
        out[protocol.name] = simulate(
            protocol, masks, excluded, w.weights[protocol.name], test_items[a:b], **draws
        )
    return out


def _mask_key(protocol, tie_policy: str) -> tuple:
    """(tie order, history in the pool): the beaten masks ``protocol`` reads."""
    return tie_order_for(protocol.ties, tie_policy), protocol.history_in_pool


def check_beaten_ranks(beaten: np.ndarray, ranks: np.ndarray, model: object, start: int) -> None:
    """Raise a ValueError naming the model and the first user when 1 + the beaten items
    of users ``start..`` differ from their exact ranks."""
    counted = 1 + row_counts(beaten)
    wrong = np.flatnonzero(counted != ranks)
    if wrong.size:
        name = getattr(model, "name", type(model).__name__)
        user = start + int(wrong[0])
        raise ValueError(
            f"recommender {name!r}: {wrong.size} users' items ranked above the held-out item "
            f"disagree with the exact ranks, first user {user}: {counted[wrong[0]]} vs "
            f"{ranks[wrong[0]]:g} (a model or split other than the ranks')"
        )


def _allocate(part: ProtocolRanks, n_users: int, start: int) -> ProtocolRanks:
    """Arrays of all users (from user ``start``) for the ranks of which ``part`` is a block."""
    return ProtocolRanks(
        start,
        *(
            np.empty((*x.shape[:-1], n_users), x.dtype)
            for x in (part.sampled, part.hansen_hurwitz, part.weighted_rank)
        ),
    )


def _fill(whole: ProtocolRanks, part: ProtocolRanks, start: int) -> None:
    """Copy a block's ranks into the arrays of all users (the first of them user ``start``)."""
    users = slice(part.start - start, part.start - start + part.weighted_rank.shape[-1])
    whole.sampled[..., users] = part.sampled
    whole.hansen_hurwitz[..., users] = part.hansen_hurwitz
    whole.weighted_rank[..., users] = part.weighted_rank
