"""The one pass over blocks of users (block_pass) against the whole-matrix
functions it replaces: exact ranks (ranking.exact_ranks) and sampled ranks drawn
for all users at once (sampling.sampled_ranks), for every tie policy, block
budget and number of shards; the draw plan against draw_positions."""

import contextlib
import itertools
import re

import numpy as np
import pytest
import scipy.sparse as sp

from sampled_metrics.passes import block_pass
from sampled_metrics.passes.block_pass import (
    rank_users,
    score_users,
    shard_bounds,
    users_per_block,
)
from sampled_metrics.passes.draw_plan import (
    block_positions,
    draw_plan,
    load_draw_plan,
    save_draw_plan,
)
from sampled_metrics.passes.ranking import exact_ranks
from sampled_metrics.passes.sampling import (
    draw_positions,
    excluded_items,
    pool_sizes,
    sampled_ranks,
)
from sampled_metrics.passes.ties import TIE_POLICIES
from sampled_metrics.passes.user_ranks import (
    UserRanks,
    concatenate_user_ranks,
    load_user_ranks,
    save_user_ranks,
)
from sampled_metrics.recommenders import PrecomputedScores

CHUNK = 4  # small chunks, so that 30 users make several blocks and shards


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(block_pass, "SCORE_CHUNK", CHUNK)


def problem(seed, n_users=30, n_items=25, levels=4):
    """Random training items, held-out items outside them, and integer scores
    with few levels (many ties)."""
    rng = np.random.default_rng(seed)
    train = sp.csr_matrix((rng.random((n_users, n_items)) < 0.3).astype(np.float32))
    test = np.array([rng.choice(np.flatnonzero(row.toarray()[0] == 0)) for row in train])
    scores = rng.integers(0, levels, (n_users, n_items)).astype(np.float32)
    return train, test, scores


def plan_for(train, test, m, seed, replacement=False, repetitions=5):
    pool = pool_sizes(excluded_items(train, test))
    return draw_plan(pool, m, repetitions, seed, chunk=CHUNK, replacement=replacement)


@pytest.mark.parametrize("policy", TIE_POLICIES)
@pytest.mark.parametrize("replacement", [False, True])
def test_one_pass_equals_exact_and_sampled_ranks_of_the_whole_matrix(policy, replacement):
    # blocks of one chunk (the last one shorter, in the first block's arrays) or of all
    # 30 users (their free scores packed in place a chunk at a time)
    for seed, memory_mb in itertools.product(range(4), (1e-4, 64)):
        train, test, scores = problem(seed)
        plan = plan_for(train, test, m=6, seed=seed, replacement=replacement)
        r = rank_users(
            PrecomputedScores(scores),
            train,
            test,
            plan,
            0,
            30,
            tie_policy=policy,
            tie_seed=7,
            memory_mb=memory_mb,
        )
        exact, n = exact_ranks(PrecomputedScores(scores), train, test, tie_policy=policy, seed=7)
        pessimistic, _ = exact_ranks(PrecomputedScores(scores), train, test)
        sampled = sampled_ranks(
            scores,
            test,
            excluded_items(train, test),
            6,
            5,
            seed,
            tie_policy=policy,
            tie_seed=7,
            replacement=replacement,
        )
        np.testing.assert_array_equal(r.rank, exact)
        np.testing.assert_array_equal(r.n_candidates, n)
        np.testing.assert_array_equal(r.pessimistic, pessimistic)
        assert r.sampled.dtype == sampled.dtype
        np.testing.assert_array_equal(r.sampled, sampled)


@pytest.mark.parametrize("shards", [1, 2, 3, 5, 8, 11])
def test_any_shards_and_block_budget_give_the_same_bytes(shards):
    train, test, scores = problem(11)
    plan = plan_for(train, test, m=5, seed=3)
    model = PrecomputedScores(scores)

    def run(start, stop, memory_mb):
        return rank_users(
            model,
            train,
            test,
            plan,
            start,
            stop,
            tie_policy="random",
            tie_seed=1,
            memory_mb=memory_mb,
        )

    whole = run(0, 30, 64)
    for memory_mb in (1e-4, 0.001, 64):
        parts = [run(a, b, memory_mb) for a, b in shard_bounds(30, shards)]
        merged = concatenate_user_ranks(parts, 30)
        for field in ("rank", "n_candidates", "pessimistic", "sampled"):
            a, b = getattr(merged, field), getattr(whole, field)
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), field


