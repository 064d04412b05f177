"""One call from scoring functions to a verdict (``sampled_metrics.decide``): on a
synthetic population with a known truth (A and C alike, B clearly worse), the verdicts
are those of the file loop run by hand on the same sampled ranks and seed (``plan
--sequential``, ``plan --continue`` until it stops, ``correct --design``), those of full
ranking where full ranking decides, at a fraction of its scored items; bad inputs stop
with one error each.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import sampled_metrics as sm
from sampled_metrics.cli import main
from sampled_metrics.estimation.decisions import paired_test
from sampled_metrics.frameworks.rank_files import exact_rank_frame

USERS, ITEMS, SEED = 1500, 300, 7
READ = ["--rank-column", "A", "--rank-column", "B", "--rank-column", "C",
        "--m", "99", "--law", "hypergeometric"]  # fmt: skip


@pytest.fixture(scope="module")
def case() -> dict:
    """Scores whose held-out item is lifted by 2.2 (A, C: independent noise) or 1.2 (B)."""
    rng = np.random.default_rng(3)
    train = sp.random(USERS, ITEMS, density=0.03, format="csr", random_state=4)
    train.data[:] = 1
    test = np.array([rng.choice(np.flatnonzero(row == 0)) for row in train.toarray()])

    def scores(lift: float) -> np.ndarray:
        s = rng.normal(size=(USERS, ITEMS))
        s[np.arange(USERS), test] += lift
        return s

    models = {"A": scores(2.2), "B": scores(1.2), "C": scores(2.2)}
    found = sm.decide(models, train, test, seed=SEED)
    full = exact_rank_frame(models, train, test)
    return {"models": models, "train": train, "test": test, "found": found, "full": full}


def cli(capsys, *argv) -> tuple[int, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert status == 0, err
    return status, out


def file_loop(capsys, case, folder) -> list[dict]:
    """The file loop on the same sampled ranks and seed, the exact ranks read from the
    full ranking as someone who ranks the chosen users does; correct's records."""
    ranks = folder / "ranks.csv"
    case["found"].sampled.to_csv(ranks, index=False)
    chosen = folder / "chosen1.csv"
    cli(capsys, "plan", ranks, *READ, "--sequential", "--seed", SEED, "--out", chosen)
    for k in range(1, 30):
        exact = folder / f"exact{k}.csv"
        full = case["full"]
        full[full["user"].isin(pd.read_csv(chosen)["user"])].to_csv(exact, index=False)
        following = folder / f"chosen{k + 1}.csv"
        cli(capsys, "plan", ranks, *READ, "--continue", chosen, "--exact", exact, "--out",
            following)  # fmt: skip
        if not following.exists():
            break
        chosen = following
    _, out = cli(capsys, "correct", ranks, *READ, "--exact", exact, "--design", chosen,
                 "--metrics", "recall@10", "--json")  # fmt: skip
    return json.loads(out)


def test_the_one_call_gives_the_file_loops_verdicts(capsys, case, tmp_path):
    records = file_loop(capsys, case, tmp_path)
    pairs = {(r["first"], r["second"]): r for r in records if r["kind"] == "sequential_comparison"}
    found = case["found"]
    assert len(pairs) == 3
    for first, second, look in found.pairs():
        r = pairs[first, second]
        assert look.verdict.label(first, second) == r["verdict"]
        assert (look.wave, look.n_chosen) == (r["wave"], r["users"])
        assert look.value == pytest.approx(r["difference"], abs=1e-12)
        assert (look.low, look.high) == pytest.approx((r["low"], r["high"]), abs=1e-12)
    (cost,) = [r for r in records if r["kind"] == "waves"]
    assert cost["users"][-1] == found.users_ranked and cost["state"] == found.run.state
    assert cost["share_of_items"] == pytest.approx(found.share_of_items)


def test_the_verdicts_are_full_rankings_where_it_decides(case):
    found, full = case["found"], case["full"]
    decided = 0
    for first, second, look in found.pairs():
        exact = paired_test(full[[first, second]].to_numpy().T, full["n"], "recall@10")
        if exact.verdict.decided:
            decided += 1
            assert look.verdict == exact.verdict, (first, second)
        assert look.verdict.label(first, second) != "B better"  # the known truth
    assert decided >= 2  # A-B and B-C are decided by full ranking
    assert [look.verdict.decided for _, _, look in found.pairs()] == [True, False, True]
    # ranked exactly: each ranked user once, far fewer than every user
    assert found.exact["user"].is_unique and len(found.exact) == found.users_ranked
    # the pairs far apart stop in the first waves; the alike pair may spend the budget
    assert all(look.n_chosen <= 0.05 * USERS for _, _, look in found.pairs()
               if look.verdict.decided)  # fmt: skip
    assert found.users_ranked <= 0.5 * USERS and found.share_of_items < 0.51
    exact_rows = full.set_index("user").loc[found.exact["user"]]
    assert np.array_equal(exact_rows[["A", "B", "C"]].to_numpy(),
                          found.exact[["A", "B", "C"]].to_numpy())  # fmt: skip


def test_bad_inputs_stop_with_one_error_each(case):
    models, train, test = case["models"], case["train"], case["test"]
    with pytest.raises(ValueError, match="two models or more"):
        sm.decide({"A": models["A"]}, train, test)
    with pytest.raises(ValueError, match="draws each model's items apart"):
        sm.decide(models, train, test, protocol="recbole-uni100")
    with pytest.raises(ValueError, match="by popularity"):
        sm.decide(models, train, test, protocol="bert4rec")
