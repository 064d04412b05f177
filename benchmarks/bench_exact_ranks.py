"""Exact ranks of all held-out items vs implicit's ranking_metrics_at_k.

On binarized MovieLens 1M (leave-last-out), trains recommender X once and
times, on that same model,

* ``sampled_metrics.passes.ranking.exact_ranks``: the full rank of every user's
  held-out item among all non-training items (every metric derives from it);
* ``implicit.evaluation.ranking_metrics_at_k(model, train, test, K=10)``: top-10
  retrieval per user, which yields only @10 metrics.

and checks that both agree on HR@10 (implicit's "precision" with one test item
per user is HR@10) up to tie handling. Usage::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/bench_exact_ranks.py \
        [--data PATH] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from offline_data import DEFAULT_DATA, load_leave_last_out  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402
from timing import best_time  # noqa: E402

from sampled_metrics.estimation.metrics import recall_at_k  # noqa: E402
from sampled_metrics.passes.ranking import exact_ranks  # noqa: E402
from sampled_metrics.recommenders import PAPER_RECOMMENDERS, fit_recommender  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    from implicit.evaluation import ranking_metrics_at_k

    train, test = load_leave_last_out(args.data)
    n_users, n_items = train.shape
    test_matrix = sp.csr_matrix(
        (np.ones(n_users, np.float32), (np.arange(n_users), test)), shape=train.shape
    )
    t = time.perf_counter()
    model = fit_recommender(PAPER_RECOMMENDERS["X"], train, seed=0)
    print(
        f"fit X (iALS d=16, {model.hyperparameters['iterations']} iterations): "
        f"{time.perf_counter() - t:.2f}s"
    )

    ours_s, (ranks, n) = best_time(lambda: exact_ranks(model, train, test), args.repeats)
    with threadpool_limits(1, "blas"):
        theirs_s, metrics = best_time(
            lambda: ranking_metrics_at_k(
                model.implicit_model, train, test_matrix, K=10, show_progress=False
            ),
            args.repeats,
        )

        theirs_all_s, _ = best_time(
            lambda: ranking_metrics_at_k(
                model.implicit_model, train, test_matrix, K=10, show_progress=False, num_threads=0
            ),
            args.repeats,
        )

    hr_ours = float(recall_at_k(ranks, k=10).mean())
    opt, _ = exact_ranks(model, train, test, tie_policy="optimistic")
    ties_at_10 = int(np.sum((opt <= 10) != (ranks <= 10)))
    print(f"users {n_users}, items {n_items}, best of {args.repeats} runs")
    print(f"exact_ranks (full rank of every held-out item): {ours_s:.3f}s")
    print(f"implicit ranking_metrics_at_k(K=10)             : {theirs_s:.3f}s")
    print(f"ratio implicit / ours                           : {theirs_s / ours_s:.1f}x")
    print(
        f"implicit, num_threads=0 ({os.cpu_count()} cores)           : {theirs_all_s:.3f}s "
        f"(ratio {theirs_all_s / ours_s:.1f}x; ours uses one core)"
    )
    print(
        f"HR@10 ours (pessimistic ties) {hr_ours:.6f}, "
        f"implicit precision@10 {metrics['precision']:.6f}, "
        f"difference {abs(hr_ours - metrics['precision']) * n_users:.0f} users; "
        f"users whose HR@10 depends on ties: {ties_at_10}"
    )
    print(
        f"implicit's other @10 numbers: ndcg {metrics['ndcg']:.6f}, map {metrics['map']:.6f}, "
        f"auc {metrics['auc']:.6f} (its AUC is a top-K proxy, not eq 7)"
    )
    print(
        f"ours also gives: median rank {np.median(ranks):.0f}, AUC (eq 7) "
        f"{np.mean((n - ranks) / (n - 1)):.4f}"
    )


if __name__ == "__main__":
    main()
