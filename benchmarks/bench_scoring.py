"""How long every model type takes to score a block of users: the rank pass's cost.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_scoring.py [--dataset ml-20m-like]
    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_scoring.py --random 8192 26744 144

On the leave-last-out training matrix of a data set of config.yaml (default
`ml-20m-like`: generated and split in about 20 s), or on a random one (``--random USERS
ITEMS PER_USER``, Zipf item popularity; its Y similarity is mostly zeros, hence stored
sparse), fits X (iALS), Y and Z (item-kNN), Pop and BPR (``--bpr-iterations`` epochs:
its scores cost the same after one), one model at a time, and times ``scores()`` of the
first ``--block`` users (the best of ``--repeat`` calls), printing each time and its
ratio to Y's. EASE's product is the same as Y's (a sparse history times a dense items x
items float32 matrix; what B holds does not change its cost, and its fit at 26,744 items
takes minutes, ``bench_ease.py``): it is timed on Y's own dense similarity, in turn with
Y (``--fit-ease``: on fitted weights). ``--fortran-block N`` also times it with the
Fortran-ordered view of the same matrix (the layout scipy's ``inv`` returned, before the
weights were made C-contiguous) on N users, scaled to the block.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from sampled_metrics.recommenders import fit_recommender  # noqa: E402
from sampled_metrics.recommenders.ease import EASEModel  # noqa: E402

SPECS = {
    "X": {"type": "ials", "name": "X"},
    "Y": {"type": "item_knn", "name": "Y", "q": 3.0},
    "Z": {"type": "item_knn", "name": "Z", "k_prime": 10},
    "Pop": {"type": "popularity", "name": "Pop"},
    "BPR": {"type": "bpr", "name": "BPR"},
}


def dataset_train(name: str) -> sp.csr_matrix:
    from offline_data import CONFIG_FILE

    from sampled_metrics.data import leave_last_out_split, load_events
    from sampled_metrics.pipeline.validation import load_config

    entry = load_config(CONFIG_FILE)["datasets"][name]
    path = (CONFIG_FILE.parent / entry["path"]).resolve() if "path" in entry else None
    return sp.csr_matrix(leave_last_out_split(load_events(path, entry)).train)


def random_train(users: int, items: int, per_user: float, seed: int = 0) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, items + 1)
    p /= p.sum()
    counts = np.minimum(rng.geometric(1.0 / per_user, size=users), items // 2)
    rows = np.repeat(np.arange(users), counts)
    X = sp.csr_matrix(
        (np.ones(rows.size, dtype=np.float32), (rows, rng.choice(items, rows.size, p=p))),
        shape=(users, items),
    )
    X.data[:] = 1.0
    return X


def stored_as(model) -> str:
    """What the product reads: the model's largest array or sparse matrix."""
    arrays = [
        v
        for k, v in vars(model).items()
        if "train" not in k and (isinstance(v, np.ndarray) or sp.issparse(v))
    ]
    largest = max(arrays, key=lambda a: a.data.nbytes if sp.issparse(a) else a.nbytes)
    if sp.issparse(largest):
        return f"sparse {largest.shape[0]:,}^2, {largest.nnz:,} nonzeros"
    order = "C" if largest.flags.c_contiguous else "F" if largest.flags.f_contiguous else "?"
    return f"dense {order} {largest.shape} {largest.dtype}"


def best_time(model, users, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        block = model.scores(users)
        times.append(time.perf_counter() - start)
        assert block.shape == (len(users), model.n_items) and block.dtype == np.float32
        del block
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", default="ml-20m-like")
    parser.add_argument("--random", type=float, nargs=3, metavar=("USERS", "ITEMS", "PER_USER"))
    parser.add_argument("--fit-ease", action="store_true")
    parser.add_argument("--block", type=int, default=4_096)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--bpr-iterations", type=int, default=1)
    parser.add_argument("--fortran-block", type=int, default=0)
    args = parser.parse_args()
    if args.random:
        users, items, per_user = args.random
        train = random_train(int(users), int(items), per_user)
    else:
        train = dataset_train(args.dataset)
    n_users, n_items = train.shape
    users = np.arange(args.block)
    history = train[users].nnz / args.block
    print(
        f"{n_users:,} users x {n_items:,} items, {train.nnz:,} events; a block of "
        f"{args.block:,} users ({history:.0f} training items each on average)\n"
    )
    times, fits, stored = {}, {}, {}
    specs = dict(SPECS)
    specs["BPR"] = {**specs["BPR"], "iterations": args.bpr_iterations}
    ease = None
    for name, spec in specs.items():
        start = time.perf_counter()
        model = fit_recommender(spec, train, seed=0)
        fits[name] = f"{time.perf_counter() - start:.1f}"
        stored[name] = stored_as(model)
        if name == "Y" and not args.fit_ease and isinstance(model._ST, np.ndarray):
            # EASE's product on the same dense matrix, timed in turn with Y's so that
            # other work on the machine slows both alike
            ease = EASEModel(train, model._ST, name="EASE")
            fits["EASE"] = "(Y's similarity as weights)"
            both = [best_time(m, users, 1) for _ in range(args.repeat) for m in (model, ease)]
            times[name], times["EASE"] = min(both[0::2]), min(both[1::2])
        else:
            times[name] = best_time(model, users, args.repeat)
        del model
        gc.collect()
    if ease is None:
        if args.fit_ease:
            start = time.perf_counter()
            ease = fit_recommender({"type": "ease", "name": "EASE"}, train, seed=0)
            fits["EASE"] = f"{time.perf_counter() - start:.1f}"
        else:
            weights = np.random.default_rng(1).random((n_items, n_items), dtype=np.float32)
            ease = EASEModel(train, weights, name="EASE")
            fits["EASE"] = "(random weights)"
            del weights
        times["EASE"] = best_time(ease, users, args.repeat)
    stored["EASE"] = stored_as(ease)
    if args.fortran_block:
        ease.weights = ease.weights.T  # the Fortran-ordered view of the same memory
        some = users[: args.fortran_block]
        name = "EASE, Fortran-ordered (as before)"
        times[name] = best_time(ease, some, 1) * args.block / some.size
        fits[name] = f"(the same; {some.size} users, scaled)"
        stored[name] = stored_as(ease)
    del ease
    print(f"| model | stored as | fit, s | scores() of {args.block:,} users, s | ratio to Y |")
    print("|---|---|---|---|---|")
    for name, seconds in times.items():
        print(
            f"| {name} | {stored[name]} | {fits[name]} | {seconds:.2f} | "
            f"{seconds / times['Y']:.2f} |"
        )


if __name__ == "__main__":
    main()
