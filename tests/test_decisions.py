"""Two-phase sampling (estimation/decisions): designs and estimators against known truth.

A synthetic population of users with heavy-tailed exact ranks under three models (A and
B correlated; C holds A's rank values given to the users in another correlated order, so
that its exact Recall@10 and NDCG@10 equal A's), and sampled ranks drawn here with
numpy's binomial and hypergeometric generators (never the package's laws). Phase 1 is
held fixed and the design redrawn: the claims are about the design's randomness.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtr

from sampled_metrics.estimation.decisions import (
    Design,
    design_from_table,
    design_table,
    draw_design,
    estimate_difference,
    estimate_mean,
    estimate_metric,
    metric_proxy,
    paired_test,
    predicted_degrees,
    predicted_spread,
)
from sampled_metrics.estimation.metrics import metric_by_name

USERS, M = 3000, 100


@lru_cache(maxsize=2)
def population(law: str = "hypergeometric") -> dict:
    """Exact ranks (3, U) of models A, B, C, per-user n in 1000..4000, sampled ranks."""
    rng = np.random.default_rng(20231)
    n = rng.integers(1000, 4001, USERS)
    shared = rng.standard_normal(USERS)

    def latent(shift=0.0):
        return 0.8 * shared + 0.6 * rng.standard_normal(USERS) + shift

    def ranks(x):  # log n times a heavy-tailed share: P(r <= 10) about 0.08
        return np.clip(np.ceil(np.exp(ndtr(x) ** 0.5 * np.log(n))), 1, n).astype(np.int64)

    a, b = ranks(latent()), ranks(latent(0.05))
    c = np.empty(USERS, dtype=np.int64)
    c[np.argsort(latent())] = np.sort(a)
    c = np.minimum(c, n)  # only ranks far beyond 10 move: top-10 metrics stay A's
    exact = np.stack([a, b, c])
    if law == "binomial":
        sampled = 1 + rng.binomial(M, (exact - 1) / (n - 1))
    else:
        sampled = 1 + rng.hypergeometric(exact - 1, n - exact, M)
    return {"n": n, "exact": exact, "sampled": sampled, "law": law}


def truth(metric: str, model: int, pop: dict) -> np.ndarray:
    return metric_by_name(metric)(pop["exact"][model], pop["n"])


@lru_cache(maxsize=16)
def proxies(metric: str, law: str = "hypergeometric") -> np.ndarray:
    pop = population(law)
    return np.stack([metric_proxy(s, M, pop["n"], metric, law=law).mean for s in pop["sampled"]])


@lru_cache(maxsize=16)
def spread(metric: str, models: tuple, law: str = "hypergeometric") -> np.ndarray:
    pop = population(law)
    return predicted_spread(pop["sampled"][list(models)], M, pop["n"], metric, law=law)


def designs(metric: str, models: tuple, draws: int, law="hypergeometric", **options):
    pop = population(law)
    for seed in range(draws):
        yield draw_design(
            pop["sampled"][list(models)],
            M,
            pop["n"],
            metric=metric,
            law=law,
            spread=spread(metric, models, law),
            seed=seed,
            **options,
        )


def within(draws: int, rate: float) -> float:
    """The lowest share of ``draws`` consistent with ``rate`` (three binomial errors)."""
    return rate - 3 * np.sqrt(rate * (1 - rate) / draws)


@pytest.mark.parametrize("law", ["binomial", "hypergeometric"])
def test_the_estimate_is_unbiased_over_designs(law):
    pop, draws = population(law), 800
    y = truth("recall@10", 0, pop)
    g = proxies("recall@10", law)[0]
    values = [estimate_mean(d, y, g).value for d in designs("recall@10", (0,), draws, law)]
    error = np.std(values, ddof=1) / np.sqrt(draws)
    assert abs(np.mean(values) - y.mean()) < 4 * error


def test_a_budget_in_scored_items_is_unbiased_too():
    pop, draws = population(), 400
    y = truth("ndcg@10", 0, pop) - truth("ndcg@10", 1, pop)
    g = proxies("ndcg@10")[0] - proxies("ndcg@10")[1]
    values = [estimate_mean(d, y, g).value for d in designs("ndcg@10", (0, 1), draws, unit="items")]
    error = np.std(values, ddof=1) / np.sqrt(draws)
    assert abs(np.mean(values) - y.mean()) < 4 * error


@pytest.mark.parametrize(
    ("metric", "models"),
    [("recall@10", (0,)), ("ndcg@10", (0,)), ("auc", (0,)), ("recall@10", (0, 1))],
)
def test_the_interval_covers_at_its_confidence(metric, models):
    pop, draws = population(), 400
    y = truth(metric, models[0], pop)
    g = proxies(metric)[models[0]]
    if len(models) == 2:
        y, g = y - truth(metric, models[1], pop), g - proxies(metric)[models[1]]
    covered = [
        (e.low <= y.mean() <= e.high)
        for d in designs(metric, models, draws)
        for e in [estimate_mean(d, y, g)]
    ]
    assert np.mean(covered) >= within(draws, 0.95)


@pytest.mark.parametrize(("users", "budget"), [(100, 0.5), (200, 0.5), (300, 0.25)])
def test_the_interval_covers_in_a_small_population(users, budget):
    """A hundred users: a stratum holds a hit or two the sample can miss (its variance
    estimated as 0) and a few chosen users carry the variance; the floor and the t
    quantile must keep the interval's coverage."""
    pop, draws, kept = population(), 1000, slice(0, users)
    n, sampled, exact = pop["n"][kept], pop["sampled"][:2, kept], pop["exact"][:2, kept]
    y = truth("recall@10", 0, pop)[kept] - truth("recall@10", 1, pop)[kept]
    pair = [metric_proxy(row, M, n, "recall@10") for row in sampled]
    spread = pair[0].variance + pair[1].variance
    covered = []
    for seed in range(draws):
        # the design as asked (degrees=0): at these sizes the rule would rank every user
        d = draw_design(sampled, M, n, budget=budget, spread=spread, degrees=0, seed=seed)
        e = estimate_difference(d, exact, sampled, M, n, "recall@10", proxy=pair)
        covered.append(e.low <= y.mean() <= e.high)
    assert np.mean(covered) >= within(draws, 0.95)


