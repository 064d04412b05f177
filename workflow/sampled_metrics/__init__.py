"""Sampled metrics for item recommendation (Krichene & Rendle, KDD 2020).

A reference reproduction of "On Sampled Metrics for Item Recommendation": the
metrics, the law of the sampled rank, expected sampled metrics, the corrected
metrics, and exact and sampled ranks of real recommenders.

Sub-packages, bottom layer first (each imports only its own layer and those listed
before it; ``tests/test_architecture.py`` checks it). The functions a user calls are
re-exported here:

- ``io``            atomic writes, each file's SHA-256 recorded beside it
- ``estimation``    the mathematics: metrics (eqs 2-13), the laws of the sampled rank
                    (section 4.3), expected sampled metrics (eqs 16-19), the paper's
                    corrections (eqs 20-26), every later estimator, the registries of
                    laws and estimators, popularity-sampling laws, and deciding
                    between two models from a few users ranked exactly (a design,
                    intervals, the verdict)
- ``passes``        passes over a model's scores: ties, exact ranks, sampled ranks, the
                    draw plan, the block pass (sections 6.1-6.2)
- ``data``          loaders, synthetic data and the leave-last-out split (section 9)
- ``recommenders``  iALS (X), item-kNN (Y, Z) and the baselines (section 9, eqs 27-30)
- ``outputs``       labels, tables and figures as files: renders results, computes none
- ``frameworks``    the frameworks' sampling protocols: their registry, the one place
                    that draws by popularity, the simulation on real scores; adapters
- ``reproduction``  the paper's numbers, the toy example, Tables 3-4, Figure 6, claims
- ``studies``       beside it: the design study (deciding between models) and the
                    protocol study (the frameworks' protocols, every estimator on them)
- ``pipeline``      the workflow's support: configuration, intermediate files, job runs
- ``cli``           the ``sampled-metrics`` command

The names are loaded on first use (PEP 562), so that importing one module of
the package, e.g. ``sampled_metrics.pipeline.config`` in the Snakefile or
``sampled_metrics.io.atomic`` in a rule's script, does not import scipy's
optimizers and statistics.

Examples
--------
>>> import sampled_metrics as sm
>>> sm.recall_at_k([1, 5, 20], k=10).tolist()
[1.0, 1.0, 0.0]
"""

import importlib

# The public API: home module -> the names it exports here.
_API = {
    "estimation.metrics": (
        "auc",
        "precision_at_k",
        "recall_at_k",
        "hit_ratio_at_k",
        "average_precision_at_k",
        "ndcg_at_k",
        "reciprocal_rank",
        "accuracy",
        "metric_by_name",
        "metric_vector",
    ),
    "estimation.set_metrics": (
        "set_auc",
        "set_precision_at_k",
        "set_recall_at_k",
        "set_average_precision_at_k",
        "set_ndcg_at_k",
        "graded_ndcg_at_k",
    ),
    "estimation.laws": (
        "sampled_rank_pmf",
        "sampled_rank_law",
        "LAWS",
        "WITH_REPLACEMENT",
        "WITHOUT_REPLACEMENT",
    ),
    "estimation.expected": (
        "metric_on_sample",
        "expected_sampled_metric",
        "expected_recall_closed_form",
        "expected_ap_closed_form",
    ),
    "estimation.corrections.vectors": ("corrected_metric", "apply_correction"),
    "estimation.registry": ("parse_method", "parse_estimator"),
    "estimation.corrections.methods": (
        "rank_estimate_correction",
        "least_squares_correction",
        "constrained_least_squares_correction",
        "bias_variance_correction",
        "posterior_mean_correction",
    ),
    "estimation.corrections.systems": (
        "uniform_prior",
        "average_squared_bias",
        "least_squares_design",
    ),
    "passes.ties": ("TIE_POLICIES", "tie_order_keys"),
    "passes.ranking": ("rank_from_scores", "exact_ranks"),
    "passes.sampling": (
        "sampled_ranks",
        "draw_positions",
        "excluded_items",
        "pool_sizes",
        "positions_to_items",
    ),
    "passes.draw_plan": ("draw_plan", "block_positions"),
    "passes.block_pass": ("rank_users", "shard_bounds"),
    "estimation.population": ("exact_metric", "expected_sampled_value"),
    "estimation.estimators.data": ("sampled_evaluation", "SampledEvaluation"),
    "estimation.estimators.estimate": ("estimate", "estimate_table", "compare"),
    "estimation.estimators.learned": ("learned_rank_distribution",),
    "estimation.estimators.learned_prior": ("mn_correction",),
    "estimation.decisions.design": ("Design", "draw_design", "design_table", "design_from_table"),
    "estimation.decisions.proxy": ("Proxy", "metric_proxy"),
    "estimation.decisions.estimate": ("Estimate", "estimate_metric", "estimate_difference"),
    "estimation.decisions.full_ranking": ("PairedTest", "paired_test"),
    "estimation.decisions.verdict": ("Verdict", "interval_verdict", "exact_verdict"),
    "estimation.popularity": (
        "popularity_probabilities",
        "weighted_rank",
        "sampled_rank_from_draws",
        "hansen_hurwitz_rank",
        "binomial_law_of_weighted_rank",
        "successive_beaten_law",
    ),
    "frameworks.registry": ("Protocol",),
    "frameworks.draws": ("draw_items", "draw_negatives"),
    "frameworks.beaten": ("beaten_items",),
    "frameworks.simulate": ("simulate",),
    "frameworks.protocol_pass": ("simulate_protocols",),
    "studies.protocols.estimates": ("protocol_estimates",),
    "frameworks.rank_files": ("rank_files",),
    "frameworks.decide": ("decide",),
}
_HOME = {name: module for module, names in _API.items() for name in names}

__all__ = list(_HOME)


def __getattr__(name: str) -> object:
    """Import an exported name from its home module on first use."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
