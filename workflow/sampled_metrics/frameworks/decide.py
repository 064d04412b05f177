"""From models to a verdict in one call: every model's sampled evaluation on the same
sampled items, then a sequential design's waves, each wave's users ranked exactly by every
model, until every pair is decided or the budget is spent (docs/deciding.md, "One call
from models to a verdict").

:func:`decide_ranks` runs the loop (:func:`~sampled_metrics.estimation.decisions.run_waves`)
on any sampled evaluation and any function that ranks some users exactly: a framework's
checkpoints (``sampled-metrics recbole A.pth B.pth --decide``, ``sampled-metrics cornac
... --decide``) and scoring functions (:func:`decide`, on
:func:`~.rank_files.rank_files` and :func:`~.rank_files.exact_rank_frame`) share it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd
import scipy.sparse as sp
from numpy.typing import ArrayLike

from ..estimation.decisions import DECISION_DEFAULTS, Look, SequentialRun, run_waves
from .rank_files import exact_rank_frame, rank_files, sampled_protocol

__all__ = ["Decision", "decide", "decide_ranks", "full_ranking_estimate", "model_columns"]

# The frame columns that are not a model's ranks.
NOT_RANKS = ("user", "item", "m", "n")


@dataclass(frozen=True)
class Decision:
    """A sequential decision between models, run to its end.

    ``sampled``: every user's sampled ranks (``user``, a column per model, ``m``, ``n``);
    ``exact``: the exact ranks of the users ranked, in the order they were ranked (``user``,
    a column per model, ``n``); ``run``: the waves, looks and state
    (:class:`~sampled_metrics.estimation.decisions.SequentialRun`); ``law``: the law that
    reads the sampled ranks; ``settings``: the design's (budget, seed, metric, confidence,
    spending, family); ``seconds``: wall time of each step (``"sampled"``, ``"exact"``,
    and what the caller adds, e.g. ``"load"``); ``waves``: each wave's users ranked and
    the seconds ranking them took.

    Parameters
    ----------
    models : tuple of str
    sampled, exact : pandas.DataFrame
    run : SequentialRun
    law : str
    settings : dict
    seconds : dict of str to float
    waves : tuple of (int, float)

    Examples
    --------
    >>> exact = np.stack([np.arange(1, 801) % 7 + 1, np.arange(1, 801) % 90 + 1])
    >>> frame = pd.DataFrame({"user": np.arange(800), "A": exact[0], "B": exact[1],
    ...                       "m": 99, "n": 400})
    >>> found = decide_ranks(frame, lambda rows: frame.iloc[rows], "hypergeometric")
    >>> found.pairs()[0][2].verdict.value, found.users_ranked < 100
    ('A better', True)
    """

    models: tuple[str, ...]
    sampled: pd.DataFrame
    exact: pd.DataFrame
    run: SequentialRun
    law: str
    settings: dict
    seconds: dict[str, float] = field(default_factory=dict)
    waves: tuple[tuple[int, float], ...] = ()

    def pairs(self) -> list[tuple[str, str, Look]]:
        """Every pair (first, second) with its last look at the design's metric."""
        return [(self.models[i], self.models[j], self.run.looks[i, j][-1])
                for i, j in combinations(range(len(self.models)), 2)]  # fmt: skip

    @property
    def users_ranked(self) -> int:
        return int(self.run.waves.chosen.sum())

    @property
    def share_of_items(self) -> float:
        """The ranked users' scored items as a share of a full ranking's."""
        n = self.sampled["n"].to_numpy(dtype=float)
        return float(n[self.run.waves.chosen].sum() / n.sum())

    @property
    def full_ranking_seconds(self) -> float:
        """An estimate of ranking every user exactly by every model: a line through the
        waves' times, a set-up paid by each wave plus a time per user
        (:func:`full_ranking_estimate`)."""
        return full_ranking_estimate(self.waves, len(self.sampled))


