"""The design study's table (results/<dataset>/decisions.md's "Per method") on three
populations, with the time of each part, and the study's time at the shipped settings:

    python benchmarks/bench_decisions.py [--results results/ml-1m-offline] [--seeds 200]
                                         [--synthetic-seeds 1000] [--small-seeds 1000]
                                         [--large-seeds 200] [--time-seeds 4]
                                         [--parts time,ml-1m,synthetic,small,large]

* ``time``: the study at the pipeline's ``decisions`` settings (every method, the
  configured seeds and range seeds) timed per method, in CPU seconds of one process, on
  ``--time-seeds`` seeds (the range on one) and scaled to the configured seeds; then
  the CPU and wall seconds of the study function itself on two forked workers. At
  MovieLens 1M from a run's exact ranks (as ``ml-1m``), and at ML-20M-like size,
  138,493 users and n = 26,744 items less each user's training items, six models'
  exact ranks drawn as ``large``'s, A's and B's shifted by a model's skill. Beside
  each: the rule's measured time before the study was sized by its precision, and
  the goal;

* ``ml-1m``: MovieLens 1M from a pipeline run's exact ranks (results/<dataset>/ranks/*.csv
  and its split, data/processed/<dataset>/split.npz: run the pipeline first), m = 100
  without replacement, every method, the identification range on 2 seeds (its linear
  programs take seconds a seed with six models), the sequential designs on their
  configured seeds;
* ``synthetic``: a heavy-tailed population (no models: 6,040 users, n_u from 3,506 to
  3,686, log-normal ranks), three models, A and B correlated, B worse, C with A's ranks
  given to other users (the same metrics exactly: the pair of equal metrics), at m = 100
  and 1000, with and without replacement; no range; the sequential designs on 200 seeds;
* ``small``: the same population with 100 users at a budget of 0.5 and 300 at 0.25,
  n_u about 370 and m = 99 (cornac's example's sizes), many seeds (``--small-seeds``):
  the design, the design per pair and the uniform subset (at 100 users the designs rank
  every user: too few to promise their coverage, ``benchmarks/bench_small_populations.py``);
* ``large``: ML-20M-like sizes (138,493 users, 26,744 items, n_u the items a user has
  not trained on), synthetic ranks as above, m = 100 without replacement, fewer seeds
  (``--large-seeds``), no range and no adaptive-em (EM on a grid of 26,744 per model
  and seed), the sequential designs on 20.

Each part prints the per-method table and the worst coverage of each interval method.
"""

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from sampled_metrics.data import split_users
from sampled_metrics.io.forked import forked_map
from sampled_metrics.outputs.tables import markdown_table
from sampled_metrics.pipeline.intermediates import read_ranks
from sampled_metrics.pipeline.validation import load_config
from sampled_metrics.studies.decisions.per_model import model_draws, model_work
from sampled_metrics.studies.decisions.registry import FEWER_SEEDS, study_methods
from sampled_metrics.studies.decisions.report import method_table
from sampled_metrics.studies.decisions.study import run_study, seed_phase1
from sampled_metrics.studies.decisions.summary import Goals, goals, summarize

RECOMMENDERS = ["X", "Y", "Z", "Pop", "EASE", "BPR"]
# The study's adaptive steps and goals, as the pipeline's configuration sets them.
DECISIONS = load_config(Path(__file__).resolve().parents[1] / "config.yaml")["decisions"]
ALL = ["full", "uniform", "design", "pair-design", "sequential", "sequential-pair", "range",
       "adaptive-em"]  # fmt: skip
# The sequential designs' seeds: the configured ones on MovieLens 1M; on the synthetic
# populations enough for the pair of equal metrics (any verdict at most 5 %: 200 seeds
# give it a standard error of 1.5 points).
SEQUENTIAL = {"sequential": DECISIONS["sequential_seeds"],
              "sequential-pair": DECISIONS["sequential_pair_seeds"]}  # fmt: skip
SEQUENTIAL_SYNTHETIC = {"sequential": 200, "sequential-pair": 200}
BUDGETS, UNIFORM = [0.05, 0.1, 0.25], [0.1, 0.25]


