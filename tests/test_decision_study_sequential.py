"""The design study's sequential design and family-wise rows, on small synthetic
populations with a known truth: the study's method against the library's loop driven by
hand as the command line drives it (every look recomputed from the waves so far), equal
models rarely decided, the cost within the budget."""

from __future__ import annotations

import numpy as np
import pytest

from sampled_metrics.estimation.decisions import (
    DECISION_DEFAULTS,
    Proxy,
    family_looks,
    first_wave,
    next_wave,
    wave_totals,
)
from sampled_metrics.studies.decisions.per_model import model_draws
from sampled_metrics.studies.decisions.registry import KINDS, Method, study_methods
from sampled_metrics.studies.decisions.study import run_study, seed_phase1

M, N, LAW, METRIC = 20, 200, "hypergeometric", "recall@10"


def _population(users: int, tops: list[float], rng: np.random.Generator) -> np.ndarray:
    """(k, U) exact ranks: model i ranks the held-out item in its top 10 with probability
    tops[i], uniformly above 10 otherwise."""
    top = rng.random((len(tops), users)) < np.array(tops)[:, None]
    return np.where(top, rng.integers(1, 11, (len(tops), users)),
                    rng.integers(11, N + 1, (len(tops), users)))  # fmt: skip


def _phase1(exact: np.ndarray, seed: int):
    n = np.full(exact.shape[1], N)
    names = [f"M{i}" for i in range(len(exact))]
    draws = [model_draws(row, n, name, seeds=seed + 1, m=M, law=LAW, metrics=[METRIC])
             for row, name in zip(exact, names)]  # fmt: skip
    return seed_phase1(draws, exact, n, seed=seed, m=M, metrics=[METRIC], law=LAW)


def _by_hand(phase1) -> tuple[list[str], list[float]]:
    """Each pair's verdict and cost from the library's loop, every look recomputed from
    the waves so far and the exact ranks of the users ranked (as the command line)."""
    p = phase1
    means, variances = p.moments[METRIC]
    proxies = [Proxy(a, b) for a, b in zip(means, variances)]
    users = p.n.size
    totals = wave_totals(users, DECISION_DEFAULTS["sequential_budget"])
    waves = first_wave(p.sampled, p.m, p.n, totals[0], law=p.law, seed=p.rng, metric=METRIC,
                       spread=variances.sum(axis=0))  # fmt: skip
    later = int(p.rng.integers(1 << 31))
    while True:
        seen = np.where(waves.chosen, p.exact.astype(float), np.nan)
        looks = family_looks(waves, seen, p.sampled, p.m, p.n, METRIC, proxies=proxies,
                             alpha=0.05, budget=totals[-1], law=p.law)  # fmt: skip
        grown = next_wave(waves, looks, totals, seed=later)
        if grown is None:
            break
        waves = grown
    verdicts, costs = [], []
    for pair in sorted(looks):
        last = looks[pair][-1]
        ranked = (waves.wave >= 1) & (waves.wave <= last.wave)
        verdicts.append(last.verdict.value)
        costs.append(((p.m + 1) * users + N * ranked.sum()) / (N * users))
    return verdicts, costs


def test_study_sequential_is_the_library_loop_by_hand():
    exact = _population(800, [0.30, 0.22, 0.21, 0.10], np.random.default_rng(3))
    found = KINDS["sequential"].run(_phase1(exact, 0), Method(KINDS["sequential"]))
    verdicts, costs = _by_hand(_phase1(exact, 0))
    assert found.pairs[METRIC].verdict.tolist() == verdicts
    assert found.pair_cost.tolist() == pytest.approx(costs, rel=1e-12)
    # the far pairs decided right; the method's cost is its last pair's
    assert verdicts[2] == verdicts[4] == "A better"
    assert found.cost == pytest.approx(max(costs), rel=1e-12)


def test_equal_models_rarely_decided_and_cost_within_budget():
    rng = np.random.default_rng(5)
    base = _population(600, [0.25], rng)[0]
    # the same ranks over other users: equal means exactly, different users
    exact = np.stack([base, rng.permutation(base), _population(600, [0.10], rng)[0]])
    methods = study_methods(["sequential"], [], [])
    rows = run_study(exact, np.full(600, N), ["A", "B", "C"], seeds=20, m=M, law=LAW,
                     metrics=[METRIC], methods=methods)  # fmt: skip
    pairs = rows[rows["target"] == "pair"]
    equal = pairs[pairs["name"] == "A-B"]
    assert equal["exact"].abs().max() < 1e-12
    assert equal["wrong"].sum() <= 3  # nominal 5 % of 20 seeds; 3 has probability < 8 %
    ceiling = (M + 1) / N + DECISION_DEFAULTS["sequential_budget"]
    assert pairs["cost"].max() <= ceiling + 1e-12
    family = rows[rows["target"] == "family"]
    assert len(family) == 20
    assert family["cost"].max() <= ceiling + 1e-12
    # the family is wrong exactly when one of its pairs is
    some = pairs.groupby("seed")["wrong"].max().to_numpy()
    assert family["wrong"].to_numpy().tolist() == some.tolist()


def test_fixed_methods_family_is_holm_over_the_pairs():
    """Full ranking's family is the paired tests with Holm: distinct models far apart
    are all decided, never wrongly, and its row is present for each metric."""
    exact = _population(3000, [0.40, 0.25, 0.10], np.random.default_rng(9))
    rows = run_study(exact, np.full(3000, N), ["A", "B", "C"], seeds=2, m=M, law=LAW,
                     metrics=[METRIC, "ndcg@10"],
                     methods=study_methods(["full", "design"], [0.2], []))  # fmt: skip
    family = rows[rows["target"] == "family"]
    assert sorted(set(family["method"])) == ["design-0.2", "full"]
    assert len(family) == 2 * 2 * 2  # seeds, methods, metrics
    assert family.loc[family["method"] == "full", "wrong"].sum() == 0


def test_one_pair_alone_is_its_family_of_one():
    """With two models the family is the pair: Holm's recycling has nothing to pass on,
    so each pair's own design (sequential-pair) is the family's, draw for draw."""
    exact = _population(700, [0.28, 0.20], np.random.default_rng(11))
    family = KINDS["sequential"].run(_phase1(exact, 1), Method(KINDS["sequential"]))
    alone = KINDS["sequential-pair"].run(_phase1(exact, 1), Method(KINDS["sequential-pair"]))
    assert family.pairs[METRIC].verdict.tolist() == alone.pairs[METRIC].verdict.tolist()
    assert family.pair_cost.tolist() == alone.pair_cost.tolist()
    assert family.pairs[METRIC].low.tolist() == alone.pairs[METRIC].low.tolist()
