"""The public API of ``sampled_metrics``: the names re-exported by the package,
their home modules, and their numpydoc docstrings with runnable examples."""

from __future__ import annotations

import importlib
import inspect
import re
import types

import pytest

import sampled_metrics

# The functions and constants a user calls: the contract that every release keeps.
# Where each one lives is the package's own business (``sampled_metrics._HOME``).
API = (
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
    "set_auc",
    "set_precision_at_k",
    "set_recall_at_k",
    "set_average_precision_at_k",
    "set_ndcg_at_k",
    "graded_ndcg_at_k",
    "sampled_rank_pmf",
    "sampled_rank_law",
    "LAWS",
    "WITH_REPLACEMENT",
    "WITHOUT_REPLACEMENT",
    "metric_on_sample",
    "expected_sampled_metric",
    "expected_recall_closed_form",
    "expected_ap_closed_form",
    "corrected_metric",
    "apply_correction",
    "parse_method",
    "rank_estimate_correction",
    "least_squares_correction",
    "constrained_least_squares_correction",
    "bias_variance_correction",
    "posterior_mean_correction",
    "uniform_prior",
    "average_squared_bias",
    "least_squares_design",
    "sampled_ranks",
    "draw_positions",
    "excluded_items",
    "pool_sizes",
    "positions_to_items",
    "draw_plan",
    "block_positions",
    "sampled_evaluation",
    "SampledEvaluation",
    "estimate",
    "estimate_table",
    "compare",
    "learned_rank_distribution",
    "mn_correction",
    "parse_estimator",
    "popularity_probabilities",
    "weighted_rank",
    "draw_negatives",
    "sampled_rank_from_draws",
    "hansen_hurwitz_rank",
    "binomial_law_of_weighted_rank",
    "successive_beaten_law",
    "Protocol",
    "beaten_items",
    "draw_items",
    "simulate",
    "simulate_protocols",
    "protocol_estimates",
    "rank_files",
    "decide",
    "TIE_POLICIES",
    "tie_order_keys",
    "rank_from_scores",
    "exact_ranks",
    "rank_users",
    "shard_bounds",
    "exact_metric",
    "expected_sampled_value",
    "Design",
    "draw_design",
    "design_table",
    "design_from_table",
    "Proxy",
    "metric_proxy",
    "Estimate",
    "estimate_metric",
    "estimate_difference",
    "PairedTest",
    "paired_test",
    "Verdict",
    "interval_verdict",
    "exact_verdict",
)
HOME = {name: sampled_metrics._HOME[name] for name in API}
MODULES = {
    module: importlib.import_module(f"sampled_metrics.{module}") for module in set(HOME.values())
}
SUB_PACKAGES = ("data", "recommenders")


def _section(doc: str, title: str) -> bool:
    """True if the numpydoc docstring has a section ``title`` (underlined with dashes)."""
    return re.search(rf"^[ \t]*{title}[ \t]*\n[ \t]*-{{3,}}[ \t]*$", doc, re.MULTILINE) is not None