def heavy_tailed(users: int, n, seed: int = 0) -> np.ndarray:
    """(3, U) exact ranks: A and B share a user effect (correlated), B worse by a third
    of the noise; C is A's ranks given to other users, cut at their n (the same top-k
    metrics exactly while every n is above k)."""
    rng = np.random.default_rng(seed)
    n = np.broadcast_to(n, (users,))
    skill = rng.normal(0.0, 2.0, users)
    a, b = (
        np.clip(np.ceil(np.exp(3.0 + skill + rng.normal(0.0, 1.0, users) + s)), 1, n)
        for s in (0.0, 0.3)
    )
    return np.stack([a, b, np.minimum(rng.permutation(a), n)]).astype(np.int64)


# The rule decisions at the shipped settings before it was sized by its precision (200
# seeds, the range on 10; two processes), CPU and wall seconds, and the goals.
BEFORE = {"ml-1m": (196, 185), "ml-20m-like": (1280, 651)}
GOAL = {"ml-1m": (15, 10)}


def timed_seed(one, seed: int) -> tuple:
    """``one(seed)`` and the CPU seconds it took (in the process that runs it)."""
    started = time.process_time()
    rows = one(seed)
    return rows, time.process_time() - started


def time_methods(exact, n, *, seeds: int) -> dict:
    """CPU seconds a seed of each part of the configured study: each model's own work
    (rule decisions_model: phase 1 and its proxies, every seed's EM at once; the range
    on the first seed only; adaptive-em), then each method's join of every model and
    pair (rule decisions)."""
    methods = study_methods(
        DECISIONS["run"],
        DECISIONS["budgets"],
        DECISIONS["uniform_budgets"],
        DECISIONS["adaptive_steps"],
    )
    options = {"m": 100, "law": "hypergeometric", "metrics": DECISIONS["metrics"],
               "confidence": DECISIONS["confidence"], "base_seed": 2020}  # fmt: skip
    work = model_work(methods, seeds, {"range": 1})
    parts = {  # each model's own work, one part at a time
        "phase 1 and proxies": {"moments": work["moments"]},
        "range": {"moments": False, "range_seeds": 1},
        "adaptive-em": {"moments": False, "adaptive_seeds": seeds, "steps": work["steps"]},
    }
    spent = dict.fromkeys(parts, 0.0) | {f"{method.name} (join)": 0.0 for method in methods}
    runs = dict.fromkeys(spent, seeds) | {"range": 1, "range (join)": 1}
    draws: list = [{} for _ in exact]
    with threadpool_limits(1):  # as in the rules' workers
        for part, keys in parts.items():
            started = time.process_time()
            for k, (row, found) in enumerate(zip(exact, draws)):
                found.update(model_draws(row, n, f"M{k}", seeds=seeds, **options, **keys))
            spent[part] += time.process_time() - started
        for seed in range(seeds):
            skip = {"range"} if seed > 0 else set()
            phase1 = seed_phase1(draws, exact, n, seed=seed, skip=skip, **options)
            for method in methods:
                if method.kind.name in skip:
                    continue
                started = time.process_time()
                method.run(phase1)  # every model's and pair's estimates
                spent[f"{method.name} (join)"] += time.process_time() - started
    return {name: spent[name] / runs[name] for name in spent}


