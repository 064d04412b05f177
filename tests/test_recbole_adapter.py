"""RecBole's evaluation, rank by rank (docs/recbole.md): the worked example of the page,
run as written in RecBole's environment (.envs/recbole, built by .ci/envs/recbole.sh),
gives rank files whose Hit@k, NDCG@k and MRR@k are RecBole's printed metrics (to its
four decimals, ties included), in the command line's format, with m and n as RecBole
drew them and a sidecar naming the protocol; ``sampled-metrics correct`` reads the
recbole-uni20 file by its sidecar alone and gives ranges that hold the exact metrics of
the full-sort file; ``--users chosen.csv`` (``sampled-metrics plan``'s) ranks those
users alone, each as among all, and ``correct --exact --design`` decides from them;
and ``sampled-metrics recbole`` in an environment without RecBole says so in one line.
Without .envs/recbole the tests are skipped, and fail under CI (which builds it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from conftest import IN_CI, REPO, await_framework_envs

from sampled_metrics import metric_by_name
from sampled_metrics.cli import main
from sampled_metrics.estimation.decisions import paired_test
from sampled_metrics.frameworks.rank_files import rank_files
from sampled_metrics.frameworks.rank_meta import read_rank_meta

pytestmark = pytest.mark.slow

ENV = REPO / ".envs" / "recbole"
DOC = REPO / "docs" / "recbole.md"
KS = (1, 5, 10)
# RecBole rounds its metrics to metric_decimal_place = 4.
PRECISION = 0.5e-4 + 1e-9


def doc_section() -> str:
    return DOC.read_text().split("\n## Worked example\n", 1)[1].split("\n## ", 1)[0]


def doc_commands() -> list[str]:
    block = re.search(r"```bash\n(.*?)```", doc_section(), re.DOTALL)
    assert block, "no bash block in docs/recbole.md, 'Worked example'"
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def doc_outputs() -> list[str]:
    return re.findall(r"```console\n(.*?)```", doc_section(), re.DOTALL)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The page's commands run in an empty folder, R the repository, the last one in
    this environment (plus --json); their standard outputs."""
    await_framework_envs()
    if not (ENV / "bin" / "python").exists():
        message = f"{ENV.relative_to(REPO)} is missing: build it with .ci/envs/recbole.sh"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    work = tmp_path_factory.mktemp("recbole")
    env = {
        **os.environ,
        "R": str(REPO),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    commands = doc_commands()
    assert len(commands) == 3 and commands[2].startswith("sampled-metrics correct ")
    outputs = []
    for command in [*commands, commands[2] + " --json"]:
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"{command}\n{done.stderr[-3000:]}"
        outputs.append(done.stdout)
    return work, outputs


def records(example) -> list[dict]:
    """The JSON lines of the case script and of the adapter's command."""
    work, outputs = example
    return [json.loads(line) for text in outputs[:2] for line in text.splitlines()]


def test_every_mode_and_route_is_recorded(example):
    found = [(r["protocol"], r["column"], Path(r["file"]).name) for r in records(example)]
    assert found == [
        ("recbole-uni20", "BPR", "inprocess-recbole-uni20.csv"),
        ("recbole-uni20", "BPR_ties", "ties-recbole-uni20.csv"),
        ("full", "BPR_ties", "ties-full.csv"),
        ("recbole-uni20", "BPR", "BPR-recbole-uni20.csv"),
        ("recbole-pop20", "BPR", "BPR-recbole-pop20.csv"),
        ("full", "BPR", "BPR-full.csv"),
    ]


def test_every_file_has_the_sidecar_of_its_protocol(example):
    """uni20: the distinct items of 20 draws, read with the hypergeometric law; pop20:
    no law (popularity draws); full: a full ranking. The ties: RecBole's order within its
    top k, the seeded random order below it."""
    work, _ = example
    laws = {"recbole-uni20": "hypergeometric", "recbole-pop20": None}
    for record in records(example):
        path = work / record["file"]
        meta = read_rank_meta(path, header=list(pd.read_csv(path, nrows=0).columns))
        assert meta.protocol == record["protocol"]
        assert meta.rank_columns == {record["column"]: record["column"]}
        if meta.full:
            assert meta.m_column is None and meta.law is None
        else:
            assert (meta.m_column, meta.law) == ("m", laws[meta.protocol])
        sidecar = json.loads(path.with_name(path.name + ".meta.json").read_text())
        assert sidecar["ties"]["order"] == "random" and sidecar["ties"]["seed"] == 2020
        assert "torch.topk" in sidecar["ties"]["detail"]
        assert sidecar["produced_by"]["framework"].startswith("recbole 1.2.")


def test_the_files_give_recboles_metrics(example):
    work, _ = example
    compared = 0
    for record in records(example):
        ranks = pd.read_csv(work / record["file"])[record["column"]].to_numpy()
        for k in KS:
            for name, ours in (("hit", "recall"), ("ndcg", "ndcg"), ("mrr", "mrr")):
                value = float(np.mean(metric_by_name(f"{ours}@{k}")(ranks)))
                recbole = record["recbole"][f"{name}@{k}"]
                assert abs(value - recbole) <= PRECISION, (record["file"], name, k, value)
                compared += 1
    assert compared == 6 * 9


def test_ties_are_ranked_as_recbole_ranks_them(example):
    """The rounded model ties most held-out items with another item: the files still
    give RecBole's metrics (above), so its torch.topk order is the files' order."""
    (tied,) = [r["tied"] for r in records(example) if "tied" in r]
    assert tied > 0.5


def test_columns_are_those_of_rank_files(example):
    work, _ = example
    train = sp.csr_matrix(np.eye(3, 5))
    exact, sampled = rank_files({"BPR": np.ones((3, 5))}, train, [1, 2, 3], "recbole-uni100")
    for record in records(example):
        frame = pd.read_csv(work / record["file"])
        expected = exact if record["protocol"] == "full" else sampled
        assert list(frame.columns) == [c.replace("BPR", record["column"]) for c in expected]


def test_m_and_n_are_what_recbole_drew_from(example):
    """n - 1: every item of the data but the user's own (train, valid and test); m: the
    distinct items of 20 draws with replacement, some drawn twice."""
    work, _ = example
    data = pd.read_csv(work / "data" / "tiny" / "tiny.inter", sep="\t")
    data.columns = ["user", "item", "time"]
    catalogue = data["item"].nunique()
    expected_n = catalogue - data.groupby("user")["item"].nunique() + 1
    users = None
    for record in records(example):
        frame = pd.read_csv(work / record["file"])
        if users is None:  # the same rows in every file, one per user
            users = frame["user"].tolist()
        assert frame["user"].tolist() == users and sorted(users) == sorted(expected_n.index)
        assert frame["n"].tolist() == expected_n.loc[users].tolist()
        rank = frame[record["column"]]
        if record["protocol"] == "full":
            assert rank.between(1, frame["n"]).all()
        else:
            assert rank.between(1, frame["m"] + 1).all()
            assert frame["m"].between(1, 20).all() and (frame["m"] < 20).mean() > 0.5
            # 20 draws from about 67 items: about 17.3 distinct ones on average
            assert 16 < frame["m"].mean() < 18.5


def test_the_page_shows_the_outputs(example):
    """The adapter's output is the page's; so are the rows of the corrected table."""
    _, outputs = example
    shown = doc_outputs()
    assert len(shown) == 2
    assert shown[0] == outputs[1], f"docs/recbole.md should show:\n{outputs[1]}"
    rows = [line for line in outputs[2].splitlines() if line.startswith("BPR ")]
    assert len(rows) == 12
    assert [line for line in shown[1].splitlines() if line.startswith("BPR ")] == rows


def test_the_ranges_hold_the_exact_metrics(example):
    work, outputs = example
    found = json.loads(outputs[3])
    exact = pd.read_csv(work / "ranks" / "BPR-full.csv")["BPR"].to_numpy()
    (uni,) = [r for r in records(example) if r["file"] == "ranks/BPR-recbole-uni20.csv"]
    metrics = ("hit@10", "ndcg@10", "mrr@10")
    for metric in metrics:
        truth = float(np.mean(metric_by_name(metric)(exact)))
        (bounds,) = [r for r in found if r["kind"] == "range" and r["metric"] == metric]
        assert bounds["low"] <= truth <= bounds["high"], (metric, truth, bounds)
        (sampled,) = [
            r
            for r in found
            if r["kind"] == "estimate" and r["metric"] == metric and r["estimator"] == "sampled"
        ]
        assert abs(sampled["estimate"] - uni["recbole"][metric]) <= PRECISION
        # the sampled metric is far above the exact one: there is something to correct
        assert sampled["estimate"] > 1.5 * truth


def test_the_full_file_reads_as_recboles_full_metrics(example, capsys):
    """correct on the full-sort file, by its sidecar alone: RecBole's full metrics."""
    work, _ = example
    (full,) = [r for r in records(example) if r["file"] == "ranks/BPR-full.csv"]
    argv = ["correct", str(work / full["file"]), "--metrics", "hit@10", "ndcg@10", "mrr@10"]
    assert main([*argv, "--json", "--quiet"]) == 0
    for record in json.loads(capsys.readouterr().out):
        assert record["kind"] == "exact"
        assert abs(record["value"] - full["recbole"][record["metric"]]) <= PRECISION


def test_without_recbole_the_command_says_so_in_one_line(capsys, tmp_path):
    """This environment has no RecBole: one line naming the fix, exit status 2."""
    checkpoint = tmp_path / "BPR.pth"
    checkpoint.write_bytes(b"not a checkpoint")
    assert main(["recbole", str(checkpoint), "--out", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("sampled-metrics recbole: error: ")
    assert "needs RecBole and torch (not installed here): run it in an " in err
    assert f"`bash {REPO}/.ci/envs/recbole.sh`" in err


def test_every_file_says_its_tie_order(example):
    orders = [r["tie_order"] for r in records(example) if "tie_order" in r]
    assert len(orders) == 3
    expected = {"ties": "random", "seed": 2020, "within_top_k": "recbole torch.topk", "top_k": 10}
    assert all(order == expected for order in orders)


def test_below_the_top_k_a_tied_item_takes_a_random_place_among_its_ties(example):
    """The rounded model in full sorting: in the top 10 (where RecBole's metrics read)
    every tie order gives RecBole's place; below it, the held-out item comes after
    every item scored higher (``above``, counted from the scores), and among the
    ``tied`` items level with it: first (optimistic; after those listed in the top 10),
    last (pessimistic: 1 + above + tied), or at a random place in between, on
    average about half-way."""
    work, _ = example
    files = {"random": "ties-full", "optimistic": "ties-full-optimistic"}
    files["pessimistic"] = "ties-full-pessimistic"
    ranks = {
        ties: pd.read_csv(work / "ranks" / f"{file}.csv")["BPR_ties"].to_numpy()
        for ties, file in files.items()
    }
    counts = pd.read_csv(work / "ranks" / "ties-full-counts.csv", dtype={"user": str})
    users = pd.read_csv(work / "ranks" / "ties-full.csv", dtype={"user": str})["user"]
    counts = counts.set_index("user").loc[users]
    above, tied = counts["above"].to_numpy(), counts["tied"].to_numpy()
    top = ranks["random"] <= 10
    assert 0 < top.sum() < len(top)
    for ties in ("optimistic", "pessimistic"):
        assert (ranks[ties][top] == ranks["random"][top]).all()
    below = ~top
    assert (ranks["pessimistic"][below] == 1 + above[below] + tied[below]).all()
    assert (ranks["optimistic"][below] >= 1 + above[below]).all()
    assert (ranks["optimistic"] <= ranks["random"]).all()
    assert (ranks["random"] <= ranks["pessimistic"]).all()
    spread = below & (ranks["pessimistic"] > ranks["optimistic"])
    assert spread.sum() >= 10
    share = (ranks["random"] - ranks["optimistic"])[spread] / (
        ranks["pessimistic"] - ranks["optimistic"]
    )[spread]
    assert 0.2 < share.mean() < 0.8, share


def test_users_ranked_alone_rank_as_among_all_ties_included(example):
    """The rounded model (most held-out items tied) in full sorting, every third user
    ranked alone (eval_loader's users): their rows of the file of every user, the
    random order below the top k included (its keys are the user's and item's ids)."""
    work, _ = example
    every = pd.read_csv(work / "ranks" / "ties-full.csv", dtype={"user": str})
    some = pd.read_csv(work / "ranks" / "ties-full-some.csv", dtype={"user": str})
    assert 0 < len(some) < len(every) and (some["BPR_ties"] > 10).sum() >= 5
    expected = every[every["user"].isin(set(some["user"]))].reset_index(drop=True)
    pd.testing.assert_frame_equal(some, expected)


def test_plan_then_users_then_correct_decides_from_the_chosen_users(example, capsys):
    """plan on the uni20 file, the command with --protocol full --users chosen.csv,
    correct --exact --design: the chosen users' rows of the all-users full file, a
    sidecar that says the subset, and the estimate from them (60 users are too few for a
    design to promise its coverage: plan chooses every user, the estimate is exact)."""
    work, _ = example
    sampled = work / "ranks" / "BPR-recbole-uni20.csv"
    exact = work / "chosen-ranks" / "BPR-full.csv"
    argv = ["plan", str(sampled), "--budget", "0.5", "--seed", "1"]
    assert main([*argv, "--out", str(work / "chosen.csv")]) == 0
    command = (
        f"{ENV / 'bin' / 'sampled-metrics'} recbole saved/BPR.pth --protocol full "
        "--users chosen.csv --out chosen-ranks"
    )
    done = subprocess.run(["bash", "-c", command], cwd=work, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    chosen = pd.read_csv(work / "chosen.csv", dtype={"user": str})["user"]
    some = pd.read_csv(work / "chosen-ranks" / "BPR-full.csv", dtype={"user": str})
    every = pd.read_csv(work / "ranks" / "BPR-full.csv", dtype={"user": str})
    assert len(some) == len(chosen) == len(every)
    expected = every[every["user"].isin(set(chosen))].reset_index(drop=True)
    pd.testing.assert_frame_equal(some, expected)
    meta = json.loads((work / "chosen-ranks" / "BPR-full.csv.meta.json").read_text())
    assert meta["users"] == {"file": "chosen.csv", "count": len(every)}
    capsys.readouterr()
    sampled, exact = (
        work / "ranks" / "BPR-recbole-uni20.csv",
        work / "chosen-ranks" / "BPR-full.csv",
    )
    argv = ["correct", str(sampled), "--exact", str(exact), "--design", str(work / "chosen.csv")]
    assert main([*argv, "--metrics", "recall@10"]) == 0
    (row,) = [line.split() for line in capsys.readouterr().out.splitlines()
              if line.startswith("BPR ")]  # fmt: skip
    model, metric, estimate, low, high = row
    assert (model, metric) == ("BPR", "recall@10")
    assert low == estimate == high
    assert float(estimate) == pytest.approx(np.mean(every["BPR"] <= 10), abs=5e-5)


def test_two_checkpoints_are_compared_from_their_two_files(example, capsys):
    """Pop's checkpoint evaluated by the command beside BPR's (the config's seed: the same
    items drawn for both), plan on both files, the chosen users' rows of each full file
    (what --users writes: test_plan_then_users_...), correct on both: every interval holds
    the exact metric of the full files, and a verdict, if any, names BPR, whose exact
    Recall@10 is higher (60 users: plan chooses every user, the intervals have zero
    width about the exact metrics, up to rounding)."""
    work, _ = example
    line = f"{ENV / 'bin' / 'sampled-metrics'} recbole saved/Pop.pth --protocol recbole-uni20 --protocol full --out ranks"  # noqa: E501
    done = subprocess.run(["bash", "-c", line], cwd=work, text=True, capture_output=True,
                          timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    files = [str(work / "ranks" / f"{m}-recbole-uni20.csv") for m in MODELS]
    chosen = work / "both.csv"
    assert main(["plan", *files, "--budget", "0.5", "--seed", "2", "--out", str(chosen)]) == 0
    users = set(pd.read_csv(chosen, dtype={"user": str})["user"])
    exact = []
    for model in MODELS:
        full = work / "ranks" / f"{model}-full.csv"
        frame = pd.read_csv(full, dtype={"user": str})
        exact.append(work / f"both-{model}-full.csv")
        frame[frame["user"].isin(users)].to_csv(exact[-1], index=False)
        exact[-1].with_name(exact[-1].name + ".meta.json").write_text(
            full.with_name(full.name + ".meta.json").read_text()
        )
    capsys.readouterr()
    argv = ["correct", *files, "--exact", *map(str, exact), "--design", str(chosen)]
    assert main([*argv, "--metrics", "recall@10", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    truth = {m: float(np.mean(pd.read_csv(work / "ranks" / f"{m}-full.csv")[m] <= 10))
             for m in MODELS}  # fmt: skip
    assert truth["BPR"] > truth["Pop"]
    (pair,) = [r for r in records if r["kind"] == "comparison"]
    assert pair["verdict"] in ("BPR better", "undecided")
    rounding = 1e-12
    assert pair["low"] - rounding <= truth["BPR"] - truth["Pop"] <= pair["high"] + rounding
    for record in [r for r in records if r["kind"] == "estimate"]:
        assert record["low"] - rounding <= truth[record["model"]] <= record["high"] + rounding


MODELS = ("BPR", "Pop")


def test_a_second_checkpoint_of_one_class_gets_files_of_its_own(example):
    """A second checkpoint of BPR (here a copy: the same model, so the same ranks) is
    named by its file's stem: its files and rank column are BPR-again's, and BPR's file
    is left as it was."""
    work, _ = example
    shutil.copy(work / "saved" / "BPR.pth", work / "saved" / "BPR-again.pth")
    first = work / "ranks" / "BPR-full.csv"
    before = first.read_bytes()
    line = f"{ENV / 'bin' / 'sampled-metrics'} recbole saved/BPR-again.pth --protocol full"
    done = subprocess.run(["bash", "-c", line], cwd=work, text=True, capture_output=True,
                          timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"})  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    again = work / "ranks" / "BPR-again-full.csv"
    frame = pd.read_csv(again, dtype={"user": str})
    assert list(frame.columns) == ["user", "BPR-again", "n"]
    assert frame["BPR-again"].tolist() == pd.read_csv(first)["BPR"].tolist()
    assert first.read_bytes() == before
    meta = json.loads(again.with_name(again.name + ".meta.json").read_text())
    assert meta["rank_columns"] == {"BPR-again": "BPR-again"}
    assert meta["source"]["from"] == "checkpoint saved/BPR-again.pth"


def _in_env(work: Path, line: str) -> subprocess.CompletedProcess:
    """``line`` run in RecBole's environment, in the example's folder."""
    path = f"{ENV / 'bin'}{os.pathsep}{os.environ['PATH']}"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PATH": path}
    return subprocess.run(["bash", "-c", line], cwd=work, text=True, capture_output=True,
                          timeout=600, env=env)  # fmt: skip


def test_decide_gives_full_rankings_verdict_and_its_cost(example, capsys):
    """``recbole BPR.pth Pop.pth --decide``: both checkpoints evaluated on the same drawn
    items, the waves ranked exactly, the verdict full ranking's paired test gives (BPR's
    exact Recall@10 is far above Pop's on the 60 users), its cost printed; with --out the
    file loop's files, whose ``correct --design`` gives the same verdict; and the JSON
    records say the same."""
    work, _ = example
    done = _in_env(work, "sampled-metrics recbole saved/Pop.pth --protocol full --out truth")
    assert done.returncode == 0, done.stderr[-3000:]
    full = [pd.read_csv(work / folder / f"{m}-full.csv", dtype={"user": str}).set_index("user")
            for folder, m in (("ranks", "BPR"), ("truth", "Pop"))]  # fmt: skip
    both = full[0].join(full[1][["Pop"]], how="inner")
    exact = paired_test(both[["BPR", "Pop"]].to_numpy().T, both["n"], "recall@10")
    assert exact.verdict.label("BPR", "Pop") == "BPR better"
    line = ("sampled-metrics recbole saved/BPR.pth saved/Pop.pth --decide --protocol "
            "recbole-uni20 --seed 3 --out decided")  # fmt: skip
    done = _in_env(work, line)
    assert done.returncode == 0, done.stderr[-3000:]
    table = done.stdout.split("verdict\n", 1)[1].splitlines()[0].split()
    assert table[:3] == ["BPR", "Pop", "recall@10"] and " ".join(table[8:]) == "BPR better"
    cost = next(text for text in done.stdout.splitlines() if text.startswith("cost: "))
    assert re.search(r"\d+ users ranked exactly by each model .*% of a full ranking's scored "
                     r"items\); wall time [\d.]+ s: loading [\d.]+ s", cost)  # fmt: skip
    assert "ranking all 60 users exactly by every model: about" in done.stdout
    again = done.stdout.splitlines()[-1].removeprefix("re-check: sampled-metrics ").split()
    capsys.readouterr()
    again = [str(work / word) if word.startswith("decided/") else word for word in again]
    assert main([*again, "--json"]) == 0
    (pair,) = [
        r for r in json.loads(capsys.readouterr().out) if r["kind"] == "sequential_comparison"
    ]
    assert pair["verdict"] == "BPR better"
    done = _in_env(work, line + " --force --json")
    assert done.returncode == 0, done.stderr[-3000:]
    kinds = [r["kind"] for r in json.loads(done.stdout)]
    assert kinds == ["sequential_comparison", "waves", "decision_cost"]


def test_decide_stops_on_bad_checkpoints_with_one_line(example, capsys):
    """One checkpoint, several without --decide, and a checkpoint of another data set:
    one line each, non-zero exit, nothing written; and sampled evaluations that drew other
    items for each model stop the adapter."""
    work, _ = example
    for argv in (["saved/BPR.pth", "--decide"], ["saved/BPR.pth", "saved/Pop.pth"]):
        assert main(["recbole", *[str(work / a) if a.endswith(".pth") else a for a in argv]]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
    edit = (
        "import torch; c = torch.load('saved/Pop.pth', weights_only=False); "
        "c['config']['dataset'] = 'other'; torch.save(c, 'saved/Other.pth')"
    )
    assert _in_env(work, f'python -c "{edit}"').returncode == 0
    done = _in_env(work, "sampled-metrics recbole saved/BPR.pth saved/Other.pth --decide "
                   "--protocol recbole-uni20 --out other")  # fmt: skip
    assert done.returncode != 0 and not (work / "other").exists()
    error = done.stderr.strip().splitlines()[-1]
    assert "saved/Other.pth is a checkpoint of another data set or split" in error
    assert "dataset is 'other', not 'tiny'" in error
    # evaluations that drew other items for each model are caught, not assumed away
    (work / "redraw.py").write_text(REDRAW)
    done = _in_env(work, "python redraw.py")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == (
        "RecBole's sampled evaluation drew other items for Pop than for BPR: the models are "
        "not paired"
    )


# Each model's sampled evaluation drawing its items anew (no reseeding, no shared batches).
REDRAW = """
import recbole.utils

from sampled_metrics.frameworks.adapters import recbole_decide

class Redrawn(recbole_decide.DrawnOnce):
    def __iter__(self):
        return iter(self.loader)

recbole_decide.DrawnOnce = Redrawn
recbole.utils.init_seed = lambda *args: None
loaded = recbole_decide.load_checkpoints(["saved/BPR.pth", "saved/Pop.pth"])
try:
    recbole_decide.sampled_frame(loaded, "recbole-uni20")
except ValueError as error:
    print(error)
"""