def test_the_predicted_degrees_are_satterthwaites_of_the_strata_sampled_in_part():
    # one stratum sampled in part carries all the variance: n - 1 degrees of freedom
    assert predicted_degrees([100, 40, 60], [20, 40, 5], [0.4, 0.4, 0.0]) == pytest.approx(19)
    # two equal parts add up (Satterthwaite); nothing sampled in part: nothing to fear
    assert predicted_degrees([50, 50], [10, 10], [0.3, 0.3]) == pytest.approx(18)
    assert predicted_degrees([50, 50], [50, 50], [0.3, 0.3]) == np.inf


def test_a_small_population_is_ranked_whole_and_says_why():
    pop = population()
    n, sampled = pop["n"][:100], pop["sampled"][:2, :100]
    d = draw_design(sampled, M, n, budget=0.5, seed=0)
    assert d.chosen.all() and np.all(d.probability == 1) and d.n_chosen == 100
    assert d.note.startswith("100 users are too few to promise the intervals' coverage")
    # 50 chosen users carry at most 50 - 1 degrees of freedom, fewer than 56: asked for
    # anyway, the design is the one asked for
    asked = draw_design(sampled, M, n, budget=0.5, degrees=0, seed=0)
    assert asked.n_chosen == 50 and asked.note is None


def test_a_large_population_keeps_the_design_asked_for():
    pop = population()
    for budget in (0.1, 0.25):
        d = draw_design(pop["sampled"][:2], M, pop["n"], budget=budget, seed=0)
        assert d.note is None and d.n_chosen == round(budget * USERS)


