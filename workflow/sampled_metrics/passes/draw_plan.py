"""The draw plan: where each chunk of users finds its draws in every repetition's
random stream (section 6.2 of Krichene & Rendle, drawn by blocks of users).

The sampled items of :func:`.sampling.sampled_ranks` are drawn for all users at
once; a :class:`DrawPlan` records, per repetition and round of redraws, the stream
position of the first uniform of each chunk of users, so that a block of users
drawn on its own (:func:`block_positions`) gets exactly the same items.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import ArrayLike

from ..io.atomic import read_npz, write_npz
from .sampling import _check_pools, _positions

__all__ = [
    "DrawPlan",
    "block_positions",
    "draw_plan",
    "load_draw_plan",
    "save_draw_plan",
]


@dataclass(frozen=True)
class DrawPlan:
    """Where each block of users finds its draws in the random stream of every
    repetition, so that blocks of users drawn on their own get exactly the items
    of :func:`.sampling.sampled_ranks`, which draws for all users at once.

    Repetition ``rep`` draws from ``default_rng([seed, rep])``: first m uniforms
    per user in user order, then rounds of redraws of duplicates in row-major
    order (:func:`.sampling.draw_positions`). A user's duplicates depend on their own
    draws only, so a block that starts at a multiple of ``chunk`` users can jump
    the generator (``PCG64.advance``) to its first uniform of every round:
    ``starts[rep, round, c]`` is that position for the block starting at user
    ``c * chunk`` (-1 past the repetition's last round). Build it with
    :func:`draw_plan`; use it with :func:`block_positions`.

    Parameters
    ----------
    m, repetitions, seed, replacement
        The draws (see :func:`.sampling.sampled_ranks`).
    chunk : int
        Blocks start at multiples of ``chunk`` users.
    pool : numpy.ndarray of int (n_users,)
        Pool size of each user.
    starts : numpy.ndarray of int64 (repetitions, rounds, n_chunks)
        Stream positions, as above.

    Examples
    --------
    Round 0 of chunk c starts at uniform c * chunk * m:

    >>> plan = draw_plan([9, 9, 9, 9, 9], m=3, repetitions=1, seed=0, chunk=2)
    >>> plan.starts[0, 0].tolist(), plan.n_users
    ([0, 6, 12], 5)
    """

    m: int
    repetitions: int
    seed: int
    replacement: bool
    chunk: int
    pool: np.ndarray
    starts: np.ndarray

    @property
    def n_users(self) -> int:
        return int(self.pool.size)


# The arrays of a draw plan's file: its fields.
_PLAN_FIELDS = ("m", "repetitions", "seed", "replacement", "chunk", "pool", "starts")


def draw_plan(
    pool: ArrayLike,
    m: int,
    repetitions: int,
    seed: int,
    *,
    chunk: int,
    replacement: bool = False,
    progress: bool = False,
) -> DrawPlan:
    """Draw every repetition once for all users and record where each chunk of
    users finds its redraws (see :class:`DrawPlan`).

    Parameters
    ----------
    pool : array_like of int (n_users,)
        Pool size of each user (see :func:`.sampling.pool_sizes`).
    m : int
        Number of sampled items per user.
    repetitions : int
        Number of repetitions.
    seed : int
        Seed of the draws: repetition ``rep`` uses ``default_rng([seed, rep])``.
    chunk : int
        Blocks of users start at multiples of ``chunk``.
    replacement : bool, default False
        Draw with replacement (no redraws).
    progress : bool, default False
        Show a tqdm bar over repetitions.

    Returns
    -------
    DrawPlan

    Raises
    ------
    ValueError
        When ``chunk`` < 1, or when drawing without replacement and a pool
        holds fewer than m items (naming the user).

    Examples
    --------
    The draws of users 2..3 alone are theirs among all users':

    >>> from sampled_metrics.passes.sampling import draw_positions
    >>> rng_pool = np.array([50, 60, 70, 80])
    >>> plan = draw_plan(rng_pool, m=5, repetitions=2, seed=1, chunk=2)
    >>> alone = block_positions(plan, start=2, stop=4, rep=1)
    >>> every = draw_positions(rng_pool, 5, np.random.default_rng([1, 1]))
    >>> bool(np.array_equal(alone, every[2:]))
    True
    """
    if chunk < 1:
        raise ValueError("chunk must be >= 1")
    pool = np.asarray(pool, dtype=np.int64)
    reps = range(repetitions)
    if progress:
        from tqdm.auto import tqdm

        reps = tqdm(reps, desc="planning the draws", unit="rep")
    if not replacement:
        _check_pools(pool, m)
    per_rep = [
        _round_starts(pool, m, np.random.default_rng([seed, rep]), chunk, replacement)
        for rep in reps
    ]
    depth = max((len(r) for r in per_rep), default=1)
    starts = np.full((repetitions, depth, -(-pool.size // chunk)), -1, dtype=np.int64)
    for rep, rounds in enumerate(per_rep):
        starts[rep, : len(rounds)] = rounds
    return DrawPlan(m, repetitions, seed, replacement, chunk, pool, starts)


def _round_starts(pool, m, rng, chunk, replacement) -> list[np.ndarray]:
    """Draw one repetition for all users; per round, the stream position of the
    first uniform of each chunk of users (round 0: the first draws)."""
    n_chunks = -(-pool.size // chunk)
    rounds = [np.arange(n_chunks, dtype=np.int64) * chunk * m]
    position = pool.size * m  # the first uniform of the next round

    def record(_round, rows):
        nonlocal position
        per_chunk = np.bincount(rows // chunk, minlength=n_chunks)
        rounds.append(position + np.concatenate(([0], np.cumsum(per_chunk)[:-1])))
        position += rows.size

    _positions(pool, m, lambda _round, size: rng.random(size), replacement, record)
    return rounds


def block_positions(plan: DrawPlan, start: int, stop: int, rep: int) -> np.ndarray:
    """The positions :func:`.sampling.draw_positions` gives users ``start..stop-1`` in
    repetition ``rep``, drawn for those users alone (``start`` a multiple of
    ``plan.chunk``).

    Parameters
    ----------
    plan : DrawPlan
        From :func:`draw_plan`.
    start, stop : int
        The block of users.
    rep : int
        The repetition.

    Returns
    -------
    numpy.ndarray
        int64 (stop - start, m), as the rows of :func:`.sampling.draw_positions`.

    Raises
    ------
    ValueError
        When ``start`` is not a multiple of ``plan.chunk`` or the block is out of range.

    Examples
    --------
    >>> plan = draw_plan([9, 9, 9], m=3, repetitions=1, seed=0, chunk=1)
    >>> block_positions(plan, 1, 2, rep=0).shape
    (1, 3)
    """
    if start % plan.chunk or not 0 <= start < stop <= plan.n_users:
        raise ValueError(
            f"users {start}..{stop - 1}: a block must start at a multiple of {plan.chunk} "
            f"and lie within the {plan.n_users} users"
        )
    chunk = start // plan.chunk

    def uniforms(round_, size):
        generator = np.random.PCG64(np.random.SeedSequence([plan.seed, rep]))
        generator.advance(int(plan.starts[rep, round_, chunk]))
        return np.random.Generator(generator).random(size)

    return _positions(plan.pool[start:stop], plan.m, uniforms, plan.replacement)


def save_draw_plan(plan: DrawPlan, path: str | Path) -> None:
    """Write a :class:`DrawPlan` to an .npz file atomically.

    Parameters
    ----------
    plan : DrawPlan
        The plan.
    path : str or pathlib.Path
        The file.

    Returns
    -------
    None

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "plan.npz"
    >>> save_draw_plan(draw_plan([5, 6], m=2, repetitions=3, seed=1, chunk=1), path)
    >>> load_draw_plan(path).starts.shape[:1]
    (3,)
    """
    write_npz({key: getattr(plan, key) for key in _PLAN_FIELDS}, path, compressed=True)


def load_draw_plan(path: str | Path) -> DrawPlan:
    """Read a :class:`DrawPlan` written by :func:`save_draw_plan`.

    Parameters
    ----------
    path : str or pathlib.Path
        The file.

    Returns
    -------
    DrawPlan

    Raises
    ------
    ValueError
        Naming the file when it is damaged or its arrays do not fit together.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "plan.npz"
    >>> _ = path.write_bytes(b"cut")
    >>> load_draw_plan(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...plan.npz: not a draw plan (...); delete it and rerun
    """
    data = read_npz(path, _PLAN_FIELDS, "draw plan")
    plan = DrawPlan(
        int(data["m"]),
        int(data["repetitions"]),
        int(data["seed"]),
        bool(data["replacement"]),
        int(data["chunk"]),
        data["pool"],
        data["starts"],
    )
    n_chunks = -(-plan.n_users // max(plan.chunk, 1))
    if plan.starts.ndim != 3 or plan.starts.shape[::2] != (plan.repetitions, n_chunks):
        raise ValueError(f"{path}: its arrays do not fit together; delete it and rerun")
    return plan
