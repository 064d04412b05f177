"""Every configured model's fit on a data set: time and peak memory of the job, against
the estimate the start-up check uses (sampled_metrics.recommenders.memory).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_fit_memory.py --dataset ml-20m-like
    python benchmarks/bench_fit_memory.py --dataset ml-1m-offline --models EASE BPR

The data set of config.yaml is split leave-last-out once (``ml-20m-like``: about 20 s)
and saved to a temporary directory. Each model is then fitted in a fresh process, as the
workflow's rule ``fit`` does (load the split, fit, save the model), and its peak
resident memory read from the kernel (VmHWM: the whole process, interpreter and split
included); a second fresh process loads the stored model and scores a block of
``--block`` users, timed, with its own peak. Printed per model: fit seconds, fit peak,
the estimate (``fit_memory_bytes``) and estimate / measured; load + score seconds and
peak. ``--synthetic USERS ITEMS PER_USER`` uses a random matrix of that shape instead.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

WORKFLOW = Path(__file__).resolve().parents[1] / "workflow"
sys.path.insert(0, str(WORKFLOW))

CHILD = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np, scipy.sparse as sp
from sampled_metrics.recommenders import fit_recommender, load_model, save_model

def status():
    values = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                values[key] = int(rest.split()[0]) * 1024
    return values

mode, data, spec, seed, model_path, block = sys.argv[2:8]
train = sp.load_npz(data).tocsr()
loaded = status()["VmRSS"]
start = time.perf_counter()
if mode == "fit":
    model = fit_recommender(json.loads(spec), train, seed=int(seed))
    seconds = time.perf_counter() - start
    save_model(model, model_path)
else:
    del train
    model = load_model(model_path)
    model.scores(np.arange(min(int(block), 2)))  # page the model in
    start = time.perf_counter()
    model.scores(np.arange(int(block)))
    seconds = time.perf_counter() - start
epochs = len(getattr(model, "training_auc", ())) or None  # BPR: the epochs it ran
print(json.dumps({"s": seconds, "peak": status()["VmHWM"], "loaded": loaded, "epochs": epochs}))
"""


def run_child(*args) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(WORKFLOW), *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def training_matrix(args, path: Path):
    import numpy as np
    import scipy.sparse as sp

    if args.synthetic:
        users, items, per_user = args.synthetic
        rng = np.random.default_rng(0)
        p = 1.0 / np.arange(1, int(items) + 1)
        rows = np.repeat(np.arange(int(users)), int(per_user))
        cols = rng.choice(int(items), rows.size, p=p / p.sum())
        train = sp.csr_matrix(
            (np.ones(rows.size, dtype=np.float32), (rows, cols)), shape=(int(users), int(items))
        )
        train.data[:] = 1.0
    else:
        from offline_data import CONFIG_FILE

        from sampled_metrics.data import leave_last_out_split, load_events

        entry = load_config()["datasets"][args.dataset]
        where = None if "path" not in entry else (CONFIG_FILE.parent / entry["path"]).resolve()
        train = leave_last_out_split(load_events(where, entry)).train
    sp.save_npz(path, sp.csr_matrix(train), compressed=False)
    return train.shape, train.nnz


def load_config():
    from offline_data import CONFIG_FILE

    from sampled_metrics.pipeline.validation import load_config as load

    return load(CONFIG_FILE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="ml-1m-offline")
    parser.add_argument("--synthetic", type=float, nargs=3, metavar=("USERS", "ITEMS", "PER_USER"))
    parser.add_argument("--models", nargs="+")
    parser.add_argument("--block", type=int, default=4096)
    parser.add_argument("--json", help="append the measurements to this JSON-lines file")
    args = parser.parse_args()
    from sampled_metrics.recommenders.memory import fit_memory_bytes

    config = load_config()
    models = {k: v for k, v in config["recommenders"].items() if v is not None}
    if args.models:
        models = {k: models[k] for k in args.models}
    gb = 2**30
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "train.npz"
        (n_users, n_items), n_events = training_matrix(args, data)
        print(f"{n_users:,} users x {n_items:,} items, {n_events:,} training events\n")
        print(
            "| model | fit s | fit peak GB | estimate GB | estimate / peak "
            f"| load + score {args.block} users: s | peak GB |"
        )
        print("|---|---|---|---|---|---|---|")
        for name, spec in models.items():
            path = Path(tmp) / f"{name}.pkl"
            fit = run_child("fit", data, json.dumps(spec), config["seed"], path, args.block)
            score = run_child("score", data, "{}", 0, path, args.block)
            estimate = fit_memory_bytes(spec, n_users, n_items, n_events)
            epochs = f" ({fit['epochs']} epochs)" if fit.get("epochs") else ""
            print(
                f"| {name} | {fit['s']:.1f}{epochs} | {fit['peak'] / gb:.2f} | "
                f"{estimate / gb:.2f} | {estimate / fit['peak']:.2f} | {score['s']:.2f} | "
                f"{score['peak'] / gb:.2f} |",
                flush=True,
            )
            if args.json:
                record = {
                    "model": name,
                    "spec": spec,
                    "n_users": n_users,
                    "n_items": n_items,
                    "n_events": n_events,
                    "fit": fit,
                    "score": score,
                    "estimate": estimate,
                }
                with open(args.json, "a") as f:
                    f.write(json.dumps(record) + "\n")
            os.remove(path)


if __name__ == "__main__":
    main()