def test_a_population_ranked_whole_gives_the_exact_mean_and_the_paired_t_test():
    pop = population()
    kept = slice(0, 150)
    n, sampled, exact = pop["n"][kept], pop["sampled"][:2, kept], pop["exact"][:2, kept]
    design = draw_design(sampled, M, n, budget=0.25, seed=0)
    assert design.note is not None and design.chosen.all()
    ya, yb = (metric_by_name("ndcg@10")(ranks, n) for ranks in exact)
    e = estimate_metric(design, exact[0], sampled[0], M, n, "ndcg@10")
    assert e.value == pytest.approx(np.mean(ya), abs=1e-12) and e.low == e.high == e.value
    d = estimate_difference(design, exact, sampled, M, n, "ndcg@10")
    assert d.value == pytest.approx(np.mean(ya) - np.mean(yb), abs=1e-12) and d.low == d.high
    # about users like these: the paired t interval of scipy
    d = estimate_difference(design, exact, sampled, M, n, "ndcg@10", population="superpopulation")
    low, high = stats.ttest_rel(ya, yb).confidence_interval(0.95)
    assert (d.low, d.high) == pytest.approx((low, high), rel=1e-9)


def test_one_stratum_gives_the_t_interval_with_the_finite_population_correction():
    rng = np.random.default_rng(3)
    y, chosen = rng.exponential(size=400), np.zeros(400, bool)
    chosen[rng.choice(400, 25, replace=False)] = True
    d = Design(np.zeros(400, int), np.full(400, 25 / 400), chosen, np.array([400]))
    e = estimate_mean(d, y, np.zeros(400))
    sample = y[chosen]
    half = stats.t.ppf(0.975, 24) * np.sqrt((1 - 25 / 400) * sample.var(ddof=1) / 25)
    assert e.degrees_of_freedom == pytest.approx(24)
    assert (e.value, e.low, e.high) == pytest.approx(
        (sample.mean(), sample.mean() - half, sample.mean() + half), rel=1e-12
    )


def test_a_stratum_that_saw_one_value_keeps_the_predicted_variance():
    # stratum 0: 4 of 8 chosen, all with y = 0; the model predicts a variance of 0.1
    d = Design(np.zeros(8, int), np.full(8, 0.5), np.arange(8) < 4, np.array([8]))
    e = estimate_mean(d, np.zeros(8), np.zeros(8), predicted_variance=np.full(8, 0.1))
    assert e.value == 0.0
    assert e.standard_error == pytest.approx(np.sqrt((1 - 4 / 8) * 0.1 / 4))
    # where the sample saw more than predicted, the sample's variance stands
    y = np.array([0.0, 1, 0, 1, 0, 0, 0, 0])
    seen = estimate_mean(d, y, np.zeros(8), predicted_variance=np.full(8, 0.1))
    assert seen.standard_error == pytest.approx(np.sqrt((1 - 4 / 8) * np.var(y[:4], ddof=1) / 4))


def test_an_interval_stops_at_the_values_a_metric_can_take():
    # 6 of 60 users chosen, one hit: the t interval about 0.1 reaches below 0
    chosen = np.zeros(60, bool)
    chosen[:6] = True
    d = Design(np.zeros(60, int), np.full(60, 0.1), chosen, np.array([60]))
    exact = np.where(np.arange(60) == 0, 1, 50)
    e = estimate_metric(d, exact, np.ones(60, int), M, 1000, proxy=np.zeros(60))
    unbounded = estimate_mean(d, (exact <= 10).astype(float), np.zeros(60))
    assert unbounded.low < 0 and e.low == 0.0 and e.high == unbounded.high
    assert e.value == unbounded.value


