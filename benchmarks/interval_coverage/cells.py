"""One cell of the coverage benchmark (a population or a pair of populations, a law and
an m): every seed's sampled ranks, the intervals ``estimate_table``, ``compare`` and the
identification intervals give on them, kept as raw records (appended to a file, so a
run resumes)."""

from __future__ import annotations

import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from sampled_metrics.estimation.estimators import (
    compare,
    difference_interval,
    estimate_table,
    identification_intervals,
    sampled_evaluation,
)
from sampled_metrics.estimation.registry import parse_estimator

from .populations import HEAVY, cell_rng, draw, draw_pair, exact_metrics

RANGE = "range"  # the identification interval: the interval the command prints
RAW_COLUMNS = [
    "kind",
    "population",
    "law",
    "m",
    "metric",
    "method",
    "seed",
    "exact",
    "estimate",
    "low",
    "high",
    "bootstrap",
]


def methods_for_seed(seed: int, groups) -> list:
    return [method for methods, seeds in groups for method in methods if seed < seeds]


def _bootstrap_of(method: str, options) -> int:
    return options["bootstrap"] if parse_estimator(method)[0] != "correction" else 0


def estimate_rows(population, law, m, seed, data, exact, metrics, methods, options, shortcuts):
    """One seed: every metric by every method as ``estimate_table`` gives it (and, as
    method ``range``, the identification interval the command prints below it)."""
    rows = []
    estimators = [x for x in methods if x != RANGE]
    if estimators:
        table = estimate_table(data, metrics, estimators, **options)
        rows += [
            (
                "estimate", population, law, m, row.metric, row.method, seed,
                exact[row.metric], row.estimate, row.low, row.high,
                _bootstrap_of(row.method, options),
            )
            for row in table.itertuples()
        ]  # fmt: skip
    if RANGE in methods:
        ranges = identification_intervals(data, metrics, options["confidence"])
        rows += [
            ("estimate", population, law, m, metric, RANGE, seed, exact[metric], np.nan,
             low, high, 0)
            for metric, (low, high) in ranges.items()
        ]  # fmt: skip
    shortcuts.forget()
    return rows


def compare_rows(pair, law, m, seed, first, second, exact, metrics, methods, options, shortcuts):
    """One seed: every metric's paired difference by every method as ``compare`` gives
    it (and ``difference_interval`` as method ``range``)."""
    rows = []
    for method in methods:
        for metric in metrics:
            if method == RANGE:
                low, high = difference_interval(first, second, metric, options["confidence"])
                found = (np.nan, low, high)
            else:
                result = compare(metric, method, first, second, **options)
                found = (result["difference"], result["low"], result["high"])
            rows.append(
                ("compare", pair, law, m, metric, method, seed, exact[metric], *found,
                 _bootstrap_of(method, options) if method != RANGE else 0)
            )  # fmt: skip
    shortcuts.forget()
    return rows


class RawRecords:
    """Every seed's record, appended to ``path`` as it is made; what is there is done."""

    def __init__(self, path: Path | None):
        self.path = path
        self.rows: list = []
        self.done: set = set()
        if path is not None and path.is_file():
            old = pd.read_csv(path)
            self.rows = list(old[RAW_COLUMNS].itertuples(index=False, name=None))
            self.done = {(r[0], r[1], r[2], int(r[3]), r[5], int(r[6])) for r in self.rows}

    def todo(self, kind, population, law, m, seed, methods) -> list:
        return [x for x in methods if (kind, population, law, m, x, seed) not in self.done]

    def add(self, rows) -> None:
        self.rows += rows
        self.done |= {(r[0], r[1], r[2], r[3], r[5], r[6]) for r in rows}
        if self.path is not None and rows:
            frame = pd.DataFrame(rows, columns=RAW_COLUMNS)
            header = not self.path.is_file()
            frame.to_csv(self.path, mode="a", header=header, index=False)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=RAW_COLUMNS)


def estimate_cell(label, law, m, ranks, n, draws, records, options, shortcuts, metrics, groups):
    """Every seed of one population, law and m: ``draws(seed)`` its sampled ranks."""
    exact = exact_metrics(ranks, n, metrics)
    start, seeds = time.perf_counter(), max((s for _, s in groups), default=0)
    for seed in range(seeds):
        methods = records.todo("estimate", label, law, m, seed, methods_for_seed(seed, groups))
        if methods:
            data = sampled_evaluation(draws(seed), m=m, n=n, law=law)
            records.add(
                estimate_rows(
                    label, law, m, seed, data, exact, metrics, methods, options, shortcuts
                )
            )
    took = time.perf_counter() - start
    print(f"estimates {label} {law} m={m}: {took:.0f} s", file=sys.stderr, flush=True)


