"""The sampling protocols of the frameworks people evaluate with, simulated on real scores.

Each framework ranks the held-out item among items it draws itself; what differs is
how (read in each framework's code, docs/cli.md and docs/popularity.md):

========================  =====  =====  ===========  ==========  =====================
protocol                  m      alpha  replacement  duplicates  pool
========================  =====  =====  ===========  ==========  =====================
``ncf``                   99     0      no           --          unseen + held-out item
``elliot``                100    0      no           --          unseen
``recbole-uni100``        100    0      yes          collapse    unseen
``recbole-pop100``        100    1      yes          collapse    unseen
``bert4rec``              100    1      no           --          unseen
``daisyrec``              999    0      yes          count       unseen
========================  =====  =====  ===========  ==========  =====================

"unseen": every item the user has no training interaction with, but the held-out
one. alpha: draws proportional to count ** alpha, counts over all interactions
(training and held-out: RecBole's ``Sampler._get_candidates_list`` and BERT4Rec's
vocabulary counter count every phase). "collapse": an item drawn twice is scored
once (RecBole's dense score matrix); "count": it takes two places (DaisyRec).
Drawing successively without replacement, each draw over the items left with their
weights renormalised, is numpy's ``choice(replace=False, p=...)`` (BERT4Rec's
``EvalHooks``): equivalently, independent draws with the repeats discarded until m
distinct items are drawn, which is how :func:`draw_items` does it.

:func:`simulate` draws a block of users' items for every repetition and counts, for
every recommender, the drawn items it ranks above the held-out item
(:func:`beaten_items`): the sampled rank the framework would have reported. The draws
of a user depend only on (seed, protocol, the user's chunk of
``block_pass.SCORE_CHUNK`` users), so every recommender sees the same items (a paired
study, as with a shared test file) and the result does not depend on the blocks.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..estimation.corrections import correction_vectors
from ..estimation.estimators import paper_methods
from ..estimation.laws import WITH_REPLACEMENT, WITHOUT_REPLACEMENT
from ..estimation.metrics import metric_by_name
from ..estimation.nodes import interpolation_nodes, node_weights
from ..estimation.population import learned_estimates
from ..io.atomic import write_npz
from ..outputs.tables import markdown_table
from ..passes.block_pass import SCORE_CHUNK, score_users, users_per_block
from ..passes.ranking import mask_training_items
from ..passes.ties import check_tie_policy, tie_order_keys

__all__ = [
    "FRAMEWORK_PROTOCOLS",
    "HANSEN_HURWITZ",
    "Protocol",
    "ProtocolRanks",
    "beaten_items",
    "draw_items",
    "interaction_counts",
    "protocol_estimates",
    "protocol_table",
    "protocols_markdown",
    "save_protocol_ranks",
    "simulate",
    "simulate_protocols",
]


@dataclass(frozen=True)
class Protocol:
    """How a framework draws the items a held-out item is ranked among.

    Parameters
    ----------
    name : str
        The protocol's name (a key of :data:`FRAMEWORK_PROTOCOLS`).
    m : int
        Draws per held-out item.
    alpha : float
        Draw probabilities proportional to count ** alpha (0: uniform).
    replacement : bool
        Independent draws (True) or successive draws of distinct items (False).
    collapse : bool
        With replacement: an item drawn twice is ranked once.
    target_in_pool : bool
        The held-out item may be drawn (NCF); it is then dropped, not ranked twice.
    source : str
        Where the protocol was read.

    Examples
    --------
    >>> FRAMEWORK_PROTOCOLS["bert4rec"].law, FRAMEWORK_PROTOCOLS["daisyrec"].law
    ('hypergeometric', 'binomial')
    """

    name: str
    m: int
    alpha: float
    replacement: bool
    collapse: bool
    target_in_pool: bool
    source: str

    @property
    def law(self) -> str:
        """The law a user of the framework would correct with: binomial with
        replacement, hypergeometric without (exact only for alpha = 0, no collapse)."""
        return WITH_REPLACEMENT if self.replacement else WITHOUT_REPLACEMENT


FRAMEWORK_PROTOCOLS = {
    protocol.name: protocol
    for protocol in (
        Protocol(
            "ncf", 99, 0.0, False, False, True,
            "NCF's test.negative (docs/cli.md, preset ncf): 99 distinct items outside the "
            "user's training items; the held-out item is not excluded",
        ),
        Protocol(
            "elliot", 100, 0.0, False, False, False,
            "Elliot's negative_sampling strategy random with num_items: 100 (preset elliot)",
        ),
        Protocol(
            "recbole-uni100", 100, 0.0, True, True, False,
            "RecBole's eval mode uni100 (preset recbole-uni): 100 uniform draws with "
            "replacement, used ids redrawn, a repeated item one column of the scores",
        ),
        Protocol(
            "recbole-pop100", 100, 1.0, True, True, False,
            "RecBole's eval mode pop100: as uni100 with the alias table of the item counts "
            "over all phases (recbole/sampler/sampler.py, alpha 1.0; commit 7b02be5)",
        ),
        Protocol(
            "bert4rec", 100, 1.0, False, False, False,
            "BERT4Rec's EvalHooks with use_pop_random: np.random.choice(ids, 101, "
            "replace=False, p=counts / sum), rated items dropped, until 100 (FeiSun/BERT4Rec "
            "run.py, commit b5a1c2e)",
        ),
        Protocol(
            "daisyrec", 999, 0.0, True, False, False,
            "DaisyRec's candidate set of 1000 (preset daisyrec): 999 uniform draws with "
            "replacement, a repeated item two places",
        ),
    )
}  # fmt: skip


# The estimator that weighs each beaten draw by 1 / its probability (protocols with
# replacement): the mean over users of M(r^), r^ the Hansen-Hurwitz estimate clipped to 1..n.
HANSEN_HURWITZ = "hansen_hurwitz"


@dataclass(frozen=True)
class ProtocolRanks:
    """The simulated sampled ranks of users ``start..`` under one protocol.

    ``sampled``: (repetitions, recommenders, users) int16, 1 + the drawn items ranked
    above the held-out item; ``hansen_hurwitz``: the same shape, float64, the
    Hansen-Hurwitz estimate of the rank (protocols with replacement; else shape
    (0, recommenders, users)); ``weighted_rank``: (recommenders, users), the
    popularity-weighted rank R^pi = 1 + (n - 1) q (the rank itself at alpha = 0).

    Parameters
    ----------
    start : int
    sampled, hansen_hurwitz, weighted_rank : numpy.ndarray

    Examples
    --------
    >>> r = ProtocolRanks(0, np.ones((2, 1, 3), np.int16), np.ones((0, 1, 3)), np.ones((1, 3)))
    >>> r.sampled.shape
    (2, 1, 3)
    """

    start: int
    sampled: np.ndarray
    hansen_hurwitz: np.ndarray
    weighted_rank: np.ndarray


def interaction_counts(train, test_items) -> np.ndarray:
    """Interactions of each item over the training items and the held-out items: the
    counts RecBole's and BERT4Rec's popularity samplers weigh with.

    Parameters
    ----------
    train : scipy.sparse matrix (n_users, n_items)
    test_items : array_like of int (n_users,)

    Returns
    -------
    numpy.ndarray of float

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> interaction_counts(sp.csr_matrix([[1, 0, 1], [1, 0, 0]]), [1, 2]).tolist()
    [2.0, 1.0, 2.0]
    """
    n_items = train.shape[1]
    counts = np.asarray((train != 0).sum(axis=0), dtype=float).ravel()
    return counts + np.bincount(np.asarray(test_items), minlength=n_items)


def beaten_items(S: np.ndarray, test_items, users, tie_policy: str, seed: int) -> np.ndarray:
    """bool (rows, items): the items each user's model ranks above the held-out item,
    with ties resolved as the exact ranks resolve them, so that 1 + a row's count is
    the row's exact rank (``ranking.block_ranks``).

    Parameters
    ----------
    S : numpy.ndarray (rows, n_items)
        Scores, -inf for the items that are not ranked.
    test_items : array_like of int (rows,)
    users : array_like of int (rows,)
        The user ids (for the "random" tie order).
    tie_policy : {"random", "pessimistic", "optimistic"}
        "average" gives half items, which no draw can beat.
    seed : int
        Seed of the "random" tie order.

    Returns
    -------
    numpy.ndarray

    Examples
    --------
    >>> S = np.array([[0.9, 0.5, 0.5, -np.inf, 0.1]])
    >>> beaten_items(S, [1], [0], "pessimistic", 0).astype(int).tolist()
    [[1, 0, 1, 0, 0]]
    """
    check_tie_policy(tie_policy)
    if tie_policy == "average":
        raise ValueError("tie_policy 'average' counts half items: simulated draws need integers")
    rows = np.arange(S.shape[0])
    test_items = np.asarray(test_items)
    target = S[rows, test_items][:, None]
    beaten = S > target
    if tie_policy == "optimistic":
        return beaten
    tied = S == target
    tied[rows, test_items] = False
    if tie_policy == "pessimistic":
        return beaten | tied
    row, item = np.nonzero(tied)
    users = np.asarray(users)
    first = tie_order_keys(users[row], item, seed) < tie_order_keys(users, test_items, seed)[row]
    beaten[row[first], item[first]] = True
    return beaten


def draw_items(protocol: Protocol, weights, excluded: np.ndarray, rng) -> tuple:
    """Each row's m drawn items under ``protocol``, and which of them are ranked.

    Parameters
    ----------
    protocol : Protocol
    weights : numpy.ndarray (n_items,)
        count ** alpha (ones for alpha = 0); an item of weight 0 is never drawn.
    excluded : bool numpy.ndarray (rows, n_items)
        The items a row may not draw.
    rng : numpy.random.Generator

    Returns
    -------
    items : int numpy.ndarray (rows, m)
        In the order drawn.
    ranked : bool numpy.ndarray (rows, m)
        False for a repeat that the protocol collapses.

    Raises
    ------
    ValueError
        When a row has no item to draw, or fewer than m without replacement.

    Examples
    --------
    >>> p = FRAMEWORK_PROTOCOLS["elliot"]
    >>> excluded = np.zeros((2, 300), bool); excluded[0, :150] = True
    >>> items, ranked = draw_items(p, np.ones(300), excluded, np.random.default_rng(0))
    >>> items.shape, bool(items[0].min() >= 150), [len(set(row)) for row in items.tolist()]
    ((2, 100), True, [100, 100])
    """
    weights = np.asarray(weights, dtype=float)
    _check_drawable(protocol, weights, excluded)
    rows = np.arange(excluded.shape[0])
    return _draw_items(protocol, _alias_table(weights), excluded, rows, rng)


def _check_drawable(protocol: Protocol, weights: np.ndarray, excluded: np.ndarray) -> None:
    drawable = np.count_nonzero(~excluded & (weights > 0), axis=1)
    need = 1 if protocol.replacement else protocol.m
    if np.any(drawable < need):
        row = int(np.argmin(drawable))
        raise ValueError(
            f"protocol {protocol.name}: row {row} has {int(drawable[row])} items to draw "
            f"from, fewer than {need}"
        )


def _draw_items(protocol: Protocol, table, excluded, rows, rng) -> tuple:
    """:func:`draw_items` for the users ``rows`` of ``excluded`` (a row per draw)."""
    if protocol.replacement:
        items = _independent_draws(table, excluded, rows, protocol.m, rng)
        ranked = _first_occurrences(items) if protocol.collapse else np.ones(items.shape, bool)
        return items, ranked
    return _successive_draws(table, excluded, rows, protocol.m, rng), np.ones(
        (rows.size, protocol.m), bool
    )


def _alias_table(weights: np.ndarray) -> tuple:
    """Walker's alias table of the weights (Vose's construction): item j drawn as a
    uniform column c, kept when a uniform is below keep[c], else alias[c]. None for
    equal weights (a uniform column is the draw)."""
    n = weights.size
    if np.all(weights == weights[0]):
        return None
    scaled = weights * n / weights.sum()
    keep, alias = np.ones(n), np.arange(n)
    small = [j for j in range(n) if scaled[j] < 1.0]
    large = [j for j in range(n) if scaled[j] >= 1.0]
    while small and large:
        s, g = small.pop(), large.pop()
        keep[s], alias[s] = scaled[s], g
        scaled[g] -= 1.0 - scaled[s]
        (small if scaled[g] < 1.0 else large).append(g)
    return keep, alias


def _draw(table, n_items: int, size, rng) -> np.ndarray:
    columns = rng.integers(0, n_items, size=size)
    if table is None:
        return columns
    keep, alias = table
    return np.where(rng.random(size) < keep[columns], columns, alias[columns])


def _independent_draws(table, excluded, rows, m, rng) -> np.ndarray:
    """(len(rows), m) draws with probabilities proportional to the weights restricted
    to the allowed items of user ``rows[i]`` of ``excluded``: draws from all items,
    the excluded ones redrawn."""
    n_items = excluded.shape[1]
    items = _draw(table, n_items, (rows.size, m), rng)
    redraw = np.nonzero(excluded[rows[:, None], items])
    while redraw[0].size:
        fresh = _draw(table, n_items, redraw[0].size, rng)
        items[redraw] = fresh
        still = excluded[rows[redraw[0]], fresh]
        redraw = (redraw[0][still], redraw[1][still])
    return items


def _successive_draws(table, excluded, rows, m, rng) -> np.ndarray:
    """(len(rows), m) distinct items in the order of successive sampling: the first m
    distinct items of a stream of independent draws."""
    result = np.empty((rows.size, m), dtype=np.int64)
    todo = np.arange(rows.size)
    stream = np.empty((0, 0), dtype=np.int64)
    batch = m + m // 2 + 8
    while todo.size:
        fresh = _independent_draws(table, excluded, rows[todo], batch, rng)
        stream = fresh if stream.size == 0 else np.hstack([stream, fresh])
        first = _first_occurrences(stream)
        done = np.count_nonzero(first, axis=1) >= m
        take = first[done] & (np.cumsum(first[done], axis=1) <= m)
        result[todo[done]] = stream[done][take].reshape(-1, m)
        todo, stream = todo[~done], stream[~done]
    return result


def _first_occurrences(items: np.ndarray) -> np.ndarray:
    """True where an item appears in its row for the first time."""
    keys = items.astype(np.uint16) if items.max(initial=0) < 2**16 else items  # radix sort
    order = np.argsort(keys, axis=1, kind="stable")
    ordered = np.take_along_axis(items, order, axis=1)
    first_sorted = np.ones(items.shape, dtype=bool)
    first_sorted[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    first = np.empty(items.shape, dtype=bool)
    np.put_along_axis(first, order, first_sorted, axis=1)
    return first


def simulate(
    protocol: Protocol,
    beaten: list,
    excluded: np.ndarray,
    weights,
    test_items,
    *,
    start: int,
    repetitions: int,
    seed: int,
) -> ProtocolRanks:
    """The sampled ranks of users ``start..start + rows - 1`` under ``protocol`` for
    every recommender, in every repetition (see the module docstring).

    Parameters
    ----------
    protocol : Protocol
    beaten : list of bool numpy.ndarray (rows, n_items)
        Per recommender, :func:`beaten_items` of the users.
    excluded : bool numpy.ndarray (rows, n_items)
        The items the users may not draw: training items, and the held-out item
        unless ``protocol.target_in_pool``.
    weights : numpy.ndarray (n_items,)
        count ** protocol.alpha.
    test_items : array_like of int (rows,)
        The held-out items.
    start : int
        The first user (a multiple of ``SCORE_CHUNK``).
    repetitions : int
    seed : int

    Returns
    -------
    ProtocolRanks

    Examples
    --------
    With m = n - 1 without replacement every item is drawn: the sampled rank is the rank.

    >>> p = Protocol("all", 4, 0.0, False, False, False, "")
    >>> beaten = [np.array([[True, False, True, False, False]])]
    >>> excluded = np.array([[False, False, False, False, True]])  # item 4 held out
    >>> r = simulate(p, beaten, excluded, np.ones(5), [4], start=0, repetitions=2, seed=0)
    >>> r.sampled[:, 0, 0].tolist(), r.weighted_rank.tolist()
    ([3, 3], [[3.0]])
    """
    weights = np.asarray(weights, dtype=float)
    n_rows = excluded.shape[0]
    if start % SCORE_CHUNK:
        raise ValueError(f"users must start at a multiple of {SCORE_CHUNK}, not {start}")
    sampled = np.empty((repetitions, len(beaten), n_rows), dtype=np.int16)
    hansen_hurwitz = np.empty(
        (repetitions if protocol.replacement else 0, len(beaten), n_rows), dtype=float
    )
    # Draw probabilities are weights over the pool (total); R^pi weighs the negatives,
    # the pool without the held-out item (which NCF's pool holds and never beats).
    pool = ~excluded
    total = pool @ weights
    rows = np.arange(n_rows)
    test_items = np.asarray(test_items)
    in_pool = pool[rows, test_items]
    negatives_mass = total - np.where(in_pool, weights[test_items], 0.0)
    beaten_mass = np.stack([b @ weights for b in beaten]) if beaten else np.empty((0, n_rows))
    negatives = np.count_nonzero(pool, axis=1) - in_pool
    weighted_rank = 1.0 + negatives * beaten_mass / negatives_mass
    stream = zlib.crc32(protocol.name.encode())
    _check_drawable(protocol, weights, excluded)
    table = _alias_table(weights)
    for lo in range(0, n_rows, SCORE_CHUNK):
        hi = min(lo + SCORE_CHUNK, n_rows)
        rng = np.random.default_rng([seed, stream, start + lo])
        users = np.tile(np.arange(lo, hi), repetitions)
        items, ranked = _draw_items(protocol, table, excluded, users, rng)
        for k, beaten_k in enumerate(beaten):
            hit = beaten_k[users[:, None], items]
            counts = np.count_nonzero(hit & ranked, axis=1)
            sampled[:, k, lo:hi] = (1 + counts).reshape(repetitions, hi - lo)
            if protocol.replacement:
                terms = hit / weights[items]
                estimate = 1.0 + total[users] * terms.mean(axis=1)
                hansen_hurwitz[:, k, lo:hi] = estimate.reshape(repetitions, hi - lo)
    return ProtocolRanks(start, sampled, hansen_hurwitz, weighted_rank)


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
    # bytes per user: the models' beaten masks, two exclusion masks, float32 scores and
    # the float64 product of a mask with the weights
    per_user = n_items * (len(models) + 2 + 4 + 8)
    size = users_per_block(-(-per_user // 8), memory_mb)
    parts: dict = {p.name: [] for p in protocols}
    starts = range(0, n_users, size)
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc="protocol study", unit="block")
    for a in starts:
        b = min(a + size, n_users)
        users = np.arange(a, b)
        beaten = []
        for k, model in enumerate(models):
            S = score_users(model, a, b)
            mask_training_items(S, X, a, b)
            beaten.append(beaten_items(S, test_items[a:b], users, tie_policy, tie_seed))
            if exact_ranks is not None:
                _check_ranks(beaten[-1], np.asarray(exact_ranks[k])[a:b], model, a)
        training = np.zeros((b - a, n_items), dtype=bool)
        rows = np.repeat(np.arange(b - a), np.diff(X.indptr[a : b + 1]))
        training[rows, X.indices[X.indptr[a] : X.indptr[b]]] = True
        without_target = training.copy()
        without_target[np.arange(b - a), test_items[a:b]] = True
        for protocol in protocols:
            excluded = training if protocol.target_in_pool else without_target
            parts[protocol.name].append(
                simulate(
                    protocol,
                    beaten,
                    excluded,
                    weights[protocol.name],
                    test_items[a:b],
                    start=a,
                    repetitions=repetitions,
                    seed=seed,
                )
            )
    return {name: _concatenate(blocks) for name, blocks in parts.items()}


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


def save_protocol_ranks(ranks: ProtocolRanks, path) -> None:
    """Write :class:`ProtocolRanks` of all users atomically (read back by
    ``intermediates.read_protocol_ranks``).

    Parameters
    ----------
    ranks : ProtocolRanks
    path : str or pathlib.Path

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from sampled_metrics.pipeline.intermediates import read_protocol_ranks
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "ncf.npz"
    >>> r = ProtocolRanks(0, np.ones((2, 1, 3), np.int16), np.ones((0, 1, 3)), np.ones((1, 3)))
    >>> save_protocol_ranks(r, path)
    >>> read_protocol_ranks(path, FRAMEWORK_PROTOCOLS["ncf"], 3, 2, 1).sampled.shape
    (2, 1, 3)
    """
    write_npz(
        {
            "sampled": ranks.sampled,
            "hansen_hurwitz": ranks.hansen_hurwitz,
            "weighted_rank": ranks.weighted_rank,
        },
        path,
    )


def protocol_estimates(
    ranks: ProtocolRanks,
    protocol: Protocol,
    n,
    recommenders,
    metrics,
    methods,
    *,
    nodes: int,
    workers: int = 1,
) -> pd.DataFrame:
    """Every estimator on every repetition of one protocol's simulated ranks, with
    the law the protocol implies (:attr:`Protocol.law`) and the user's own n.

    The paper's corrections are built at ``nodes`` values of n and interpolated
    linearly in n between them (as Figure 6's); the learned estimators
    (``em``, ``mn_em``, ...) learn from each repetition; :data:`HANSEN_HURWITZ` is
    added for protocols with replacement.

    Parameters
    ----------
    ranks : ProtocolRanks
    protocol : Protocol
    n : array_like of int (users,)
        Each user's ranked-set size (the exact ranks').
    recommenders : list of str
        The names of ``ranks``' recommenders, in order.
    metrics, methods : list of str
    nodes : int
        Values of n the corrections are built at (at least 2).
    workers : int, default 1
        Processes of the learned estimators.

    Returns
    -------
    pandas.DataFrame
        recommender, metric, method, rep, value (a fraction).

    Examples
    --------
    >>> r = ProtocolRanks(0, np.array([[[1, 2, 3]]], np.int16), np.array([[[1.0, 2, 3]]]),
    ...                   np.ones((1, 3)))
    >>> p = Protocol("tiny", 2, 0.0, True, False, False, "")
    >>> table = protocol_estimates(r, p, [3, 3, 3], ["A"], ["recall@1"], ["sampled"], nodes=2)
    >>> table[["method", "value"]].round(4).values.tolist()
    [['sampled', 0.3333], ['hansen_hurwitz', 0.3333]]
    """
    n = np.asarray(n, dtype=np.int64)
    methods, metrics = list(methods), list(metrics)
    fixed = paper_methods(methods)
    learned = [method for method in methods if method not in fixed]
    node_n = interpolation_nodes(n, nodes)
    weights = node_weights(n, node_n)
    vectors = [
        correction_vectors(metrics, fixed, int(node), protocol.m, protocol.law) for node in node_n
    ]
    frames = []
    for k, recommender in enumerate(recommenders):
        index = ranks.sampled[:, k, :].astype(np.int64) - 1
        reps = np.arange(index.shape[0])
        for metric in metrics:
            for method in fixed:
                per_user = sum(
                    weights[:, j] * vectors[j][metric, method][index] for j in range(node_n.size)
                )
                frames.append(_values(recommender, metric, method, reps, per_user.mean(axis=1)))
            if protocol.replacement:
                estimate = np.minimum(ranks.hansen_hurwitz[:, k, :], n)
                values = metric_by_name(metric)(estimate, n).mean(axis=1)
                frames.append(_values(recommender, metric, HANSEN_HURWITZ, reps, values))
        if learned:
            table = learned_estimates(
                index + 1, n, protocol.m, protocol.law, metrics, learned, workers=workers
            )
            frames.append(table.assign(recommender=recommender))
    # rows by recommender, metric and method in the given orders, then repetition
    position = {
        column: {name: i for i, name in enumerate(names)}
        for column, names in (
            ("recommender", recommenders),
            ("metric", metrics),
            ("method", [*fixed, HANSEN_HURWITZ, *learned]),
        )
    }
    table = pd.concat(frames, ignore_index=True).sort_values(
        ["recommender", "metric", "method", "rep"],
        key=lambda column: column.map(position[column.name]) if column.name in position else column,
        kind="stable",
    )
    return table.reset_index(drop=True)[["recommender", "metric", "method", "rep", "value"]]


def _values(recommender, metric, method, reps, values) -> pd.DataFrame:
    return pd.DataFrame(
        {"recommender": recommender, "metric": metric, "method": method, "rep": reps,
         "value": values}
    )  # fmt: skip


def protocol_table(frame: pd.DataFrame, dataset: str) -> pd.DataFrame:
    """The study's long table with its key columns first: dataset, protocol, target
    (when present), then the rest in their order.

    Parameters
    ----------
    frame : pandas.DataFrame
        With a column ``protocol``.
    dataset : str

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> frame = pd.DataFrame({"metric": ["ap"], "protocol": ["ncf"], "rmse": [1.0]})
    >>> list(protocol_table(frame, "ml-1m").columns)
    ['dataset', 'protocol', 'metric', 'rmse']
    """
    first = ["protocol", *(["target"] if "target" in frame else [])]
    rest = [column for column in frame.columns if column not in first]
    table = frame[first + rest].copy()
    table.insert(0, "dataset", dataset)
    return table


def protocols_markdown(errors: pd.DataFrame, pairs: pd.DataFrame, dataset: str, reps: int) -> str:
    """protocols.md: the protocols, then per protocol and estimator the RMSE (mean over
    the recommenders), the pairs ordered right, each recommender's bias, and for
    popularity sampling the error against the metric of R^pi.

    Parameters
    ----------
    errors : pandas.DataFrame
        :func:`protocol_table` of ``evaluation.estimator_errors`` with protocol, target.
    pairs : pandas.DataFrame
        :func:`protocol_table` of ``evaluation.pair_agreement`` with protocol.
    dataset : str
    reps : int
        Repetitions of each protocol.

    Returns
    -------
    str

    Examples
    --------
    >>> errors = pd.DataFrame({"dataset": "d", "protocol": "ncf", "target": "rank",
    ...     "recommender": "X", "metric": "ap", "method": ["sampled", "cls"],
    ...     "exact": 4.0, "mean": [30.0, 4.2], "bias": [26.0, 0.2], "std": 0.1,
    ...     "rmse": [26.0, 0.25]})
    >>> pairs = pd.DataFrame({"dataset": "d", "protocol": "ncf", "pair": "X<Y",
    ...     "metric": "ap", "method": ["sampled", "cls"], "correct": [60, 95],
    ...     "repetitions": 100})
    >>> text = protocols_markdown(errors, pairs, "d", 100)
    >>> [line for line in text.splitlines() if line.startswith("| ncf")][-2:]
    ['| ncf      | sampled | 26.000 |', '| ncf      | cls     |  0.200 |']
    """
    metrics = list(dict.fromkeys(errors["metric"]))
    rank = errors[errors["target"] == "rank"]
    used = list(dict.fromkeys(errors["protocol"]))
    described = pd.DataFrame(
        [
            {
                "protocol": p.name,
                "m": p.m,
                "alpha": p.alpha,
                "draws": "with replacement" if p.replacement else "distinct",
                "an item drawn twice": ("ranked once" if p.collapse else "ranked twice")
                if p.replacement
                else "-",
                "pool": "unseen + held-out" if p.target_in_pool else "unseen",
                "law of the estimators": p.law,
            }
            for p in (FRAMEWORK_PROTOCOLS[name] for name in used)
        ]
    )

    def by_metric(frame, value, how="mean") -> pd.DataFrame:
        wide = frame.pivot_table(
            index=["protocol", "method"], columns="metric", values=value, aggfunc=how, sort=False
        )
        return wide[metrics].reset_index()

    right = pairs.assign(share=100 * pairs["correct"] / pairs["repetitions"])
    lines = [
        f"# Sampling protocols of common frameworks on {dataset}",
        "",
        f"Each protocol simulated {reps} times on every recommender's real scores, the same",
        "sampled items for all recommenders; each estimator applied with the law the protocol",
        "implies and each user's own n (docs/popularity.md). Percent points. alpha: draws",
        "proportional to count ** alpha; unseen: the items without a training interaction,",
        "held-out item excluded. hansen_hurwitz (protocols with replacement): the mean of",
        "M(r^), r^ the Hansen-Hurwitz estimate of the rank.",
        "",
        markdown_table(described, digits={"alpha": 0}),
        "",
        "## RMSE against the exact metric, mean over the recommenders",
        "",
        markdown_table(by_metric(rank, "rmse"), digits=3),
        "",
        f"## Pairs of recommenders ordered as the exact metric orders them (% of {reps} "
        "repetitions x pairs)",
        "",
        markdown_table(by_metric(right, "share"), digits=1),
    ]
    for metric in metrics:
        bias = rank[rank["metric"] == metric].pivot_table(
            index=["protocol", "method"], columns="recommender", values="bias", sort=False
        )
        order = list(dict.fromkeys(rank["recommender"]))
        lines += ["", f"## Bias of {metric} for each recommender", "", markdown_table(
            bias[order].reset_index(), digits=3)]  # fmt: skip
    weighted = errors[errors["target"] == "weighted_rank"]
    if not weighted.empty:
        gap = weighted.merge(
            rank[["protocol", "recommender", "metric", "method", "exact"]],
            on=["protocol", "recommender", "metric", "method"],
            suffixes=("", "_rank"),
        )
        gap["R^pi - exact"] = gap["exact"] - gap["exact_rank"]
        lines += [
            "",
            "## Popularity sampling: RMSE against the metric of the popularity-weighted rank",
            "",
            "The corrections estimate the metric of R^pi = 1 + (n - 1) q (q the popularity",
            "mass of the items ranked above the held-out item), not the exact metric; the first",
            "row of each protocol is how far apart the two are (mean over the recommenders).",
            "hansen_hurwitz estimates the rank itself and is left out here.",
            "",
            markdown_table(
                pd.concat(
                    [
                        by_metric(
                            gap[gap["method"] == gap["method"].iloc[0]], "R^pi - exact"
                        ).assign(method="metric(R^pi) - exact"),
                        by_metric(weighted, "rmse"),
                    ]
                ).sort_values("protocol", key=lambda p: p.map(used.index), kind="stable"),
                digits=3,
            ),
        ]
    return "\n".join(lines) + "\n"
