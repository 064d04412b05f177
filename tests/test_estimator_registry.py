"""Every registered estimator (sampled_metrics.estimation.registry), checked alike
(scikit-learn's test_common): properties that follow from the estimators' definitions,
not from their earlier output. Each family is run with a typical parameter value."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.colors import is_color_like

from sampled_metrics.estimation.corrections import corrected_metric
from sampled_metrics.estimation.estimators import estimate, sampled_evaluation
from sampled_metrics.estimation.metrics import metric_by_name
from sampled_metrics.estimation.registry import (
    ESTIMATORS,
    LEARNED,
    LEARNED_DISTRIBUTIONS,
    NEEDS,
    PAPER,
    estimator_label,
    find_estimator,
    method_color,
    parse_estimator,
    parse_method,
)
from sampled_metrics.outputs.labels import method_label

TYPICAL = {"gamma": "0.1"}  # a typical value of each parameter, as written
METRICS = ("recall@2", "ndcg@5", "ap", "auc")


def written(record) -> str:
    """A method of the family, with the typical value of its parameter."""
    if record.parameter is None:
        return record.name
    return f"{record.name}_{TYPICAL[record.parameter.name]}"


METHODS = {written(record): record for record in ESTIMATORS.values()}
PAPER_METHODS = [method for method, record in METHODS.items() if record.kind == PAPER]
# maxent_gamma = 0: no entropy term, so that the maximum-entropy fit is the data's own
OPTIONS = {"maxent_gamma": 0.0, "nodes": 3}


def users(seed: int, count: int, m: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(1, m + 2, count)


# --------------------------------------------------------------------------
# The registry's records
# --------------------------------------------------------------------------


@pytest.mark.parametrize("key", sorted(ESTIMATORS))
def test_every_record_is_filed_under_its_name_and_consistent(key):
    record = ESTIMATORS[key]
    assert record.name == key
    assert record.kind in (PAPER, LEARNED)
    assert (record.kind == PAPER) == (record.family == "correction")
    assert (record.learns is None) == (record.kind == PAPER)
    assert record.learns is None or record.learns in LEARNED_DISTRIBUTIONS
    assert set(record.needs) <= set(NEEDS)
    assert ("sample" in record.needs) == (record.kind == LEARNED)
    assert record.parameter is None or record.parameter.name in TYPICAL


@pytest.mark.parametrize("method", METHODS)
def test_the_name_round_trips(method):
    record = METHODS[method]
    assert find_estimator(method) == (record, None if record.parameter is None else "0.1")
    family, learned, gamma = parse_estimator(method)
    assert (family, learned) == (record.family, record.learns)
    value = None if record.parameter is None else 0.1
    if record.kind == PAPER:
        assert parse_method(method) == (record.name, value)
        assert gamma is None
    else:
        assert gamma == value
        with pytest.raises(ValueError, match=f"'{method}'"):
            parse_method(method)


@pytest.mark.parametrize("method", METHODS)
def test_a_parameter_outside_its_range_is_refused_by_name(method):
    record = METHODS[method]
    if record.parameter is None:
        with pytest.raises(ValueError, match=f"unknown estimator '{method}_1'"):
            parse_estimator(f"{method}_1")
        return
    for bad in (f"{record.name}_2", f"{record.name}_x", f"{record.name}_"):
        with pytest.raises(ValueError, match=f"'{bad}': {record.parameter.name} must be"):
            parse_estimator(bad)


@pytest.mark.parametrize("name", ["nonsense", "exact", "hansen_hurwitz", "bv", "EM", ""])
def test_an_unknown_name_raises_a_value_error_naming_it(name):
    with pytest.raises(ValueError, match=f"unknown estimator '{name}'"):
        parse_estimator(name)
    with pytest.raises(ValueError, match=f"unknown correction method '{name}'"):
        parse_method(name)
    assert find_estimator(name) is None and estimator_label(name) is None


@pytest.mark.parametrize("method", METHODS)
def test_the_label_is_the_registrys_and_the_colour_a_matplotlib_colour(method):
    label = method_label(method)
    assert label and label == estimator_label(method)
    color = method_color(method)
    assert color is None or is_color_like(color)
    assert all(is_color_like(c) for _, c in METHODS[method].colors)


def test_the_labels_tell_the_families_apart():
    labels = [method_label(method) for method in METHODS]
    assert len(set(labels)) == len(labels), labels
    assert not {method_label("exact"), method_label("hansen_hurwitz")} & set(labels)


# --------------------------------------------------------------------------
# The estimators' values
# --------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_every_estimator_is_exact_when_every_item_is_sampled(method):
    """m = n - 1 without replacement: the sampled rank is the rank itself."""
    n = 12
    ranks = np.array([1, 1, 2, 3, 3, 5, 8, 12, 2, 1])
    data = sampled_evaluation(ranks, m=n - 1, n=n, law="hypergeometric")
    for metric in METRICS:
        exact = float(np.mean(metric_by_name(metric)(ranks, n)))
        assert estimate(metric, method, data, **OPTIONS) == pytest.approx(exact, abs=1e-6)


@pytest.mark.parametrize("law", ["binomial", "hypergeometric"])
def test_sampled_is_the_metric_on_the_sampled_ranks(law):
    m = 6
    ranks = users(0, 40, m)
    data = sampled_evaluation(ranks, m=m, n=50, law=law)
    for metric in METRICS:
        direct = float(np.mean(metric_by_name(metric)(ranks, m + 1)))
        assert estimate(metric, "sampled", data) == pytest.approx(direct, rel=1e-12)


@pytest.mark.parametrize("method", PAPER_METHODS)
def test_a_correction_is_one_finite_value_per_sampled_rank(method):
    for n, m, law in ((30, 4, "binomial"), (30, 29, "hypergeometric"), (200, 9, "hypergeometric")):
        vector = corrected_metric("ndcg@10", method, n=n, m=m, law=law)
        assert vector.shape == (m + 1,) and np.all(np.isfinite(vector))


def estimates(method, data) -> np.ndarray:
    return np.array([estimate(metric, method, data, **OPTIONS) for metric in METRICS])


@pytest.mark.parametrize("method", METHODS)
def test_an_estimator_reads_the_law_if_and_only_if_it_needs_it(method):
    ranks, m, n = users(1, 30, 8), 8, 20
    by_law = [
        estimates(method, sampled_evaluation(ranks, m, n, law))
        for law in ("binomial", "hypergeometric")
    ]
    same = np.allclose(*by_law, rtol=1e-12, atol=0)
    assert same == ("law" not in METHODS[method].needs)


@pytest.mark.parametrize("method", METHODS)
def test_an_estimator_reads_n_if_and_only_if_it_needs_it(method):
    ranks, m = users(2, 30, 8), 8
    by_n = [estimates(method, sampled_evaluation(ranks, m, n, "binomial")) for n in (20, 60)]
    same = np.allclose(*by_n, rtol=1e-12, atol=0)
    assert same == ("n" not in METHODS[method].needs)


# one user alone teaches a prior on a few ranks only: BV's system is nearly singular there
@pytest.mark.filterwarnings("ignore::scipy.linalg.LinAlgWarning")
@pytest.mark.parametrize("method", METHODS)
def test_an_estimator_reads_the_other_users_if_and_only_if_it_needs_them(method):
    """Without the sample, each user's value is their own: the estimate of all users is
    the mean of the estimates of each alone."""
    ranks, m, n = users(3, 12, 5), 5, 30
    data = sampled_evaluation(ranks, m, n, "binomial")
    alone = np.mean([estimates(method, data.take([u])) for u in range(data.n_users)], axis=0)
    same = np.allclose(estimates(method, data), alone, rtol=1e-9, atol=1e-12)
    assert same == ("sample" not in METHODS[method].needs)


@pytest.mark.parametrize("method", PAPER_METHODS)
def test_a_correction_reads_the_prior_if_and_only_if_it_needs_it(method):
    n, m = 40, 5
    prior = np.linspace(2.0, 1.0, n)
    uniform, weighted = (corrected_metric("ap", method, n, m, prior=p) for p in (None, prior))
    same = np.allclose(uniform, weighted, rtol=1e-12, atol=0)
    assert same == ("prior" not in METHODS[method].needs)
