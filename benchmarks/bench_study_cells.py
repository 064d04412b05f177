"""The protocol study's draws: ``simulate`` (draws every item) against
``simulate_cells`` (draws cell counts), per uniform protocol, on one block.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_study_cells.py
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_study_cells.py --users 1024 --old-users 256

One block of ``--users`` users x ``--items`` items (default 4,096 x 26,744, ML-20M's
items) and ``--recommenders`` synthetic recommenders (default 6): each user's items get
a shared score plus noise of a recommender's own scale, the held-out item's rank share
is log-uniform over [1e-4, ``--max-share``] (default 0.5), and ``--history`` random
training items per user (ML-20M's mean, 144) are excluded. ``simulate_cells`` is timed
on the whole block at ``--reps`` repetitions (default 100, the study's). ``simulate`` is
timed at the same repetitions on the block's first ``--old-users`` users (default 512)
and scaled to the block by users (marked "*": its cost is per chunk of 32 users, and
timing it at fewer repetitions instead would undercount: its arrays per chunk grow
with them, out of the cache). Times are CPU seconds of the process (wall seconds
beside them: the machine may be shared), then scaled by 138,493 / users (ML-20M's
users, "ML-20M"); both leave out scoring the users and their beaten masks, which the
two paths share. ``cells`` counts each protocol's cells anew; the line "all, shared"
counts them once per pool and passes them (``simulate_cells(counts=...)``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

import numpy as np  # noqa: E402

from sampled_metrics.frameworks.cells import cell_counts, simulate_cells  # noqa: E402
from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS  # noqa: E402
from sampled_metrics.frameworks.simulate import simulate  # noqa: E402

ML20M_USERS = 138_493
PROTOCOLS = ("ncf", "recbole-uni100", "elliot", "daisyrec")


def synthetic_block(
    users: int, items: int, recommenders: int, history: int, seed: int, max_share: float = 0.5
):
    """Beaten masks, the training items and the held-out items of a synthetic block."""
    rng = np.random.default_rng(seed)
    training = np.zeros((users, items), dtype=bool)
    rows = np.repeat(np.arange(users), history)
    training[rows, rng.integers(0, items, users * history)] = True
    test = np.empty(users, dtype=np.int64)
    for u in range(users):
        free = np.flatnonzero(~training[u])
        test[u] = free[rng.integers(free.size)]
    share = np.exp(rng.uniform(np.log(1e-4), np.log(max_share), users)).astype(np.float32)
    beaten = [np.empty((users, items), dtype=bool) for _ in range(recommenders)]
    for a in range(0, users, 256):
        b = min(a + 256, users)
        base = rng.random((b - a, items), dtype=np.float32)
        for k in range(recommenders):
            noise = 0.05 * (k + 1) * rng.standard_normal((b - a, items), dtype=np.float32)
            # each recommender's threshold keeps the user's rank share on average
            beaten[k][a:b] = base + noise > 1.0 - share[a:b, None]
    rows = np.arange(users)
    for mask in beaten:
        mask[training] = False
        mask[rows, test] = False
    return beaten, training, test


def timed(function, *args, **kwargs) -> tuple:
    """(CPU seconds of this process, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    function(*args, **kwargs)
    return time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=4096)
    parser.add_argument("--items", type=int, default=26_744)
    parser.add_argument("--recommenders", type=int, default=6)
    parser.add_argument("--history", type=int, default=144)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--old-users", type=int, default=512)
    parser.add_argument("--protocols", nargs="+", default=PROTOCOLS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-share", type=float, default=0.5)
    args = parser.parse_args()

    t = time.perf_counter()
    beaten, training, test = synthetic_block(
        args.users, args.items, args.recommenders, args.history, args.seed, args.max_share
    )
    without_target = training.copy()
    without_target[np.arange(args.users), test] = True
    ones = np.ones(args.items)
    ranks = 1 + np.count_nonzero(beaten[0], axis=1)
    union = np.mean([np.any([b[u] for b in beaten], axis=0).mean() for u in range(args.users)])
    print(
        f"block: {args.users} users x {args.items} items x {args.recommenders} recommenders, "
        f"{args.reps} repetitions (built in {time.perf_counter() - t:.1f} s; median rank of "
        f"recommender 0: {np.median(ranks):.0f}; items beaten by some recommender: "
        f"{union:.0%})"
    )
    scale = ML20M_USERS / args.users
    old_users = min(args.old_users, args.users)
    old_scale = args.users / old_users
    print("CPU seconds of this process (wall seconds in brackets: the machine may be shared)")
    print(
        f"{'protocol':<16}{'simulate':>16}{'cells':>16}{'speed-up':>10}"
        f"{'simulate ML-20M':>17}{'cells ML-20M':>14}"
    )
    totals = np.zeros(2)
    for name in args.protocols:
        protocol = FRAMEWORK_PROTOCOLS[name]
        excluded = training if protocol.target_in_pool else without_target
        first = [mask[:old_users] for mask in beaten]
        old = old_scale * np.array(
            timed(
                simulate, protocol, first, excluded[:old_users], ones, test[:old_users],
                start=0, repetitions=args.reps, seed=1,
            )
        )  # fmt: skip
        new = np.array(
            timed(
                simulate_cells, protocol, beaten, excluded, ones, test,
                start=0, repetitions=args.reps, seed=1,
            )
        )  # fmt: skip
        totals += old[0], new[0]
        print(
            f"{name:<16}{old[0]:>7.1f}* ({old[1]:>5.1f}){new[0]:>8.2f} ({new[1]:>5.1f})"
            f"{old[0] / new[0]:>9.1f}x{old[0] * scale / 60:>13.1f} min"
            f"{new[0] * scale / 60:>10.1f} min",
            flush=True,
        )
    print(
        f"{'all':<16}{totals[0]:>7.1f}{'':>9}{totals[1]:>8.2f}{'':>8}{totals[0] / totals[1]:>9.1f}x"
        f"{totals[0] * scale / 60:>13.1f} min{totals[1] * scale / 60:>10.1f} min"
    )
    # the cells counted once per pool (NCF's holds the held-out item), then shared
    shared = np.zeros(2)
    counts = {}
    for pool, excluded in (("ncf", training), ("others", without_target)):
        t = timed(cell_counts, beaten, excluded)
        shared += t
        counts[pool] = cell_counts(beaten, excluded)
    for name in args.protocols:
        protocol = FRAMEWORK_PROTOCOLS[name]
        excluded = training if protocol.target_in_pool else without_target
        shared += timed(
            simulate_cells, protocol, beaten, excluded, ones, test, start=0,
            repetitions=args.reps, seed=1,
            counts=counts["ncf" if protocol.target_in_pool else "others"],
        )  # fmt: skip
    print(
        f"{'all, shared':<16}{totals[0]:>7.1f}{'':>9}{shared[0]:>8.2f} ({shared[1]:>5.1f})"
        f"{totals[0] / shared[0]:>9.1f}x{totals[0] * scale / 60:>13.1f} min"
        f"{shared[0] * scale / 60:>10.1f} min"
    )
    print(
        "all, shared: cell_counts once per pool (2: NCF's and the others'), passed as "
        "simulate_cells(counts=...)"
    )
    print(
        f"* simulate timed on {old_users} users, scaled x {old_scale:g} to the block; "
        f"ML-20M: x {scale:.1f} ({ML20M_USERS} users), the draws only"
    )


if __name__ == "__main__":
    main()