def test_scores_are_asked_for_in_aligned_chunks_only():
    calls = []

    class Recording(PrecomputedScores):
        def scores(self, users):
            calls.append((int(users[0]), int(users[-1]) + 1))
            return super().scores(users)

    model = Recording(np.arange(30 * 3, dtype=np.float32).reshape(30, 3))
    np.testing.assert_array_equal(score_users(model, 8, 30), model.all[8:30])
    assert calls == [(8, 12), (12, 16), (16, 20), (20, 24), (24, 28), (28, 30)]
    with pytest.raises(ValueError, match="multiple of 4"):
        score_users(model, 6, 30)


def test_users_per_block_follows_the_budget():
    sizes = [users_per_block(1000, mb) for mb in (0.01, 0.5, 1, 4, 64)]
    assert all(s % CHUNK == 0 and s >= CHUNK for s in sizes)
    assert sizes == sorted(sizes) and sizes[0] == CHUNK < sizes[-1]


class _ScoresOnTheFly:
    """A model that holds nothing: every score computed when asked for."""

    name = "on-the-fly"

    def scores(self, users):
        return np.sin(np.outer(users + 1.0, np.arange(1.0, 2001.0)))


@pytest.mark.parametrize("memory_mb", [8, 16])
@pytest.mark.parametrize("layers", [None, [False, True]])
def test_the_ranking_pass_stays_within_its_memory_budget(memory_mb, layers, tmp_path):
    """Every array the pass allocates (numpy's, as tracemalloc counts them), its output
    included, within ``memory_mb`` when the model holds nothing: blocks of several
    chunks of 2000 items, 100 sampled items, the random tie order; with the protocol
    study's masks stored as well (both layers) or not."""
    import tracemalloc

    from sampled_metrics.studies.protocols.beaten_files import BeatenWriter

    rng = np.random.default_rng(0)
    train = sp.csr_matrix((rng.random((1024, 2000)) < 0.05).astype(np.float32))
    test = np.array([rng.choice(np.flatnonzero(row == 0)) for row in train.toarray()])
    plan = draw_plan(
        pool_sizes(excluded_items(train, test)), m=100, repetitions=3, seed=0, chunk=CHUNK
    )
    assert 2 * CHUNK < users_per_block(2000, memory_mb) < 1024  # several blocks of chunks
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        with contextlib.ExitStack() as stack:
            writer = None
            if layers is not None:
                writer = BeatenWriter(tmp_path / "b.npy", layers, 0, 1024, test, 2000)
                stack.enter_context(writer)
            rank_users(_ScoresOnTheFly(), train, test, plan, 0, 1024, tie_policy="random",
                       tie_seed=0, memory_mb=memory_mb, beaten=writer)  # fmt: skip
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak <= memory_mb * 2**20


