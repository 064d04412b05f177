"""Sampled metrics for item recommendation (Krichene & Rendle, KDD 2020).

A reference reproduction of "On Sampled Metrics for Item Recommendation": the
metrics, the law of the sampled rank, expected sampled metrics, the corrected
metrics, and exact and sampled ranks of real recommenders.

Modules, by concept (the functions a user calls are re-exported here):

- ``metrics``      the metrics of section 3 (eqs 2-13), one definition each
- ``laws``         the law of the sampled rank p(r~ | r) (section 4.3)
- ``expected``     expected sampled metrics (eqs 16, 18, 19)
- ``corrections``  corrected metrics (section 5, eqs 20-26)
- ``ties``         tie policies, shared by exact and sampled ranks
- ``ranking``      exact ranks of held-out items (section 6.1)
- ``sampling``     sampled ranks with real scores (sections 4 and 6.2)
- ``estimators``   every estimator from sampled ranks (the paper's corrections, EM,
                   maximum entropy, learned-prior BV, MN), intervals, paired comparisons
- ``popularity``   popularity-sampled negatives: their law, the popularity-weighted
                   rank, the Hansen-Hurwitz rank estimate
- ``protocols``    the sampling protocols of common frameworks (NCF, Elliot, RecBole,
                   BERT4Rec, DaisyRec) simulated on real scores, and the estimators on them
- ``block_pass``   exact and sampled ranks in one pass over blocks of users
- ``evaluation``   from ranks to Tables 3 and 4 and Figure 6 (section 6)

Sub-packages, imported as ``sampled_metrics.data`` and
``sampled_metrics.recommenders`` (not re-exported here):

- ``data``          loaders and the leave-last-out split
- ``recommenders``  iALS (X) and item-kNN (Y, Z) of section 9

The other modules serve the workflow (configuration, runs, figures, reports).

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
    "frameworks.simulate": ("beaten_items", "simulate", "simulate_protocols"),
    "frameworks.estimates": ("protocol_estimates",),
}
_HOME = {name: module for module, names in _API.items() for name in names}

__all__ = list(_HOME)


def __getattr__(name: str):
    """Import an exported name from its home module on first use."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
