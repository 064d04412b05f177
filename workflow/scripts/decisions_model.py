"""Rule decisions_model: one recommender's share of the design study
(docs/decisions_study.md) on its exact ranks alone, every seed: the simulated phase 1,
the posterior moments, the identification intervals, adaptive sampling with EM
(studies/decisions/per_model.py), for rule decisions to join."""

import numpy as np

from sampled_metrics.data import split_users
from sampled_metrics.pipeline.intermediates import read_ranks
from sampled_metrics.pipeline.runs import pin_threads, start_job
from sampled_metrics.studies.decisions.per_model import model_draws, model_work, write_draws
from sampled_metrics.studies.decisions.registry import (
    FEWER_SEEDS,
    left_out_methods,
    study_methods,
)

log = start_job(snakemake)
pin_threads(snakemake.threads)  # one BLAS thread: EM's products are small
p = snakemake.params
users = split_users(snakemake.input.split)
exact = read_ranks(snakemake.input.ranks, users)["rank"].to_numpy()
methods = study_methods(p.run, p.budgets, p.uniform_budgets, p.adaptive_steps)
left_out = left_out_methods(methods, users.n_candidates.size)
methods = [method for method in methods if method.name not in left_out]
fewer = {kind: getattr(p, key) for kind, key in FEWER_SEEDS.items()}
draws = model_draws(
    exact, users.n_candidates, snakemake.wildcards.recommender, seeds=p.seeds, m=p.m,
    law=p.law, metrics=p.metrics, confidence=p.confidence, base_seed=p.seed,
    **model_work(methods, p.seeds, fewer),
)  # fmt: skip
write_draws(snakemake.output.draws, draws)
log.info("%s: %d seeds, %s", snakemake.wildcards.recommender, p.seeds,
         {key: np.shape(value) for key, value in draws.items()})  # fmt: skip
