"""The floors: what each rule of the shipped run cannot avoid computing, in seconds.

    python benchmarks/floors.py [--size USERS ITEMS EVENTS N] [--preset NAME]

A rule's floor is the arithmetic its outputs need, counted from the sizes and timed at
this machine's measured rates on one core (numpy's and LAPACK's kernels); the rule's
measured CPU time beside it shows what the implementation adds. What is counted
(U users, I items, E training events, m sampled items, R repetitions, k factors):
- split: sorting the E events by user and time;
- fit: iALS's 16 sweeps of E k^2 + (U + I) k^3 multiply-adds; item-kNN's and EASE's
  Gram matrix, at least E^2 / U multiply-adds (the sum of each user's events squared,
  by Cauchy-Schwarz), and EASE's I x I inverse, I^3. BPR has no floor here: its
  stochastic steps run on one thread because implicit's threads race, so its fit is
  its own floor (and its rate on synthetic data depends on the popularity law);
- rank: each user's scores of every item (U I k multiply-adds for factor models,
  E I for a dense item x item model), one comparison per item for the exact rank, and
  m R comparisons for the sampled ranks;
- draw plan: U m R draws of sampled items;
- corrections, built from the split alone (sampling_corrections, fig6_corrections,
  protocol_sensitivity_corrections): each correction's system (a QR of n x (m + 1)) at
  every distinct ranked-set size n of the split (the shipped estimation.n is per_user:
  743 on MovieLens 1M, each user's count of training events less, from the data or the
  synthetic preset's activity law), or at 64 nodes of n for the protocol sensitivity
  (linear in n between them, as it builds them); Figure 6
  the laws of its 5 nodes at each of its values of m; the protocol sensitivity its
  corrections at 64 nodes under 4 readings;
- each recommender's share (sampling_of_<recommender>, fig6_of_<recommender>): EM's 100
  iterations on every repetition, each two products of n (m + 1) (the expected counts
  from pi, then pi's update from their ratios), and applying each estimator to U R
  sampled ranks; Figure 6 the law of every user at each of its values of m; the
  protocol sensitivity's join each recommender's per-user laws (U (m + 1)); the other
  joins (sampling_table, fig6_curves) only lay the shares side by side: no floor;
- the studies: their simulated draws and fits: a sampled rank per seed, user and model
  for the design study (200 seeds) and an EM fit per seed and model (each model's job),
  then a pass over the users for each method that ranks some of them exactly, each
  model and pair, and each seed (the join); for the protocol
  study (20 repetitions) each distinct (m, law)'s corrections at its 5 nodes of n, a
  sampled rank per repetition, user and model for each uniform protocol (its law given
  the exact rank), for each popularity protocol m drawn items per user and repetition
  (drawn once for every model where the models share their draws), each compared by
  a model, and every estimator (EM's fit among them) on every repetition of every model:
  each model's share of the protocols that draw for each model apart
  (protocol_model_<model>), the paired protocols (protocol_ranks, then protocols).
The rates are CPU time, so other work on the machine barely moves them.
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # one core's rates, before numpy starts BLAS

import argparse
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import yaml
from workflow_run import REPO

# The shipped config: six recommenders, twelve estimators, the protocol study's protocols
# by their m: paired (one draw for every model) uniform NCF, Elliot and by popularity
# BERT4Rec; unpaired (each model its own draws) uniform RecBole uni100, DaisyRec and by
# popularity RecBole pop100; their distinct (m, law) (Elliot's and BERT4Rec's one, both
# RecBole's one), each with corrections at 5 nodes of n.
MODEL_NAMES, ESTIMATORS = ("X", "Y", "Z", "Pop", "EASE", "BPR"), 12
MODELS = len(MODEL_NAMES)
PAIRED_UNIFORM, PAIRED_POPULARITY = (99, 100), (100,)
UNPAIRED_UNIFORM, UNPAIRED_POPULARITY = (100, 999), (100,)
PROTOCOL_LAWS, PROTOCOL_NODES = (99, 100, 100, 999), 5
PROTOCOL_ESTIMATORS, PROTOCOL_REPETITIONS, DESIGN_SEEDS = 4, 20, 200
# the design study's methods that estimate from the users (uniform subsets and designs at
# their budgets: 2 + 3 + 3) and its pairs of models
DESIGN_METHODS, PAIRS = 8, MODELS * (MODELS - 1) // 2
EM_ITERATIONS, NODES, FIG6_M_VALUES = 100, 64, (
    1, 2, 3, 5, 7, 10, 15, 20, 30, 40, 50, 60, 70, 80, 100, 120, 150, 200, 300, 400, 500,
    600, 700, 800, 1000, 1200, 1500, 2000, 2500, 3000, 3705,
)  # fmt: skip


@dataclass(frozen=True)
class Size:
    users: int
    items: int
    events: int
    distinct_n: int  # the split's distinct ranked-set sizes (the users' n)
    m: int = 100
    repetitions: int = 100


def best_of(kernel: Callable[[], object], runs: int = 3) -> float:
    """The shortest of ``runs`` CPU timings of ``kernel`` on one thread, in seconds (CPU
    time, so that other work on the machine does not count; the shortest, since cache
    misses only add)."""
    times = []
    for _ in range(runs):
        start = time.process_time()
        kernel()
        times.append(time.process_time() - start)
    return min(times)


def spd_inverse(matrix: np.ndarray) -> np.ndarray:
    """The inverse of a symmetric positive definite float32 matrix by its Cholesky
    factor (LAPACK potrf, potri: n^3 flops), as EASE inverts; the upper triangle only.
    float32 makes it a floor for EASE in float64 too."""
    from scipy.linalg import lapack

    factor, _ = lapack.spotrf(matrix)
    return lapack.spotri(factor)[0]


def rates() -> dict[str, float]:
    """Operations per second of the kernels every floor is counted in."""
    rng = np.random.default_rng(0)
    a, b = rng.random((2000, 256)), rng.random((256, 2000))
    x, y = rng.random(10_000_000), rng.random(10_000_000)
    spd = rng.random((4000, 4000), dtype=np.float32)
    spd = spd @ spd.T + 4000 * np.eye(4000, dtype=np.float32)
    keys = rng.integers(0, 1 << 40, 2_000_000)
    return {
        "multiply-add": 2000 * 2000 * 256 / best_of(lambda: a @ b),
        "comparison": x.size / best_of(lambda: np.count_nonzero(x > y)),
        "draw": 10_000_000 / best_of(lambda: rng.integers(0, 3706, 10_000_000)),
        "sort": keys.size / best_of(lambda: np.argsort(keys, kind="stable")),
        "inverse": 4000**3 / best_of(lambda: spd_inverse(spd), runs=2),
    }


def floors(size: Size, rate: dict[str, float]) -> dict[str, float]:
    """Seconds of each job's essential work at ``size`` (module docstring), by the name
    of its benchmark file (rank_X stands for every shard of X)."""
    u, i, e, m, r = size.users, size.items, size.events, size.m, size.repetitions
    mad, cmp, draw = rate["multiply-add"], rate["comparison"], rate["draw"]
    gram = e * e / u / mad
    ranked = (u * i + u * m * r) / cmp
    pr = PROTOCOL_REPETITIONS
    system = i * (m + 1) ** 2 / mad  # one correction's QR at one node of n
    em = 2 * EM_ITERATIONS * i * (m + 1) / mad  # one EM fit: two products an iteration

    def estimated(sizes: tuple) -> float:
        """Every estimator, EM's fits among them, on one model's repetitions of protocols
        of these m."""
        return sum(pr * (PROTOCOL_ESTIMATORS * u / cmp + 2 * EM_ITERATIONS * i * (k + 1) / mad)
                   for k in sizes)  # fmt: skip

    unpaired = UNPAIRED_UNIFORM + UNPAIRED_POPULARITY
    paired = PAIRED_UNIFORM + PAIRED_POPULARITY
    fig6_columns = sum(min(value, i - 1) + 1 for value in FIG6_M_VALUES)
    return {
        "split": e / rate["sort"],
        "fit_X": 16 * (e * 16**2 + (u + i) * 16**3) / mad,
        "fit_Y": gram,
        "fit_Z": gram,
        "fit_EASE": gram + i**3 / rate["inverse"],
        "fit_Pop": e / cmp,
        "draw_plan": u * m * r / draw,
        "rank_X": u * i * 16 / mad + ranked,
        "rank_Y": e * i / mad + ranked,
        "rank_Z": e * 10 / mad + ranked,
        "rank_EASE": e * i / mad + ranked,
        "rank_BPR": u * i * 100 / mad + ranked,
        "rank_Pop": ranked,
        "sampling_corrections": size.distinct_n * system,
        **{f"sampling_of_{name}": r * em + ESTIMATORS * u * r / cmp for name in MODEL_NAMES},
        "fig6_corrections": 5 * i * fig6_columns / cmp,
        **{f"fig6_of_{name}": u * fig6_columns / cmp for name in MODEL_NAMES},
        "protocol_sensitivity_corrections": 4 * NODES * system,
        "protocol_sensitivity": MODELS * u * (m + 1) / cmp,
        "protocol_corrections": sum(PROTOCOL_NODES * i * (k + 1) ** 2 / mad for k in PROTOCOL_LAWS),
        **{
            f"protocol_model_{model}": (
                len(UNPAIRED_UNIFORM) * u * pr / draw
                + sum(u * pr * k * (1 / draw + 1 / cmp) for k in UNPAIRED_POPULARITY)
                + estimated(unpaired)
            )
            for model in MODEL_NAMES
        },
        "protocol_ranks": (
            len(PAIRED_UNIFORM) * MODELS * u * pr / draw
            + sum(u * pr * k * (1 / draw + MODELS / cmp) for k in PAIRED_POPULARITY)
        ),
        "protocols": MODELS * estimated(paired),
        # each model's share (one job per model), then the join: every design method's
        # estimates of every model and pair at every seed, a pass over the users each
        "decisions_model": DESIGN_SEEDS * (u / draw + em),
        "decisions": DESIGN_SEEDS * DESIGN_METHODS * (MODELS + PAIRS) * u / cmp,
    }


def job_floor(stem: str, floor: dict[str, float]) -> float | None:
    """The floor of the job whose benchmark file is ``stem``, None where none is counted
    (BPR's fit). With one shard (the shipped runs) merge_ranks_X is X's ranking pass;
    with several, rank_X_0-of-2 and its siblings share rank_X's floor and merge_ranks_X,
    which only joins them, has none. decisions_model_X has each model's share's floor.

    >>> floor = {"rank_X": 2.0, "decisions_model": 1.0}
    >>> job_floor("merge_ranks_X", floor), job_floor("fit_BPR", floor)
    (2.0, None)
    >>> job_floor("decisions_model_EASE", floor)
    1.0
    >>> job_floor("rank_X_0-of-2", floor) + job_floor("rank_X_1-of-2", floor)
    2.0
    """
    shard = re.fullmatch(r"(rank_.+)_(\d+)-of-(\d+)", stem)
    if shard:
        return floor[shard.group(1)] / int(shard.group(3))
    if stem.startswith("decisions_model_"):
        return floor["decisions_model"]
    return floor.get(re.sub(r"^merge_ranks_", "rank_", stem))


def preset_size(name: str) -> Size:
    """The size of a synthetic preset of config.yaml, its distinct n from its activity law
    (the generator's per-user event counts, drawn as it draws them)."""
    from sampled_metrics.data.synthetic import _activity

    entry = yaml.safe_load((REPO / "config.yaml").read_text())["datasets"][name]
    counts = _activity(
        entry["users"], entry["interactions"], float(entry["activity_exponent"]),
        entry["min_events_per_user"], entry["max_events_per_user"],
        np.random.default_rng(entry["seed"]),
    )  # fmt: skip
    distinct = np.unique(counts[counts >= 2])  # a user of one event is skipped by the split
    return Size(entry["users"], entry["items"], entry["interactions"], int(distinct.size))


def movielens_size() -> Size:
    """The size of the offline copy of MovieLens 1M as split leave-last-out, its distinct n
    counted on the split."""
    from offline_data import load_leave_last_out

    train, _ = load_leave_last_out()
    per_user = np.diff(train.tocsr().indptr)
    return Size(*train.shape, train.nnz, int(np.unique(per_user).size))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, nargs=4, metavar=("USERS", "ITEMS", "EVENTS", "N"),
                        help="any size, N its distinct ranked-set sizes")  # fmt: skip
    parser.add_argument("--preset", help="a synthetic data set of config.yaml, e.g. ml-20m-like")
    args = parser.parse_args()
    size = Size(*args.size) if args.size else None
    size = size or (preset_size(args.preset) if args.preset else movielens_size())
    rate = rates()
    print("rates: " + ", ".join(f"{name} {value:.3g}/s" for name, value in rate.items()))
    total = 0.0
    for rule, seconds in floors(size, rate).items():
        total += seconds
        print(f"{rule:22s} {seconds:8.2f} s")
    print(f"{'all':22s} {total:8.2f} s on one core, {total / 2:.2f} s on two")


if __name__ == "__main__":
    main()
