"""Do the printed 95 % intervals hold? Coverage of every estimator's interval, simulated.

    python benchmarks/bench_coverage.py [--ranks results/ml-1m-offline/ranks] [--quick]
        [--populations X,Y,Z,Pop,EASE,BPR,heavy] [--laws binomial,hypergeometric]
        [--m 100,1000] [--seeds range=100,fixed=100,em=0,prior=0,maxent=0]
        [--pairs X-Y,Y-BPR,EASE-X] [--pair-seeds ...] [--pipeline-draws DIR|none]
        [--bootstrap B] [--raw raw.csv] [--out summary.csv] [--check]
    python benchmarks/bench_coverage.py --report raw.csv [raw.csv ...] [--out summary.csv]
        [--markdown tables.md] [--markdown-full cells.md]

For each population of exact ranks (each user's rank r and ranked-set size n: the exact
ranks of a pipeline run, ``<ranks>/<name>.csv``, each file read named on stderr; and
``heavy``, a heavy-tailed synthetic population made with a fixed seed:
``interval_coverage/populations.py``), each law (``binomial``: with replacement, r~ - 1
~ Binomial(m, (r - 1)/(n - 1)); ``hypergeometric``: without, r~ - 1 ~ Hypergeometric(r -
1, n - r, m)) and each m, every seed draws one sampled rank per user and computes every
metric's interval by every method:

* ``range``: the identification interval (``identification_intervals``), the interval
  ``sampled-metrics correct`` prints (method ``range``, one of its defaults); for a pair
  ``difference_interval``, the range of the difference and the verdict the command
  prints from it;
* every estimator: the interval ``estimate_table`` (``compare`` for a pair) gives, the
  normal interval of a mean of per-user values for the paper's corrections and the
  bootstrap over users for the learned ones (confidence, bootstrap and seed of the
  command line's parser). The command no longer prints these: this table is why.

The exact metric is the mean of M(r_u, n_u) over the population's users, the quantity
every interval claims to cover. Per cell (population, law, m, metric, method) the table
gives the seeds, the bootstrap's resamples (0: a normal interval, or the range), whether
the command prints the interval, the coverage with its binomial standard error, the mean
width, the mean bias (estimate - exact), the bias over the mean half-width and the
estimate's standard deviation over the seeds.

Paired comparisons: the two models' sampled ranks are drawn on the same sampled items,
coupled as if the items ranked above the held-out item by the better-ranking model were
among those above it by the other (nested sets: each marginal is exactly the law; the
most positively correlated coupling); the coverage is against the exact difference,
``verdicts`` is the share of seeds whose interval excludes 0 and ``wrong_verdicts`` the
share of seeds with a verdict whose sign (the estimate's, or the range's side) is not the
exact difference's. With ``--pipeline-draws DIR`` the pipeline's own sampled ranks (real
scores, the same sampled items for every model; m and law from its provenance config) are
populations ``<name>@pipeline`` too: one seed per repetition.

Speed, not a different computation: pure functions are memoized while the benchmark runs
(``interval_coverage/shortcuts.py``); ``--check`` runs ``estimate_table`` and ``compare``
with and without them and prints the largest difference.

Groups of methods (``--seeds``): ``range``; ``fixed`` (the paper's corrections: sampled
rank_estimate ls cls bv_1 bv_0.1 bv_0.01 bv_0.001); ``em``; ``prior`` (bv_em_0.1 mn_em);
``maxent`` (maxent bv_maxent_0.1 mn_maxent). A group runs on the first seeds of each
cell: every method of a seed sees the same sampled ranks. The learned ones are slow (a
bootstrap of 200 resamples, each re-learning the distribution): run them at a reduced
size (``--bootstrap``, fewer seeds, fewer cells) and say so. ``--raw`` keeps every seed's
record (appended, so a run resumes and several runs add up); ``--report RAW [RAW ...]``
only summarizes raw files. ``--quick`` (X and heavy, m = 100, binomial, 3 seeds, a
25-resample bootstrap, labelled as such) runs in about a minute.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from interval_coverage.cells import (
    RANGE,
    RAW_COLUMNS,
    RawRecords,
    estimate_rows,
    run_pipeline_draws,
    run_simulations,
)
from interval_coverage.populations import HEAVY, REAL, Populations, cell_rng, draw, draw_pair
from interval_coverage.shortcuts import Plain, Shortcuts
from interval_coverage.summary import markdown, print_summary, summarize
from scipy import linalg

from sampled_metrics.cli.arguments import DEFAULT_ESTIMATORS, DEFAULT_METRICS
from sampled_metrics.estimation.estimators import (
    ESTIMATOR_DEFAULTS,
    compare,
    estimate_table,
    identification_intervals,
    sampled_evaluation,
)

METRICS = ["recall@10", "ndcg@10", "ap", "auc"]
FIXED = ["sampled", "rank_estimate", "ls", "cls", "bv_1", "bv_0.1", "bv_0.01", "bv_0.001"]
EM = ["em"]
PRIOR = ["bv_em_0.1", "mn_em"]
MAXENT = ["maxent", "bv_maxent_0.1", "mn_maxent"]
LAWS = ["binomial", "hypergeometric"]
PAIRS = ["X-Y", "Y-BPR", "EASE-X"]


# The first lines of the --markdown-full page (docs/coverage.md): what writes it, what it holds.
FULL_HEADER = """# Coverage of every interval, cell by cell

