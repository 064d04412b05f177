"""Deciding between two models from the command line (sampled-metrics plan, then
correct --exact --design; correct on a full ranking): against a simulated population
whose exact ranks are known, the printed intervals cover the exact metric at their
level over designs, a clear difference gets the right verdict, identical models are
undecided; bad input is one line naming the file; a full ranking's paired test is
scipy's; ``rank_files``' users are ranked as among all; docs/deciding.md shows what its
commands print."""

from __future__ import annotations

import importlib.util
import json
import sys

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from conftest import REPO
from scipy import stats
from scipy.special import ndtr

from sampled_metrics.cli import main
from sampled_metrics.estimation.metrics import metric_by_name
from sampled_metrics.frameworks.rank_files import exact_rank_frame, rank_files
from sampled_metrics.frameworks.rank_meta import rank_meta, write_rank_file

USERS, M, N = 2000, 100, 3000
READ = ["--rank-column", "A", "--rank-column", "B", "--law", "hypergeometric"]
DOC = REPO / "docs" / "deciding.md"
EXAMPLES = REPO / "docs" / "examples" / "make_decide_examples.py"


def heavy_tailed(rng, shared, shift: float) -> np.ndarray:
    """Exact ranks in 1..N, P(r <= 10) about 0.08 (less for a positive shift)."""
    x = 0.8 * shared + 0.6 * rng.standard_normal(shared.size) + shift
    return np.clip(np.ceil(np.exp(ndtr(x) ** 0.5 * np.log(N))), 1, N).astype(np.int64)


@pytest.fixture(scope="module")
def population(tmp_path_factory) -> dict:
    """Exact ranks of A and of a clearly worse B, their sampled ranks drawn with
    numpy's hypergeometric generator (m = 100 without replacement), as ranks.csv."""
    folder = tmp_path_factory.mktemp("decide")
    rng = np.random.default_rng(45)
    shared = rng.standard_normal(USERS)
    exact = {"A": heavy_tailed(rng, shared, 0.0), "B": heavy_tailed(rng, shared, 0.25)}
    sampled = {k: 1 + rng.hypergeometric(r - 1, N - r, M) for k, r in exact.items()}
    users = np.arange(USERS) * 7 + 3  # ids that are not row numbers
    ranks = folder / "ranks.csv"
    pd.DataFrame({"user": users, **sampled, "m": M, "n": N}).to_csv(ranks, index=False)
    truth = pd.DataFrame({"user": users, **exact, "n": N})
    return {"folder": folder, "ranks": ranks, "truth": truth, "users": users}


def cli(capsys, *argv) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def plan(capsys, pop, seed: int, out, budget: float = 0.25, extra=()) -> str:
    status, printed, err = cli(
        capsys, "plan", pop["ranks"], *READ, "--budget", budget, "--seed", seed,
        "--out", out, *extra,
    )  # fmt: skip
    assert status == 0, err
    return printed


def exact_file(pop, chosen, path, columns=("A", "B")):
    """The exact ranks of the users of ``chosen``, as someone who ranked them writes."""
    picked = pop["truth"]["user"].isin(pd.read_csv(chosen)["user"])
    pop["truth"].loc[picked, ["user", *columns, "n"]].to_csv(path, index=False)
    return path


def decide(capsys, pop, seed: int, *options) -> list[dict]:
    folder = pop["folder"]
    chosen, exact = folder / f"chosen{seed}.csv", folder / f"exact{seed}.csv"
    plan(capsys, pop, seed, chosen)
    exact_file(pop, chosen, exact)
    status, out, err = cli(capsys, "correct", pop["ranks"], *READ, "--exact", exact, "--design",
                           chosen, "--metrics", "recall@10", "--json", *options)  # fmt: skip
    assert status == 0, err
    return json.loads(out)


def truth_of(pop, model: str, metric: str = "recall@10") -> float:
    return float(np.mean(metric_by_name(metric)(pop["truth"][model], N)))


