"""How long ``sampled-metrics correct`` takes with its default estimators and metrics.

    python benchmarks/bench_cli.py [--ranks results/ml-1m-offline/ranks/X.csv]
        [--users 6040,1000000] [--law hypergeometric] [--m 99]

A file of sampled ranks as NCF's protocol writes it (m = 99 without replacement, n per
user: the catalogue minus the user's training items): from the exact ranks of a pipeline
run (``--ranks``, columns ``user, rank, n_candidates``), repeated to the number of users
asked for; without it, a synthetic iALS-like population (theta ~ Beta(0.6, 4.8), n per
user in 1393..3687 as on MovieLens 1M). Each size is run once through ``main`` (the
console script's function, default ``--estimators``, the range, ``--metrics``, text), in a
fresh process state but the same interpreter; the goals (issue 25): 6040 users within
10 s, 1M users within a few minutes, on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from sampled_metrics.cli import main
from sampled_metrics.cli.arguments import DEFAULT_ESTIMATORS, DEFAULT_METRICS


def population(path: Path | None, users: int, rng) -> tuple:
    """(exact rank, n) of ``users`` users: the file's repeated, or synthetic."""
    if path is not None:
        frame = pd.read_csv(path)
        take = np.arange(users) % len(frame)
        return (frame["rank"].to_numpy(np.int64)[take], frame["n_candidates"].to_numpy()[take])
    n = rng.integers(1393, 3688, users)
    theta = rng.beta(0.6, 4.8, users)
    return 1 + np.floor(theta * (n - 1)).astype(np.int64), n


def sampled_file(directory: Path, ranks, n, m: int, law: str, rng) -> Path:
    if law == "binomial":
        sampled = 1 + rng.binomial(m, (ranks - 1) / (n - 1))
    else:
        sampled = 1 + rng.hypergeometric(ranks - 1, n - ranks, m)
    path = directory / f"ranks_{ranks.size}.csv"
    pd.DataFrame({"user": np.arange(ranks.size), "sampled_rank": sampled, "n": n}).to_csv(
        path, index=False
    )
    return path


def main_bench(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=Path, help="a pipeline's exact ranks of one model")
    parser.add_argument("--users", default="6040,1000000")
    parser.add_argument("--law", default="hypergeometric")
    parser.add_argument("--m", type=int, default=99)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(
        f"sampled-metrics correct, default estimators {' '.join(DEFAULT_ESTIMATORS)} and the "
        f"range, metrics "
        f"{' '.join(DEFAULT_METRICS)}; m = {args.m}, {args.law}; population "
        f"{args.ranks or 'synthetic'}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for users in (int(x) for x in args.users.split(",")):
            ranks, n = population(args.ranks, users, rng)
            path = sampled_file(Path(tmp), ranks, n, args.m, args.law, rng)
            argv = ["correct", str(path), "--m", str(args.m), "--law", args.law, "--quiet"]
            start = time.perf_counter()
            with contextlib.redirect_stdout(io.StringIO()):
                status = main(argv)
            took = time.perf_counter() - start
            print(
                f"{users:>9} users, {np.unique(n).size} distinct n: {took:6.1f} s (status {status})"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main_bench())
