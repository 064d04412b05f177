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
per run: the process's resident memory before ``rank_files`` (the interpreter, the
split and the model: the model's size), its peak during ``rank_files`` (the kernel's
VmHWM, what ``/usr/bin/time -v`` reports as "Maximum resident set size", reset before
the call where the kernel allows it), the budget, the ratio (peak - model) / budget,
the seconds of ``rank_files`` (and of CPU: the machine may be shared) and a digest of
the two frames: the ranks must not depend on ``memory_mb``. Nothing is written to disk.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

WORKFLOW = Path(__file__).resolve().parents[1] / "workflow"

CHILD = r"""
import hashlib, json, sys, time
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
try:  # reset the peak to the current size: the peak of rank_files alone
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
except OSError:
    pass
start, cpu = time.perf_counter(), time.process_time()
exact, sampled = rank_files([model], method, "ncf", k=10, seed=0, memory_mb=float(memory_mb))
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
peak = status("VmHWM")
digest = hashlib.sha256()
for frame in (exact, sampled):
    digest.update(frame.to_csv(index=False).encode())
print(json.dumps({"peak": peak, "before": before, "s": seconds, "cpu": cpu,
                  "rows": len(exact), "interactions": int(counts.sum()),
                  "digest": digest.hexdigest()}))
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
        f"{args.shape[1]} items; model: resident memory before rank_files; peak: VmHWM "
        "during it (/usr/bin/time -v's maximum)"
    )
    digests = set()
    for memory_mb in args.memory_mb:
        found = run(memory_mb, args.model, args.shape)
        peak, model = (found[key] / 2**20 for key in ("peak", "before"))
        digests.add(found["digest"])
        print(
            f"memory_mb {memory_mb:6.0f}: peak {peak:6.0f} MiB, model {model:5.0f} MiB, "
            f"(peak - model) / budget {(peak - model) / memory_mb:5.2f}, "
            f"{found['s']:6.1f} s ({found['cpu']:.1f} s CPU; {found['rows']} held-out items of "
            f"{found['interactions']} interactions; ranks {found['digest'][:12]})",
            flush=True,
        )
    if len(digests) > 1:
        sys.exit("the ranks differ from one memory_mb to another")


if __name__ == "__main__":
    main()
