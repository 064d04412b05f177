"""The decision flow's inputs checked against each other (sampled-metrics plan, then
correct --exact --design): an exact rank that cannot have produced its sampled rank
(without replacement s <= r <= n - m + s - 1), exact ranks under which the sampled ranks
are far less likely than they should be, a design file edited after plan wrote it, and
the errors a user meets on the way: each is one line on stderr naming the file, the
line, the user and the model, with exit status 2 and nothing written."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from test_cli_decide import READ, M, N, cli, exact_file, one_file_per_model, population

from sampled_metrics.cli import plan as plan_command

__all__ = ["population"]  # test_cli_decide's fixture, used here too


@pytest.fixture
def files(capsys, population, tmp_path) -> dict:
    """A design (10 % of the users, seed 0) and the exact ranks of its chosen users."""
    ranks = tmp_path / "ranks.csv"
    ranks.write_text(population["ranks"].read_text())
    chosen, exact = tmp_path / "chosen.csv", tmp_path / "exact.csv"
    status, _, err = cli(capsys, "plan", ranks, *READ, "--budget", 0.1, "--seed", 0,
                         "--out", chosen)  # fmt: skip
    assert status == 0, err
    exact_file(population, chosen, exact)
    sampled = pd.read_csv(ranks).set_index("user")
    return {"ranks": ranks, "chosen": chosen, "exact": exact, "sampled": sampled}


def refused(capsys, files, *extra) -> str:
    """correct's one error line: exit status 2, nothing on stdout, no traceback."""
    status, out, err = cli(capsys, "correct", files["ranks"], *READ, "--exact", files["exact"],
                           "--design", files["chosen"], *extra)  # fmt: skip
    assert (status, out) == (2, "") and err.count("\n") == 1, err
    assert "Traceback" not in err and ".tmp" not in err
    return err


def first_outside_support(exact: pd.DataFrame, sampled: pd.DataFrame, model: str):
    """(line, user, r, s) of the first row whose exact rank r is outside s..n - m + s - 1."""
    for k, row in enumerate(exact.itertuples(index=False)):
        r, s = getattr(row, model), sampled.loc[row.user, model]
        if not s <= r <= N - M + s - 1:
            return k + 2, row.user, r, s  # the header is line 1
    return None


@pytest.mark.parametrize("spoil", ["rank 1", "rank n"])
def test_an_exact_rank_that_cannot_give_its_sampled_rank(capsys, files, spoil):
    exact = pd.read_csv(files["exact"])
    exact["A"] = 1 if spoil == "rank 1" else N
    exact.to_csv(files["exact"], index=False)
    line, user, r, s = first_outside_support(exact, files["sampled"], "A")
    err = refused(capsys, files)
    assert f"exact.csv: line {line}: user {user}, model A: exact rank {r} cannot have " \
           f"produced sampled rank {s}" in err  # fmt: skip
    assert f"s <= r <= n - m + s - 1, so the exact rank is in {s}..{N - M + s - 1}" in err


def test_exact_ranks_far_less_likely_than_they_should_be_stop_unless_allowed(capsys, files):
    """A's exact ranks replaced by B's, moved into the support of A's sampled ranks (no
    pair impossible): the sampled ranks are far less likely than under A's own."""
    exact = pd.read_csv(files["exact"])
    s = files["sampled"].loc[exact["user"], "A"].to_numpy()
    exact["A"] = np.clip(exact["B"], s, N - M + s - 1)
    exact.to_csv(files["exact"], index=False)
    assert first_outside_support(exact, files["sampled"], "A") is None
    err = refused(capsys, files)
    assert "exact.csv: the exact ranks of model A are far less likely than they should be" in err
    assert "chosen users have P(sampled | exact) at most" in err and "--allow-unlikely" in err
    status, out, err = cli(capsys, "correct", files["ranks"], *READ, "--exact", files["exact"],
                           "--design", files["chosen"], "--allow-unlikely", "--json")  # fmt: skip
    assert status == 0 and json.loads(out), err


def drop_users(chosen):
    return chosen.drop(chosen.index[chosen["stratum"] == 1][:3])


def rescale_stratum(chosen):  # consistent within the stratum: n_h / pi_h still whole
    chosen.loc[chosen["stratum"] == 0, "probability"] /= 2
    return chosen