Written by `python benchmarks/bench_coverage.py --report RAW... --markdown-full docs/coverage.md` \
from the per-seed records of the simulation's runs (`--raw`; hours of computing, not kept in \
the repository). It holds four tables: the range's coverage per population, m and law; each \
estimator's noise interval over its cells; the paired differences; every cell. \
docs/estimators.md, "Which intervals hold", says what was run, what the columns mean and what \
it shows. `printed`: whether `sampled-metrics correct` prints this interval (only the range). \
`coverage_low95`: the one-sided 95 % lower confidence bound of the coverage (Clopper-Pearson).

"""


def cli_options() -> dict:
    """The interval options of ``estimate_table`` and ``compare``: the command line's
    confidence (the estimators' default), and the bootstrap it used before it stopped
    printing the estimators' intervals (200 resamples, seed 0)."""
    return {"confidence": ESTIMATOR_DEFAULTS["confidence"], "bootstrap": 200, "seed": 0}


# --- the equivalence check ----------------------------------------------------------------


def check_shortcuts(populations, options, metrics) -> None:
    """``estimate_table`` and ``compare`` with and without the shortcuts, on one seed of
    X and of ``heavy``: the largest difference of estimate, low, high."""
    methods = FIXED + EM + PRIOR + ["maxent"]
    for name, law in (("X", "binomial"), (HEAVY, "hypergeometric")):
        ranks, n = populations(name)
        sampled = draw(ranks, n, 100, law, cell_rng("check", name, law, 100, 0))
        data = sampled_evaluation(sampled, m=100, n=n, law=law)
        start = time.perf_counter()
        plain = estimate_table(data, metrics, methods, **options)
        plain_s = time.perf_counter() - start
        with Shortcuts() as shortcuts:
            start = time.perf_counter()
            exact = dict.fromkeys(metrics, 0.0)
            fast = estimate_rows(name, law, 100, 0, data, exact, metrics, methods, options,
                                 shortcuts)  # fmt: skip
            fast_s = time.perf_counter() - start
        fast = pd.DataFrame(fast, columns=RAW_COLUMNS)
        gap = max(
            float(np.max(np.abs(plain[c].to_numpy() - fast[c].to_numpy())))
            for c in ("estimate", "low", "high")
        )
        print(
            f"check {name} {law} m=100, {len(methods)} methods: estimate_table {plain_s:.1f} s "
            f"plain, {fast_s:.1f} s with the shortcuts (cold); largest difference of "
            f"estimate/low/high {gap:.2e}"
        )
    for name, law in (("X", "hypergeometric"), (HEAVY, "binomial")):
        ranks, n = populations(name)
        sampled = draw(ranks, n, 100, law, cell_rng("check", name, law, 100, 1))
        data = sampled_evaluation(sampled, m=100, n=n, law=law)
        plain = identification_intervals(data, metrics, options["confidence"])
        with Shortcuts():
            identification_intervals(data, metrics, options["confidence"])  # fills the memo
            fast = identification_intervals(data, metrics, options["confidence"])
        gap = max(abs(a - b) for k in metrics for a, b in zip(plain[k], fast[k]))
        print(f"check range {name} {law} m=100: largest difference of low/high {gap:.2e}")
    ranks_x, n = populations("X")
    ranks_y, _ = populations("Y")
    rng = cell_rng("check", "X-Y", "binomial", 100, 0)
    s1, s2 = draw_pair(ranks_x, ranks_y, n, 100, "binomial", rng)
    d1, d2 = (sampled_evaluation(s, m=100, n=n, law="binomial") for s in (s1, s2))
    with Shortcuts() as shortcuts:
        for method in ("bv_0.1", "em", "mn_em", "maxent"):
            for metric in ("recall@10", "ndcg@10"):
                start = time.perf_counter()
                fast = compare(metric, method, d1, d2, **options)
                fast_s = time.perf_counter() - start
                with Plain(shortcuts):
                    start = time.perf_counter()
                    plain = compare(metric, method, d1, d2, **options)
                    plain_s = time.perf_counter() - start
                gap = max(abs(plain[k] - fast[k]) for k in ("difference", "low", "high"))
                print(
                    f"check compare X-Y {metric} {method}: {plain_s:.1f} s plain, {fast_s:.1f} s "
                    f"with the shortcuts; largest difference {gap:.2e}"
                )


# --- the command --------------------------------------------------------------------------


def _names(text: str) -> list:
    return [x for x in text.split(",") if x]


def _ints(text: str) -> list:
    return [int(x) for x in _names(text)]


def _seeds(text: str) -> dict:
    """``fixed=200,em=100``: seeds per group of methods (a group not named: 0)."""
    found = {}
    for item in _names(text):
        group, _, count = item.partition("=")
        if group not in GROUPS or not count.isdigit():
            raise argparse.ArgumentTypeError(
                f"{item!r}: write GROUP=SEEDS, GROUP one of {', '.join(GROUPS)}"
            )
        found[group] = int(count)
    return found


GROUPS = {"fixed": FIXED, "range": [RANGE], "em": EM, "prior": PRIOR, "maxent": MAXENT}
SEEDS = {"range": 100, "fixed": 100, "em": 0, "prior": 0, "maxent": 0}
PAIR_SEEDS = {"range": 100, "fixed": 100, "em": 0, "prior": 0, "maxent": 0}
PAIR_METHODS = [RANGE, "sampled", "cls", "bv_0.1", "em", "mn_em"]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--ranks",
        type=Path,
        default=Path("results/ml-1m-offline/ranks"),
        help="the pipeline's exact ranks, <name>.csv (default: %(default)s)",
    )
    parser.add_argument("--populations", type=_names, default=REAL + [HEAVY])
    parser.add_argument("--laws", type=_names, default=LAWS)
    parser.add_argument("--m", type=_ints, default=[100, 1000])
    parser.add_argument("--metrics", type=_names, default=METRICS)
    groups = ", ".join(f"{k}: {' '.join(v)}" for k, v in GROUPS.items())
    parser.add_argument(
        "--seeds",
        type=_seeds,
        default=SEEDS,
        help=f"seeds of each group of methods ({groups}); default "
        + ",".join(f"{k}={v}" for k, v in SEEDS.items()),
    )
    parser.add_argument("--pairs", type=_names, default=PAIRS, help="pairs compared ('' for none)")
    parser.add_argument(
        "--pair-seeds",
        type=_seeds,
        default=PAIR_SEEDS,
        help="seeds of the pairs, by group; default "
        + ",".join(f"{k}={v}" for k, v in PAIR_SEEDS.items()),
    )
    parser.add_argument(
        "--pair-methods",
        type=_names,
        default=PAIR_METHODS,
        help="methods of the pairs (default: %(default)s)",
    )
    parser.add_argument("--no-estimates", action="store_true", help="only the comparisons")
    parser.add_argument(
        "--pipeline-draws",
        default=None,
        help="the pipeline's sampled_ranks/ (default: beside --ranks; 'none': skip)",
    )
    parser.add_argument("--only-pipeline-draws", action="store_true")
    parser.add_argument(
        "--bootstrap",
        type=int,
        default=None,
        help="resamples of the learned estimators' bootstrap (default: the command line's)",
    )
    parser.add_argument("--raw", type=Path, help="every seed's record (appended; resumes)")
    parser.add_argument("--out", type=Path, help="the summary table as CSV")
    parser.add_argument("--markdown", type=Path, help="the summary as Markdown tables")
    parser.add_argument("--markdown-full", type=Path, help="the same, followed by every cell's row")
    parser.add_argument("--report", type=Path, nargs="+", help="only summarize these raw files")
    parser.add_argument("--check", action="store_true", help="the shortcuts against plain calls")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="X and heavy, m = 100, binomial, 3 seeds, bootstrap 25: a smoke test",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.populations, args.m, args.laws, args.pairs = ["X", HEAVY], [100], ["binomial"], ["X-Y"]
        args.seeds = {"fixed": 3, "range": 3, "em": 3, "prior": 3, "maxent": 1}
        args.pair_seeds = {"fixed": 1, "range": 1, "em": 1, "prior": 1}
        args.pair_methods = [RANGE, *DEFAULT_ESTIMATORS]
        args.bootstrap = 25 if args.bootstrap is None else args.bootstrap
        args.pipeline_draws = args.pipeline_draws or "none"
    if args.pipeline_draws is None:
        args.pipeline_draws = args.ranks.parent / "sampled_ranks"
    elif args.pipeline_draws == "none":
        args.pipeline_draws = None
    else:
        args.pipeline_draws = Path(args.pipeline_draws)
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    warnings.filterwarnings("ignore", category=linalg.LinAlgWarning)
    if args.report:
        raw = pd.concat([pd.read_csv(path) for path in args.report], ignore_index=True)
        raw = raw.drop_duplicates(
            subset=["kind", "population", "law", "m", "metric", "method", "seed"], keep="last"
        )
        summary = summarize(raw)
        print_summary(summary)
        if args.out:
            summary.to_csv(args.out, index=False)
        if args.markdown:
            args.markdown.write_text(markdown(summary))
        if args.markdown_full:
            args.markdown_full.write_text(FULL_HEADER + markdown(summary, full=True))
        return 0
    options = cli_options()
    cli_bootstrap = options["bootstrap"]
    if args.bootstrap is not None:
        options["bootstrap"] = args.bootstrap
    populations = Populations(args.ranks)
    if args.check:
        check_shortcuts(populations, options, args.metrics)
        return 0
    print(
        f"confidence {options['confidence']}; estimators' noise intervals with bootstrap "
        f"{options['bootstrap']} (the command's until issue 25: {cli_bootstrap}), seed "
        f"{options['seed']}; the command's default metrics {' '.join(DEFAULT_METRICS)}, "
        f"estimators {' '.join(DEFAULT_ESTIMATORS)} and the {RANGE} (its one interval)",
        file=sys.stderr,
    )
    groups = [(GROUPS[k], s) for k, s in args.seeds.items() if s > 0]
    pair_groups = [
        ([x for x in GROUPS[k] if x in args.pair_methods], s)
        for k, s in args.pair_seeds.items()
        if s > 0
    ]
    pair_groups = [(methods, seeds) for methods, seeds in pair_groups if methods]
    print(
        "seeds: "
        + "; ".join(f"{' '.join(x)}: {s}" for x, s in groups)
        + " | pairs: "
        + ("; ".join(f"{' '.join(x)}: {s}" for x, s in pair_groups) if args.pairs else "none"),
        file=sys.stderr,
    )
    records = RawRecords(args.raw)
    start = time.perf_counter()
    with Shortcuts() as shortcuts:
        if not args.only_pipeline_draws:
            run_simulations(args, populations, records, options, shortcuts, groups, pair_groups)
        if args.pipeline_draws is not None:
            run_pipeline_draws(args, populations, records, options, shortcuts, groups, pair_groups)
    print(
        f"ran in {time.perf_counter() - start:.0f} s; learned distributions: "
        f"{shortcuts.alone} learned, {shortcuts.memo} read again from the memo",
        file=sys.stderr,
    )
    summary = summarize(records.frame())
    print_summary(summary)
    if args.out:
        summary.to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
