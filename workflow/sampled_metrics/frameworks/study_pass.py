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

from ..io.forked import forked_imap
from ..passes.block_pass import SCORE_CHUNK, score_users, users_per_block
from ..passes.entries import row_counts
from ..passes.ranking import mask_training_items
from .beaten import beaten_items, check_tie_order, order_ties, tie_order_for
from .beaten_files import study_layers
from .cells import simulator
from .simulate import ProtocolRanks, interaction_counts
from .unpaired import simulate_unpaired

__all__ = ["simulate_protocols", "simulate_stored_protocols"]


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
    start: int = 0,
    popularity: np.ndarray | None = None,
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
    start : int, default 0
        The rows of ``train`` are users ``start..`` of a larger population (a multiple
        of ``SCORE_CHUNK``): each keeps its draws and tie order there, so that the
        population can be simulated a block of users at a time (with its
        ``popularity``).
    popularity : numpy.ndarray (n_items,), optional
        The items' interaction counts the popularity protocols weigh with (default
        ``simulate.interaction_counts(train, test_items)``).

    Returns
    -------
    dict
        {protocol name: ProtocolRanks of all users}.

    Raises
    ------
    ValueError
        When the beaten items of a model disagree with its exact ranks, or ``start`` is
        not a multiple of ``SCORE_CHUNK``.

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
    if start % SCORE_CHUNK:
        raise ValueError(f"start must be a multiple of {SCORE_CHUNK} users, not {start}")
    source = _Scored(models, exact_ranks)
    return _simulate(source, train, test_items, protocols, repetitions, seed, tie_policy,
                     tie_seed, memory_mb, workers, progress, start, popularity)  # fmt: skip


def simulate_stored_protocols(
    beaten: list,
    train,
    test_items,
    protocols: list,
    *,
    repetitions: int,
    seed: int,
    tie_policy: str,
    tie_seed: int,
    memory_mb: float,
    exact_ranks: list,
    workers: int = 1,
    progress: bool = False,
) -> dict:
    """:func:`simulate_protocols` from the masks the ranking pass stored: no model is
    loaded or scored again. Equal to :func:`simulate_protocols` of the models whose
    ranking pass stored them.

    Parameters
    ----------
    beaten : list of beaten_files.StoredBeaten
        Each model's stored masks, with every layer ``protocols`` read.
    exact_ranks : list of array_like
        Each model's exact ranks: checked against 1 + the beaten items (the masks
        belong to these ranks' model, split and tie order).
    train, test_items, protocols, repetitions, seed, tie_policy, tie_seed, memory_mb,
    workers, progress
        As :func:`simulate_protocols`.

    Returns
    -------
    dict
        {protocol name: ProtocolRanks of all users}.

    Raises
    ------
    ValueError
        When the masks lack a layer the protocols read, or disagree with the exact ranks.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> import scipy.sparse as sp
    >>> from sampled_metrics.frameworks.beaten_files import BeatenWriter, StoredBeaten
    >>> from sampled_metrics.passes.ranking import above_and_tied
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
    >>> S, test = np.tile(np.arange(40.0), (3, 1)), [30, 31, 32]  # item 39 first
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "M.beaten.npy"
    >>> with BeatenWriter(path, [False], 0, 3, test, 40) as writer:
    ...     writer.masked(*above_and_tied(S, test), 0, 3)  # as the ranking pass does
    >>> stored = StoredBeaten([path], [(0, 3)], [False], 40, name="M")
    >>> out = simulate_stored_protocols([stored], sp.csr_matrix((3, 40)), test,
    ...                                 [FRAMEWORK_PROTOCOLS["recbole-uni100"]], repetitions=2,
    ...                                 seed=0, tie_policy="random", tie_seed=0, memory_mb=8,
    ...                                 exact_ranks=[[10, 9, 8]])
    >>> out["recbole-uni100"].weighted_rank.tolist()
    [[10.0, 9.0, 8.0]]
    """
    for stored in beaten:
        missing = sorted(set(study_layers(protocols)) - set(stored.layers))
        if missing:
            raise ValueError(
                f"the stored beaten items of {stored.name!r} lack the layers {missing}"
            )
    source = _Stored(beaten, exact_ranks)
    return _simulate(source, train, test_items, protocols, repetitions, seed, tie_policy,
                     tie_seed, memory_mb, workers, progress)  # fmt: skip


