"""Coverage of the design's intervals where few users carry them, with and without the
rule that ranks every user when the design cannot promise its coverage
(``draw_design``'s ``degrees``, :func:`sampled_metrics.estimation.decisions.predicted_degrees`):

    python benchmarks/bench_small_populations.py [--cornac SAMPLED FULL] [--designs 1000]
                                                 [--phase-ones 30]
                                                 [--parts cornac,cornac-given,small,large]

* ``cornac``: cornac's example (``tests/cornac_case.py``, 94 users, BPR and MostPop; the
  files of ``sampled-metrics cornac ... --protocol ncf --protocol full``), phase 1 the
  file's and phase 1 redrawn from the exact ranks for every design; ``cornac-given``:
  ``--phase-ones`` phase 1s drawn from the exact ranks, 200 designs each (the coverage
  a user with one file of sampled ranks gets: it differs from one phase 1 to another);
* ``small``: the heavy-tailed population of ``bench_decisions.py`` (three models) with
  100, 200 and 300 users and n about 370, m = 99 without replacement, phase 1 redrawn
  for every design, as ``bench_decisions.py``'s small part;
* ``large``: the same with 3000 users and n about 3,600, m = 100: the rule must keep
  the design (phase 1 redrawn for every design).

Each cell (model or pair, metric) prints the coverage of the 95 % intervals over the
designs without the rule (``degrees=0``) and with it, each with its binomial standard
error; each population the share of designs where the rule ranked every user and the
mean share of users ranked, both ways.
"""

import argparse
from itertools import combinations

import numpy as np
import pandas as pd
from bench_decisions import heavy_tailed
from bench_design_files import read

from sampled_metrics.estimation.decisions import (
    DECISION_DEFAULTS,
    draw_design,
    estimate_difference,
    estimate_metric,
    metric_proxy,
)
from sampled_metrics.estimation.decisions.study_methods import simulate_sampled_ranks
from sampled_metrics.estimation.decisions.verdict import EQUAL_WITHIN
from sampled_metrics.estimation.metrics import metric_by_name
from sampled_metrics.outputs.tables import markdown_table

METRICS = ("recall@10", "ndcg@10")


def intervals(design, exact, sampled, m, n, law, proxies, metric, targets) -> list:
    """Each target's (low, high): a model's metric or a pair's difference."""
    out = []
    for target in targets:
        if len(target) == 1:
            (k,) = target
            e = estimate_metric(design, exact[k], sampled[k], m, n, metric, law=law,
                                proxy=proxies[k])  # fmt: skip
        else:
            a, b = target
            e = estimate_difference(design, exact[[a, b]], sampled[[a, b]], m, n, metric,
                                    law=law, proxy=[proxies[a], proxies[b]])  # fmt: skip
        out.append((e.low, e.high))
    return out


def measure(name, exact, n, m, law, budget, designs, *, models, sampled=None, seed=0) -> tuple:
    """Coverage rows per cell and a summary row: phase 1 ``sampled`` fixed, or redrawn
    for every design from the exact ranks when None."""
    rng = np.random.default_rng(seed)
    truth = {metric: metric_by_name(metric)(exact, n).mean(axis=1) for metric in METRICS}
    targets = [(k,) for k in range(len(exact))] + list(combinations(range(len(exact)), 2))
    covered = np.zeros((2, len(METRICS), len(targets)))
    full, ranked = 0, np.zeros(2)
    fixed = sampled
    proxies = None
    for _ in range(designs):
        phase_one = simulate_sampled_ranks(exact, n, m, law, rng) if fixed is None else fixed
        if fixed is None or proxies is None:
            proxies = {metric: [metric_proxy(row, m, n, metric, law=law) for row in phase_one]
                       for metric in METRICS}  # fmt: skip
        spread = sum(p.variance for p in proxies[METRICS[0]])
        draw = int(rng.integers(2**32))
        for way, degrees in enumerate((0, DECISION_DEFAULTS["degrees"])):
            design = draw_design(phase_one, m, n, budget=budget, law=law, spread=spread,
                                 degrees=degrees, seed=draw)  # fmt: skip
            full += way == 1 and design.note is not None
            ranked[way] += design.n_chosen / design.n_users
            for i, metric in enumerate(METRICS):
                found = intervals(design, exact, phase_one, m, n, law, proxies[metric],
                                  metric, targets)  # fmt: skip
                for j, (target, (low, high)) in enumerate(zip(targets, found)):
                    value = truth[metric][target[0]]
                    if len(target) == 2:
                        value -= truth[metric][target[1]]
                    covered[way, i, j] += low - EQUAL_WITHIN <= value <= high + EQUAL_WITHIN
    share = covered / designs
    error = np.sqrt(share * (1 - share) / designs)
    text = np.vectorize(lambda s, e: f"{100 * s:.1f} ± {100 * e:.1f}")(share, error)
    rows = []
    for i, metric in enumerate(METRICS):
        for j, target in enumerate(targets):
            rows.append({
                "population": name, "budget": budget, "metric": metric,
                "model or pair": "-".join(models[k] for k in target),
                "coverage % without the rule": text[0, i, j], "with it": text[1, i, j],
            })  # fmt: skip
    p = full / designs
    summary = {
        "population": name, "budget": budget, "designs": designs,
        "every user ranked %": f"{100 * p:.1f} ± {100 * np.sqrt(p * (1 - p) / designs):.1f}",
        "users ranked % without the rule": f"{100 * ranked[0] / designs:.1f}",
        "with it": f"{100 * ranked[1] / designs:.1f}",
        "worst cell % without": f"{100 * share[0].min():.1f}",
        "with it ": f"{100 * share[1].min():.1f}",
    }  # fmt: skip
    return rows, summary