def other_user(files):
    def edit(chosen):
        unchosen = files["sampled"].index.difference(chosen["user"])
        # a user of stratum 5 (best sampled rank >= 11) not chosen, in place of a chosen one
        best = files["sampled"].loc[unchosen, ["A", "B"]].min(axis=1)
        k = chosen.index[chosen["stratum"] == 5][0]
        chosen.loc[k, "user"] = best[best >= 11].index[0]
        return chosen

    return edit


@pytest.mark.parametrize(
    ("edit", "named"),
    [(drop_users, "stratum 1 has 37 chosen users, the design chose 40"),
     (rescale_stratum, "is not n_h / N_h"), ("other user", "their digest differs")],
    ids=["three users removed", "a stratum's probabilities rewritten", "a user swapped"],
)  # fmt: skip
def test_a_design_edited_after_plan_wrote_it_is_refused(capsys, population, files, edit, named):
    """chosen.csv edited, the exact file holding the edited design's users: refused."""
    edit = other_user(files) if edit == "other user" else edit
    edit(pd.read_csv(files["chosen"])).to_csv(files["chosen"], index=False)
    exact_file(population, files["chosen"], files["exact"])
    err = refused(capsys, files)
    assert "chosen.csv: " in err and "edited after plan wrote it" in err and named in err, err


def test_a_design_without_chosen_users_is_a_problem_of_the_design_file(capsys, files):
    original = files["chosen"].read_text()
    files["chosen"].write_text("user,probability,stratum\n")
    assert "chosen.csv: no chosen user" in refused(capsys, files)
    files["chosen"].write_text(original)
    sidecar = files["chosen"].parent / "chosen.csv.design.json"
    record = json.loads(sidecar.read_text())
    del record["chosen_digest"]
    sidecar.write_text(json.dumps(record))
    assert "chosen.csv.design.json: missing key 'chosen_digest'" in refused(capsys, files)
    for key, value, named in [("chosen_digest", 5, "not a text"),
                              ("strata_chosen", "40", "not a list of counts"),
                              ("strata_chosen", [1, 2], "does not fit strata_sizes")]:  # fmt: skip
        sidecar.write_text(json.dumps({**record, "chosen_digest": "x", key: value}))
        assert f"chosen.csv.design.json: {key} " in refused(capsys, files)
        assert named in refused(capsys, files)


def test_an_exact_rank_is_bounded_by_n(capsys, files):
    exact = pd.read_csv(files["exact"]).assign(B=N + 1)
    exact.to_csv(files["exact"], index=False)
    err = refused(capsys, files)
    assert f"exact.csv: line 2: column B: exact rank {N + 1} is outside 1..n = {N}" in err


def test_one_exact_file_without_a_model_asks_for_a_second(capsys, files):
    pd.read_csv(files["exact"]).drop(columns="B").to_csv(files["exact"], index=False)
    err = refused(capsys, files)
    assert "exact.csv: no column 'B' for model B" in err
    assert "give a second --exact file (one per model) or a column named B" in err


def test_plan_errors_name_the_option_and_write_nothing(capsys, population, tmp_path):
    out = tmp_path / "chosen.csv"
    status, printed, err = cli(capsys, "plan", population["ranks"], *READ, "--seed", -1,
                               "--out", out)  # fmt: skip
    assert (status, printed) == (2, "") and "argument --seed: -1 is below 0" in err
    status, printed, err = cli(capsys, "plan", population["ranks"], *READ, "--out", tmp_path)
    assert (status, printed) == (2, "") and "is a directory: --out names" in err
    assert err.count("\n") == 1 and ".tmp" not in err and f"{tmp_path.name}/." not in err
    assert list(tmp_path.iterdir()) == []


def test_plan_with_a_file_per_model_shows_an_exact_file_per_model(capsys, population, tmp_path):
    models = one_file_per_model(population, tmp_path)
    status, printed, err = cli(capsys, "plan", models["A"], models["B"], "--seed", 1,
                               "--out", tmp_path / "chosen.csv")  # fmt: skip
    assert status == 0, err
    assert "--exact EXACT-A EXACT-B --design" in printed