def test_every_user_ranked_gives_the_exact_metric_and_zero_width():
    pop = population()
    design = draw_design(pop["sampled"][:2], M, pop["n"], budget=1.0, seed=0)
    assert design.chosen.all() and np.all(design.probability == 1)
    for metric in ("recall@10", "auc"):
        e = estimate_metric(design, pop["exact"][0], pop["sampled"][0], M, pop["n"], metric)
        assert e.value == pytest.approx(truth(metric, 0, pop).mean(), abs=1e-12)
        assert e.standard_error == 0 and e.low == e.high == e.value
        d = estimate_difference(design, pop["exact"][:2], pop["sampled"][:2], M, pop["n"], metric)
        exact = truth(metric, 0, pop).mean() - truth(metric, 1, pop).mean()
        assert d.value == pytest.approx(exact, abs=1e-12) and d.low == d.high


def test_identical_models_are_never_declared_different():
    pop = population()
    twice = np.stack([pop["sampled"][1], pop["sampled"][1]])
    exact = np.stack([pop["exact"][1], pop["exact"][1]])
    for design in designs("recall@10", (1, 1), 20):
        e = estimate_difference(design, exact, twice, M, pop["n"], "recall@10")
        assert (e.value, e.low, e.high, e.verdict) == (0.0, 0.0, 0.0, "undecided")


def test_equal_exact_metrics_get_a_verdict_at_most_at_the_error_rate():
    pop, draws = population(), 400
    y = truth("recall@10", 0, pop) - truth("recall@10", 2, pop)
    assert y.mean() == 0 and np.any(y != 0)
    g = proxies("recall@10")[0] - proxies("recall@10")[2]
    verdicts = [estimate_mean(d, y, g).verdict for d in designs("recall@10", (0, 2), draws)]
    wrong = np.mean([v.decided for v in verdicts])
    assert wrong <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / draws)


def test_the_budget_is_spent_and_every_probability_is_a_probability():
    pop = population()
    for budget in (0.03, 0.1, 0.5):
        d = next(designs("recall@10", (0, 1), 1, budget=budget))
        assert d.probability.sum() == pytest.approx(round(budget * USERS), abs=1e-9)
        assert d.n_chosen == round(budget * USERS)
        assert np.all((d.probability > 0) & (d.probability <= 1))
        items = next(designs("recall@10", (0, 1), 1, budget=budget, unit="items"))
        spent = np.sum(items.probability * pop["n"])
        assert spent == pytest.approx(budget * pop["n"].sum(), abs=6 * int(pop["n"].max()))
    # edges no user reaches: empty strata, the design and the estimate all the same
    for unit in ("users", "items"):
        d = next(designs("recall@10", (0,), 1, edges=(1, 2, 500, 600), unit=unit))
        assert np.any(d.stratum_sizes == 0) and np.all(d.probability > 0)
        e = estimate_mean(d, truth("recall@10", 0, pop), proxies("recall@10")[0])
        assert np.isfinite(e.value) and np.isfinite(e.standard_error)


def test_a_design_comes_back_from_its_table():
    pop = population()
    d = next(designs("recall@10", (0, 1), 1))
    back = design_from_table(*design_table(d), n_users=USERS)
    y = truth("recall@10", 0, pop) - truth("recall@10", 1, pop)
    g = proxies("recall@10")[0] - proxies("recall@10")[1]
    assert estimate_mean(back, y, g) == estimate_mean(d, y, g)
    users, probability, stratum = design_table(d)
    with pytest.raises(ValueError, match="probability"):
        design_from_table(users, probability * 0.999, stratum, n_users=USERS)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"budget": 0.0}, "budget"),
        ({"budget": 1.5}, "budget"),
        ({"budget": 0.001}, "budget"),  # too small for five users in every stratum
        ({"m": [M] * 7}, "m must"),
        ({"n": np.ones((2, 2))}, "n must"),
        ({"sampled_ranks": [[M + 2] * USERS]}, "sampled rank"),
        ({"sampled_ranks": [[0] * USERS]}, "sampled rank"),
        ({"unit": "seconds"}, "unit"),
        ({"cells": "max"}, "cells"),
        ({"edges": (3, 1)}, "edges"),
    ],
)
def test_bad_design_input_names_the_argument(change, named):
    pop = population()
    arguments = {"sampled_ranks": pop["sampled"][:2], "m": M, "n": pop["n"]} | change
    with pytest.raises(ValueError, match=named):
        draw_design(**arguments, spread=np.ones(USERS))