def test_the_intervals_cover_and_the_verdict_is_right_over_designs(capsys, population):
    seeds = 40
    exact = {m: truth_of(population, m) for m in "AB"}
    exact["A - B"] = exact["A"] - exact["B"]
    covered = {key: 0 for key in exact}
    verdicts = []
    for seed in range(seeds):
        for r in decide(capsys, population, seed):
            key = r.get("model") or f"{r['first']} - {r['second']}"
            covered[key] += r["low"] <= exact[key] <= r["high"]
            verdicts += [r["verdict"]] if "verdict" in r else []
    lowest = 0.95 - 3 * np.sqrt(0.95 * 0.05 / seeds)  # three binomial errors
    assert all(count / seeds >= lowest for count in covered.values()), covered
    assert exact["A - B"] > 0.02 and verdicts == ["A better"] * seeds


def test_the_range_alone_cannot_decide_what_the_design_decides(capsys, population):
    status, out, _ = cli(capsys, "correct", population["ranks"], *READ, "--metrics",
                         "recall@10", "--estimators", "--json")  # fmt: skip
    ranges = [r for r in json.loads(out) if r["kind"] == "range_difference"]
    assert status == 0 and [r["verdict"] for r in ranges] == ["undecided"]
    assert ranges[0]["high"] - ranges[0]["low"] > 0.2


def test_identical_models_are_undecided_with_difference_zero(capsys, population, tmp_path):
    frame = pd.read_csv(population["ranks"]).assign(C=lambda f: f["A"])
    ranks = frame.to_csv(tmp_path / "ranks.csv", index=False) or tmp_path / "ranks.csv"
    both = ["--rank-column", "A", "--rank-column", "C", "--law", "hypergeometric"]
    status, _, err = cli(capsys, "plan", ranks, *both, "--budget", 0.1, "--seed", 1,
                         "--out", tmp_path / "chosen.csv")  # fmt: skip
    assert status == 0, err
    truth = population["truth"].assign(C=lambda f: f["A"])
    picked = truth["user"].isin(pd.read_csv(tmp_path / "chosen.csv")["user"])
    truth.loc[picked, ["user", "A", "C", "n"]].to_csv(tmp_path / "exact.csv", index=False)
    status, out, err = cli(capsys, "correct", ranks, *both, "--exact", tmp_path / "exact.csv",
                           "--design", tmp_path / "chosen.csv", "--json")  # fmt: skip
    assert status == 0, err
    pairs = [r for r in json.loads(out) if r["kind"] == "comparison"]
    assert len(pairs) == 2  # recall@10 and ndcg@10
    for r in pairs:
        assert (r["difference"], r["low"], r["high"], r["verdict"]) == (0, 0, 0, "undecided")


def test_every_user_chosen_gives_the_exact_metric_of_the_column_named_after_the_model(
    capsys, population, tmp_path
):
    """With every user chosen (probability 1) the estimate is the exact metric itself
    (sum g + sum (y - g) = sum y). EXACT's sidecar maps two columns to each model, as
    cornac's full file does (its order, and every tie above): the one named after the
    model is read, whatever the order of the sidecar's keys."""
    chosen = tmp_path / "chosen.csv"
    plan(capsys, population, 1, chosen, budget=1.0)
    assert len(pd.read_csv(chosen)) == USERS
    truth = population["truth"]
    exact = truth.assign(A_pessimistic=N, B_pessimistic=N)[
        ["user", "A", "B", "A_pessimistic", "B_pessimistic", "n"]
    ]
    columns = {"A": "A", "B": "B", "A_pessimistic": "A", "B_pessimistic": "B"}
    write_rank_file(exact, tmp_path / "exact.csv", rank_meta("full", rank_columns=columns,
                    writer="test"))  # fmt: skip
    status, out, err = cli(capsys, "correct", population["ranks"], *READ, "--exact",
                           tmp_path / "exact.csv", "--design", chosen, "--metrics",
                           "recall@10", "--json")  # fmt: skip
    assert status == 0, err
    estimates = {r["model"]: r["estimate"] for r in json.loads(out) if r["kind"] == "estimate"}
    assert estimates == pytest.approx({m: truth_of(population, m) for m in "AB"}, abs=1e-12)