def time_study(title: str, exact, n, *, seeds: int, cores: int) -> None:
    """The per-method CPU a seed, scaled to the configured seeds; the study function's
    CPU and wall seconds on ``cores`` forked workers, on the range's seeds and ``seeds``
    more, scaled to the configured seeds."""
    configured, range_seeds = DECISIONS["seeds"], DECISIONS["range_seeds"]
    on = {kind: DECISIONS[key] for kind, key in FEWER_SEEDS.items()}  # the seeds each runs
    per_seed = time_methods(exact, n, seeds=seeds)
    scaled = {
        name: cpu * on.get(name.removesuffix(" (join)"), configured)
        for name, cpu in per_seed.items()
    }
    print(
        f"\n## Time: {title}, {n.size:,} users, {len(exact)} models, CPU seconds of one "
        f"process; scaled to {configured} seeds (those on fewer: their own, {on})\n"
    )
    print(markdown_table(pd.DataFrame({"part": list(per_seed), "a seed": list(per_seed.values()),
                                       "scaled": list(scaled.values())}), digits=3))  # fmt: skip
    methods = study_methods(
        DECISIONS["run"],
        DECISIONS["budgets"],
        DECISIONS["uniform_budgets"],
        DECISIONS["adaptive_steps"],
    )
    names = [f"M{k}" for k in range(len(exact))]
    spent: list = []  # each seed's CPU seconds, measured in its worker

    def mapper(one, seeds):
        timed = forked_map(lambda _, seed: timed_seed(one, seed), None, list(seeds), cores)
        spent.extend(cpu for _, cpu in timed)
        return [rows for rows, _ in timed]

    cpu, wall = time.process_time(), time.perf_counter()
    ranged = min(range_seeds, configured)  # those seeds, then ``seeds`` more without
    run_study(
        exact, n, names, seeds=ranged + seeds, fewer_seeds={"range": ranged}, m=100,
        law="hypergeometric", metrics=DECISIONS["metrics"], methods=methods, base_seed=2020,
        confidence=DECISIONS["confidence"], mapper=mapper,
    )  # fmt: skip
    own, wall = time.process_time() - cpu, time.perf_counter() - wall
    cpu = own + sum(spent)
    # the seeds with the range, then the others' mean for each of the configured, less
    # each kind that runs on fewer seeds on the seeds it skips
    skipped = sum(
        (per_seed.get(kind, 0.0) + per_seed.get(f"{kind} (join)", 0.0))
        * (configured - min(first, configured))
        for kind, first in on.items() if kind != "range"
    )  # fmt: skip
    total_cpu = own + sum(spent[:ranged]) + np.mean(spent[ranged:]) * (configured - ranged)
    total_cpu -= skipped
    total_wall = total_cpu / cores  # at best: the seeds spread evenly over the cores
    key = "ml-1m" if n.size < 10_000 else "ml-20m-like"
    before = BEFORE[key]
    goal = GOAL.get(key, (GOAL["ml-1m"][0] * BEFORE[key][0] / BEFORE["ml-1m"][0],
                          GOAL["ml-1m"][1] * BEFORE[key][1] / BEFORE["ml-1m"][1]))  # fmt: skip
    print(
        f"\nthe study on {ranged + seeds} seeds (the range on {ranged}), {cores} workers: "
        f"{cpu:.1f} CPU-s, {wall:.1f} s wall; "
        f"scaled to {configured} seeds: {total_cpu:.0f} CPU-s, {total_wall:.0f} s wall at best "
        f"(before: {before[0]} CPU-s, {before[1]} s wall; goal: {goal[0]:.0f} CPU-s, "
        f"{goal[1]:.0f} s wall)"
    )