def test_bad_estimate_input_names_the_argument():
    pop = population()
    d = next(designs("recall@10", (0,), 1))
    with pytest.raises(ValueError, match="exact_ranks"):
        estimate_metric(
            d, pop["exact"][0][:10], pop["sampled"][0], M, pop["n"], proxy=np.zeros(USERS)
        )
    with pytest.raises(ValueError, match="exact_ranks"):
        estimate_metric(
            d, pop["exact"][0] + 5000, pop["sampled"][0], M, pop["n"], proxy=np.zeros(USERS)
        )
    with pytest.raises(ValueError, match="proxy"):
        estimate_mean(d, np.zeros(USERS), np.zeros(5))
    with pytest.raises(ValueError, match="confidence"):
        estimate_mean(d, np.zeros(USERS), np.zeros(USERS), confidence=1.0)


def test_ten_percent_stratified_is_narrower_than_a_quarter_drawn_uniformly():
    pop, draws = population(), 40
    y = truth("recall@10", 0, pop) - truth("recall@10", 1, pop)
    g = proxies("recall@10")[0] - proxies("recall@10")[1]
    stratified = [estimate_mean(d, y, g) for d in designs("recall@10", (0, 1), draws)]
    # one stratum, the same spread everywhere: simple random sampling of a quarter, no proxy
    uniform = [
        estimate_mean(d, y, np.zeros(USERS))
        for d in designs("recall@10", (0, 1), draws, budget=0.25, edges=(M + 1,))
    ]
    width = [np.mean([e.high - e.low for e in es]) for es in (stratified, uniform)]
    assert width[0] < width[1]


def test_the_proxy_is_the_posterior_mean_by_bayes_rule():
    n, m = 200, 20
    ranks = np.arange(1, n + 1)
    likelihood = stats.binom.pmf(np.arange(m + 1)[:, None], m, (ranks - 1) / (n - 1))
    prior = np.exp(-ranks / 30.0)
    posterior = likelihood * prior / (likelihood * prior).sum(axis=1, keepdims=True)
    expected = posterior @ (ranks <= 10)
    p = metric_proxy(np.arange(1, m + 2), m, n, "recall@10", prior=prior)
    assert p.mean == pytest.approx(expected, abs=1e-10)
    assert p.variance == pytest.approx(expected * (1 - expected), abs=1e-10)


def test_full_ranking_paired_test_is_the_paired_t_test():
    pop = population()
    exact = pop["exact"][:2]
    t = paired_test(exact, pop["n"], "ndcg@10")
    d = truth("ndcg@10", 0, pop) - truth("ndcg@10", 1, pop)
    reference = stats.ttest_rel(truth("ndcg@10", 0, pop), truth("ndcg@10", 1, pop))
    assert t.difference == pytest.approx(d.mean())
    assert t.p_value == pytest.approx(reference.pvalue, rel=1e-9)
    low, high = reference.confidence_interval(0.95)
    assert (t.low, t.high) == pytest.approx((low, high), rel=1e-9)
    # the design's interval about users like them, every user ranked: the same t interval
    # (one variance part, the users' own, with U - 1 degrees of freedom)
    design = draw_design(pop["sampled"][:2], M, pop["n"], budget=1.0, seed=0)
    e = estimate_difference(
        design, exact, pop["sampled"][:2], M, pop["n"], "ndcg@10", population="superpopulation"
    )
    assert e.degrees_of_freedom == pytest.approx(exact.shape[1] - 1)
    assert (e.low, e.high) == pytest.approx((low, high), rel=1e-9)