def per_phase_one(name, exact, n, m, law, budget, phase_ones, designs, *, models) -> dict:
    """The design's coverage given phase 1 (what a user with one file of sampled ranks
    gets): ``phase_ones`` draws of phase 1, ``designs`` designs each; the worst cell of
    each draw, and the share of draws with a cell below 93 %, without and with the rule."""
    rng = np.random.default_rng(1)
    worst = np.empty((phase_ones, 2))
    for k in range(phase_ones):
        sampled = simulate_sampled_ranks(exact, n, m, law, rng)
        rows, _ = measure(name, exact, n, m, law, budget, designs, models=models,
                          sampled=sampled, seed=k)  # fmt: skip
        for way, column in enumerate(("coverage % without the rule", "with it")):
            worst[k, way] = min(float(row[column].split(" ")[0]) for row in rows)
    below = (worst < 93).mean(axis=0)
    return {
        "population": name, "budget": budget, "phase 1s": phase_ones, "designs each": designs,
        "worst cell % without the rule": f"{worst[:, 0].min():.1f}",
        "phase 1s with a cell below 93 % without": f"{100 * below[0]:.0f}",
        "worst cell % with it": f"{worst[:, 1].min():.1f}",
        "below 93 % with it": f"{100 * below[1]:.0f}",
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cornac", nargs=2, metavar=("SAMPLED", "FULL"))
    parser.add_argument("--designs", type=int, default=1000)
    parser.add_argument("--parts", default="cornac,cornac-given,small,large")
    parser.add_argument("--phase-ones", type=int, default=30,
                        help="cornac: phase 1s redrawn, 200 designs each")  # fmt: skip
    args = parser.parse_args()
    parts, runs = args.parts.split(","), []
    if args.cornac:
        files = read(*args.cornac)
        case = [files["exact"], files["n"], int(files["m"][0]), files["law"]]
    for budget in (0.35, 0.5) if "cornac" in parts and args.cornac else ():
        runs.append(("cornac, the file's phase 1", *case, budget, files["models"],
                     files["sampled"]))  # fmt: skip
        runs.append(("cornac, phase 1 redrawn", *case, budget, files["models"], None))
    if "small" in parts:
        for users, budget in ((100, 0.5), (200, 0.5), (300, 0.25)):
            n = 380 - np.random.default_rng(1).integers(0, 20, users)
            runs.append((f"heavy-tailed, {users} users", heavy_tailed(users, n), n, 99,
                         "hypergeometric", budget, ["A", "B", "C"], None))  # fmt: skip
    if "large" in parts:
        n = 3706 - np.random.default_rng(1).integers(20, 201, 3000)
        for budget in (0.1, 0.25):
            runs.append(("heavy-tailed, 3000 users", heavy_tailed(3000, n), n, 100,
                         "hypergeometric", budget, ["A", "B", "C"], None))  # fmt: skip
    cells, summaries = [], []
    for name, e, n, m, law, budget, models, sampled in runs:
        rows, summary = measure(name, e, n, m, law, budget, args.designs, models=models,
                                sampled=sampled)  # fmt: skip
        cells += rows
        summaries.append(summary)
        print(markdown_table(pd.DataFrame([summary]), digits={"budget": 2}), flush=True)
    if "cornac-given" in parts and args.cornac:
        conditional = [
            per_phase_one("cornac", *case, budget, args.phase_ones, 200, models=files["models"])
            for budget in (0.35, 0.5)
        ]
        print("\n## cornac, given phase 1 (the worst cell over 200 designs of each)\n")
        print(markdown_table(pd.DataFrame(conditional), digits={"budget": 2}))
    if summaries:
        print("\n## Per population\n")
        print(markdown_table(pd.DataFrame(summaries), digits={"budget": 2}))
        print("\n## Per cell (coverage of the 95 % intervals, ± one standard error)\n")
        print(markdown_table(pd.DataFrame(cells), digits={"budget": 2}))


if __name__ == "__main__":
    main()
