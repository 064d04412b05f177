"""The sequential loop on the command line, end to end: ``plan --sequential``, then
``plan --continue --exact`` until it says there is nothing more to rank, ``correct
--design`` of the last wave; and the contradictory inputs that must stop it.

A synthetic population of 2000 users whose exact ranks under A, B and C are known (C far
worse than A, B between), sampled ranks drawn with numpy's hypergeometric generator; the
exact ranks of the chosen users are read from the truth, as someone who ranks them does.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtr

from sampled_metrics.cli import main

USERS, M, N = 2000, 100, 3000
READ = ["--rank-column", "A", "--rank-column", "B", "--rank-column", "C",
        "--law", "hypergeometric"]  # fmt: skip


@pytest.fixture(scope="module")
def population(tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp("sequential")
    rng = np.random.default_rng(45)
    shared = rng.standard_normal(USERS)

    def ranks(shift: float) -> np.ndarray:  # P(r <= 10) about 0.08 for A
        x = 0.8 * shared + 0.6 * rng.standard_normal(USERS) + shift
        return np.clip(np.ceil(np.exp(ndtr(x) ** 0.5 * np.log(N))), 1, N).astype(np.int64)

    exact = {"A": ranks(0.0), "B": ranks(0.25), "C": ranks(0.6)}
    sampled = {k: 1 + rng.hypergeometric(r - 1, N - r, M) for k, r in exact.items()}
    users = np.arange(USERS) * 7 + 3
    pd.DataFrame({"user": users, **sampled, "m": M, "n": N}).to_csv(folder / "ranks.csv",
                                                                    index=False)  # fmt: skip
    truth = pd.DataFrame({"user": users, **exact, "n": N})
    return {"folder": folder, "ranks": folder / "ranks.csv", "truth": truth}


def cli(capsys, *argv) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def exact_of(pop, chosen, path):
    picked = pop["truth"]["user"].isin(pd.read_csv(chosen)["user"])
    pop["truth"][picked].to_csv(path, index=False)
    return path


def loop(capsys, pop, seed: int, spending: str, family: str):
    """The loop as a user runs it: the last design, its exact ranks, the last output."""
    folder = pop["folder"] / f"loop{seed}{spending}{family}"
    folder.mkdir()
    chosen = folder / "chosen1.csv"
    status, out, err = cli(capsys, "plan", pop["ranks"], *READ, "--sequential", "--budget",
                           0.5, "--seed", seed, "--spending", spending, "--family", family,
                           "--out", chosen)  # fmt: skip
    assert status == 0, err
    for k in range(1, 20):
        exact = exact_of(pop, chosen, folder / f"exact{k}.csv")
        following = folder / f"chosen{k + 1}.csv"
        status, out, err = cli(capsys, "plan", pop["ranks"], *READ, "--continue", chosen,
                               "--exact", exact, "--out", following)  # fmt: skip
        assert status == 0, err
        if not following.exists():
            return chosen, exact, out
        chosen = following
    raise AssertionError("the loop did not end")


@pytest.mark.parametrize("spending, family", [("obrien-fleming", "holm"), ("pocock", "bonferroni")])
def test_the_loop_ends_with_intervals_that_cover_and_right_verdicts(
    capsys, population, spending, family
):
    chosen, exact, out = loop(capsys, population, 3, spending, family)
    assert "nothing written" in out.splitlines()[-1]
    truth = population["truth"]
    recall = {k: float(np.mean(truth[k] <= 10)) for k in "ABC"}
    status, printed, err = cli(capsys, "correct", population["ranks"], *READ, "--exact", exact,
                               "--design", chosen, "--metrics", "recall@10",
                               "--json")  # fmt: skip
    assert status == 0, err
    record = json.loads((chosen.parent / f"{chosen.name}.design.json").read_text())
    assert (record["sequential"]["spending"], record["sequential"]["family"]) == (spending, family)
    records = json.loads(printed)
    pairs = [r for r in records if r["kind"] == "sequential_comparison"]
    assert len(pairs) == 3 and {r["family"] for r in pairs} == {family}
    for r in pairs:
        difference = recall[r["first"]] - recall[r["second"]]
        assert r["low"] <= difference <= r["high"]
        better = r["first"] if difference > 0 else r["second"]
        assert r["verdict"] in (f"{better} better", "undecided")
    (cost,) = [r for r in records if r["kind"] == "waves"]
    ranked = len(pd.read_csv(chosen))
    assert cost["users"][-1] == ranked and cost["share_of_users"] == ranked / USERS
    assert cost["state"] in ("decided", "budget spent") and ranked <= USERS / 2
    # A and C are far apart: decided although the loop may go on for A-B
    assert next(r for r in pairs if r["second"] == "C" and r["first"] == "A")["verdict"] == (
        "A better"
    )


def test_contradictory_inputs_stop_with_one_line_naming_the_file(capsys, population, tmp_path):
    pop = population
    chosen = tmp_path / "chosen1.csv"
    assert cli(capsys, "plan", pop["ranks"], *READ, "--sequential", "--seed", 1, "--out",
               chosen)[0] == 0  # fmt: skip
    exact = exact_of(pop, chosen, tmp_path / "exact1.csv")
    # EXACT missing a chosen user
    short = tmp_path / "short.csv"
    pd.read_csv(exact).iloc[1:].to_csv(short, index=False)
    # the waves edited: a user moved to another wave
    edited = tmp_path / "edited.csv"
    frame = pd.read_csv(chosen)
    frame.loc[0, "wave"] = 2
    frame.to_csv(edited, index=False)
    (tmp_path / "edited.csv.design.json").write_text(
        (tmp_path / "chosen1.csv.design.json").read_text()
    )
    # other sampled ranks
    other = tmp_path / "other.csv"
    ranks = pd.read_csv(pop["ranks"])
    ranks["A"] = ranks["C"]
    ranks.to_csv(other, index=False)
    cases = [
        (pop["ranks"], chosen, short, "short.csv"),
        (pop["ranks"], edited, exact, "edited.csv"),
        (other, chosen, exact, "chosen1.csv"),
    ]
    for ranks_file, design, exact_file, named in cases:
        out = tmp_path / "next.csv"
        status, printed, err = cli(capsys, "plan", ranks_file, *READ, "--continue", design,
                                   "--exact", exact_file, "--out", out)  # fmt: skip
        assert status != 0 and not out.exists()
        assert len(err.strip().splitlines()) == 1 and named in err, err
    # --continue takes its settings from the design's record
    status, _, err = cli(capsys, "plan", pop["ranks"], *READ, "--continue", chosen, "--exact",
                         exact, "--spending", "pocock", "--out", tmp_path / "x.csv")  # fmt: skip
    assert status != 0 and "--spending" in err and not (tmp_path / "x.csv").exists()
    status, _, err = cli(capsys, "plan", pop["ranks"], *READ, "--continue", chosen, "--exact",
                         exact, "--family", "bonferroni", "--out", tmp_path / "x.csv")  # fmt: skip
    assert status != 0 and "--family" in err and not (tmp_path / "x.csv").exists()
    # the waves were drawn for the design's family (holm by default)
    status, _, err = cli(capsys, "correct", pop["ranks"], *READ, "--exact", exact, "--design",
                         chosen, "--family", "bonferroni")  # fmt: skip
    assert status != 0 and "--family" in err
    status, _, err = cli(capsys, "correct", pop["ranks"], *READ, "--exact", exact, "--design",
                         chosen, "--population", "superpopulation")  # fmt: skip
    assert status != 0 and "--population" in err
    # an existing --out is never replaced without --force
    status, _, err = cli(capsys, "plan", pop["ranks"], *READ, "--continue", chosen, "--exact",
                         exact, "--out", chosen)  # fmt: skip
    assert status != 0 and "chosen1.csv" in err
