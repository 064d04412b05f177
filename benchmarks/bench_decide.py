"""Ranking only the users a design chose, against ranking every user exactly.

A synthetic pair of factor models of MovieLens 1M's size (6040 users, 3706 items,
histories of 20 to 1000 items, about 165 on average; no data file): phase 1 is NCF's
sampled evaluation of every user (``rank_files(..., users=[])``), the design is
``sampled-metrics plan``'s (``estimation.decisions.draw_design``, strata from both
models' sampled ranks, 25 % and 10 % of the users), and phase 2 is
``exact_rank_frame(..., users=chosen)``: its time (best of ``--repeats``) is printed
beside the exact ranking of every user, with the ratio, and the chosen users' ranks
are checked to be their ranks among all. Usage::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_decide.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from timing import best_time  # noqa: E402

from sampled_metrics.estimation.decisions import draw_design  # noqa: E402
from sampled_metrics.frameworks.rank_files import exact_rank_frame, rank_files  # noqa: E402

USERS, ITEMS, DIMENSIONS = 6040, 3706, 64
BUDGETS = (0.25, 0.1)


def synthetic(seed: int = 0) -> tuple:
    """(train csr, held-out items, {model: scoring function}) of MovieLens 1M's size."""
    rng = np.random.default_rng(seed)
    history = np.clip(np.round(rng.lognormal(np.log(100), 0.9, USERS)), 20, 1000).astype(int)
    keys = rng.random((USERS, ITEMS), dtype=np.float32)
    order = np.argsort(keys, axis=1)
    rows = np.repeat(np.arange(USERS), history)
    columns = np.concatenate([order[u, 1 : 1 + h] for u, h in enumerate(history)])
    train = sp.csr_matrix((np.ones(rows.size), (rows, columns)), shape=(USERS, ITEMS))
    users = rng.normal(size=(USERS, DIMENSIONS)).astype(np.float32)
    items = rng.normal(size=(ITEMS, DIMENSIONS)).astype(np.float32)
    models = {}
    for name, noise in (("A", 0.5), ("B", 0.8)):
        taste = users + noise * rng.normal(size=users.shape).astype(np.float32)
        models[name] = lambda block, taste=taste: taste[block] @ items.T
    return train, order[:, 0], models


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    train, test, models = synthetic()
    start = time.perf_counter()
    _, sampled = rank_files(models, train, test, "ncf", seed=0, users=[])
    phase_one = time.perf_counter() - start
    print(
        f"{USERS} users, {ITEMS} items, {int(train.nnz / USERS)} training items a user, "
        f"models {', '.join(models)}; phase 1 (ncf, every user): {phase_one:.2f} s"
    )
    every_time, every = best_time(lambda: exact_rank_frame(models, train, test), args.repeats)
    print(f"exact ranks of every user:     {every_time:7.2f} s")
    ranks = np.stack([sampled[name] for name in models])
    for budget in BUDGETS:
        design = draw_design(ranks, sampled["m"], sampled["n"], budget=budget, seed=1,
                             law="hypergeometric")  # fmt: skip
        chosen = np.flatnonzero(design.chosen)
        seconds, some = best_time(
            lambda chosen=chosen: exact_rank_frame(models, train, test, users=chosen),
            args.repeats,
        )
        assert some.to_dict("list") == every.iloc[chosen].to_dict("list")
        print(
            f"exact ranks of the chosen {100 * budget:2.0f} %: {seconds:7.2f} s "
            f"({chosen.size} users), {seconds / every_time:.3f} of every user's time"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
