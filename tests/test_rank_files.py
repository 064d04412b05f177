"""Any model's ranks in the CLI's format (sampled_metrics.frameworks.rank_files):
exact ranks by counting, every item drawn gives the exact rank, the same draws for
every model, and the CLI reading the file it writes."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from sampled_metrics.cli import main
from sampled_metrics.frameworks.rank_files import rank_files, write_rank_files
from sampled_metrics.frameworks.registry import Protocol


def data(users: int = 96, items: int = 200, history: int = 12, seed: int = 0):
    """Every user trains on ``history`` items and holds out another; float32 scores
    without ties."""
    rng = np.random.default_rng(seed)
    chosen = np.array([rng.choice(items, history + 1, replace=False) for _ in range(users)])
    rows = np.repeat(np.arange(users), history)
    train = sp.csr_matrix((np.ones(rows.size), (rows, chosen[:, :history].ravel())), (users, items))
    scores = rng.permutation(users * items).reshape(users, items).astype(np.float32)
    return train, chosen[:, history], scores


def test_the_exact_ranks_count_the_items_scored_above_among_the_untrained():
    train, test, scores = data()
    exact, _ = rank_files({"A": scores}, train, test, "ncf")
    trained = train.toarray() > 0
    target = scores[np.arange(len(test)), test][:, None]
    above = np.count_nonzero((scores > target) & ~trained, axis=1)
    assert exact["A"].tolist() == (1 + above).tolist()
    assert exact["n"].tolist() == (200 - trained.sum(axis=1)).tolist()


def test_drawing_every_item_gives_the_exact_rank():
    """m = n - 1 without replacement: every other untrained item is drawn."""
    train, test, scores = data()
    every = Protocol("every", 200 - 12 - 1, 0.0, False, False, False, "all items")
    exact, sampled = rank_files({"A": scores}, train, test, every, seed=3)
    assert sampled["A"].tolist() == exact["A"].tolist()
    assert set(sampled["m"]) == {187}


def test_every_model_sees_the_same_draws_whatever_form_it_takes():
    train, test, scores = data(seed=1)

    class Model:
        def scores(self, users):
            return scores[users]

    models = {"array": scores, "function": lambda users: scores[users], "model": Model()}
    _, sampled = rank_files(models, train, test, "elliot", seed=5)  # paired
    assert sampled["array"].tolist() == sampled["function"].tolist() == sampled["model"].tolist()
    _, again = rank_files({"array": scores}, train, test, "elliot", seed=5)
    assert again["array"].tolist() == sampled["array"].tolist()
    # RecBole redraws for every model: the same scores, other draws; a model's draws
    # depend on its place, not on its form
    _, redrawn = rank_files(models, train, test, "recbole-uni100", seed=5)
    assert redrawn["array"].tolist() != redrawn["function"].tolist()
    for name in models:
        _, alone = rank_files({name: models[name]}, train, test, "recbole-uni100", seed=5)
        assert alone[name].tolist() == redrawn["array"].tolist()


def test_the_cli_reads_the_sampled_file_with_its_protocol(capsys, tmp_path):
    train, test, scores = data(seed=2)
    _, sampled = rank_files({"A": scores, "B": -scores}, train, test, "ncf", seed=4)
    path = tmp_path / "sampled.csv"
    sampled.to_csv(path, index=False)
    status = main(
        ["correct", str(path), "--protocol", "ncf", "--rank-column", "A", "--rank-column", "B",
         "--metrics", "recall@10", "--estimators", "sampled", "--no-range", "--json", "--quiet"]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert status == 0, err
    got = {r["model"]: r["estimate"] for r in json.loads(out) if r["kind"] == "estimate"}
    assert got["A"] == pytest.approx(np.mean(sampled["A"] <= 10), rel=1e-12)
    assert got["B"] == pytest.approx(np.mean(sampled["B"] <= 10), rel=1e-12)


def test_an_unknown_protocol_names_the_known_ones():
    train, test, scores = data()
    with pytest.raises(ValueError, match="unknown protocol 'uni100'; give full, ncf, "):
        rank_files({"A": scores}, train, test, "uni100")


def test_the_full_protocol_is_no_sampled_file_and_nothing_is_written(tmp_path):
    train, test, scores = data()
    frames = rank_files({"A": scores}, train, test, "ncf")
    with pytest.raises(ValueError, match="protocol 'full' is the exact frame"):
        write_rank_files(*frames, "full", tmp_path / "full.csv", tmp_path / "sampled.csv")
    assert list(tmp_path.iterdir()) == []
