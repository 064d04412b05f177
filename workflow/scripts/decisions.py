"""Rule decisions: the design study (docs/decisions_study.md) on every recommender's exact
ranks and its own share (rule decisions_model): every method of decisions.run at
decisions.seeds seeds, the summary (decisions.csv), the report with its goals
(decisions.md)."""

import time

import numpy as np

from sampled_metrics.data import split_users
from sampled_metrics.io.forked import forked_map
from sampled_metrics.pipeline.intermediates import read_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.studies.decisions.per_model import read_draws
from sampled_metrics.studies.decisions.registry import (
    FEWER_SEEDS,
    left_out_methods,
    study_methods,
)
from sampled_metrics.studies.decisions.report import write_decisions
from sampled_metrics.studies.decisions.study import run_study
from sampled_metrics.studies.decisions.summary import Goals, goals, summarize

log = start_job(snakemake)
p = snakemake.params
started = time.perf_counter()
users = split_users(snakemake.input.split)
n = users.n_candidates
exact = np.stack([read_ranks(path, users)["rank"].to_numpy() for path in snakemake.input.ranks])
methods = study_methods(p.run, p.budgets, p.uniform_budgets, p.adaptive_steps)
left_out = left_out_methods(methods, n.size)
for name, why in left_out.items():
    log.warning("%s left out: %s", name, why)
methods = [method for method in methods if method.name not in left_out]
fewer = {kind: getattr(p, key) for kind, key in FEWER_SEEDS.items()}
rows = run_study(
    exact, n, p.recommenders,
    seeds=p.seeds, fewer_seeds=fewer, m=p.m, law=p.law, metrics=p.metrics,
    methods=methods, confidence=p.confidence, base_seed=p.seed,
    draws=[read_draws(path) for path in snakemake.input.draws],
    mapper=lambda one, seeds: forked_map(
        lambda _, seed: one(seed), None, list(seeds), snakemake.threads, progress="seeds"
    ),
)  # fmt: skip
summary = summarize(rows)
measured = goals(summary, methods, Goals.from_config(p.goals))
setup = {
    "users": n.size, "models": p.recommenders, "m": p.m, "law": p.law, "seeds": p.seeds,
    "fewer_seeds": {kind: min(first, p.seeds) for kind, first in fewer.items()
                    if kind in p.run},
    "confidence": p.confidence,
    "steps": tuple(p.adaptive_steps), "left_out": left_out,
}  # fmt: skip
write_decisions(
    summary, measured, snakemake.output.csv, snakemake.output.md,
    dataset=snakemake.wildcards.dataset, setup=setup,
)  # fmt: skip
seconds = time.perf_counter() - started
log.info("%d seeds, %d methods in %.0f s\n%s", p.seeds, len(methods), seconds, measured)