def test_the_records_and_the_text(capsys, population):
    records = decide(capsys, population, 100, "--population", "superpopulation")
    estimate = {"kind", "model", "metric", "estimator", "estimate", "low", "high",
                "standard_error", "population"}  # fmt: skip
    comparison = {"kind", "first", "second", "metric", "estimator", "difference", "low",
                  "high", "standard_error", "population", "verdict"}  # fmt: skip
    assert [set(r) for r in records] == [estimate, estimate, comparison]
    assert {r["estimator"] for r in records} == {"design"}
    assert {r["population"] for r in records} == {"superpopulation"}
    assert all(r["low"] < r["high"] for r in records)
    folder = population["folder"]
    status, out, _ = cli(capsys, "correct", population["ranks"], *READ, "--exact",
                         folder / "exact100.csv", "--design", folder / "chosen100.csv")  # fmt: skip
    assert status == 0 and "about these users" in out and "A      B       recall@10" in out


def test_plan_spends_the_budget_and_writes_a_design_that_adds_up(capsys, population):
    chosen = population["folder"] / "budget.csv"
    printed = plan(capsys, population, 5, chosen, budget=0.1)
    table = pd.read_csv(chosen)
    assert len(table) == round(0.1 * USERS) and f"{len(table)} of {USERS} users" in printed
    assert ((table["probability"] > 0) & (table["probability"] <= 1)).all()
    # each stratum's users: its chosen users / their probability; they add up to U
    strata = table.groupby("stratum")["probability"].agg(["size", "first"])
    assert (strata["size"] / strata["first"]).sum() == pytest.approx(USERS)
    meta = json.loads((population["folder"] / "budget.csv.design.json").read_text())
    assert meta["users"] == USERS and meta["seed"] == 5 and meta["budget"] == 0.1
    again = population["folder"] / "again.csv"
    plan(capsys, population, 5, again, budget=0.1)
    assert again.read_text() == chosen.read_text()


def test_a_budget_in_scored_items(capsys, population):
    chosen = population["folder"] / "items.csv"
    printed = plan(capsys, population, 2, chosen, budget=0.2, extra=["--budget-unit", "items"])
    assert "scores 20.0% of the items" in printed  # every n the same: items = users


def bad_cases():
    """(name, how to spoil the files, what the error names)."""

    def drop_chosen(files):
        exact = pd.read_csv(files["exact"])
        exact.iloc[1:].to_csv(files["exact"], index=False)
        return f"exact.csv: no row for user {exact['user'].iloc[0]}"

    def add_unchosen(files):
        exact, truth = pd.read_csv(files["exact"]), files["truth"]
        other = truth[~truth["user"].isin(exact["user"])].iloc[:1]
        pd.concat([exact, other[exact.columns]]).to_csv(files["exact"], index=False)
        line = len(exact) + 2  # the header is line 1
        return f"exact.csv: line {line}: user {other['user'].iloc[0]} was not chosen by the design"

    def drop_column(files):
        pd.read_csv(files["exact"]).drop(columns="B").to_csv(files["exact"], index=False)
        return "exact.csv: no column 'B'"

    def probability(value):
        def spoil(files):
            chosen = pd.read_csv(files["chosen"])
            chosen.loc[2, "probability"] = value
            chosen.to_csv(files["chosen"], index=False)
            return "chosen.csv: line 4: column probability"

        return spoil

    def unknown_user(files):
        chosen = pd.read_csv(files["chosen"])
        chosen.loc[0, "user"] = 1
        chosen.to_csv(files["chosen"], index=False)
        return "chosen.csv: line 2: user 1 is not in"

    def no_sidecar(files):
        (files["chosen"].parent / "chosen.csv.design.json").unlink()
        return "chosen.csv.design.json: no such file"

    def other_ranks(files):
        ranks = pd.read_csv(files["ranks"])
        ranks["A"] = np.maximum(ranks["A"] - 1, 1)
        ranks.to_csv(files["ranks"], index=False)
        return "not the file"

    return [("a chosen user missing", drop_chosen), ("a user not chosen", add_unchosen),
            ("a rank column missing", drop_column), ("probability 1.5", probability(1.5)),
            ("probability 0", probability(0)), ("a user not in RANKS", unknown_user),
            ("no sidecar", no_sidecar), ("another rank file", other_ranks)]  # fmt: skip


