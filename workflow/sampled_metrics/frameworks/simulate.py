"""The frameworks' sampling protocols simulated on real scores: the sampled ranks.

:func:`simulate` draws a block of users' items for every repetition and counts, for
every recommender, the drawn items it ranks above the held-out item
(:func:`beaten_items`): the sampled rank the framework would have reported. The draws
of a user depend only on (seed, protocol, the user's chunk of
``block_pass.SCORE_CHUNK`` users), so every recommender sees the same items (a paired
study, as with a shared test file) and the result does not depend on the blocks.
With replacement each user also gets the Hansen-Hurwitz estimate of the rank, and
every user the popularity-weighted rank R^pi = 1 + (n - 1) q (docs/popularity.md).

A protocol a data set cannot support (:func:`left_out_reason`: more distinct draws than
some user's pool) is left out of the study: :func:`save_left_out` records why in its
place, and the study's outputs name it.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from ..io.atomic import write_npz
from ..passes.block_pass import SCORE_CHUNK, score_users, users_per_block
from ..passes.ranking import mask_training_items
from ..passes.ties import check_tie_policy, tie_order_keys
from .draws import _alias_table, _check_drawable, _draw_items
from .registry import Protocol

__all__ = [
    "ProtocolRanks",
    "beaten_items",
    "interaction_counts",
    "left_out_reason",
    "save_left_out",
    "save_protocol_ranks",
    "simulate",
    "simulate_protocols",
]


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


def left_out_reason(protocol: Protocol, smallest_pool: int) -> str | None:
    """Why the study leaves ``protocol`` out of a data set whose users have at least
    ``smallest_pool`` items outside their history (training and held-out items); None
    when the data set supports it.

    Without replacement every user needs m distinct items to draw, and the law the
    estimators correct with (hypergeometric) m <= n_u - 1: m <= smallest_pool (NCF's
    pool also holds the held-out item, but n_u - 1 binds it as well). With replacement
    one item to draw is enough, whatever m (DaisyRec's 999 draws from 50 items).

    Parameters
    ----------
    protocol : Protocol
    smallest_pool : int
        The fewest items outside a user's history (``SplitUsers.smallest_pool``).

    Returns
    -------
    str or None

    Examples
    --------
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
    >>> left_out_reason(FRAMEWORK_PROTOCOLS["elliot"], 99)
    'draws 100 distinct items per user, more than the smallest candidate pool, 99 items'
    >>> left_out_reason(FRAMEWORK_PROTOCOLS["ncf"], 99), left_out_reason(
    ...     FRAMEWORK_PROTOCOLS["daisyrec"], 99)
    (None, None)
    """
    if not protocol.replacement and protocol.m > smallest_pool:
        return (
            f"draws {protocol.m} distinct items per user, more than the smallest candidate "
            f"pool, {smallest_pool} items"
        )
    if smallest_pool < 1:
        return "draws from the items outside a user's history, and a user has none"
    return None


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
    total = _mass(pool, weights)
    rows = np.arange(n_rows)
    test_items = np.asarray(test_items)
    in_pool = pool[rows, test_items]
    negatives_mass = total - np.where(in_pool, weights[test_items], 0.0)
    beaten_mass = np.stack([_mass(b, weights) for b in beaten]) if beaten else np.empty((0, n_rows))
    negatives = np.count_nonzero(pool, axis=1) - in_pool
    weighted_rank = 1.0 + negatives * beaten_mass / negatives_mass
    stream = zlib.crc32(protocol.name.encode())
    _check_drawable(protocol, weights, excluded)
    table = _alias_table(weights)
    codes = _beaten_codes(beaten)
    for lo in range(0, n_rows, SCORE_CHUNK):
        hi = min(lo + SCORE_CHUNK, n_rows)
        rng = np.random.default_rng([seed, stream, start + lo])
        users = np.tile(np.arange(lo, hi), repetitions)
        items, ranked = _draw_items(protocol, table, excluded, users, rng)
        every_draw_ranked = ranked.all()
        # 1 / w of each draw; None for equal weights w, where the mean of the hits' terms
        # is their count / (m w) (for w = 1 the same float: the sum of ones is exact)
        inverse_weights = 1.0 / weights[items] if protocol.replacement and table else None
        # one gather per group of 8 recommenders: bit k of a code is "beaten by k"
        for group, group_codes in enumerate(codes):
            drawn = group_codes[users[:, None], items]
            for bit in range(min(8, len(beaten) - 8 * group)):
                k = 8 * group + bit
                hit = (drawn & np.uint8(1 << bit)) != 0
                hits = np.count_nonzero(hit, axis=1)
                counts = hits if every_draw_ranked else np.count_nonzero(hit & ranked, axis=1)
                sampled[:, k, lo:hi] = (1 + counts).reshape(repetitions, hi - lo)
                if protocol.replacement:
                    mean_term = (
                        hits / protocol.m / weights[0]
                        if inverse_weights is None
                        else np.where(hit, inverse_weights, 0.0).mean(axis=1)
                    )
                    estimate = 1.0 + total[users] * mean_term
                    hansen_hurwitz[:, k, lo:hi] = estimate.reshape(repetitions, hi - lo)
    return ProtocolRanks(start, sampled, hansen_hurwitz, weighted_rank)


def _mass(mask: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """mask @ weights per row; a count where every weight is 1 (the same floats)."""
    if np.all(weights == 1.0):
        return np.count_nonzero(mask, axis=1).astype(float)
    return mask @ weights


def _beaten_codes(beaten: list) -> list:
    """The recommenders' beaten masks packed 8 to a uint8 array (rows, n_items): bit k
    of group g's code is recommender 8 g + k's mask, so a draw is gathered once for 8."""
    codes = []
    for first in range(0, len(beaten), 8):
        code = np.zeros(beaten[first].shape, dtype=np.uint8)
        for bit, mask in enumerate(beaten[first : first + 8]):
            code |= mask.astype(np.uint8) << np.uint8(bit)
        codes.append(code)
    return codes


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
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
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


def save_left_out(reason: str, smallest_pool: int, path) -> None:
    """Write, in place of a protocol's ranks, that it was left out, why
    (:func:`left_out_reason`) and the smallest pool that decided it, atomically (read
    back by ``intermediates.read_protocol_ranks``, which checks both against the split).

    Parameters
    ----------
    reason : str
    smallest_pool : int
    path : str or pathlib.Path

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from sampled_metrics.pipeline.intermediates import read_protocol_ranks
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
    >>> elliot = FRAMEWORK_PROTOCOLS["elliot"]
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "elliot.npz"
    >>> save_left_out(left_out_reason(elliot, 60), 60, path)
    >>> read_protocol_ranks(path, elliot, 3, 2, 1, smallest_pool=60)
    'draws 100 distinct items per user, more than the smallest candidate pool, 60 items'
    """
    write_npz({"left_out": np.array(reason), "smallest_pool": np.array(smallest_pool)}, path)