def full_ranking_estimate(waves: Sequence[tuple[int, float]], users: int) -> float:
    """The time of ranking ``users`` users in one pass, from waves of (users, seconds):
    the least-squares line a + b u through the waves (a, a set-up every pass pays; both
    kept non-negative) at u = ``users``; with waves of one size, their time per user.

    Parameters
    ----------
    waves : sequence of (int, float)
    users : int

    Returns
    -------
    float

    Examples
    --------
    >>> full_ranking_estimate([(10, 2.1), (20, 2.2), (40, 2.4)], 1000)  # 2 s set-up
    12.0
    >>> full_ranking_estimate([(10, 1.0)], 1000)
    100.0
    """
    sizes = np.array([size for size, _ in waves], dtype=float)
    seconds = np.array([time for _, time in waves], dtype=float)
    if sizes.size == 0 or not sizes.any():
        return 0.0
    if np.unique(sizes).size < 2:
        return float(seconds.sum() / sizes.sum() * users)
    slope, set_up = np.polyfit(sizes, seconds, 1)
    if slope <= 0 or set_up < 0:  # noise: the time per user ranked
        return float(seconds.sum() / sizes.sum() * users)
    return float(round(set_up + slope * users, 9))


def model_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of a rank frame that hold a model's ranks.

    Parameters
    ----------
    frame : pandas.DataFrame

    Returns
    -------
    list of str

    Examples
    --------
    >>> model_columns(pd.DataFrame(columns=["user", "BPR", "Pop", "m", "n"]))
    ['BPR', 'Pop']
    """
    return [column for column in frame.columns if column not in NOT_RANKS]


def decide_ranks(
    sampled: pd.DataFrame,
    rank: Callable[[np.ndarray], pd.DataFrame],
    law: str,
    *,
    budget: float = DECISION_DEFAULTS["sequential_budget"],
    seed: int = 0,
    metric: str = DECISION_DEFAULTS["metric"],
    confidence: float = DECISION_DEFAULTS["confidence"],
    spending: str = DECISION_DEFAULTS["spending"],
    family: str = DECISION_DEFAULTS["family"],
) -> Decision:
    """The sequential loop on a sampled evaluation of two models or more.

    Parameters
    ----------
    sampled : pandas.DataFrame
        One row per user (``user``, a column of sampled ranks per model, ``m``, ``n``),
        every model ranked against the same sampled items.
    rank : callable
        ``rank(rows)``: the exact ranks of the users at positions ``rows`` of ``sampled``
        (a frame: ``user``, a column per model, ``n``, in the order of ``rows``).
    law : str
        The law of the sampled ranks (:func:`~sampled_metrics.estimation.laws.sampling_law`).
    Other parameters as :func:`~sampled_metrics.estimation.decisions.run_waves`.

    Returns
    -------
    Decision
        ``seconds["exact"]``: the time ``rank`` took.

    Examples
    --------
    Exact ranks known in advance (here the sampled frame itself, as if m = n - 1):

    >>> rng = np.random.default_rng(1)
    >>> frame = pd.DataFrame({"user": np.arange(600), "A": rng.integers(1, 30, 600),
    ...                       "B": rng.integers(1, 30, 600), "m": 99, "n": 100})
    >>> found = decide_ranks(frame, lambda rows: frame.iloc[rows], "hypergeometric",
    ...                      budget=0.2)
    >>> found.pairs()[0][2].verdict.value, found.users_ranked  # alike: the budget spent
    ('undecided', 120)
    """
    models = model_columns(sampled)
    if len(models) < 2:
        raise ValueError(f"deciding needs two models or more, got {models}")
    users = sampled["user"].to_numpy()
    if pd.Index(users).has_duplicates:
        raise ValueError("a user has several rows: the design needs one row per user")
    frames: list[pd.DataFrame] = []
    seconds = {"exact": 0.0}
    waves: list[tuple[int, float]] = []

    def exact(rows: np.ndarray) -> np.ndarray:
        start = time.perf_counter()
        frame = rank(rows)
        waves.append((int(rows.size), time.perf_counter() - start))
        seconds["exact"] += waves[-1][1]
        if not np.array_equal(frame["user"].to_numpy(), users[rows]):
            raise ValueError("rank(rows) gave other users than asked, or in another order")
        if not np.array_equal(frame["n"].to_numpy(), sampled["n"].to_numpy()[rows]):
            raise ValueError("the exact ranks' n differs from the sampled ranks' n: not the "
                             "same users' items")  # fmt: skip
        frames.append(frame[["user", *models, "n"]])
        return frame[models].to_numpy(dtype=float).T

    run = run_waves(sampled[models].to_numpy().T, sampled["m"].to_numpy(),
                    sampled["n"].to_numpy(), exact, law=law, budget=budget, seed=seed,
                    metric=metric, confidence=confidence, spending=spending,
                    family=family)  # fmt: skip
    settings = {"budget": budget, "seed": seed, "metric": metric, "confidence": confidence,
                "spending": spending, "family": family}  # fmt: skip
    ranked = pd.concat(frames, ignore_index=True) if frames else sampled.iloc[:0]
    return Decision(tuple(models), sampled, ranked, run, law, settings, seconds, tuple(waves))


def decide(
    models: dict,
    train: sp.spmatrix,
    test_items: ArrayLike,
    *,
    protocol: str = "ncf",
    budget: float = DECISION_DEFAULTS["sequential_budget"],
    seed: int = 0,
    metric: str = DECISION_DEFAULTS["metric"],
    confidence: float = DECISION_DEFAULTS["confidence"],
    spending: str = DECISION_DEFAULTS["spending"],
    family: str = DECISION_DEFAULTS["family"],
    tie_policy: str = "random",
    tie_seed: int = 0,
    memory_mb: float = 1024,
    user_ids: ArrayLike | None = None,
) -> Decision:
    """Decide between scoring functions: every model's sampled evaluation by a paired
    protocol (the same drawn items for every model, :func:`~.rank_files.rank_files` with
    ``users=[]``), then the sequential design's waves, each wave's users ranked exactly
    by full sorting (:func:`~.rank_files.exact_rank_frame`), until every pair is decided
    or the budget is spent (:func:`decide_ranks`).

    Parameters
    ----------
    models, train, test_items, tie_policy, tie_seed, memory_mb, user_ids
        As :func:`~.rank_files.rank_files`'s (two models or more).
    protocol : str, default "ncf"
        A paired protocol (:mod:`.registry`); its draws are seeded by ``seed``.
    budget, seed, metric, confidence, spending, family
        The sequential design's (:func:`~sampled_metrics.estimation.decisions.run_waves`).

    Returns
    -------
    Decision
        ``seconds["sampled"]`` and ``seconds["exact"]``: the wall time of each step.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> train = sp.random(400, 500, density=0.02, format="csr", random_state=1)
    >>> train.data[:] = 1
    >>> test = np.array([rng.choice(np.flatnonzero(row == 0)) for row in train.toarray()])
    >>> good = rng.normal(size=(400, 500))
    >>> good[np.arange(400), test] += 3.0
    >>> found = decide({"good": good, "noise": rng.normal(size=(400, 500))}, train, test)
    >>> [(a, b, look.verdict.value) for a, b, look in found.pairs()], found.run.state
    ([('good', 'noise', 'A better')], 'decided')
    """
    paired = sampled_protocol(protocol)
    if not paired.paired:
        raise ValueError(f"protocol {paired.name} draws each model's items apart: give a "
                         "paired protocol (ncf, elliot, bert4rec, ...)")  # fmt: skip
    if len(models) < 2:
        raise ValueError(f"deciding needs two models or more, got {list(models)}")
    law, why = paired.file_law(distinct_m=False)
    if law is None:
        raise ValueError(f"protocol {paired.name}: {why}")
    test_items = np.asarray(test_items)
    start = time.perf_counter()
    _, sampled = rank_files(models, train, test_items, paired, seed=seed, tie_policy=tie_policy,
                            tie_seed=tie_seed, memory_mb=memory_mb, user_ids=user_ids,
                            users=[])  # fmt: skip
    elapsed = time.perf_counter() - start

    def rank(rows: np.ndarray) -> pd.DataFrame:
        return exact_rank_frame(models, train, test_items, users=rows, tie_policy=tie_policy,
                                tie_seed=tie_seed, user_ids=user_ids)  # fmt: skip

    found = decide_ranks(sampled, rank, law, budget=budget, seed=seed, metric=metric,
                         confidence=confidence, spending=spending, family=family)  # fmt: skip
    found.seconds["sampled"] = elapsed
    return found
