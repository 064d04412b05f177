"""Which reading of the paper's sampling protocol reproduces its uncorrected cells?

The uncorrected sampled cells of Table 3 depend on the sampling alone, not on
the corrections. This script computes their expected values (m = 100 items
drawn without replacement; Recall@10 and NDCG@10, percent) on binarized
MovieLens 1M for X, Y and Z under the readings the paper leaves open:

* pool: the items the user has not interacted with (the pipeline's), or every
  item but the held-out one (training items included, scored by the model);
* ties between the held-out item and sampled items: the pipeline's shared
  random order (the one of the exact ranks, drawn once), a fresh random order
  in every draw (the expectation over all orders), none above (optimistic),
  or all above (pessimistic).

Given the model's scores, the number K_u of pool items ranked above the
held-out item is fixed, and the sampled rank is 1 + Hypergeometric(pool size,
K_u, m): the expectation is exact, no repetition is drawn. With a fresh tie
order, given the number tau of sampled tied items, the held-out item's place
among them is uniform on 0..tau. Usage (about a
minute on 2 cores)::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/sampling_readings.py [--data PATH]
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from offline_data import CONFIG_FILE, DEFAULT_DATA, load_leave_last_out  # noqa: E402

from sampled_metrics.estimation.expected import metric_on_sample  # noqa: E402
from sampled_metrics.estimation.laws import WITHOUT_REPLACEMENT, sampled_rank_pmf  # noqa: E402
from sampled_metrics.passes.ties import tie_order_keys  # noqa: E402
from sampled_metrics.pipeline.validation import load_config  # noqa: E402
from sampled_metrics.recommenders import all_scores, fit_recommender  # noqa: E402
from sampled_metrics.reproduction.paper import published  # noqa: E402

METRICS = ("recall@10", "ndcg@10")
READINGS = (
    ("unseen items, shared random ties (pipeline)", "unseen", "random"),
    ("unseen items, a fresh random tie order per draw", "unseen", "fresh"),
    ("unseen items, ties not above (optimistic)", "unseen", "optimistic"),
    ("unseen items, ties above (pessimistic)", "unseen", "pessimistic"),
    ("all items but the target, shared random ties", "all", "random"),
)


def above_counts(scores, train, test_items, pool: str, ties: str, tie_seed: int):
    """Per user: (pool size N_u, number K_u of pool items ranked above the held-out item)."""
    users = np.arange(scores.shape[0])
    target = scores[users, test_items][:, None]
    in_pool = np.ones(scores.shape, bool)
    in_pool[users, test_items] = False
    if pool == "unseen":
        in_pool[train.nonzero()] = False
    higher = np.count_nonzero((scores > target) & in_pool, axis=1)
    tied = (scores == target) & in_pool
    if ties in ("optimistic", "fresh"):
        extra = 0
    elif ties == "pessimistic":
        extra = np.count_nonzero(tied, axis=1)
    else:
        keys = tie_order_keys(users[:, None], np.arange(scores.shape[1])[None, :], tie_seed)
        target_key = tie_order_keys(users, test_items, tie_seed)[:, None]
        extra = np.count_nonzero(tied & (keys < target_key), axis=1)
    return in_pool.sum(axis=1), higher + extra


def tied_counts(scores, train, test_items):
    """Per user, the unseen items scored exactly like the held-out item."""
    users = np.arange(scores.shape[0])
    target = scores[users, test_items][:, None]
    tied = scores == target
    tied[users, test_items] = False
    tied[train.nonzero()] = False
    return np.count_nonzero(tied, axis=1)


def expected_fresh_ties(metric: str, pool_size, higher, tied, m: int) -> float:
    """Mean over users of E[M(r~)] when every draw orders the tied items afresh, in percent.

    tau ~ Hypergeometric(N, t, m) tied items are drawn, H ~ Hypergeometric(N - t,
    h, m - tau) higher ones, and r~ - 1 = H + U with U uniform on 0..tau.
    """
    from scipy.stats import hypergeom

    vector = metric_on_sample(metric, m)
    window = np.concatenate([[0.0], np.cumsum(vector)])
    total = np.zeros(pool_size.size)
    for tau in range(m + 1):
        p_tau = hypergeom.pmf(tau, pool_size, tied, m)
        live = p_tau > 0
        if not live.any():
            continue
        k = np.arange(m - tau + 1)[None, :]
        p_h = hypergeom.pmf(k, (pool_size - tied)[live, None], higher[live, None], m - tau)
        mean_over_place = (window[k + tau + 1] - window[k]) / (tau + 1)  # mean of M over H..H+tau
        total[live] += p_tau[live] * np.sum(p_h * mean_over_place, axis=1)
    return 100 * float(np.mean(total))


def expected_sampled(metric: str, pool_size, above, m: int) -> float:
    """Mean over users of E[M(r~)], r~ - 1 ~ Hypergeometric(N_u, K_u, m), in percent."""
    P = sampled_rank_pmf(above + 1, pool_size + 1, m, WITHOUT_REPLACEMENT)
    return 100 * float(np.mean(P @ metric_on_sample(metric, m)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=DEFAULT_DATA)
    args = parser.parse_args()
    config = load_config(CONFIG_FILE)
    m, seed = config["sampling"]["m"], config["seed"]
    train, test_items = load_leave_last_out(args.data)
    paper = published("table3").query("method == 'sampled'").set_index(["recommender", "metric"])
    print(f"Expected uncorrected sampled metrics (percent), m = {m}, without replacement\n")
    print("| recommender | reading | " + " | ".join(METRICS) + " |")
    print("|---|---|" + "---|" * len(METRICS))
    for name in ("X", "Y", "Z"):
        model = fit_recommender(config["recommenders"][name], train, seed=seed)
        scores = all_scores(model, train.shape[0]).astype(np.float32)
        for label, pool, ties in READINGS:
            pool_size, above = above_counts(scores, train, test_items, pool, ties, seed)
            if ties == "fresh":
                tied = tied_counts(scores, train, test_items)
                cells = [
                    expected_fresh_ties(metric, pool_size, above, tied, m) for metric in METRICS
                ]
            else:
                cells = [expected_sampled(metric, pool_size, above, m) for metric in METRICS]
            print(f"| {name} | {label} | " + " | ".join(f"{v:.2f}" for v in cells) + " |")
        cells = [paper.loc[(name, metric), "mean"] for metric in METRICS]
        print(f"| {name} | paper | " + " | ".join(f"{v:.2f}" for v in cells) + " |")


if __name__ == "__main__":
    main()
