"""Item-kNN in float32 against float64 on MovieLens 1M: does the precision of the
one items x items array change the numbers beyond the effect of the tie-order seed?

For the item-kNN recommenders of config.yaml (Y and Z), fitted on the offline
copy's leave-last-out split, the exact ranks under the workflow's tie policy and
seed are computed from float64 and from float32 similarities. Printed per model:
how many users' exact ranks differ, the exact Recall@10, NDCG@10, AP and AUC and
the expected uncorrected sampled Recall@10 at m = sampling.m (eq 16, per-user n,
the sampling law of the run), all in percent; then the same metrics in float64
under 10 other tie-order seeds, whose spread is the yardstick: a float32 change
smaller than the largest tie-seed change is within the tie-order seed's effect.
Also the time to fit and the size of the similarity in each precision.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/knn_float32.py   # about 1 minute
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from offline_data import CONFIG_FILE, load_leave_last_out  # noqa: E402

from sampled_metrics.estimation.metrics import metric_vector  # noqa: E402
from sampled_metrics.estimation.population import exact_metric, expected_sampled_value
from sampled_metrics.passes.ranking import exact_ranks  # noqa: E402
from sampled_metrics.pipeline.validation import load_config  # noqa: E402
from sampled_metrics.recommenders import fit_recommender  # noqa: E402

CONFIG = load_config(CONFIG_FILE)
SEED = CONFIG["seed"]  # of the random tie order, as in the workflow
TIE_POLICY = CONFIG["ranking"]["tie_policy"]
M = CONFIG["sampling"]["m"]
LAW = CONFIG["sampling"]["law"]
OTHER_SEEDS = range(SEED + 1, SEED + 11)
METRICS = ("recall@10", "ndcg@10", "ap", "auc")
SAMPLED = "sampled R@10"


def measures(ranks, n) -> dict:
    values = {metric: 100 * exact_metric(metric, ranks, n) for metric in METRICS}
    recall = metric_vector("recall@10", M + 1)
    values[SAMPLED] = 100 * expected_sampled_value(recall, ranks.astype(np.int64), n, LAW)
    return values


def main() -> None:
    train, test = load_leave_last_out()
    columns = [*METRICS, SAMPLED]
    print(f"tie policy {TIE_POLICY}, seed {SEED}; sampled at m = {M} ({LAW}); percent\n")
    for name, spec in CONFIG["recommenders"].items():
        if spec["type"] != "item_knn":
            continue
        ranks, fitted = {}, {}
        for dtype in ("float64", "float32"):
            start = time.perf_counter()
            model = fit_recommender({**spec, "dtype": dtype}, train)
            fitted[dtype] = time.perf_counter() - start
            ranks[dtype], n = exact_ranks(model, train, test, tie_policy=TIE_POLICY, seed=SEED)
            if dtype == "float64":
                seeds = [
                    exact_ranks(model, train, test, tie_policy=TIE_POLICY, seed=s)[0]
                    for s in OTHER_SEEDS
                ]
        changed = ranks["float32"] != ranks["float64"]
        step = np.abs(ranks["float32"] - ranks["float64"])
        print(f"## {name}: {spec}")
        print(
            f"fit: float64 {fitted['float64']:.1f} s, float32 {fitted['float32']:.1f} s; "
            f"similarity {train.shape[1] ** 2 * 8 / 2**20:.0f} MB -> "
            f"{train.shape[1] ** 2 * 4 / 2**20:.0f} MB dense"
        )
        print(
            f"users whose exact rank differs float32 vs float64: {int(changed.sum())} of "
            f"{changed.size} (largest change {step.max():.0f} places)"
        )
        base = measures(ranks["float64"], n)
        f32 = measures(ranks["float32"], n)
        tie = [measures(r, n) for r in seeds]
        print(
            "| metric | float64 | float32 | float32 - float64 | largest tie-seed change |"
            " tie-seed std | within |"
        )
        print("|---|---|---|---|---|---|---|")
        for c in columns:
            spread = max(abs(t[c] - base[c]) for t in tie)
            std = float(np.std([t[c] for t in tie], ddof=1))
            delta = f32[c] - base[c]
            print(
                f"| {c} | {base[c]:.4f} | {f32[c]:.4f} | {delta:+.4f} | {spread:.4f} | "
                f"{std:.4f} | {'yes' if abs(delta) <= spread else 'NO'} |"
            )
        print()


if __name__ == "__main__":
    main()
