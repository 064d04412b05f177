"""Do the intervals the command prints hold? Fixed-seed simulations from a known truth
(a heavy-tailed population of exact ranks, whose exact metric is computed, not taken
from the code's earlier output), with coverage asserted within its binomial error:

* the range (the identification interval, method ``range`` of ``sampled-metrics
  correct``, its one interval) covers the exact metric at least 95 % of the time, with
  and without replacement, and is narrow enough for the check to mean something;
* the range of a paired difference gives a verdict ("A better") that is wrong at most
  5 % of the time, and gives one when the difference is large;
* a negative control: the interval of an estimator's sampling noise alone (what the
  command printed before issue 25), on the same draws, misses the exact metric most of
  the time: the check has the power to see an interval that does not hold.

``benchmarks/bench_coverage.py`` measures the same on MovieLens 1M's rank distributions
(docs/estimators.md, "Which intervals hold")."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from conftest import peaked, simulate

from sampled_metrics.cli import main
from sampled_metrics.estimation.estimators import (
    difference_interval,
    estimate_table,
    identification_intervals,
    sampled_evaluation,
)
from sampled_metrics.estimation.metrics import metric_by_name, metric_vector

N, USERS, M = 300, 2000, 60
METRICS = ("recall@10", "ndcg@10", "auc")
SEEDS = 40


def heavy(seed: int, head: float = 12.0, share: float = 0.6) -> np.ndarray:
    """Exact ranks: ``share`` of the users geometric(1/head), the rest log-uniform on 1..N."""
    rng = np.random.default_rng(seed)
    geometric = np.minimum(rng.geometric(1 / head, USERS), N)
    log_uniform = np.clip(np.floor(np.exp(rng.uniform(0, np.log(N), USERS))), 1, N)
    return np.where(rng.random(USERS) < share, geometric, log_uniform).astype(np.int64)


def exact(ranks: np.ndarray) -> dict:
    return {k: float(np.mean(metric_by_name(k)(ranks.astype(float), float(N)))) for k in METRICS}


def sample(ranks: np.ndarray, law: str, rng) -> np.ndarray:
    if law == "binomial":
        return 1 + rng.binomial(M, (ranks - 1) / (N - 1))
    return 1 + rng.hypergeometric(ranks - 1, N - ranks, M)


def lowest_coverage(seeds: int, level: float = 0.95) -> float:
    """The least coverage out of ``seeds`` that a true coverage of ``level`` yields with
    probability about 0.995 (normal approximation: level - 2.6 binomial errors)."""
    return level - 2.6 * math.sqrt(level * (1 - level) / seeds)


@pytest.mark.parametrize("law", ["binomial", "hypergeometric"])
def test_the_range_covers_the_exact_metric_and_the_noise_interval_does_not(law):
    ranks = heavy(1)
    truth = exact(ranks)
    hits = {k: [] for k in METRICS}
    widths = {k: [] for k in METRICS}
    noise = []
    for seed in range(SEEDS):
        data = sampled_evaluation(sample(ranks, law, np.random.default_rng([seed, 25])), M, N, law)
        for metric, (low, high) in identification_intervals(data, METRICS).items():
            hits[metric].append(low <= truth[metric] <= high)
            widths[metric].append(high - low)
        if seed < 20:  # the negative control: CLS's normal interval of its noise
            row = estimate_table(data, ["recall@10"], ["cls"]).iloc[0]
            noise.append(row.low <= truth["recall@10"] <= row.high)
    coverage = {k: float(np.mean(v)) for k, v in hits.items()}
    assert all(value >= lowest_coverage(SEEDS) for value in coverage.values()), coverage
    # narrow enough that covering means something: AUC to +-0.02, NDCG@10 within its range
    assert np.mean(widths["auc"]) < 0.04, np.mean(widths["auc"])
    assert np.mean(widths["ndcg@10"]) < 0.5 * truth["ndcg@10"] + 0.2, np.mean(widths["ndcg@10"])
    assert np.mean(noise) < 0.25, np.mean(noise)


def test_a_verdict_from_the_range_of_a_difference_is_rarely_wrong():
    """A (top-heavy) against B (a better mean rank, worse top): exactly, A has the
    higher Recall@10 and B the higher AUC. Paired sampled ranks on the same sampled items
    (nested sets, each marginal exactly the law); over the seeds the verdict of each
    range is wrong at most 5 % of the time (within the binomial error), and AUC's
    difference, several widths of its range, is decided."""
    a, b = heavy(2, head=2.0, share=0.6), heavy(3, head=10.0, share=1.0)
    truth = {k: exact(a)[k] - exact(b)[k] for k in METRICS}
    assert truth["recall@10"] > 0 > truth["auc"]
    wrong, decided = {k: 0 for k in METRICS}, {k: 0 for k in METRICS}
    seeds = 20
    for seed in range(seeds):
        rng = np.random.default_rng([seed, 26])
        low, high = np.minimum(a, b), np.maximum(a, b)
        inner = rng.binomial(M, (low - 1) / (N - 1))
        band = rng.binomial(M - inner, (high - low) / (N - low))
        small, large = 1 + inner, 1 + inner + band
        first = sampled_evaluation(np.where(a <= b, small, large), M, N)
        second = sampled_evaluation(np.where(a <= b, large, small), M, N)
        for metric in METRICS:
            lo, hi = difference_interval(first, second, metric)
            if lo > 0 or hi < 0:
                decided[metric] += 1
                wrong[metric] += (lo > 0) != (truth[metric] > 0)
    assert all(w <= seeds * (1 - lowest_coverage(seeds)) for w in wrong.values()), wrong
    assert decided["auc"] >= seeds * 0.9, decided


def test_the_printed_range_covers_the_users_exact_metric(capsys, tmp_path):
    """Through ``sampled-metrics correct``: 40 files of 3000 users drawn from a known
    p(r) (n = 500, m = 50, binomial; 30 % of the mass on the top 20 ranks); the range it
    prints (method range) brackets the users' own exact NDCG@10 in at least 95 % of the
    files, within the binomial error (0.95 - 2.6 errors), and the estimator beside it
    prints no interval."""
    n, m, users, files = 500, 50, 3000, 40
    pstar = peaked(n, head=20, share=0.3)
    hits = []
    for seed in range(files):
        ranks, sampled = simulate(pstar, n, m, users, seed=500 + seed)
        truth = float(np.mean(metric_vector("ndcg@10", n)[ranks - 1]))
        path = tmp_path / f"r{seed}.csv"
        pd.DataFrame({"sampled_rank": sampled}).to_csv(path, index=False)
        assert main(
            ["correct", str(path), "--m", str(m), "--n", str(n), "--metrics", "ndcg@10",
             "--estimators", "bv_0.1", "--json", "--quiet"]
        ) == 0  # fmt: skip
        got = json.loads(capsys.readouterr().out)
        (found,) = [r for r in got if r["kind"] == "range"]
        hits.append(found["low"] <= truth <= found["high"])
        assert all("low" not in r for r in got if r["kind"] == "estimate")
    assert np.mean(hits) >= 0.95 - 2.6 * (0.95 * 0.05 / files) ** 0.5, np.mean(hits)


def collapsed(ranks: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray]:
    """RecBole's uniM: M uniform draws with replacement from the N - 1 other items, an
    item drawn twice ranked once. (sampled ranks, distinct items drawn) per user."""
    draws = np.sort(rng.integers(0, N - 1, (ranks.size, M)), axis=1)
    new = np.ones(draws.shape, dtype=bool)
    new[:, 1:] = draws[:, 1:] != draws[:, :-1]
    beaten = new & (draws < (ranks - 1)[:, None])  # items 0..r-2 rank above the target
    return 1 + beaten.sum(axis=1), new.sum(axis=1)


def test_recboles_collapsed_draws_get_the_range_of_their_exact_law():
    """RecBole ranks the distinct items of its draws. Given each row's number of distinct
    items d, the sampled rank is 1 + Hypergeometric(r - 1, N - r, d): the range of that
    law holds. The binomial law in the M draws (counting an item drawn twice twice)
    misses AUC on a population with many middle ranks (uniform exact ranks): the
    command's protocol reads the first, and refuses the second."""
    rng = np.random.default_rng(7)
    ranks = rng.integers(1, N + 1, USERS)
    truth = float(np.mean(metric_by_name("auc")(ranks.astype(float), float(N))))
    held = {"exact law": 0, "binomial": 0}
    for _ in range(10):
        sampled, distinct = collapsed(ranks, rng)
        for name, data in (
            ("exact law", sampled_evaluation(sampled, distinct, N, "hypergeometric")),
            ("binomial", sampled_evaluation(sampled, M, N, "binomial")),
        ):
            low, high = identification_intervals(data, ["auc"])["auc"]
            held[name] += low <= truth <= high
    assert held["exact law"] == 10, held
    assert held["binomial"] <= 5  # the check can see a range that does not hold