def six_models(users: int, n, seed: int = 0) -> np.ndarray:
    """(6, U) exact ranks as :func:`heavy_tailed`'s, six models of different skill."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 2.0, users)
    return np.stack([
        np.clip(np.ceil(np.exp(3.0 + skill + rng.normal(0.0, 1.0, users) + shift)), 1, n)
        for shift in (0.0, 0.1, 0.2, 0.4, 0.6, 1.0)
    ]).astype(np.int64)  # fmt: skip


def ml20m_like_n(rng: np.random.Generator) -> np.ndarray:
    """n_u of ML-20M's sizes: 26,744 items less a user's training items, long-tailed
    between 20 and 9,254."""
    trained = np.minimum(20 + np.floor(rng.pareto(1.2, 138_493) * 40), 9254).astype(np.int64)
    return 26_744 - trained


def read_exact(results: Path):
    """The exact ranks of RECOMMENDERS (k, U) and n_u from a pipeline run."""
    users = split_users(Path("data/processed") / results.name / "split.npz")
    exact = np.stack([
        read_ranks(results / "ranks" / f"{name}.csv", users)["rank"].to_numpy()
        for name in RECOMMENDERS
    ])  # fmt: skip
    return exact, users.n_candidates


def part(title, exact, n, names, *, seeds, m, law, run, cores, fewer_seeds=None,
         budgets=BUDGETS, uniform=UNIFORM) -> None:  # fmt: skip
    methods = study_methods(run, budgets, uniform, DECISIONS["adaptive_steps"])
    started = time.perf_counter()
    rows = run_study(
        exact, n, names, seeds=seeds, fewer_seeds=fewer_seeds, m=m, law=law,
        metrics=["recall@10", "ndcg@10"], methods=methods, base_seed=2020,
        mapper=lambda one, s: forked_map(lambda _, seed: one(seed), None, list(s), cores),
    )  # fmt: skip
    seconds = time.perf_counter() - started
    summary = summarize(rows)
    print(f"\n## {title}: {n.size:,} users, m = {m}, {law}, {seeds} seeds, {seconds:.0f} s\n")
    print(markdown_table(method_table(summary), digits=2))
    measured = goals(summary, methods, Goals.from_config(DECISIONS["goals"]))
    print(markdown_table(measured[["method", "goal", "measured", "holds"]], digits=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--results", type=Path, default=Path("results/ml-1m-offline"))
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--synthetic-seeds", type=int, default=1000)
    parser.add_argument("--large-seeds", type=int, default=200)
    parser.add_argument("--small-seeds", type=int, default=1000)
    parser.add_argument("--time-seeds", type=int, default=4)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--parts", default="time,ml-1m,synthetic,small,large")
    args = parser.parse_args()
    parts = args.parts.split(",")
    common = {"cores": args.cores}
    if "time" in parts:
        exact, n = read_exact(args.results)
        time_study(f"{args.results.name} (MovieLens 1M)", exact, n, seeds=args.time_seeds,
                   cores=args.cores)  # fmt: skip
        n = ml20m_like_n(np.random.default_rng(1))
        time_study("ML-20M-like (synthetic ranks)", six_models(n.size, n), n,
                   seeds=args.time_seeds, cores=args.cores)  # fmt: skip
    if "ml-1m" in parts:
        exact, n = read_exact(args.results)
        part(f"{args.results.name}, six models", exact, n, RECOMMENDERS,
             seeds=args.seeds, fewer_seeds={"range": 2, **SEQUENTIAL}, m=100,
             law="hypergeometric", run=ALL,
             **common)  # fmt: skip
    if "synthetic" in parts:
        # n_u = 3,706 items less a user's training items (20 to 200; one n would make
        # EM use the exact hypergeometric law per (n, m), far slower at six m)
        n = 3706 - np.random.default_rng(1).integers(20, 201, 6040)
        exact = heavy_tailed(n.size, n)
        for m in (100, 1000):
            for law in ("binomial", "hypergeometric"):
                part("heavy-tailed synthetic", exact, n, ["A", "B", "C"],
                     seeds=args.synthetic_seeds, m=m, law=law, fewer_seeds=SEQUENTIAL_SYNTHETIC,
                     run=[k for k in ALL if k != "range"], **common)  # fmt: skip
    if "small" in parts:
        # a hundred to a few hundred users and a few hundred items, as cornac's example:
        # a stratum holds a rare hit that a handful of chosen users can miss
        for users, budget in ((100, 0.5), (300, 0.25)):
            n = 380 - np.random.default_rng(1).integers(0, 20, users)
            part("small heavy-tailed synthetic", heavy_tailed(users, n), n, ["A", "B", "C"],
                 seeds=args.small_seeds, m=99, law="hypergeometric",
                 run=["uniform", "design", "pair-design"], budgets=[budget],
                 uniform=[budget], **common)  # fmt: skip
    if "large" in parts:
        n = ml20m_like_n(np.random.default_rng(1))
        exact = heavy_tailed(n.size, n)
        part("ML-20M-like (synthetic ranks)", exact, n, ["A", "B", "C"], seeds=args.large_seeds,
             m=100, law="hypergeometric", fewer_seeds=SEQUENTIAL_SYNTHETIC,
             run=["full", "uniform", "design", "pair-design", "sequential", "sequential-pair"],
             **common)  # fmt: skip


if __name__ == "__main__":
    main()
