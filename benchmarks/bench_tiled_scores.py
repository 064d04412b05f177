"""Scoring a block of users with a dense items x items matrix (EASE, item-kNN Y), tiled
against untiled: the ranking pass's largest cost at 26,744 items.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_tiled_scores.py \
        results/ml-20m-like/models/EASE.pkl results/ml-20m-like/models/Y.pkl [--users 4096]

For each stored model (a ``results/<dataset>/models/<name>.pkl`` of a run), times the
first ``--users`` users (the best of ``--repeat``): untiled, ``model.scores`` on chunks of
SCORE_CHUNK users with the whole matrix as one tile (scipy's product as it was before
tiles), and tiled, ``score_users`` as the ranking pass calls it (the whole block at once,
``sparse_dense_product``'s tiles of at most 10 MB); checks that both give the same bits
and prints the two times and their ratio. A sparse similarity (Z) has no tiles: its two
times differ only in the users multiplied at a time. ``--tile-mb 2 4 16`` also times the
tiled product with tiles of those sizes against the shipped one (``scores._TILE_BYTES``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow"))

import numpy as np  # noqa: E402

from sampled_metrics.passes.block_pass import SCORE_CHUNK, score_users  # noqa: E402
from sampled_metrics.recommenders import scores as scores_module  # noqa: E402
from sampled_metrics.recommenders.storage import load_model  # noqa: E402


def untiled(model, users: int) -> np.ndarray:
    """The chunks of SCORE_CHUNK users, each one product with the whole matrix."""
    tile_bytes = scores_module._TILE_BYTES
    scores_module._TILE_BYTES = 2**62
    try:
        return np.vstack(
            [
                model.scores(np.arange(a, min(a + SCORE_CHUNK, users)))
                for a in range(0, users, SCORE_CHUNK)
            ]
        )
    finally:
        scores_module._TILE_BYTES = tile_bytes


def tiled(model, users: int) -> np.ndarray:
    """The whole block at once, as the ranking pass scores it."""
    return score_users(model, 0, users)


def with_tile(megabytes: float):
    """``tiled`` with tiles of ``megabytes`` instead of the shipped size."""

    def run(model, users: int) -> np.ndarray:
        shipped = scores_module._TILE_BYTES
        scores_module._TILE_BYTES = int(megabytes * 2**20)
        try:
            return tiled(model, users)
        finally:
            scores_module._TILE_BYTES = shipped

    return run


def best(function, model, users: int, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function(model, users)
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("models", nargs="+", type=Path)
    parser.add_argument("--users", type=int, default=4_096)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--tile-mb", type=float, nargs="*", default=[], help="other tile sizes")
    args = parser.parse_args()
    print("| model | users | untiled, s | tiled, s | ratio | same bits |")
    print("|---|---|---|---|---|---|")
    sizes = []  # the rows of --tile-mb, printed after the first table
    for path in args.models:
        model = load_model(path)
        if not hasattr(model, "scores_into"):
            sys.exit(f"{path}: this model has no scores_into (not a sparse-dense product)")
        users = args.users
        before, old = best(untiled, model, users, args.repeat)
        after, new = best(tiled, model, users, args.repeat)
        print(
            f"| {path.name} | {users:,} | {before:.2f} | {after:.2f} | {before / after:.2f} | "
            f"{old.tobytes() == new.tobytes()} |"
        )
        for megabytes in args.tile_mb:
            seconds, other = best(with_tile(megabytes), model, users, args.repeat)
            sizes.append(
                f"| {path.name} | {megabytes:g} | {seconds:.2f} | {seconds / after:.2f} | "
                f"{other.tobytes() == new.tobytes()} |"
            )
        del model, old, new
    if sizes:
        shipped = scores_module._TILE_BYTES / 2**20
        print(f"\n| model | tile, MB | tiled, s | against {shipped:g} MB tiles | same bits |")
        print("|---|---|---|---|---|")
        print("\n".join(sizes))


if __name__ == "__main__":
    main()