@pytest.mark.parametrize(("case", "spoil"), bad_cases(), ids=[c for c, _ in bad_cases()])
def test_bad_input_is_one_line_naming_the_file(capsys, population, tmp_path, case, spoil):
    ranks = tmp_path / "ranks.csv"
    ranks.write_text(population["ranks"].read_text())
    files = {"ranks": ranks, "chosen": tmp_path / "chosen.csv", "exact": tmp_path / "exact.csv",
             "truth": population["truth"]}  # fmt: skip
    status, _, err = cli(capsys, "plan", ranks, *READ, "--budget", 0.1, "--seed", 0,
                         "--out", files["chosen"])  # fmt: skip
    assert status == 0, err
    exact_file(population, files["chosen"], files["exact"])
    named = spoil(files)
    status, out, err = cli(capsys, "correct", ranks, *READ, "--exact", files["exact"],
                           "--design", files["chosen"])  # fmt: skip
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and named in err, err


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (["--exact", "x.csv"], "--exact needs --design"),
        (["--design", "x.csv"], "--design needs --exact"),
        (["--population", "superpopulation"], "--population needs --exact and --design"),
        (["--allow-unlikely"], "--allow-unlikely needs --exact and --design"),
        (["--exact", "x.csv", "--design", "c.csv", "--estimators", "em"],
         "--estimators does not go with --exact, --design"),
        (["--exact", "x.csv", "--design", "c.csv", "--no-range"],
         "--no-range does not go with --exact, --design"),
    ],
)  # fmt: skip
def test_the_decision_options_rules(capsys, population, options, named):
    status, out, err = cli(capsys, "correct", population["ranks"], *READ, *options)
    assert (status, out) == (2, "") and err.count("\n") == 1 and named in err, err


def test_options_that_need_each_other(capsys, population):
    truth = population["folder"] / "truth.csv"
    population["truth"].to_csv(truth, index=False)
    status, _, err = cli(capsys, "plan", truth, "--protocol", "full", "--rank-column", "A",
                         "--out", population["folder"] / "nothing.csv")  # fmt: skip
    assert status == 2 and "nothing to plan" in err
    assert not (population["folder"] / "nothing.csv").exists()


@pytest.mark.parametrize("metric", ["recall@10", "ndcg@10", "auc"])
def test_a_full_ranking_gets_scipys_paired_t_test(capsys, population, metric):
    path = population["folder"] / "full.csv"
    population["truth"].to_csv(path, index=False)
    status, out, err = cli(capsys, "correct", path, "--protocol", "full", "--rank-column", "A",
                           "--rank-column", "B", "--metrics", metric, "--json")  # fmt: skip
    assert status == 0, err
    (pair,) = [r for r in json.loads(out) if r["kind"] == "exact_difference"]
    fn = metric_by_name(metric)
    a, b = fn(population["truth"]["A"], N), fn(population["truth"]["B"], N)
    reference = stats.ttest_rel(a, b)
    assert pair["p_value"] == pytest.approx(reference.pvalue, rel=1e-9)
    assert (pair["low"], pair["high"]) == pytest.approx(reference.confidence_interval(0.95))
    assert pair["verdict"] == "A better"


def test_rank_files_ranks_the_chosen_users_as_among_all():
    rng = np.random.default_rng(3)
    users, items = 80, 150
    train = sp.random(users, items, density=0.05, format="csr", random_state=4)
    train.data[:] = 1
    test = np.array([rng.choice(np.flatnonzero(row == 0)) for row in train.toarray()])
    scores = {"A": rng.integers(0, 4, (users, items)), "B": rng.normal(size=(users, items))}
    ids = np.arange(users) + 1000
    every, sampled = rank_files(scores, train, test, "ncf", seed=2, user_ids=ids)
    some = [61, 3, 17]
    scored = []
    model = {"A": lambda u: scored.extend(u) or scores["A"][u], "B": scores["B"]}
    chosen = exact_rank_frame(model, train, test, users=some, user_ids=ids)
    assert sorted(scored) == sorted(some)  # only the chosen users were scored
    assert chosen.to_dict("list") == every.iloc[some].to_dict("list")  # ties among 4 values
    nobody, phase_one = rank_files(scores, train, test, "ncf", seed=2, user_ids=ids, users=[])
    assert len(nobody) == 0 and phase_one.equals(sampled)


