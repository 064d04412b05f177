"""Many models at once from the command line (``correct --family``): a new model, a
baseline as good as it and two worse ones, on a simulated population whose exact ranks
are known. The family's records are checked against Holm's rule recomputed here from
scipy's paired t-tests, its intervals against its verdicts, and the set that may be
best against the verdicts; two models add nothing, ``--family none`` gives each pair
alone, and ``--family`` where no test decides is one line of error."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from scipy.special import ndtr

from sampled_metrics.cli import main
from sampled_metrics.estimation.metrics import metric_by_name

USERS, M, N = 2000, 100, 3000
SHIFTS = {"New": 0.0, "Old": 0.0, "Weak": 0.25, "Pop": 0.6}
READ = [x for model in SHIFTS for x in ("--rank-column", model)]
ALPHA = 0.05


@pytest.fixture(scope="module")
def population(tmp_path_factory) -> dict:
    """Exact ranks of four models (New and Old drawn alike, Weak and Pop worse), their
    sampled ranks (numpy's hypergeometric, m = 100), a full ranking's file."""
    folder = tmp_path_factory.mktemp("family")
    rng = np.random.default_rng(51)
    shared = rng.standard_normal(USERS)
    exact = {}
    for model, shift in SHIFTS.items():
        x = 0.8 * shared + 0.6 * rng.standard_normal(USERS) + shift
        exact[model] = np.clip(np.ceil(np.exp(ndtr(x) ** 0.5 * np.log(N))), 1, N).astype(int)
    sampled = {k: 1 + rng.hypergeometric(r - 1, N - r, M) for k, r in exact.items()}
    users = np.arange(USERS)
    pd.DataFrame({"user": users, **sampled, "m": M, "n": N}).to_csv(folder / "ranks.csv",
                                                                    index=False)  # fmt: skip
    truth = pd.DataFrame({"user": users, **exact, "n": N})
    truth.to_csv(folder / "full.csv", index=False)
    return {"folder": folder, "truth": truth}


def cli(capsys, *argv) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def full(capsys, pop, *options, read=READ) -> list[dict]:
    status, out, err = cli(capsys, "correct", pop["folder"] / "full.csv", "--protocol", "full",
                           *read, "--json", *options)  # fmt: skip
    assert status == 0, err
    return json.loads(out)


def holm(p: list[float]) -> list[bool]:
    """Holm's (1979) step-down at ALPHA, written out: which p-values are decided."""
    decided = [False] * len(p)
    for step, index in enumerate(np.argsort(p)):
        if p[index] > ALPHA / (len(p) - step):
            break
        decided[index] = True
    return decided


def check_family(records: list[dict], metric: str) -> list[str]:
    """The family's rules on its records; the models that may be best."""
    pairs = [r for r in records if r["kind"] == "family_comparison" and r["metric"] == metric]
    (best,) = [r for r in records if r["kind"] == "may_be_best" and r["metric"] == metric]
    assert len(pairs) == 6 and best["confidence"] == 1 - ALPHA
    decided = holm([r["p_value"] for r in pairs])
    beaten = set()
    for r, is_decided in zip(pairs, decided):
        assert (r["verdict"] != "undecided") == is_decided == (r["adjusted_p_value"] <= ALPHA)
        assert is_decided == (r["low"] > 0 or r["high"] < 0)  # the interval agrees
        if is_decided:
            winner = r["first"] if r["difference"] > 0 else r["second"]
            assert r["verdict"] == f"{winner} better"
            beaten.add(r["second"] if winner == r["first"] else r["first"])
    assert best["models"] == [m for m in SHIFTS if m not in beaten]
    return best["models"]


@pytest.mark.parametrize("metric", ["recall@10", "ndcg@10"])
def test_a_full_ranking_decides_every_pair_with_holm(capsys, population, metric):
    records = full(capsys, population, "--metrics", metric)
    fn = metric_by_name(metric)
    values = {m: fn(population["truth"][m], N) for m in SHIFTS}
    family = [r for r in records if r["kind"] == "family_comparison"]
    for r, (a, b) in zip(family, combinations(SHIFTS, 2)):
        assert (r["first"], r["second"]) == (a, b)
        assert r["p_value"] == pytest.approx(stats.ttest_rel(values[a], values[b]).pvalue)
    best = check_family(records, metric)
    # New and Old are drawn alike, Weak and Pop far worse: only the first two may be best
    assert best == ["New", "Old"]


def test_the_design_decides_every_pair_with_holm(capsys, population):
    folder = population["folder"]
    ranks, chosen = folder / "ranks.csv", folder / "chosen.csv"
    status, _, err = cli(capsys, "plan", ranks, *READ, "--law", "hypergeometric", "--budget",
                         0.25, "--seed", 3, "--out", chosen)  # fmt: skip
    assert status == 0, err
    truth = population["truth"]
    truth[truth["user"].isin(pd.read_csv(chosen)["user"])].to_csv(folder / "exact.csv",
                                                                  index=False)  # fmt: skip
    common = ["correct", ranks, *READ, "--law", "hypergeometric", "--exact", folder / "exact.csv",
              "--design", chosen, "--metrics", "recall@10"]  # fmt: skip
    status, out, err = cli(capsys, *common, "--json")
    assert status == 0, err
    records = json.loads(out)
    assert check_family(records, "recall@10") == ["New", "Old"]
    # the family's estimates are the pairs' own
    pairs = [r for r in records if r["kind"] == "comparison"]
    family = [r for r in records if r["kind"] == "family_comparison"]
    assert [r["difference"] for r in family] == [r["difference"] for r in pairs]
    status, text, _ = cli(capsys, *common)
    assert "every pair at once (Holm's step-down over each metric's 6 pairs" in text
    assert text.rstrip().endswith("recall@10  New, Old")


def test_bonferroni_gives_simultaneous_intervals_and_decides_less(capsys, population):
    records = full(capsys, population, "--metrics", "ndcg@10", "--family", "bonferroni")
    family = [r for r in records if r["kind"] == "family_comparison"]
    holm = [r for r in full(capsys, population, "--metrics", "ndcg@10")
            if r["kind"] == "family_comparison"]  # fmt: skip
    for r, h in zip(family, holm):
        assert r["level"] == pytest.approx(1 - ALPHA / 6)
        assert r["adjusted_p_value"] == pytest.approx(min(1.0, 6 * r["p_value"]))
        assert (r["verdict"] != "undecided") == (r["p_value"] <= ALPHA / 6)
        assert (r["verdict"] != "undecided") == (r["low"] > 0 or r["high"] < 0)
        assert r["verdict"] == "undecided" or r["verdict"] == h["verdict"]


def test_two_models_or_family_none_give_each_pair_alone(capsys, population):
    two = full(capsys, population, read=["--rank-column", "New", "--rank-column", "Weak"])
    assert {r["kind"] for r in two} == {"exact", "exact_difference"}
    alone = full(capsys, population, "--family", "none")
    every = full(capsys, population)
    assert alone == [r for r in every if r["kind"] in ("exact", "exact_difference")]
    assert len(every) - len(alone) == 2 * (6 + 1)  # two metrics' pairs and sets


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--family", "holm"], "--family needs --exact and --design, or a full ranking's"),
        (["--family", "tukey"], "argument --family: invalid choice: 'tukey'"),
    ],
)
def test_family_where_no_test_decides_is_one_line(capsys, population, options, named):
    status, out, err = cli(capsys, "correct", population["folder"] / "ranks.csv", *READ,
                           "--law", "hypergeometric", *options)  # fmt: skip
    assert (status, out) == (2, "") and err.count("\n") == 1 and named in err, err