def test_a_model_in_two_files_names_the_option_that_names_a_model(capsys, population, tmp_path):
    models = one_file_per_model(population, tmp_path)
    table = pd.read_csv(models["B"]).rename(columns={"B": "A"})
    table.to_csv(models["B"], index=False)
    (tmp_path / "B.csv.meta.json").write_text(
        (tmp_path / "A.csv.meta.json").read_text()
    )  # the same model's sidecar: two checkpoints of one class
    status, printed, err = cli(capsys, "plan", models["A"], models["B"], "--out",
                               tmp_path / "chosen.csv")  # fmt: skip
    assert (status, printed) == (2, "") and "model A is in " in err and "--name" in err
    assert "--name" in err and not (tmp_path / "chosen.csv").exists()


def test_plan_prints_the_designs_note(capsys, population, tmp_path, monkeypatch):
    """A design that says why it is not the one asked for: plan prints it, one line."""
    draw = plan_command.draw_design
    note = "every user is ranked: too few to promise the intervals' coverage"
    monkeypatch.setattr(plan_command, "draw_design",
                        lambda *a, **k: replace(draw(*a, **k), note=note))  # fmt: skip
    status, printed, err = cli(capsys, "plan", population["ranks"], *READ, "--seed", 2,
                               "--out", tmp_path / "chosen.csv")  # fmt: skip
    assert status == 0, err
    assert printed.splitlines()[1] == note


def test_with_replacement_an_exact_rank_of_n_gives_only_the_last_sampled_rank(
    capsys, population, tmp_path
):
    """Read with the binomial law, s - 1 ~ Binomial(m, (r - 1) / (n - 1)): r = n puts
    every sampled item above (s = m + 1), so r = n with s = 1 cannot be."""
    binomial = [*READ[:-1], "binomial"]
    chosen, exact = tmp_path / "chosen.csv", tmp_path / "exact.csv"
    status, _, err = cli(capsys, "plan", population["ranks"], *binomial, "--budget", 0.1,
                         "--seed", 0, "--out", chosen)  # fmt: skip
    assert status == 0, err
    exact_file(population, chosen, exact)
    table = pd.read_csv(exact).assign(A=N)
    table.to_csv(exact, index=False)
    sampled = pd.read_csv(population["ranks"]).set_index("user").loc[table["user"], "A"]
    k = int(np.flatnonzero(sampled.to_numpy() <= M)[0])  # s = m + 1 is possible
    status, out, err = cli(capsys, "correct", population["ranks"], *binomial, "--exact", exact,
                           "--design", chosen)  # fmt: skip
    assert (status, out) == (2, "") and err.count("\n") == 1
    s = sampled.iloc[k]
    low, high = (1, N - 1) if s == 1 else (2, N - 1)
    assert f"line {k + 2}: user {table['user'].iloc[k]}, model A: exact rank {N} cannot have " \
           f"produced sampled rank {s}" in err  # fmt: skip
    assert f"with replacement the exact rank is in {low}..{high}" in err


def test_ties_in_a_frameworks_own_top_k_order_are_not_called_impossible(capsys, files):
    """RecBole orders ties within its top k by torch.topk, in its full and its sampled
    evaluation apart: an exact rank there may disagree with its sampled rank. A sidecar
    that says so (ties.framework_top_k) leaves those users out of the checks; without
    it the same pair is one error."""
    from sampled_metrics.frameworks.rank_meta import rank_meta

    exact = pd.read_csv(files["exact"])
    s = files["sampled"].loc[exact["user"], "A"].to_numpy()
    tied = (exact["A"] <= 10) & (s > 1)
    assert tied.any()  # the population has such users among the chosen
    exact.loc[tied, "A"] = 1  # the held-out item first in the full ranking's topk order
    exact.to_csv(files["exact"], index=False)
    sidecar = files["exact"].with_name("exact.csv.meta.json")
    meta = rank_meta("full", rank_columns=["A", "B"], writer="test")
    sidecar.write_text(json.dumps(meta))
    assert "cannot have produced sampled rank" in refused(capsys, files)
    meta = rank_meta("full", rank_columns=["A", "B"], framework_top_k=10, writer="test")
    sidecar.write_text(json.dumps(meta))
    status, out, err = cli(capsys, "correct", files["ranks"], *READ, "--exact", files["exact"],
                           "--design", files["chosen"], "--json")  # fmt: skip
    assert status == 0 and json.loads(out), err
