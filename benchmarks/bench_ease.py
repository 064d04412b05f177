"""How EASE's fit grows with the catalogue, and what its float32 path costs in accuracy.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_ease.py [--items 3706 8000 26744]
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_ease.py --accuracy

For each number of items, fits EASE (regularization 500) on a synthetic binary matrix
(``--users`` users, Zipf item popularity, ``--per-user`` items per user) in a fresh
process and prints the fit's wall time, the precision :func:`ease_dtype` chose and the
process's peak memory (VmHWM, the whole process: interpreter and data included). The
fit's cost is the one dense items x items array (float64 up to 16,384 items, float32
above) and its Cholesky inverse in place, not the users.

``--accuracy``: EASE on the offline MovieLens 1M split in float64 (the shipped path at
3706 items) and in float32 (the path above 16,384 items): the largest difference of the
weights B, how many users' exact ranks change, and the exact Recall@10 and NDCG@10 of
both (tie policy and seed of config.yaml).
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

WORKFLOW = Path(__file__).resolve().parents[1] / "workflow"

CHILD = """
import json, sys, time
import numpy as np, scipy.sparse as sp
sys.path.insert(0, sys.argv[1])
from sampled_metrics.recommenders.ease import ease_dtype, ease_weights
users, items, per_user = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(0)
p = 1.0 / np.arange(1, items + 1); p /= p.sum()
rows = np.repeat(np.arange(users), per_user)
X = sp.csr_matrix((np.ones(rows.size), (rows, rng.choice(items, rows.size, p=p))),
                  shape=(users, items))
X.data[:] = 1.0
start = time.perf_counter()
B = ease_weights(X, 500.0)
seconds = time.perf_counter() - start
peak = next(int(line.split()[1]) for line in open("/proc/self/status")
            if line.startswith("VmHWM"))
print(json.dumps({"s": seconds, "peak_mb": peak / 1024, "dtype": str(B.dtype)}))
"""


def scaling(args) -> None:
    print(f"{'items':>7s} {'dtype':>8s} {'fit s':>8s} {'peak MB':>8s}")
    for items in args.items:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(WORKFLOW), str(args.users), str(items)]
            + [str(args.per_user)],
            capture_output=True,
            text=True,
            check=True,
        )
        result = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{items:7d} {result['dtype']:>8s} {result['s']:8.1f} {result['peak_mb']:8.0f}")


def accuracy() -> None:
    import numpy as np
    from offline_data import CONFIG_FILE, load_leave_last_out

    sys.path.insert(0, str(WORKFLOW))
    from sampled_metrics.estimation.population import exact_metric
    from sampled_metrics.passes.ranking import exact_ranks
    from sampled_metrics.pipeline.validation import load_config
    from sampled_metrics.recommenders.ease import EASEModel, ease_weights

    config = load_config(CONFIG_FILE)
    seed, tie_policy = config["seed"], config["ranking"]["tie_policy"]
    regularization = config["recommenders"]["EASE"]["regularization"]
    train, test = load_leave_last_out()
    weights, ranks = {}, {}
    print(f"MovieLens 1M ({train.shape[1]} items), lambda = {regularization}; percent\n")
    print("| precision | Recall@10 | NDCG@10 |")
    print("|---|---|---|")
    for dtype in ("float64", "float32"):
        weights[dtype] = ease_weights(train, regularization, dtype=dtype)
        model = EASEModel(train, weights[dtype])
        ranks[dtype], n = exact_ranks(model, train, test, tie_policy=tie_policy, seed=seed)
        recall, ndcg = (100 * exact_metric(m, ranks[dtype], n) for m in ("recall@10", "ndcg@10"))
        print(f"| {dtype} | {recall:.4f} | {ndcg:.4f} |")
    gap = np.abs(weights["float32"].astype(np.float64) - weights["float64"])
    changed = ranks["float32"] != ranks["float64"]
    steps = np.abs(ranks["float32"] - ranks["float64"])
    print(
        f"\nlargest |B32 - B64| {gap.max():.2e} (largest |B64| "
        f"{np.abs(weights['float64']).max():.3f}); mean {gap.mean():.1e}\n"
        f"users whose exact rank differs: {int(changed.sum())} of {changed.size} "
        f"(largest change {int(steps.max())} places)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, nargs="+", default=[3706, 8000, 26744])
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--per-user", type=int, default=50)
    parser.add_argument("--accuracy", action="store_true")
    args = parser.parse_args()
    if args.accuracy:
        accuracy()
    else:
        scaling(args)


if __name__ == "__main__":
    main()
