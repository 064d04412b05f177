"""The protocol study's simulation from the masks the ranking pass stored
(:mod:`.beaten_files`): every protocol's sampled ranks without scoring a model again,
equal to :func:`~sampled_metrics.frameworks.protocol_pass.simulate_protocols` of the
models whose masks they are.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ...frameworks.beaten import order_ties
from ...frameworks.mask_pass import BlockWork, check_beaten_ranks, simulate_masks
from .beaten_files import study_layers

__all__ = ["simulate_stored_protocols"]


def simulate_stored_protocols(
    beaten: list,
    train: sp.spmatrix,
    test_items: ArrayLike,
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
    first_recommender: int = 0,
) -> dict:
    """Every protocol's sampled ranks from the masks the ranking pass stored: no model is
    loaded or scored again. Equal to
    :func:`~sampled_metrics.frameworks.protocol_pass.simulate_protocols` of the models
    whose ranking pass stored them.

    Parameters
    ----------
    beaten : list of beaten_files.StoredBeaten
        Each model's stored masks, with every layer ``protocols`` read.
    exact_ranks : list of array_like
        Each model's exact ranks: checked against 1 + the beaten items (the masks
        belong to these ranks' model, split and tie order).
    train, test_items, protocols, repetitions, seed, tie_policy, tie_seed, memory_mb,
    workers, progress
        As :func:`~sampled_metrics.frameworks.protocol_pass.simulate_protocols`.
    first_recommender : int, default 0
        As :func:`~sampled_metrics.frameworks.mask_pass.simulate_masks`'.

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
    >>> from sampled_metrics.studies.protocols.beaten_files import BeatenWriter, StoredBeaten
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
    return simulate_masks(
        _Stored(beaten, exact_ranks), train, test_items, protocols, repetitions=repetitions,
        seed=seed, tie_policy=tie_policy, tie_seed=tie_seed, memory_mb=memory_mb,
        workers=workers, progress=progress, first_recommender=first_recommender,
    )  # fmt: skip


class _Stored(NamedTuple):
    """Beaten masks from the masks the ranking pass stored (``beaten_files``)."""

    stored: list  # StoredBeaten, a model each
    exact_ranks: list

    def bytes_per_score(self, n_orders: int) -> int:
        """Every model's masks, and a model's above and tied masks and a temporary."""
        return len(self.stored) * n_orders + 3

    def beaten(self, w: BlockWork, a: int, b: int) -> dict:
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
            check_beaten_ranks(beaten[w.own][-1], ranks, stored, w.start + a)
        return beaten