def missing_sections(obj) -> list[str]:
    """The numpydoc sections that ``obj``'s docstring lacks: "Examples" with at
    least one doctest, and "Parameters" ("Returns" for a callable without
    parameters)."""
    doc = inspect.getdoc(obj) or ""
    missing = []
    if not (_section(doc, "Examples") and ">>> " in doc.split("Examples", 1)[-1]):
        missing.append("Examples")
    try:
        has_parameters = bool(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        has_parameters = True
    needed = "Parameters" if has_parameters else "Returns"
    if not _section(doc, needed):
        missing.append(needed)
    return missing


def _public_callables(module) -> list[str]:
    """Functions and classes of ``module.__all__`` (not constants or type aliases)."""
    return [
        name
        for name in module.__all__
        if inspect.isroutine(getattr(module, name)) or inspect.isclass(getattr(module, name))
    ]


# --------------------------------------------------------------------------
# (a) every name exists and is its home module's object
# --------------------------------------------------------------------------


def test_all_is_the_documented_api_without_duplicates():
    assert len(sampled_metrics.__all__) == len(set(sampled_metrics.__all__))
    assert set(sampled_metrics.__all__) == set(HOME)


@pytest.mark.parametrize("name", sorted(HOME))
def test_every_exported_name_is_its_home_modules_object(name):
    home = MODULES[HOME[name]]
    assert name in sampled_metrics.__all__
    assert name in home.__all__, f"{name} missing from {home.__name__}.__all__"
    assert hasattr(sampled_metrics, name), f"sampled_metrics.{name} does not exist"
    assert getattr(sampled_metrics, name) is getattr(home, name)
    obj = getattr(home, name)
    if isinstance(obj, types.FunctionType):
        assert obj.__module__ == home.__name__, f"{name} is defined in {obj.__module__}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_all_lists_existing_public_names(module):
    mod = MODULES[module]
    assert len(mod.__all__) == len(set(mod.__all__))
    for name in mod.__all__:
        assert not name.startswith("_"), f"{module}.__all__ lists the private {name}"
        assert hasattr(mod, name), f"{module}.__all__ lists {name}, which does not exist"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_all_holds_every_public_function_defined_there(module):
    mod = MODULES[module]
    defined = {
        name
        for name, obj in vars(mod).items()
        if not name.startswith("_")
        and (inspect.isroutine(obj) or inspect.isclass(obj))
        and getattr(obj, "__module__", None) == mod.__name__
    }
    assert defined <= set(mod.__all__), (
        f"missing from {module}.__all__: {defined - set(mod.__all__)}"
    )


def test_sub_packages_are_imported_by_name_not_re_exported():
    for name in SUB_PACKAGES:
        assert name not in sampled_metrics.__all__
        assert importlib.import_module(f"sampled_metrics.{name}").__all__


# --------------------------------------------------------------------------
# (b) numpydoc docstrings with examples
# --------------------------------------------------------------------------


def _assert_documented(obj, name: str) -> None:
    """``obj``'s docstring has its sections."""
    assert (missing := missing_sections(obj)) == [], f"{name}: no {missing}"


@pytest.mark.parametrize("name", sorted(_public_callables(sampled_metrics)))
def test_every_exported_callable_has_examples_and_parameters(name):
    _assert_documented(getattr(sampled_metrics, name), f"sampled_metrics.{name}")


@pytest.mark.parametrize(
    "qualified",
    sorted(f"{module}.{name}" for module in MODULES for name in _public_callables(MODULES[module])),
)
def test_every_public_callable_of_the_modules_has_examples_and_parameters(qualified):
    module, name = qualified.rsplit(".", 1)
    _assert_documented(getattr(MODULES[module], name), qualified)


def test_the_docstring_check_can_fail():
    def no_examples(x):
        """Double x.

        Parameters
        ----------
        x : float
        """

    def no_parameters(x):
        """Double x.

        Examples
        --------
        >>> no_parameters(1)
        2
        """

    def examples_without_doctest(x):
        """Double x.

        Parameters
        ----------
        x : float

        Examples
        --------
        Double one.
        """

    def constant():
        """One.

        Returns
        -------
        int

        Examples
        --------
        >>> constant()
        1
        """

    assert missing_sections(no_examples) == ["Examples"]
    assert missing_sections(no_parameters) == ["Parameters"]
    assert missing_sections(examples_without_doctest) == ["Examples"]
    assert missing_sections(lambda x: x) == ["Examples", "Parameters"]
    assert missing_sections(constant) == []


# --------------------------------------------------------------------------
# (c) star import
# --------------------------------------------------------------------------


def test_star_import_gives_exactly_all():
    namespace: dict = {}
    exec("from sampled_metrics import *", namespace)
    namespace.pop("__builtins__")
    assert set(namespace) == set(sampled_metrics.__all__)
    assert all(namespace[name] is getattr(sampled_metrics, name) for name in namespace)


def test_every_public_name_of_the_package_is_in_all():
    public = {
        name
        for name, obj in vars(sampled_metrics).items()
        if not name.startswith("_") and not isinstance(obj, types.ModuleType)
    }
    assert public == set(sampled_metrics.__all__)