def _simulate(source, train, test_items, protocols, repetitions, seed, tie_policy, tie_seed,
              memory_mb, workers, progress, start=0, popularity=None) -> dict:  # fmt: skip
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
    work = _StudyWork(
        source, X, test_items, protocols, weights, orders, own,
        dict(repetitions=repetitions, seed=seed), tie_policy, tie_seed, start,
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


class _StudyWork(NamedTuple):
    """What every block of :func:`_simulate` reads (inherited at fork)."""

    source: object  # _Scored or _Stored
    X: object
    test_items: np.ndarray
    protocols: list
    weights: dict
    orders: list
    own: tuple
    draws: dict  # repetitions, seed
    tie_policy: str
    tie_seed: int
    start: int  # the first row's user in the population (draws and tie order)


class _Scored(NamedTuple):
    """Beaten masks from the models' scores."""

    models: list
    exact_ranks: list | None

    def bytes_per_score(self, n_orders: int) -> int:
        """Every model's masks and a model's float32 scores."""
        return len(self.models) * n_orders + 4

    def beaten(self, w: _StudyWork, a: int, b: int) -> dict:
        """{(order, history): [every model's beaten mask]} of users a..b-1."""
        X, test_items = w.X, w.test_items
        users = np.arange(w.start + a, w.start + b)
        beaten: dict = {key: [] for key in w.orders}
        for k, model in enumerate(self.models):
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
            if self.exact_ranks is not None:
                ranks = np.asarray(self.exact_ranks[k])[a:b]
                _check_ranks(beaten[w.own][-1], ranks, model, w.start + a)
        return beaten


def _simulate_block(w: _StudyWork, block: tuple) -> dict:
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
        if protocol.paired:
            simulate = simulator(protocol, w.weights[protocol.name], len(masks))
        else:
            simulate = simulate_unpaired
        out[protocol.name] = simulate(
            protocol, masks, excluded, w.weights[protocol.name], test_items[a:b],
            start=w.start + a, **w.draws,
        )  # fmt: skip
    return out


class _Stored(NamedTuple):
    """Beaten masks from the masks the ranking pass stored (``beaten_files``)."""

    stored: list  # StoredBeaten, a model each
    exact_ranks: list

    def bytes_per_score(self, n_orders: int) -> int:
        """Every model's masks, and a model's above and tied masks and a temporary."""
        return len(self.stored) * n_orders + 3

    def beaten(self, w: _StudyWork, a: int, b: int) -> dict:
        """{(order, history): [every model's beaten mask]} of users a..b-1."""
        users, test = np.arange(w.start + a, w.start + b), w.test_items[a:b]
        beaten: dict = {key: [] for key in w.orders}
        for k, stored in enumerate(self.stored):
            layers = stored.masks(a, b)
            for order, history in w.orders:
                above, tied = layers[history]
                beaten[order, history].append(
                    order_ties(above, tied, test, users, order, w.tie_seed)
                )
            del layers
            ranks = np.asarray(self.exact_ranks[k])[a:b]
            _check_ranks(beaten[w.own][-1], ranks, stored, w.start + a)
        return beaten


def _mask_key(protocol, tie_policy: str) -> tuple:
    """(tie order, history in the pool): the beaten masks ``protocol`` reads."""
    return tie_order_for(protocol.ties, tie_policy), protocol.history_in_pool


def _check_ranks(beaten: np.ndarray, ranks: np.ndarray, model, start: int) -> None:
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
