"""Time every estimator of sampled_metrics.estimation.estimators on a million users.

    python benchmarks/bench_estimators.py [--users 1000000] [--threads 2]

Simulates --users users with exact ranks from a long-tailed distribution over
n = 3706 items (MovieLens 1M's), samples m = 100 items with replacement, and
prints, per estimator, the wall time of Recall@10, NDCG@10, AP and AUC together
(``estimate_table`` without bootstrap), then all estimators at once, against the
issue's budget of 10 s on 2 cores; then the same with each user's own n (743 values
between 1392 and 3705, as MovieLens 1M's users have), and one bootstrap interval
(200 resamples) of a learned estimator. Peak memory is the process's maximum RSS.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from threadpoolctl import threadpool_limits

from sampled_metrics.estimation.estimators import estimate_table, sampled_evaluation

METRICS = ["recall@10", "ndcg@10", "ap", "auc"]
METHODS = [
    "sampled",
    "rank_estimate",
    "cls",
    "bv_0.1",
    "em",
    "maxent",
    "bv_em_0.1",
    "bv_maxent_0.1",
    "mn_em",
    "mn_maxent",
]
BUDGET = 10.0


def simulate(users: int, n, m: int, seed: int = 0):
    """Exact ranks with a quarter of the users in the top 1 %, the rest uniform."""
    rng = np.random.default_rng(seed)
    n = np.broadcast_to(np.asarray(n), (users,))
    top = rng.random(users) < 0.25
    position = np.where(top, rng.random(users) * 0.01, rng.random(users))
    ranks = 1 + np.floor(position * (n - 1)).astype(np.int64)
    return 1 + rng.binomial(m, (ranks - 1) / (n - 1))


def timed(task) -> float:
    start = time.perf_counter()
    task()
    return time.perf_counter() - start


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--m", type=int, default=100)
    parser.add_argument("--n", type=int, default=3706)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    with threadpool_limits(args.threads):
        one_n = sampled_evaluation(simulate(args.users, args.n, args.m), args.m, args.n)
        print(f"{args.users:,} users, m = {args.m}, n = {args.n}, {args.threads} BLAS threads")
        print(f"{'estimator (4 metrics)':28s} {'seconds':>8s}")
        for method in METHODS:
            seconds = timed(lambda m=method: estimate_table(one_n, METRICS, [m], bootstrap=0))
            print(f"{method:28s} {seconds:8.2f}")
        seconds = timed(lambda: estimate_table(one_n, METRICS, METHODS, bootstrap=0))
        ratio = seconds / BUDGET
        print(f"{'all at once':28s} {seconds:8.2f}   budget {BUDGET:.0f} s, ratio {ratio:.2f}")

        rng = np.random.default_rng(1)
        n_u = rng.choice(np.arange(1392, 3706, 3), size=args.users)
        per_user = sampled_evaluation(simulate(args.users, n_u, args.m, seed=2), args.m, n_u)
        distinct = np.unique(n_u).size
        seconds = timed(lambda: estimate_table(per_user, METRICS, METHODS, bootstrap=0))
        print(f"{f'all, per-user n ({distinct} values)':28s} {seconds:8.2f}")

        small = one_n.take(np.arange(min(args.users, 100_000)))
        seconds = timed(lambda: estimate_table(small, ["ndcg@10"], ["mn_em"], bootstrap=200))
        print(f"{'mn_em, 200 bootstraps, 100k':28s} {seconds:8.2f}")
    print(f"peak memory {peak_mb():.0f} MB")


if __name__ == "__main__":
    main()
