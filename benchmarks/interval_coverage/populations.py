"""The populations of exact ranks the coverage benchmark simulates from, and the sampled
ranks it draws from them: the pipeline's exact ranks (``<ranks>/<name>.csv``, columns
``user, rank, n_candidates``) and ``heavy``, a heavy-tailed synthetic population (fixed
seed: 6040 users, n = 3700, 60 % of the ranks geometric(1/60), 40 % log-uniform)."""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from sampled_metrics.estimation.metrics import metric_by_name

REAL = ["X", "Y", "Z", "Pop", "EASE", "BPR"]
HEAVY = "heavy"
HEAVY_SEED = 2020


def heavy_population(users: int = 6040, n: int = 3700, seed: int = HEAVY_SEED):
    """60 % of the users at a geometric(1/60) rank, 40 % log-uniform on 1..n (fixed seed)."""
    rng = np.random.default_rng(seed)
    geometric = np.minimum(rng.geometric(1 / 60, users), n)
    log_uniform = np.clip(np.floor(np.exp(rng.uniform(0, np.log(n), users))), 1, n)
    ranks = np.where(rng.random(users) < 0.6, geometric, log_uniform).astype(np.int64)
    return ranks, np.full(users, n, dtype=np.int64)


def read_exact_ranks(path: Path):
    """(rank, n) of one recommender's exact-ranks file (``user, rank, n_candidates``)."""
    frame = pd.read_csv(path)
    missing = {"user", "rank", "n_candidates"} - set(frame.columns)
    if missing:
        raise SystemExit(f"{path}: no column {sorted(missing)}")
    ranks = frame["rank"].to_numpy(np.int64)
    n = frame["n_candidates"].to_numpy(np.int64)
    if np.any(ranks < 1) or np.any(ranks > n) or np.any(n < 2):
        raise SystemExit(f"{path}: a rank outside 1..n_candidates, or n_candidates < 2")
    return ranks, n


class Populations:
    """Exact ranks by name, read once; every file read is named on stderr."""

    def __init__(self, ranks_dir: Path):
        self.ranks_dir = ranks_dir
        self._known: dict = {}

    def __call__(self, name: str):
        if name not in self._known:
            if name == HEAVY:
                self._known[name] = heavy_population()
                note = f"synthetic, seed {HEAVY_SEED}"
            else:
                path = self.ranks_dir / f"{name}.csv"
                if not path.is_file():
                    raise SystemExit(f"bench_coverage: no exact ranks {path} (give --ranks)")
                self._known[name] = read_exact_ranks(path)
                note = f"read {path}"
            ranks, n = self._known[name]
            print(
                f"population {name}: {note}; {ranks.size} users, {np.unique(n).size} "
                f"distinct n in {n.min()}..{n.max()}, mean relative rank "
                f"{np.mean((ranks - 1) / (n - 1)):.4f}",
                file=sys.stderr,
            )
        return self._known[name]


def exact_metrics(ranks, n, metrics) -> dict:
    """{metric: (1/U) sum_u M(r_u, n_u)}, the quantity every interval claims to cover."""
    return {metric: float(np.mean(metric_by_name(metric)(ranks, n))) for metric in metrics}


# --- simulated sampled ranks --------------------------------------------------------------


def cell_rng(kind: str, population: str, law: str, m: int, seed: int):
    """The seed's own random stream: the same draws whatever else runs."""
    key = zlib.crc32(f"{kind}|{population}|{law}|{m}".encode())
    return np.random.default_rng([seed, key])


def draw(ranks, n, m: int, law: str, rng):
    """One sampled rank per user from the law given its exact rank and n."""
    if law == "binomial":
        return 1 + rng.binomial(m, (ranks - 1) / (n - 1))
    return 1 + rng.hypergeometric(ranks - 1, n - ranks, m)


def draw_pair(first, second, n, m: int, law: str, rng):
    """Sampled ranks of two models on the same sampled items, the beaten items nested:
    the draws among the smaller set of beaten items, then among the rest the draws in the
    band between the two ranks (each marginal is exactly the law)."""
    low, high = np.minimum(first, second), np.maximum(first, second)
    if law == "binomial":
        inner = rng.binomial(m, (low - 1) / (n - 1))
        band = rng.binomial(m - inner, (high - low) / (n - low))
    else:
        inner = rng.hypergeometric(low - 1, n - low, m)
        band = rng.hypergeometric(high - low, n - high, m - inner)
    small, large = 1 + inner, 1 + inner + band
    return np.where(first <= second, small, large), np.where(first <= second, large, small)
