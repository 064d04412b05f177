"""RecBole's evaluation, rank by rank: the sampled rank of every held-out item as
RecBole's ``uniN`` / ``popN`` evaluation drew and scored it, and its exact rank from
RecBole's full sorting, in the command line's rank-file format (docs/recbole.md).

Read in RUCAIBox/RecBole 1.2.1: ``Trainer.evaluate`` passes each batch's scores, a
users x items matrix, to ``trainer.eval_collector.eval_batch_collect``, which orders
each row by ``torch.topk``. In a ``uniN`` / ``popN`` evaluation the matrix is -inf
outside the held-out items and the items drawn for them (``_neg_sample_batch_eval``:
an item drawn twice is one column); in full sorting it is -inf on ``[PAD]`` and the
user's history (``_full_sort_batch_eval``). RecBole has no public way to get the ranks
out, so the one shim here, :class:`RankRecorder`, wraps ``eval_batch_collect`` of one
trainer for the time of an ``evaluate`` call, and reads each held-out item's rank off
the same scores with the same ``torch.topk`` call: Hit@k, NDCG@k and MRR@k of the file
are RecBole's printed metrics, ties included. Below RecBole's top k, where no metric of
RecBole looks and ``torch.topk`` orders nothing, a held-out item tied with other items
takes a seeded uniformly random place among them (the pipeline's ``random`` tie policy,
:func:`held_out_ranks`), unless ``ties`` asks for another order.

Each row is one held-out item: ``user`` (RecBole's token), the rank (a column named
after the model), for a sampled evaluation ``m`` (the distinct items drawn for the
row, which is what RecBole ranks against), and ``n`` (the pool the items were drawn
from, plus one). The rank counts only drawn (or, in full sorting, non-history) items
above the held-out item, not the user's other held-out items. Beside each file its
sidecar (``frameworks.rank_meta``) names the protocol (``recbole-uniN``,
``recbole-popN``, ``recbole-seq-uniN``, ``full``: :func:`protocol_of`) and the law
that reads it exactly (hypergeometric in column m for ``uniN``), so that
``sampled-metrics correct FILE`` needs no option.

recbole and torch are imported inside the functions: the module imports without them
(and raises :class:`~sampled_metrics.frameworks.adapters.FrameworkNotInstalled` on use).
``sampled-metrics recbole`` (``sampled_metrics.cli.recbole``) is the command.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...io.atomic import sha256
from ..rank_meta import rank_meta, write_rank_file
from ..registry import FULL, protocol_by_name
from .quiet import quiet
from .recbole_data import chosen_users, eval_loader, require_recbole, trusted_pickles, unpickled
from .topk import check_ties, held_out_ranks

if TYPE_CHECKING:  # recbole has no type information: to mypy these are Any
    from recbole.data.dataloader import AbstractDataLoader
    from recbole.trainer import Trainer

__all__ = [
    "RankRecorder",
    "checkpoint_name",
    "checkpoint_source",
    "chosen_users",
    "eval_loader",
    "protocol_of",
    "rank_file_meta",
    "ranks_from_checkpoint",
    "recbole_mode",
    "record_ranks",
]


def _recbole_version() -> str:
    require_recbole()
    import recbole

    return recbole.__version__


class RankRecorder:
    """Records the rank of every held-out item while ``trainer.evaluate(eval_data)`` runs.

    The shim: inside ``with``, ``trainer.eval_collector.eval_batch_collect`` is wrapped
    (an attribute of that one collector, removed on exit); the wrapper reads the ranks
    off the batch's scores, then calls RecBole's method unchanged. Nothing RecBole
    draws, scores or reports changes.

    Parameters
    ----------
    trainer : recbole.trainer.Trainer
        The trainer whose ``evaluate`` is run inside the block.
    eval_data : recbole.data.dataloader.AbstractDataLoader
        The loader given to ``evaluate``: a ``NegSampleEvalDataLoader`` (``uniN``,
        ``popN``) or a ``FullSortEvalDataLoader`` (``full``).
    name : str, optional
        The rank column's name (default: the model's, ``config["model"]``).
    ties : {"random", "optimistic", "pessimistic"}, default "random"
        Where a held-out item below the top k goes among the items it ties with
        (:func:`held_out_ranks`); in the top k it is RecBole's ``torch.topk`` order.
    seed : int, optional
        Seed of the ``"random"`` order (default: the config's ``seed``).

    Attributes
    ----------
    tie_order : dict
        The order of the ranks, for a record beside the file: ``ties``, ``seed``,
        ``within_top_k`` ("recbole torch.topk"), ``top_k`` (RecBole's largest k).

    Examples
    --------
    Inside a RecBole run (docs/recbole.md)::

        with RankRecorder(trainer, test_data) as recorder:
            result = trainer.evaluate(test_data, load_best_model=True)
        recorder.write("ranks/BPR-recbole-uni100.csv")
    """

    def __init__(
        self,
        trainer: Trainer,
        eval_data: AbstractDataLoader,
        name: str | None = None,
        *,
        ties: str = "random",
        seed: int | None = None,
    ) -> None:
        require_recbole()
        from recbole.data.dataloader import FullSortEvalDataLoader
        from recbole.utils import EvaluatorType

        self.trainer, self.eval_data = trainer, eval_data
        self.config = trainer.config
        if self.config["eval_type"] != EvaluatorType.RANKING:
            raise ValueError("a value-based evaluation (eval mode labeled) ranks nothing")
        self.name = name or str(self.config["model"])
        self.ties, self.seed = ties, int(self.config["seed"]) if seed is None else seed
        check_ties(self.ties, self.seed)
        self.full = isinstance(eval_data, FullSortEvalDataLoader)
        self.dataset = eval_data._dataset
        self.item_num = int(self.dataset.item_num)
        self._rows: list[np.ndarray] = []
        self._draws = hashlib.sha256()  # what each sampled row was ranked against
        self._collector: Any = None  # RecBole's Collector while recording

    @property
    def tie_order(self) -> dict:
        """The order of the ranks: ``{"ties": "random", "seed": S, "within_top_k":
        "recbole torch.topk", "top_k": K}`` (:func:`held_out_ranks`)."""
        return {
            "ties": self.ties,
            "seed": self.seed,
            "within_top_k": "recbole torch.topk",
            "top_k": int(max(self.trainer.eval_collector.topk)),
        }

    @property
    def draws_digest(self) -> str:
        """SHA-256 of the items every row of a sampled evaluation was ranked against:
        two recorders with one digest ranked the same users among the same items."""
        return self._draws.hexdigest()

    # -- the shim ------------------------------------------------------------------
    def __enter__(self) -> RankRecorder:
        collector = self.trainer.eval_collector
        original = collector.eval_batch_collect

        def eval_batch_collect(scores_tensor, interaction, positive_u, positive_i):
            self._collect(scores_tensor, interaction, positive_u, positive_i)
            return original(scores_tensor, interaction, positive_u, positive_i)

        collector.eval_batch_collect = eval_batch_collect
        self._collector = collector
        return self

    def __exit__(self, *exc: object) -> None:
        del self._collector.eval_batch_collect  # RecBole's method again
        self._collector = None

    # -- one batch -------------------------------------------------------------------
    def _collect(self, scores, interaction, positive_u, positive_i) -> None:
        import torch

        uid = self.config["USER_ID_FIELD"]
        topk = max(self.trainer.eval_collector.topk)
        # RecBole's own call (collector.eval_batch_collect), on the same tensor: the same
        # order, ties included.
        _, top = torch.topk(scores, topk, dim=-1)
        scores, top = scores.detach().cpu(), top.cpu()
        positive_u, positive_i = positive_u.cpu().long(), positive_i.cpu().long()
        rows, items = scores.shape
        users = interaction[uid].cpu().long()
        positive = torch.zeros((rows, items), dtype=torch.bool)
        positive[positive_u, positive_i] = True
        if self.full:
            if users.numel() != rows:
                raise ValueError(f"{rows} score rows but {users.numel()} users in the batch")
            ranked = torch.ones((rows, items), dtype=torch.bool)
            ranked[:, 0] = False  # [PAD]
            history = getattr(self.eval_data, "uid2history_item", None)
            if not self.eval_data.is_sequential and history is not None:
                for row, user in enumerate(users.tolist()):
                    ranked[row, history[user]] = False
        else:
            # Each user's interactions (held-out items, then the items drawn for them)
            # are one block of the batch, in the order of the score rows.
            row_users, row_of = torch.unique_consecutive(users, return_inverse=True)
            if row_users.numel() != rows:
                raise ValueError(f"{rows} score rows but {row_users.numel()} users in the batch")
            users = row_users
            ranked = torch.zeros((rows, items), dtype=torch.bool)
            ranked[row_of, interaction[self.config["ITEM_ID_FIELD"]].cpu().long()] = True
            self._draws.update(users.numpy().tobytes() + np.packbits(ranked.numpy()).tobytes())
        negative = ranked & ~positive  # what a held-out item is ranked against
        m = negative.sum(dim=1)
        rows_of = positive_u.numpy()
        rank = held_out_ranks(
            scores.numpy()[rows_of],
            positive_i.numpy(),
            negative.numpy()[rows_of],
            top.numpy()[rows_of],
            users[positive_u].numpy(),
            ties=self.ties,
            seed=self.seed,
        )
        pool = self._pool(users, positive_u, positive_i)
        self._rows.append(
            np.column_stack(
                [
                    users[positive_u].numpy(),
                    positive_i.numpy(),
                    rank,
                    m[positive_u].numpy(),
                    pool,
                ]
            ).astype(np.int64)
        )

    def _pool(self, users, positive_u, positive_i) -> np.ndarray:
        """n - 1 per held-out item: the items it could be ranked against (full sorting)
        or the pool its row's items were drawn from (uniN, popN)."""
        loader = self.eval_data
        user_of = users[positive_u].tolist()
        items = positive_i.tolist()
        if self.full:
            if loader.is_sequential:  # every item but [PAD] and the held-out one
                return np.full(len(items), self.item_num - 2)
            return np.array(
                [
                    self.item_num - 1 - len(loader.uid2history_item[u]) - len(
                        loader.uid2positive_item[u])
                    for u in user_of
                ]
            )  # fmt: skip
        sampler = loader._sampler
        repeatable = type(sampler).__name__ == "RepeatableSampler"
        drawable = (
            set(sampler.prob)  # popN: the items of the alias table (count > 0)
            if sampler.distribution == "popularity"
            else set(range(1, self.item_num))
        )
        return np.array(
            [
                len(drawable - ({i} if repeatable else sampler.used_ids[u]))
                for u, i in zip(user_of, items)
            ]
        )

    # -- results -----------------------------------------------------------------------
    def frame(self) -> pd.DataFrame:
        """One row per held-out item, sorted by user and item: ``user`` (token), the
        rank column, ``m`` (sampled evaluations only) and ``n``."""
        if not self._rows:
            raise ValueError("nothing recorded: call trainer.evaluate inside the with block")
        table = np.concatenate(self._rows)
        table = table[np.lexsort((table[:, 1], table[:, 0]))]
        pairs = table[:, :2]
        if len(np.unique(pairs, axis=0)) != len(pairs):
            raise ValueError(
                "a held-out item recorded twice: two evaluate calls in one recorder, or a "
                "user's test interaction repeated"
            )
        users = self.dataset.id2token(self.config["USER_ID_FIELD"], table[:, 0])
        columns = {"user": users, self.name: table[:, 2]}
        if not self.full:
            columns["m"] = table[:, 3]
        columns["n"] = table[:, 4] + 1
        frame = pd.DataFrame(columns)
        frame.attrs["tie_order"] = self.tie_order
        frame.attrs["draws"] = None if self.full else self.draws_digest
        return frame

    @property
    def protocol(self) -> str:
        """The protocol of the recorded evaluation (:func:`protocol_of`)."""
        return protocol_of(self.eval_data)

    def write(self, path: str | Path, *, force: bool = False) -> Path:
        """The rank file (csv, written atomically) and its sidecar; returns its path.
        A file of other ranks there is replaced only with ``force``
        (:func:`~sampled_metrics.frameworks.rank_meta.check_overwrite`)."""
        frame = self.frame()
        meta = rank_file_meta(self.protocol, frame.columns[1], self.tie_order)
        return write_rank_file(frame, path, meta, force=force)


def protocol_of(eval_data: AbstractDataLoader) -> str:
    """The protocol name (``frameworks.registry``) of a RecBole evaluation loader:
    ``full``, ``recbole-uniN``, ``recbole-popN``, or ``recbole-seq-uniN`` (a sequential
    model's ``uniN``: its ``RepeatableSampler`` can draw the user's history)."""
    args = getattr(eval_data, "neg_sample_args", None) or {}
    if args.get("sample_num", "none") == "none":
        return FULL
    kind = {"uniform": "uni", "popularity": "pop"}[args["distribution"]]
    sequential = type(getattr(eval_data, "_sampler", None)).__name__ == "RepeatableSampler"
    prefix = "recbole-seq-" if sequential and kind == "uni" else "recbole-"
    return f"{prefix}{kind}{int(args['sample_num'])}"


def recbole_mode(protocol: str) -> str:
    """RecBole's eval mode of a protocol name: ``full``, ``uniN``, ``popN``.

    Examples
    --------
    >>> recbole_mode("recbole-uni100"), recbole_mode("recbole-seq-uni20"), recbole_mode("full")
    ('uni100', 'uni20', 'full')
    >>> recbole_mode("ncf")
    Traceback (most recent call last):
    ...
    ValueError: protocol ncf is not RecBole's: give recbole-uniN, recbole-popN or full
    """
    found = protocol_by_name(protocol)
    if found is None:
        return FULL
    for stem, mode in (("recbole-seq-uni", "uni"), ("recbole-uni", "uni"), ("recbole-pop", "pop")):
        if found.sized == stem + "{N}":
            return f"{mode}{found.m}"
    raise ValueError(
        f"protocol {protocol} is not RecBole's: give recbole-uniN, recbole-popN or full"
    )


def checkpoint_name(checkpoint: str | Path, name: str | None = None) -> str:
    """The model's name for a checkpoint's ranks (its rank column, and the start of its
    files' names): ``name``, or the checkpoint file's stem. RecBole saves
    ``saved/<Model>-<date>.pth``, so two checkpoints of one class get two names, and a
    checkpoint named after its class (``saved/BPR.pth``) keeps the class's name.

    Examples
    --------
    >>> checkpoint_name("saved/BPR.pth"), checkpoint_name("saved/BPR-20.pth")
    ('BPR', 'BPR-20')
    >>> checkpoint_name("saved/BPR-20.pth", "BPR-late")
    'BPR-late'
    """
    return name or Path(checkpoint).stem


def checkpoint_source(checkpoint: str | Path) -> dict:
    """The sidecar's ``source`` of a checkpoint's ranks: the checkpoint as given and the
    SHA-256 of its bytes (a file of another checkpoint is not replaced:
    :func:`~sampled_metrics.frameworks.rank_meta.check_overwrite`)."""
    return {"from": f"checkpoint {checkpoint}", "sha256": sha256(checkpoint)}


def rank_file_meta(
    protocol: str,
    column: str,
    tie_order: dict,
    users: dict | None = None,
    source: dict | None = None,
) -> dict:
    """The sidecar of a rank file of this adapter (``frameworks.rank_meta``): m is each
    row's distinct items drawn; ``tie_order`` is :attr:`RankRecorder.tie_order` (RecBole's
    torch.topk order within its top k, ``ties`` below it); ``users`` and ``source``:
    rank_meta's (a file of some users; the checkpoint, :func:`checkpoint_source`)."""
    return rank_meta(
        protocol,
        rank_columns=[column],
        m_column=None if protocol == FULL else "m",
        distinct_m=True,
        ties=tie_order["ties"],
        tie_seed=tie_order["seed"],
        ties_detail=f"within RecBole's top {tie_order['top_k']}: torch.topk's order, as "
        f"RecBole's metrics read it; below it: {tie_order['ties']}",
        framework_top_k=tie_order["top_k"],
        users=users,
        source=source,
        writer="sampled_metrics.frameworks.adapters.recbole",
        framework=f"recbole {_recbole_version()}",
    )


def record_ranks(
    trainer: Trainer,
    eval_data: AbstractDataLoader,
    *,
    name: str | None = None,
    ties: str = "random",
    seed: int | None = None,
    **evaluate_kwargs: Any,
) -> tuple[dict, pd.DataFrame]:
    """``trainer.evaluate(eval_data, **evaluate_kwargs)`` with its ranks recorded
    (``name``, ``ties``, ``seed``: :class:`RankRecorder`'s).

    Returns
    -------
    result : dict
        What RecBole's evaluate returned (its printed metrics).
    frame : pandas.DataFrame
        The ranks of that evaluation (:meth:`RankRecorder.frame`); its
        ``attrs["tie_order"]`` is :attr:`RankRecorder.tie_order`.
    """
    recorder = RankRecorder(trainer, eval_data, name=name, ties=ties, seed=seed)
    with quiet(), recorder:
        result = trainer.evaluate(eval_data, **evaluate_kwargs)
    return dict(result), recorder.frame()


def ranks_from_checkpoint(
    checkpoint: str | Path,
    protocols: Sequence[str] = ("recbole-uni100", FULL),
    *,
    name: str | None = None,
    ties: str = "random",
    seed: int | None = None,
    users: Sequence[str] | None = None,
) -> dict[str, tuple[dict, pd.DataFrame]]:
    """Load a RecBole checkpoint (its config, data and model) and run RecBole's test
    evaluation under each protocol, recording the ranks (``name``, ``ties``, ``seed``:
    :class:`RankRecorder`'s).

    Each evaluation starts from the checkpoint's seed (``init_seed``), so the draws are
    the same on every call. The checkpoint holds a pickled config, which torch >= 2.6
    loads only with ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1``: it is set for the load (your
    own checkpoint is trusted).

    Parameters
    ----------
    checkpoint : str or pathlib.Path
    protocols : sequence of str
        ``recbole-uniN``, ``recbole-popN``, ``full`` (:func:`recbole_mode` maps them to
        RecBole's eval modes).
    name : str, optional
        The rank column (default: the checkpoint file's stem, :func:`checkpoint_name`).
    users : sequence of str, optional
        RecBole user tokens: the full ranking ranks only them (:func:`eval_loader`),
        each as in the evaluation of every user; only with ``full`` alone (a sampled
        evaluation of fewer users draws other items).

    Returns
    -------
    dict
        protocol -> (RecBole's result, the ranks), as :func:`record_ranks`; a sequential
        model's ``recbole-uniN`` is named ``recbole-seq-uniN`` (:func:`protocol_of`).
    """
    modes = [recbole_mode(protocol) for protocol in protocols]  # bad names stop here
    check_ties(ties, 0 if seed is None else seed)
    if users is not None and set(modes) != {FULL}:
        raise ValueError(f"users= ranks exactly: give protocol {FULL} alone, not {protocols}")
    require_recbole()
    name = checkpoint_name(checkpoint, name)
    with quiet():
        return _ranks_from_checkpoint(checkpoint, modes, name, ties, seed, users)


def _ranks_from_checkpoint(checkpoint, modes, name, ties, seed, users) -> dict:
    """:func:`ranks_from_checkpoint` once its arguments are checked."""
    from recbole.quick_start import load_data_and_model
    from recbole.utils import get_trainer, init_seed

    with trusted_pickles():
        config, model, dataset, train_data, valid_data, test_data = load_data_and_model(
            str(checkpoint)
        )
    unpickled(config)
    trainer = get_trainer(config["MODEL_TYPE"], config["model"])(config, model)
    if users is not None:
        users = chosen_users(test_data._dataset, users)
    found = {}
    for mode in modes:
        loader = eval_loader(config, dataset, train_data, valid_data, test_data, mode, users)
        init_seed(config["seed"], config["reproducibility"])
        found[protocol_of(loader)] = record_ranks(
            trainer, loader, name=name, ties=ties, seed=seed, load_best_model=False
        )
    return found
