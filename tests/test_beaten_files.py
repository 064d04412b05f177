"""The protocol study from the masks the ranking pass stores (studies.protocols.beaten_files):
the masks against their definition, the study from them equal to the study that scores
the models itself, and damaged or incomplete files refused by name."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from sampled_metrics.frameworks.protocol_pass import simulate_protocols
from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
from sampled_metrics.passes.block_pass import SCORE_CHUNK, rank_users, shard_bounds
from sampled_metrics.passes.draw_plan import draw_plan
from sampled_metrics.passes.ranking import above_and_tied
from sampled_metrics.passes.sampling import excluded_items, pool_sizes
from sampled_metrics.recommenders import PrecomputedScores
from sampled_metrics.studies.protocols.beaten_files import BeatenWriter, StoredBeaten, study_layers
from sampled_metrics.studies.protocols.stored import simulate_stored_protocols

USERS, ITEMS = 3 * SCORE_CHUNK + 5, 300
PROTOCOLS = list(FRAMEWORK_PROTOCOLS.values())  # every layer and tie order


def problem(seed=0):
    """Training items, held-out items and three models: continuous scores, scores of
    four values (ties everywhere, the held-out item's included) and a constant."""
    rng = np.random.default_rng(seed)
    train = sp.csr_matrix((rng.random((USERS, ITEMS)) < 0.1).astype(np.float32))
    test = np.array([rng.choice(np.flatnonzero(row == 0)) for row in train.toarray()])
    scores = [
        rng.normal(size=(USERS, ITEMS)),
        rng.integers(0, 4, (USERS, ITEMS)).astype(float),
        np.zeros((USERS, ITEMS)),
    ]
    models = [PrecomputedScores(s, name=f"M{k}") for k, s in enumerate(scores)]
    return train, test, models


def store(tmp_path, train, test, models, layers, shards, tie_policy="random"):
    """Each model's ranking pass, shard by shard, storing its masks: (StoredBeaten of
    every model, exact ranks of every model)."""
    plan = draw_plan(pool_sizes(excluded_items(train, test)), m=5, repetitions=2, seed=0,
                     chunk=SCORE_CHUNK)  # fmt: skip
    bounds = shard_bounds(USERS, shards)
    stored, exact = [], []
    for model in models:
        paths, ranks = [], []
        for k, (a, b) in enumerate(bounds):
            path = tmp_path / f"{model.name}-{k}.beaten.npy"
            with BeatenWriter(path, layers, a, b, test, ITEMS) as writer:
                ranks.append(
                    rank_users(
                        model,
                        train,
                        test,
                        plan,
                        a,
                        b,
                        tie_policy=tie_policy,
                        tie_seed=7,
                        memory_mb=0.05,
                        beaten=writer,
                    ).rank  # fmt: skip
                )
            paths.append(path)
        stored.append(StoredBeaten(paths, bounds, layers, ITEMS, name=model.name))
        exact.append(np.concatenate(ranks))
    return stored, exact


def test_the_stored_masks_are_the_items_above_and_tied_with_the_held_out_one(tmp_path):
    train, test, models = problem()
    stored, _ = store(tmp_path, train, test, models, [False, True], shards=3)
    dense = train.toarray() != 0
    rows = np.arange(USERS)
    for model, masks in zip(models, stored):
        S = model.scores(rows)
        target = S[rows, test][:, None]
        others = np.ones((USERS, ITEMS), bool)
        others[rows, test] = False
        for layer in (False, True):
            above, tied = masks.masks(0, USERS)[layer]
            ranked = others & (~dense if not layer else True)  # the items ranked
            np.testing.assert_array_equal(above, (S > target) & ranked)
            np.testing.assert_array_equal(tied, (S == target) & ranked)
        above, tied = masks.masks(40, 70)[False]  # a block across shards
        np.testing.assert_array_equal(above, masks.masks(0, USERS)[False][0][40:70])


@pytest.mark.parametrize("tie_policy", ["random", "pessimistic"])
@pytest.mark.parametrize("workers, memory_mb", [(1, 1e-3), (2, 1e-3), (1, 64)])
def test_the_study_from_stored_masks_equals_the_study_that_scores(
    tmp_path, tie_policy, workers, memory_mb
):
    """Every protocol (both layers, every tie order), blocks within and across shards,
    one or two processes: the same ranks, bit for bit."""
    train, test, models = problem(1)
    stored, exact = store(tmp_path, train, test, models, [False, True], 3, tie_policy)
    common = dict(repetitions=3, seed=5, tie_policy=tie_policy, tie_seed=7, memory_mb=memory_mb,
                  exact_ranks=exact, workers=workers)  # fmt: skip
    scored = simulate_protocols(models, train, test, PROTOCOLS, **common)
    read = simulate_stored_protocols(stored, train, test, PROTOCOLS, **common)
    assert scored.keys() == read.keys() == {p.name for p in PROTOCOLS}
    for name in scored:
        for field in ("sampled", "hansen_hurwitz", "weighted_rank"):
            a, b = getattr(scored[name], field), getattr(read[name], field)
            assert a.dtype == b.dtype and a.shape[-1] == USERS
            np.testing.assert_array_equal(a, b, err_msg=f"{name} {field}")


def test_masks_of_another_model_or_missing_layers_are_refused(tmp_path):
    train, test, models = problem(2)
    stored, exact = store(tmp_path, train, test, models, [False], shards=1)
    common = dict(repetitions=2, seed=0, tie_policy="random", tie_seed=7, memory_mb=64)
    with pytest.raises(ValueError, match="'M0'.*disagree with the exact ranks"):
        simulate_stored_protocols(stored, train, test, PROTOCOLS[:2], exact_ranks=exact[::-1],
                                  **common)  # fmt: skip
    sequential = [FRAMEWORK_PROTOCOLS["recbole-seq-uni100"]]
    assert study_layers(sequential) == [False, True]
    with pytest.raises(ValueError, match=r"'M0' lack the layers \[True\]"):
        simulate_stored_protocols(stored, train, test, sequential, exact_ranks=exact, **common)


def test_an_interrupted_or_incomplete_writer_leaves_no_file(tmp_path):
    train, test, models = problem()
    path = tmp_path / "b.npy"
    with pytest.raises(ValueError, match="not up to"):
        with BeatenWriter(path, [False], 0, USERS, test, ITEMS) as writer:
            writer.masked(*above_and_tied(models[0].scores(np.arange(32)), test[:32]), 0, 32)
    with pytest.raises(RuntimeError, match="killed"):
        with BeatenWriter(path, [False], 0, USERS, test, ITEMS):
            raise RuntimeError("killed")
    assert not [p.name for p in tmp_path.iterdir() if p.is_file()]


def test_a_cut_or_foreign_file_is_refused_by_name(tmp_path):
    train, test, models = problem()
    stored, _ = store(tmp_path, train, test, models[:1], [False], shards=1)
    path = tmp_path / "M0-0.beaten.npy"
    bounds = [(0, USERS)]
    with pytest.raises(ValueError, match=r"M0-0\.beaten\.npy.*layers \[False, True\]"):
        StoredBeaten([path], bounds, [False, True], ITEMS)
    with pytest.raises(ValueError, match=r"M0-0\.beaten\.npy.*10 users"):
        StoredBeaten([path], [(0, 10)], [False], ITEMS)
    path.write_bytes(path.read_bytes()[:-5])
    with pytest.raises(ValueError, match=r"M0-0\.beaten\.npy.*not a whole"):
        StoredBeaten([path], bounds, [False], ITEMS)
    path.write_bytes(b"not an array")
    with pytest.raises(ValueError, match=r"M0-0\.beaten\.npy: not a file of beaten items"):
        StoredBeaten([path], bounds, [False], ITEMS)


def test_no_layers_store_no_masks(tmp_path):
    train, test, models = problem()
    stored, _ = store(tmp_path, train, test, models[:1], [], shards=2)
    assert stored[0].masks(0, USERS) == {}
    assert np.load(tmp_path / "M0-0.beaten.npy").shape[1] == 0