def compare_cell(label, law, m, pair, n, draws, records, options, shortcuts, metrics, groups):
    """Every seed of one pair (two exact-rank arrays), law and m: ``draws(seed)`` the two
    models' sampled ranks on the same sampled items."""
    first, second = (exact_metrics(ranks, n, metrics) for ranks in pair)
    exact = {metric: first[metric] - second[metric] for metric in metrics}
    start, seeds = time.perf_counter(), max((s for _, s in groups), default=0)
    for seed in range(seeds):
        methods = records.todo("compare", label, law, m, seed, methods_for_seed(seed, groups))
        if methods:
            d1, d2 = (sampled_evaluation(s, m=m, n=n, law=law) for s in draws(seed))
            records.add(
                compare_rows(
                    label, law, m, seed, d1, d2, exact, metrics, methods, options, shortcuts
                )
            )
    took = time.perf_counter() - start
    print(f"compare {label} {law} m={m}: {took:.0f} s", file=sys.stderr, flush=True)


def _draw_seed(ranks, n, m, law, name, seed):
    return draw(ranks, n, m, law, cell_rng("estimate", name, law, m, seed))


def _draw_pair_seed(first, second, n, m, law, label, seed):
    return draw_pair(first, second, n, m, law, cell_rng("compare", label, law, m, seed))


def run_simulations(args, populations, records, options, shortcuts, groups, pair_groups) -> None:
    """Every (m, law): the estimates of every population, then the pairs."""
    metrics = args.metrics
    for m in args.m:
        for law in args.laws:
            shortcuts.focus(m, law)
            for name in [] if args.no_estimates else args.populations:
                ranks, n = populations(name)

                draws = partial(_draw_seed, ranks, n, m, law, name)
                estimate_cell(
                    name, law, m, ranks, n, draws, records, options, shortcuts, metrics, groups
                )
            for label in args.pairs:
                one, two = label.split("-")
                (r1, n), (r2, n2) = populations(one), populations(two)
                if not np.array_equal(n, n2):
                    raise SystemExit(f"pair {label}: the two populations' n differ")

                draws = partial(_draw_pair_seed, r1, r2, n, m, law, label)
                compare_cell(
                    label,
                    law,
                    m,
                    (r1, r2),
                    n,
                    draws,
                    records,
                    options,
                    shortcuts,
                    metrics,
                    pair_groups,
                )


def pipeline_protocol(draws_dir: Path):
    """(m, law) of the pipeline's sampled ranks, from its provenance config."""
    import yaml

    config = draws_dir.parent / "provenance" / "config.yaml"
    if not config.is_file():
        raise SystemExit(f"bench_coverage: no {config} to read the pipeline's m and law from")
    sampling = yaml.safe_load(config.read_text())["sampling"]
    return int(sampling["m"]), sampling["law"]


def run_pipeline_draws(args, populations, records, options, shortcuts, groups, pair_groups):
    """The pipeline's own sampled ranks (real scores): one seed per repetition, the same
    sampled items for every model, so its pairs are paired as the pipeline paired them."""
    m, law = pipeline_protocol(args.pipeline_draws)
    print(f"pipeline draws: {args.pipeline_draws} (m = {m}, {law})", file=sys.stderr)
    shortcuts.focus(m, law)
    real = [x for x in args.populations if x != HEAVY]
    names = real + [x for p in args.pairs for x in p.split("-") if x not in real]
    draws = {}
    for name in dict.fromkeys(names):
        path = args.pipeline_draws / f"{name}.npy"
        draws[name] = np.load(path).astype(np.int64)
        ranks, n = populations(name)
        if draws[name].shape[1] != ranks.size or np.any(draws[name] > ranks):
            raise SystemExit(f"{path}: not one sampled rank <= the exact rank per user")
        print(f"pipeline draws {name}: read {path}, shape {draws[name].shape}", file=sys.stderr)
    for name in real:
        ranks, n = populations(name)
        cap = [(methods, min(s, draws[name].shape[0])) for methods, s in groups]
        estimate_cell(
            f"{name}@pipeline",
            law,
            m,
            ranks,
            n,
            draws[name].__getitem__,
            records,
            options,
            shortcuts,
            args.metrics,
            cap,
        )
    for label in args.pairs:
        one, two = label.split("-")
        (r1, n), (r2, _) = populations(one), populations(two)
        reps = min(draws[one].shape[0], draws[two].shape[0])
        cap = [(methods, min(s, reps)) for methods, s in pair_groups]

        def both(seed, one=one, two=two):
            return draws[one][seed], draws[two][seed]

        compare_cell(
            f"{label}@pipeline",
            law,
            m,
            (r1, r2),
            n,
            both,
            records,
            options,
            shortcuts,
            args.metrics,
            cap,
        )
