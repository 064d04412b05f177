"""Peak memory of the cornac adapter's ``rank_files`` against its ``memory_mb``, on a
synthetic data set of MovieLens 1M's size. Runs only in cornac's environment:

    bash .ci/envs/cornac.sh
    .envs/cornac/bin/python benchmarks/bench_cornac_memory.py
    .envs/cornac/bin/python benchmarks/bench_cornac_memory.py --memory-mb 256 1024 --model BPR

The data: 6,000 users x 3,700 items, about a million interactions, each user's items
drawn by a Zipf-like popularity (MovieLens 1M has 6,040 x 3,706 and 1,000,209), ratings
1 to 5, split by cornac's ``RatioSplit`` (test 0.2, ``exclude_unknowns``), as a user of
cornac would evaluate it. The model: ``MostPop`` (ties everywhere, fitted in no time) or
``BPR`` (3 epochs). Each ``memory_mb`` runs in a fresh process, which builds the split,
fits the model, then writes the NCF protocol's rank files with ``rank_files``; printed
per run: the whole process's peak resident memory (the kernel's VmHWM, what
``/usr/bin/time -v`` reports as "Maximum resident set size"), its resident memory
before ``rank_files`` (split and model), the difference, and the seconds of
``rank_files``. Nothing is written to disk.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

WORKFLOW = Path(__file__).resolve().parents[1] / "workflow"

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
import cornac
from cornac.eval_methods import RatioSplit
from cornac.models import BPR, MostPop
from sampled_metrics.frameworks.adapters.cornac import rank_files

def status(key):
    with open("/proc/self/status") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name == key:
                return int(rest.split()[0]) * 1024

memory_mb, model_name, users, items, per_user = sys.argv[2], sys.argv[3], *map(int, sys.argv[4:7])
rng = np.random.default_rng(1)
popularity = 1.0 / np.arange(1, items + 1) ** 0.9
popularity /= popularity.sum()
counts = np.clip(rng.lognormal(np.log(per_user) - 0.5, 1.0, users).astype(int), 20, items // 2)
triplets = []
for user, count in enumerate(counts):
    chosen = rng.choice(items, size=count, replace=False, p=popularity)
    ratings = rng.integers(1, 6, size=count)
    triplets += [(f"u{user}", f"i{i}", float(r)) for i, r in zip(chosen, ratings)]
method = RatioSplit(triplets, test_size=0.2, exclude_unknowns=True, seed=1, verbose=False)
del triplets
model = MostPop() if model_name == "MostPop" else BPR(k=16, max_iter=3, seed=1)
model.fit(method.train_set)
before = status("VmRSS")
start = time.perf_counter()
exact, sampled = rank_files([model], method, "ncf", k=10, seed=0, memory_mb=float(memory_mb))
seconds = time.perf_counter() - start
print(json.dumps({"peak": status("VmHWM"), "before": before, "s": seconds,
                  "rows": len(exact), "interactions": int(counts.sum())}))
"""


def run(memory_mb: float, model: str, shape) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(WORKFLOW), str(memory_mb), model, *map(str, shape)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memory-mb", type=float, nargs="+", default=[256, 1024])
    parser.add_argument("--model", choices=["MostPop", "BPR"], default="MostPop")
    parser.add_argument(
        "--shape",
        type=int,
        nargs=3,
        default=[6000, 3700, 166],
        metavar=("USERS", "ITEMS", "PER_USER"),
        help="users, items, mean items per user (default: MovieLens 1M's size)",
    )
    args = parser.parse_args()
    try:
        import cornac  # noqa: F401
    except ModuleNotFoundError:
        sys.exit("bench_cornac_memory.py needs cornac: run it with .envs/cornac/bin/python")
    print(
        f"rank_files of cornac's {args.model} on a RatioSplit of {args.shape[0]} users x "
        f"{args.shape[1]} items; whole-process peak RSS (VmHWM = /usr/bin/time -v's maximum)"
    )
    for memory_mb in args.memory_mb:
        found = run(memory_mb, args.model, args.shape)
        mib = {key: found[key] / 2**20 for key in ("peak", "before")}
        print(
            f"memory_mb {memory_mb:6.0f}: peak {mib['peak']:7.0f} MiB, before rank_files "
            f"{mib['before']:5.0f} MiB, added {mib['peak'] - mib['before']:6.0f} MiB, "
            f"{found['s']:6.1f} s ({found['rows']} held-out items of "
            f"{found['interactions']} interactions)",
            flush=True,
        )


if __name__ == "__main__":
    main()
