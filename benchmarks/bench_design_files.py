"""How the design does on your own files: phase 1 (a file of sampled ranks) held fixed,
the design redrawn many times, each model's and each pair's interval checked against
the exact metric of a full ranking of every user:

    python benchmarks/bench_design_files.py SAMPLED FULL [--budgets 0.35 0.5]
                                            [--seeds 1000] [--metrics recall@10 ndcg@10]

SAMPLED and FULL are rank files with their sidecars (``sampled-metrics recbole``,
``sampled-metrics cornac``, ``rank_files``): the sampled file's models (its sidecar's
rank columns), m, n and law; the full file's column of each model and its user column.
Each seed draws a design as ``sampled-metrics plan`` does (its defaults), reads the
chosen users' exact ranks from FULL and estimates as ``sampled-metrics correct --exact
--design`` does. Prints, per budget, metric and model or pair: the exact value, the
coverage of the 95 % intervals, their mean width, and the verdicts.
"""

import argparse
from itertools import combinations

import numpy as np
import pandas as pd

from sampled_metrics.estimation.decisions import (
    draw_design,
    estimate_difference,
    estimate_metric,
    metric_proxy,
)
from sampled_metrics.estimation.metrics import metric_by_name
from sampled_metrics.frameworks.rank_meta import read_rank_meta
from sampled_metrics.outputs.tables import markdown_table


def read(sampled_path: str, full_path: str) -> dict:
    """Every model's sampled and exact ranks, aligned by user, and m, n, law."""
    meta = read_rank_meta(sampled_path)
    if meta is None or meta.full or meta.law is None:
        raise SystemExit(f"{sampled_path}: needs a sidecar of a sampled protocol with a law")
    sampled = pd.read_csv(sampled_path, dtype={"user": str})
    full = pd.read_csv(full_path, dtype={"user": str}).set_index("user").loc[sampled["user"]]
    models = list(dict.fromkeys(meta.rank_columns.values()))
    m = sampled[meta.m_column].to_numpy() if meta.m_column else np.full(len(sampled), meta.m)
    return {
        "models": models,
        "sampled": np.stack([sampled[c].to_numpy() for c in meta.rank_columns]),
        "exact": np.stack([full[model].to_numpy() for model in models]),
        "m": m,
        "n": sampled[meta.n_column].to_numpy(),
        "law": meta.law,
    }


def measure(files: dict, budget: float, seeds: int, metric: str) -> list[dict]:
    """Coverage, width and verdicts of every model's and pair's interval over seeds."""
    sampled, exact, m, n, law = (files[k] for k in ("sampled", "exact", "m", "n", "law"))
    truth = metric_by_name(metric)(exact, n).mean(axis=1)
    proxies = [metric_proxy(row, m, n, metric, law=law) for row in sampled]
    targets = [(k,) for k in range(len(exact))] + list(combinations(range(len(exact)), 2))
    found = {target: [] for target in targets}
    for seed in range(seeds):
        design = draw_design(sampled, m, n, budget=budget, law=law, seed=seed)
        for target in targets:
            if len(target) == 1:
                (k,) = target
                e = estimate_metric(design, exact[k], sampled[k], m, n, metric, law=law,
                                    proxy=proxies[k])  # fmt: skip
                value = truth[k]
            else:
                a, b = target
                e = estimate_difference(design, exact[[a, b]], sampled[[a, b]], m, n, metric,
                                        law=law, proxy=[proxies[a], proxies[b]])  # fmt: skip
                value = truth[a] - truth[b]
            found[target].append((e.low <= value <= e.high, e.high - e.low, e.verdict))
    rows = []
    for target, results in found.items():
        covered, width, verdicts = zip(*results)
        name = "-".join(files["models"][k] for k in target)
        value = truth[target[0]] - (truth[target[1]] if len(target) == 2 else 0.0)
        row = {"budget": budget, "metric": metric, "model or pair": name, "exact": value,
               "coverage %": 100 * np.mean(covered), "width": np.mean(width)}  # fmt: skip
        if len(target) == 2:
            for verdict in ("A better", "B better", "undecided"):
                row[f"{verdict} %"] = 100 * np.mean([v == verdict for v in verdicts])
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sampled")
    parser.add_argument("full")
    parser.add_argument("--budgets", type=float, nargs="+", default=[0.35, 0.5])
    parser.add_argument("--seeds", type=int, default=1000)
    parser.add_argument("--metrics", nargs="+", default=["recall@10", "ndcg@10"])
    args = parser.parse_args()
    files = read(args.sampled, args.full)
    users, models = files["sampled"].shape[1], ", ".join(files["models"])
    print(f"{args.sampled}: {users} users, models {models}, {files['law']} law, "
          f"{args.seeds} designs a budget\n")  # fmt: skip
    rows = [row for budget in args.budgets for metric in args.metrics
            for row in measure(files, budget, args.seeds, metric)]  # fmt: skip
    frame = pd.DataFrame(rows)
    digits = {c: 1 for c in frame.columns if c.endswith("%")}
    print(markdown_table(frame, digits={**digits, "budget": 2, "exact": 4, "width": 4}))


if __name__ == "__main__":
    main()
