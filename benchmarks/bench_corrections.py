"""Time the corrections of Table 3, per-user n, and the far right of Figure 6.

    python benchmarks/bench_corrections.py

Prints wall times (best of --repeat runs, each with a cold law cache) and
their ratio to the budgets: all Table 3 corrections for four metrics at
n = 3706, m = 100 in 0.5 s, one method at a time (``corrected_metric``) and
shared (``correction_vectors``: one law, one QR, one Gram matrix); the same
for each of 743 distinct n (as many as MovieLens 1M users have: per-user n)
in 15 s; BV at m = n - 1 in 10 s.
"""

import argparse
import time

from sampled_metrics.estimation import corrections as C
from sampled_metrics.estimation.laws import LAWS

METRICS = ["recall@10", "ndcg@10", "ap", "auc"]
METHODS = ["rank_estimate", "cls", "bv_1", "bv_0.1", "bv_0.01", "bv_0.001"]


def best_time(task, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        C.clear_law_cache()
        start = time.perf_counter()
        task()
        times.append(time.perf_counter() - start)
    return min(times)


def table3_corrections(n: int, m: int, law: str) -> None:
    for metric in METRICS:
        for method in METHODS:
            C.corrected_metric(metric, method, n, m, law)


def shared_corrections(n_values, m: int, law: str) -> None:
    for n in n_values:
        C.correction_vectors(METRICS, METHODS, n, m, law)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=3706)
    parser.add_argument("--m", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'task':58s} {'seconds':>8s} {'budget':>7s} {'ratio':>6s}")
    for law in LAWS:
        seconds = best_time(lambda law=law: table3_corrections(args.n, args.m, law), args.repeat)
        label = (
            f"Table 3: {len(METHODS)} methods x {len(METRICS)} metrics, "
            f"n={args.n} m={args.m}, {law}"
        )
        print(f"{label:58s} {seconds:8.3f} {0.5:7.1f} {seconds / 0.5:6.2f}")
    for law in LAWS:
        seconds = best_time(lambda law=law: shared_corrections([args.n], args.m, law), args.repeat)
        label = f"Table 3 shared: one law, one QR, n={args.n} m={args.m}, {law}"
        print(f"{label:58s} {seconds:8.3f} {0.5:7.1f} {seconds / 0.5:6.2f}")
    per_user = range(args.n - 762, args.n - 19)  # 743 distinct n, like ML-1M's users
    for law in LAWS:
        seconds = best_time(lambda law=law: shared_corrections(per_user, args.m, law), 1)
        label = f"per-user n: Table 3 for {len(per_user)} distinct n, {law}"
        print(f"{label:58s} {seconds:8.3f} {15.0:7.1f} {seconds / 15.0:6.2f}")
    for law in LAWS:
        seconds = best_time(
            lambda law=law: C.corrected_metric("recall@10", "bv_0.1", args.n, args.n - 1, law), 1
        )
        label = f"BV 0.1 at m = n - 1 = {args.n - 1}, {law}"
        print(f"{label:58s} {seconds:8.3f} {10.0:7.1f} {seconds / 10.0:6.2f}")


if __name__ == "__main__":
    main()