def example_script():
    sys.path.insert(0, str(EXAMPLES.parent))
    spec = importlib.util.spec_from_file_location("make_decide_examples", EXAMPLES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_doc_shows_what_every_command_prints(tmp_path):
    from test_cli import same_output

    script = example_script()
    shown = script.commands(DOC.read_text())
    assert any(c.startswith("sampled-metrics plan") for c, _ in shown)
    assert any("--exact" in c and "--design" in c for c, _ in shown)
    for command, output in shown:  # in order: each reads what the ones before wrote
        got = script.run(command, tmp_path)
        assert same_output(got, output), f"docs/deciding.md is stale for: {command}"


def one_file_per_model(pop, folder) -> dict:
    """ranks.csv split into one file per model, as two frameworks' evaluations write
    them (elliot-100: m = 100 without replacement), each with its sidecar; rows of B's
    file in another order."""
    table = pd.read_csv(pop["ranks"])
    files = {}
    for k, model in enumerate(("A", "B")):
        frame = table[["user", model, "m", "n"]]
        frame = frame.iloc[::-1] if k else frame
        files[model] = folder / f"{model}.csv"
        write_rank_file(frame, files[model],
                        rank_meta("elliot-100", rank_columns=[model], writer="test"))  # fmt: skip
    return files


def test_one_file_per_model_decides_as_one_file_of_both(capsys, population, tmp_path):
    """plan and correct on A.csv and B.csv print what they print on one file holding both
    models: the same design, estimates, intervals and verdicts."""
    files = one_file_per_model(population, tmp_path)
    both = tmp_path / "both.csv"
    pd.read_csv(population["ranks"]).to_csv(both, index=False)
    meta = rank_meta("elliot-100", rank_columns=["A", "B"], writer="test")
    write_rank_file(pd.read_csv(both), both, meta, force=True)  # the sidecar added
    records = []
    for ranks, name in (([both], "one"), ([files["A"], files["B"]], "two")):
        chosen = tmp_path / f"chosen-{name}.csv"
        status, _, err = cli(capsys, "plan", *ranks, "--budget", 0.25, "--seed", 3, "--out", chosen)
        assert status == 0, err
        exact = []
        for model in ("A", "B") if name == "two" else ("AB",):
            path = tmp_path / f"exact-{name}-{model}.csv"
            exact_file(population, chosen, path, columns=list(model))
            meta = rank_meta("full", rank_columns=list(model), m_column=None, writer="test")
            write_rank_file(pd.read_csv(path), path, meta, force=True)  # the sidecar added
            exact.append(path)
        status, out, err = cli(capsys, "correct", *ranks, "--exact", *exact, "--design", chosen,
                               "--json")  # fmt: skip
        assert status == 0, err
        records.append(json.loads(out))
    one, two = (pd.read_csv(tmp_path / f"chosen-{name}.csv") for name in ("one", "two"))
    pd.testing.assert_frame_equal(one, two)
    assert records[0] == records[1]
    verdicts = [r["verdict"] for r in records[1] if r["kind"] == "comparison"]
    assert verdicts and set(verdicts) == {"A better"}


def test_files_that_do_not_join_are_one_line_naming_the_file(capsys, population, tmp_path):
    files = one_file_per_model(population, tmp_path)
    table = pd.read_csv(files["B"])
    cases = {
        "a user missing": (table.iloc[1:], f"no row for user {table['user'].iloc[0]}"),
        "another n": (table.assign(n=table["n"] + 1), "n = 3001, but"),
        "the same model": (table.rename(columns={"B": "A"}), f"model A is in {files['A']} too"),
    }
    for spoiled, named in cases.values():
        columns = [c for c in spoiled.columns if c not in ("user", "m", "n")]
        write_rank_file(spoiled, files["B"],
                        rank_meta("elliot-100", rank_columns=columns, writer="test"))  # fmt: skip
        status, out, err = cli(capsys, "plan", files["A"], files["B"], "--out", tmp_path / "c.csv")
        assert (status, out) == (2, "") and err.count("\n") == 1 and named in err, err
        assert not (tmp_path / "c.csv").exists()
    status, _, err = cli(capsys, "plan", files["A"], files["A"], "--rank-column", "A",
                         "--out", tmp_path / "c.csv")  # fmt: skip
    assert status == 2 and "--rank-column picks columns of one file" in err