@pytest.mark.parametrize("n_users", [1, 4, 5, 30, 33])
@pytest.mark.parametrize("shards", [1, 2, 3, 7, 20])
def test_shard_bounds_cover_the_users_in_whole_chunks(n_users, shards):
    bounds = shard_bounds(n_users, shards)
    assert len(bounds) == shards and bounds[0][0] == 0 and bounds[-1][1] == n_users
    assert all(b[1] == c[0] for b, c in zip(bounds, bounds[1:]))
    assert all((a % CHUNK == 0 or a == n_users) and a <= b for a, b in bounds)
    chunks = [-(-(b - a) // CHUNK) for a, b in bounds]
    assert max(chunks) - min(chunks) <= 1  # as even as whole chunks allow
    with pytest.raises(ValueError, match="shards"):
        shard_bounds(n_users, 0)


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_a_non_finite_score_names_recommender_user_id_and_item(value):
    train, test, scores = problem(2)
    scores[9, 4] = value
    scores[20, 1] = value  # a later one: the message names the first
    plan = plan_for(train, test, m=3, seed=0)
    shown = re.escape(str(np.float32(value)))
    with pytest.raises(ValueError, match=rf"'M': 2 scores.*user 9 \(id 'u9'\) for item 4: {shown}"):
        rank_users(
            PrecomputedScores(scores, name="M"),
            train,
            test,
            plan,
            0,
            30,
            tie_policy="random",
            tie_seed=0,
            memory_mb=1,
            user_ids=[f"u{u}" for u in range(30)],
        )


def test_a_plan_for_other_users_or_items_is_refused():
    train, test, scores = problem(3)
    model = PrecomputedScores(scores)
    other = plan_for(*problem(4)[:2], m=3, seed=0)  # other training items, same users
    with pytest.raises(ValueError, match="other training items"):
        rank_users(model, train, test, other, 0, 30, tie_policy="random", tie_seed=0, memory_mb=1)
    fewer = draw_plan(np.full(20, 10), 3, 2, 0, chunk=CHUNK)
    with pytest.raises(ValueError, match="20 users"):
        rank_users(model, train, test, fewer, 0, 30, tie_policy="random", tie_seed=0, memory_mb=1)
    with pytest.raises(ValueError, match="whole chunks"):
        rank_users(
            model,
            train,
            test,
            plan_for(train, test, 3, 0),
            2,
            30,
            tie_policy="random",
            tie_seed=0,
            memory_mb=1,
        )


@pytest.mark.parametrize("replacement", [False, True])
def test_draw_plan_blocks_draw_what_the_whole_draw_gives(replacement):
    rng = np.random.default_rng(0)
    for trial in range(40):
        n, m, chunk = int(rng.integers(1, 70)), int(rng.integers(1, 25)), int(rng.integers(1, 9))
        pool = rng.integers(m, 2 * m + 3, n)  # small pools: many rounds of redraws
        plan = draw_plan(pool, m, 3, trial, chunk=chunk, replacement=replacement)
        for rep in range(3):
            whole = draw_positions(pool, m, np.random.default_rng([trial, rep]), replacement)
            a = 0
            while a < n:
                b = min(n, a + chunk * int(rng.integers(1, 4)))
                np.testing.assert_array_equal(block_positions(plan, a, b, rep), whole[a:b])
                a = b


def test_draw_plan_refuses_a_small_pool_and_unaligned_blocks():
    with pytest.raises(ValueError, match="user 1"):
        draw_plan([9, 2, 9], 3, 1, 0, chunk=1)
    plan = draw_plan([9, 9, 9], 3, 1, 0, chunk=2)
    with pytest.raises(ValueError, match="multiple of 2"):
        block_positions(plan, 1, 3, 0)


def test_draw_plan_and_ranks_files_round_trip_and_refuse_damage(tmp_path):
    plan = draw_plan(np.arange(10, 40), 5, 4, 9, chunk=CHUNK)
    save_draw_plan(plan, tmp_path / "plan.npz")
    back = load_draw_plan(tmp_path / "plan.npz")
    assert (back.m, back.repetitions, back.seed, back.replacement, back.chunk) == (
        5,
        4,
        9,
        False,
        4,
    )
    np.testing.assert_array_equal(back.starts, plan.starts)
    np.testing.assert_array_equal(back.pool, plan.pool)

    ranks = UserRanks(
        8, np.arange(3.0), np.arange(3), np.arange(3.0) + 1, np.ones((4, 3), np.int16)
    )
    save_user_ranks(ranks, tmp_path / "r.npz")
    again = load_user_ranks(tmp_path / "r.npz")
    assert again.start == 8 and again.sampled.dtype == np.int16
    np.testing.assert_array_equal(again.pessimistic, ranks.pessimistic)

    for name, load, what in (
        ("plan.npz", load_draw_plan, "draw plan"),
        ("r.npz", load_user_ranks, "file of ranks"),
    ):
        data = (tmp_path / name).read_bytes()
        (tmp_path / name).write_bytes(data[: len(data) // 2])
        with pytest.raises(ValueError, match=f"{name}: not a {what}"):
            load(tmp_path / name)


def test_concatenate_refuses_gaps_overlaps_and_short_cover():
    def part(a, b):
        return UserRanks(
            a,
            np.ones(b - a),
            np.ones(b - a, np.int64),
            np.ones(b - a),
            np.ones((2, b - a), np.int16),
        )

    with pytest.raises(ValueError, match="users 4..7 unranked"):
        concatenate_user_ranks([part(0, 4), part(8, 10)], 10)
    with pytest.raises(ValueError, match="from 2 twice"):
        concatenate_user_ranks([part(0, 4), part(2, 10)], 10)
    with pytest.raises(ValueError, match="not all 12"):
        concatenate_user_ranks([part(0, 4), part(4, 10)], 12)


def test_scores_of_the_wrong_shape_are_refused_naming_the_recommender():
    train, test, scores = problem(5)
    plan = plan_for(train, test, m=3, seed=0)
    with pytest.raises(ValueError, match="'narrow' scores 24 items, not 25"):
        rank_users(
            PrecomputedScores(scores[:, :24], name="narrow"),
            train,
            test,
            plan,
            0,
            30,
            tie_policy="random",
            tie_seed=0,
            memory_mb=1,
        )

    class Short(PrecomputedScores):
        def scores(self, users):
            return super().scores(users)[:-1]

    with pytest.raises(ValueError, match=r"'short': scores for users 4\.\.7 have shape \(3, 25\)"):
        score_users(Short(scores, name="short"), 4, 30)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_tiled_product_is_scipys_product_bit_for_bit(dtype, monkeypatch):
    from sampled_metrics.recommenders import scores as scores_module

    rng = np.random.default_rng(5)
    rows = sp.random(40, 60, density=0.2, format="csr", random_state=7, dtype=dtype)
    dense = rng.standard_normal((60, 75)).astype(dtype)
    scale = np.where(rng.random(75) < 0.2, 0.0, rng.random(75) + 0.1)
    expected = np.asarray(rows @ dense)
    divided = expected.copy()
    np.divide(divided, scale, out=divided, where=scale > 0)
    for tile_bytes in (1, 60 * 17 * dense.itemsize, 2**30):  # tiles of 16, 17 or 75 columns
        monkeypatch.setattr(scores_module, "_TILE_BYTES", tile_bytes)
        out = np.empty_like(expected)
        scores_module.sparse_dense_product(rows, dense, out)
        assert out.tobytes() == expected.tobytes()
        scores_module.sparse_dense_product(rows, dense, out, scale=scale)
        assert out.tobytes() == divided.tobytes()


@pytest.mark.parametrize(
    "spec",
    [
        {"type": "ease", "regularization": 5.0},
        {"type": "item_knn", "q": 3},  # a dense similarity
        {"type": "item_knn", "k": 2},  # a sparse one
        {"type": "item_knn", "k": 2, "denominator": "row_sum", "dtype": "float64"},
    ],
)
def test_a_block_scored_at_once_has_the_bits_of_its_users_scored_apart(spec, monkeypatch):
    from sampled_metrics.recommenders import fit_recommender
    from sampled_metrics.recommenders import scores as scores_module

    monkeypatch.setattr(scores_module, "_TILE_BYTES", 1)  # tiles of 16 of the 40 items
    rng = np.random.default_rng(2)
    train = sp.csr_matrix((rng.random((30, 40)) < 0.3).astype(np.float32))
    model = fit_recommender(spec, train)
    apart = np.vstack([model.scores([user]) for user in range(30)])
    assert apart.dtype == np.float32
    # the scores' definition, scipy's product of the whole matrices without tiles
    if spec["type"] == "ease":
        expected = np.asarray(model.train @ model.weights, dtype=np.float32)
    else:
        product = model._train @ model._ST
        product = product.toarray() if sp.issparse(product) else product
        d = model._divisor
        expected = np.divide(product, d, out=product, where=d > 0).astype(np.float32)
    assert apart.tobytes() == expected.tobytes()
    for start, stop in ((0, 30), (CHUNK, 3 * CHUNK + 1)):
        block = score_users(model, start, stop)
        assert block.tobytes() == apart[start:stop].tobytes()
