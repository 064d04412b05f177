"""How EASE's fit grows with the catalogue: its dense items x items inverse.

    python benchmarks/bench_ease.py [--items 3706 8000 13372] [--users 20000]

For each number of items, fits EASE (regularization 500) on a synthetic binary matrix
(Zipf item popularity, 50 items per user on average) in a fresh process and prints
the fit's wall time and the process's peak memory, then extrapolates both to the
`ml-20m-like` catalogue (26,744 items) by the largest size's n^3 (time) and n^2
(memory) growth. The fit's cost is the inverse of the items x items Gram matrix, not
the users.
"""

import argparse
import json
import subprocess
import sys

ML_20M_ITEMS = 26_744

CHILD = """
import json, resource, sys, time
import numpy as np, scipy.sparse as sp
sys.path.insert(0, "workflow")
from sampled_metrics.recommenders.baselines import ease_weights
users, items = int(sys.argv[1]), int(sys.argv[2])
rng = np.random.default_rng(0)
p = 1.0 / np.arange(1, items + 1); p /= p.sum()
rows = np.repeat(np.arange(users), 50)
X = sp.csr_matrix((np.ones(rows.size), (rows, rng.choice(items, rows.size, p=p))),
                  shape=(users, items))
X.data[:] = 1.0
start = time.perf_counter()
ease_weights(X, 500.0)
seconds = time.perf_counter() - start
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"s": seconds, "peak_mb": peak_mb}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, nargs="+", default=[3706, 8000, 13372])
    parser.add_argument("--users", type=int, default=20_000)
    args = parser.parse_args()
    print(f"{'items':>7s} {'fit s':>8s} {'peak MB':>8s}")
    for items in args.items:
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(args.users), str(items)],
            capture_output=True,
            text=True,
            check=True,
        )
        result = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{items:7d} {result['s']:8.1f} {result['peak_mb']:8.0f}")
    ratio = ML_20M_ITEMS / items
    print(
        f"\nextrapolated to {ML_20M_ITEMS:,} items (the ml-20m-like catalogue): "
        f"{result['s'] * ratio**3:.0f} s, {result['peak_mb'] * ratio**2 / 1024:.1f} GB"
    )


if __name__ == "__main__":
    main()