def test_recboles_protocol_reads_collapsed_draws_by_their_count(tmp_path, capsys):
    """--protocol recbole-uniM reads each row's distinct items (column m) with the
    hypergeometric law; without that column, or with the binomial law, it stops."""
    rng = np.random.default_rng(8)
    sampled, distinct = collapsed(rng.integers(1, N + 1, 500), rng)
    path = tmp_path / "uni.csv"
    pd.DataFrame({"sampled_rank": sampled, "m": distinct, "n": N}).to_csv(path, index=False)
    common = ["correct", str(path), "--protocol", f"recbole-uni{M}", "--quiet"]
    assert main([*common, "--metrics", "auc", "--json"]) == 0
    (record,) = [r for r in json.loads(capsys.readouterr().out) if r["kind"] == "range"]
    data = sampled_evaluation(sampled, distinct, N, "hypergeometric")
    assert (record["low"], record["high"]) == identification_intervals(data, ["auc"])["auc"]
    assert main([*common, "--metrics", "auc", "--law", "binomial"]) == 2
    assert "contradicts --protocol recbole-uni" in capsys.readouterr().err
    pd.DataFrame({"sampled_rank": sampled, "n": N}).to_csv(path, index=False)
    assert main([*common, "--metrics", "auc"]) == 2
    assert "no column 'm'" in capsys.readouterr().err
