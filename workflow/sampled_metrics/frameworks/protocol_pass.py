"""Every protocol's sampled ranks of every user for every model, in one pass over
blocks of users, the scores of a block computed once.

Each block's scores give every model's beaten items (``beaten.beaten_items``) under
each tie order a protocol asks for (``registry.Protocol.ties``; the exact ranks' tie
policy where the framework's order is unspecified), the exact ranks' order checked
against the exact ranks; protocols whose pool holds the user's history
(``history_in_pool``, RecBole's sequential models) get them from the unmasked scores.
The protocols are then simulated block by block (:func:`.mask_pass.simulate_masks`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..passes.block_pass import score_users
from ..passes.ranking import mask_training_items
from .beaten import beaten_items
from .mask_pass import BlockWork, check_beaten_ranks, simulate_masks

__all__ = ["simulate_protocols"]


def simulate_protocols(
    models: list,
    train: sp.spmatrix,
    test_items: ArrayLike,
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
    return simulate_masks(
        _Scored(models, exact_ranks), train, test_items, protocols, repetitions=repetitions,
        seed=seed, tie_policy=tie_policy, tie_seed=tie_seed, memory_mb=memory_mb,
        workers=workers, progress=progress, start=start, popularity=popularity,
    )  # fmt: skip


class _Scored(NamedTuple):
    """Beaten masks from the models' scores."""

    models: list
    exact_ranks: list | None

    def bytes_per_score(self, n_orders: int) -> int:
        """Every model's masks and a model's float32 scores."""
        return len(self.models) * n_orders + 4

    def beaten(self, w: BlockWork, a: int, b: int) -> dict:
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
                check_beaten_ranks(beaten[w.own][-1], ranks, model, w.start + a)
        return beaten
