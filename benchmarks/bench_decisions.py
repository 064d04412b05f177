"""The design study's table (results/<dataset>/decisions.md's "Per method") on three
populations, with the time of each part:

    python benchmarks/bench_decisions.py [--results results/ml-1m-offline] [--seeds 200]
                                         [--synthetic-seeds 1000] [--small-seeds 1000]
                                         [--large-seeds 200]
                                         [--parts ml-1m,synthetic,small,large]

* ``ml-1m``: MovieLens 1M from a pipeline run's exact ranks (results/<dataset>/ranks/*.csv
  and its split, data/processed/<dataset>/split.npz: run the pipeline first), m = 100
  without replacement, every method, the identification range on 2 seeds (its linear
  programs take about a minute a seed with six models);
* ``synthetic``: a heavy-tailed population (no models: 6,040 users, n_u from 3,506 to
  3,686, log-normal ranks), three models, A and B correlated, B worse, C with A's ranks
  given to other users (the same metrics exactly: the pair of equal metrics), at m = 100
  and 1000, with and without replacement; no range;
* ``small``: the same population with 100 users at a budget of 0.5 and 300 at 0.25,
  n_u about 370 and m = 99 (cornac's example's sizes), many seeds (``--small-seeds``):
  the design, the design per pair and the uniform subset (at 100 users the designs rank
  every user: too few to promise their coverage, ``benchmarks/bench_small_populations.py``);
* ``large``: ML-20M-like sizes (138,493 users, 26,744 items, n_u the items a user has
  not trained on), synthetic ranks as above, m = 100 without replacement, fewer seeds
  (``--large-seeds``), no range and no adaptive-em (EM on a grid of 26,744 per model
  and seed).

Each part prints the per-method table and the worst coverage of each interval method.
"""

import argparse
import time
from pathlib import Path

import numpy as np

from sampled_metrics.data import split_users
from sampled_metrics.io.forked import forked_map
from sampled_metrics.outputs.tables import markdown_table
from sampled_metrics.pipeline.intermediates import read_ranks
from sampled_metrics.pipeline.validation import load_config
from sampled_metrics.studies.decisions.registry import study_methods
from sampled_metrics.studies.decisions.report import method_table
from sampled_metrics.studies.decisions.study import run_study
from sampled_metrics.studies.decisions.summary import Goals, goals, summarize

RECOMMENDERS = ["X", "Y", "Z", "Pop", "EASE", "BPR"]
# The study's adaptive steps and goals, as the pipeline's configuration sets them.
DECISIONS = load_config(Path(__file__).resolve().parents[1] / "config.yaml")["decisions"]
ALL = ["full", "uniform", "design", "pair-design", "range", "adaptive-em"]
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


def part(title, exact, n, names, *, seeds, range_seeds, m, law, run, cores,
         budgets=BUDGETS, uniform=UNIFORM) -> None:  # fmt: skip
    methods = study_methods(run, budgets, uniform, DECISIONS["adaptive_steps"])
    started = time.perf_counter()
    rows = run_study(
        exact, n, names, seeds=seeds, range_seeds=range_seeds, m=m, law=law,
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
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--parts", default="ml-1m,synthetic,small,large")
    args = parser.parse_args()
    parts = args.parts.split(",")
    common = {"cores": args.cores}
    if "ml-1m" in parts:
        dataset = args.results.name
        users = split_users(Path("data/processed") / dataset / "split.npz")
        exact = np.stack([
            read_ranks(args.results / "ranks" / f"{name}.csv", users)["rank"].to_numpy()
            for name in RECOMMENDERS
        ])  # fmt: skip
        part(f"{dataset}, six models", exact, users.n_candidates, RECOMMENDERS,
             seeds=args.seeds, range_seeds=2, m=100, law="hypergeometric", run=ALL,
             **common)  # fmt: skip
    if "synthetic" in parts:
        # n_u = 3,706 items less a user's training items (20 to 200; one n would make
        # EM use the exact hypergeometric law per (n, m), far slower at six m)
        n = 3706 - np.random.default_rng(1).integers(20, 201, 6040)
        exact = heavy_tailed(n.size, n)
        for m in (100, 1000):
            for law in ("binomial", "hypergeometric"):
                part("heavy-tailed synthetic", exact, n, ["A", "B", "C"],
                     seeds=args.synthetic_seeds, range_seeds=0, m=m, law=law,
                     run=[k for k in ALL if k != "range"], **common)  # fmt: skip
    if "small" in parts:
        # a hundred to a few hundred users and a few hundred items, as cornac's example:
        # a stratum holds a rare hit that a handful of chosen users can miss
        for users, budget in ((100, 0.5), (300, 0.25)):
            n = 380 - np.random.default_rng(1).integers(0, 20, users)
            part("small heavy-tailed synthetic", heavy_tailed(users, n), n, ["A", "B", "C"],
                 seeds=args.small_seeds, range_seeds=0, m=99, law="hypergeometric",
                 run=["uniform", "design", "pair-design"], budgets=[budget],
                 uniform=[budget], **common)  # fmt: skip
    if "large" in parts:
        rng = np.random.default_rng(1)
        # training items a user: long-tailed between 20 and 9254, as ML-20M's
        trained = np.minimum(20 + np.floor(rng.pareto(1.2, 138_493) * 40), 9254).astype(np.int64)
        n = 26_744 - trained
        exact = heavy_tailed(n.size, n)
        part("ML-20M-like (synthetic ranks)", exact, n, ["A", "B", "C"], seeds=args.large_seeds,
             range_seeds=0, m=100, law="hypergeometric",
             run=["full", "uniform", "design", "pair-design"], **common)  # fmt: skip


if __name__ == "__main__":
    main()
