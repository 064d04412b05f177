"""The uniform protocols simulated by cell counts (sampled_metrics.frameworks.cells),
tested against known truth, not against their own output: each recommender's sampled
rank against its exact law (hypergeometric, binomial, the occupancy law of distinct
draws), the joint law of two recommenders against items actually drawn with numpy's
``choice``, the limits where the sampled rank is known exactly, the result against
the blocks, and the moments against the item-drawing ``simulate``.

Every statistical assertion runs at a fixed seed, so it passes or fails the same way
each time; its false-alarm rate is what a correct implementation would risk with a
random seed: 1e-3 for each goodness of fit (chi-square, two-sample chi-square, two
proportions), about 6e-5 for each |z| < 4 of the moment comparisons. Each test of a
law also checks that the same statistic rejects a plausible wrong law (power), so the
assertion can fail.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import chi2_pvalue
from scipy import stats

from sampled_metrics.frameworks.cells import (
    MAX_RECOMMENDERS,
    cell_counts,
    simulate_cells,
    simulator,
)
from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS, Protocol
from sampled_metrics.frameworks.simulate import simulate

ALPHA = 1e-3  # false-alarm rate of each goodness-of-fit assertion
Z = 4.0  # |z| bound of the moment comparisons (two-sided rate 6.3e-5)

# (replacement, collapse): NCF / Elliot, DaisyRec, RecBole uniN
KINDS = {"without": (False, False), "count": (True, False), "collapse": (True, True)}


def protocol(m: int, kind: str, target_in_pool: bool = False) -> Protocol:
    replacement, collapse = KINDS[kind]
    return Protocol("cells-test", m, 0.0, replacement, collapse, target_in_pool, "")


def two_sample_pvalue(a, b) -> float:
    """Chi-square test that two integer samples have the same law (values seen fewer
    than 10 times in all pooled into one)."""
    values = np.union1d(a, b)
    table = np.array([[np.count_nonzero(x == v) for v in values] for x in (a, b)])
    rare = table.sum(axis=0) < 10
    table = np.column_stack([table[:, ~rare], table[:, rare].sum(axis=1)])
    table = table[:, table.sum(axis=0) > 0]
    return float(stats.chi2_contingency(table)[1])


def proportions_pvalue(x: int, n: int, y: int, k: int) -> float:
    """Two-sided test that x / n and y / k estimate the same proportion."""
    p = (x + y) / (n + k)
    if p in (0.0, 1.0):
        return 1.0
    z = (x / n - y / k) / np.sqrt(p * (1 - p) * (1 / n + 1 / k))
    return float(2 * stats.norm.sf(abs(z)))


def distinct_pmf(n: int, b: int, m: int) -> np.ndarray:
    """The law of the distinct items among b drawn by m independent uniform draws from
    n items (the chain: a draw is a new one of the b with chance (b - d) / n)."""
    pmf = np.zeros(b + 1)
    pmf[0] = 1.0
    for _ in range(m):
        new = pmf * (b - np.arange(b + 1)) / n
        pmf = pmf - new
        pmf[1:] += new[:-1]
    return pmf


def one_user(n_items: int, excluded_items, beaten_sets):
    """A user's beaten masks and excluded mask (1 row) from lists of items."""
    excluded = np.zeros((1, n_items), dtype=bool)
    excluded[0, list(excluded_items)] = True
    beaten = []
    for items in beaten_sets:
        mask = np.zeros((1, n_items), dtype=bool)
        mask[0, list(items)] = True
        beaten.append(mask)
    return beaten, excluded


# One user: items 0..59, 59 the held-out item, 50..58 training items: a pool of 50
# (51 when the held-out item is in it). A beats 12 items, B 30, 10 of them A's too.
A_ITEMS = list(range(12))
B_ITEMS = list(range(2, 32))
TRAINING = list(range(50, 59))
TARGET = 59


def planted(target_in_pool: bool = False):
    excluded_items = TRAINING if target_in_pool else [*TRAINING, TARGET]
    beaten, excluded = one_user(60, excluded_items, [A_ITEMS, B_ITEMS, []])
    return beaten, excluded, 60 - len(excluded_items)


def run(p, beaten, excluded, repetitions, seed=0):
    n_items = excluded.shape[1]
    test = np.full(excluded.shape[0], TARGET if n_items == 60 else 0)
    return simulate_cells(
        p, beaten, excluded, np.ones(n_items), test, start=0, repetitions=repetitions, seed=seed
    )


@pytest.mark.parametrize("target_in_pool", [False, True])
def test_without_replacement_marginals_are_hypergeometric(target_in_pool):
    """r~ - 1 ~ Hypergeometric(beaten, n - beaten, m), n the pool (with NCF's held-out
    item, beaten by none); the binomial of the same mean is rejected."""
    beaten, excluded, n = planted(target_in_pool)
    m, reps = 20, 20_000
    out = run(protocol(m, "without", target_in_pool), beaten, excluded, reps, seed=1)
    for k, b in enumerate((len(A_ITEMS), len(B_ITEMS))):
        observed = np.bincount(out.sampled[:, k, 0] - 1, minlength=m + 1)
        assert observed.size == m + 1
        support = np.arange(m + 1)
        assert chi2_pvalue(observed, reps * stats.hypergeom.pmf(support, n, b, m)) > ALPHA
        assert chi2_pvalue(observed, reps * stats.binom.pmf(support, m, b / n)) < 1e-6
    assert np.all(out.sampled[:, 2, 0] == 1)  # beaten by nothing


def test_with_replacement_marginals_are_binomial():
    """DaisyRec's counting: r~ - 1 ~ Binomial(m, beaten / n), and the Hansen-Hurwitz
    estimate is 1 + n (r~ - 1) / m; the hypergeometric is rejected."""
    beaten, excluded, n = planted()
    m, reps = 40, 20_000
    out = run(protocol(m, "count"), beaten, excluded, reps, seed=2)
    support = np.arange(m + 1)
    for k, b in enumerate((len(A_ITEMS), len(B_ITEMS))):
        hits = out.sampled[:, k, 0] - 1
        observed = np.bincount(hits, minlength=m + 1)
        assert chi2_pvalue(observed, reps * stats.binom.pmf(support, m, b / n)) > ALPHA
        assert chi2_pvalue(observed, reps * stats.hypergeom.pmf(support, n, b, m)) < 1e-6
        np.testing.assert_allclose(out.hansen_hurwitz[:, k, 0], 1 + n * hits / m)


def test_collapsed_draws_count_distinct_items():
    """RecBole's collapse: r~ - 1 is the number of distinct beaten items among m
    independent draws (its law by the draw-by-draw chain), the Hansen-Hurwitz estimate
    counts every draw, Binomial(m, beaten / n); the binomial is rejected for r~."""
    beaten, excluded, n = planted()
    m, reps = 40, 20_000
    out = run(protocol(m, "collapse"), beaten, excluded, reps, seed=3)
    for k, b in enumerate((len(A_ITEMS), len(B_ITEMS))):
        distinct = np.bincount(out.sampled[:, k, 0] - 1, minlength=b + 1)
        assert distinct.size == b + 1
        assert chi2_pvalue(distinct, reps * distinct_pmf(n, b, m)) > ALPHA
        law = stats.binom.pmf(np.arange(b + 1), m, b / n)
        law[-1] += stats.binom.sf(b, m, b / n)
        assert chi2_pvalue(distinct, reps * law) < 1e-6
        hits = np.rint((out.hansen_hurwitz[:, k, 0] - 1) * m / n).astype(int)
        np.testing.assert_allclose(out.hansen_hurwitz[:, k, 0], 1 + n * hits / m)
        expected = reps * stats.binom.pmf(np.arange(m + 1), m, b / n)
        assert chi2_pvalue(np.bincount(hits, minlength=m + 1), expected) > ALPHA
        assert np.all(hits >= out.sampled[:, k, 0] - 1)


def brute_force(p, beaten, excluded, reps: int, rng) -> np.ndarray:
    """(reps, recommenders) sampled ranks of one user from items drawn with numpy's
    choice: distinct ones, or independent ones counted with or without repeats."""
    pool = np.flatnonzero(~excluded[0])
    masks = np.stack([b[0] for b in beaten])
    ranks = np.empty((reps, len(beaten)), dtype=int)
    for r in range(reps):
        items = rng.choice(pool, p.m, replace=p.replacement)
        if p.collapse:
            items = np.unique(items)
        ranks[r] = 1 + masks[:, items].sum(axis=1)
    return ranks


@pytest.mark.parametrize("kind", list(KINDS))
def test_joint_law_of_two_recommenders_matches_drawn_items(kind):
    """The law of r~_A - r~_B and the shares of ties and reversals (A behind B though
    A's rank is better) equal those of items drawn with numpy's choice; the same
    tests reject draws made apart for A and B (the right marginals, no pairing)."""
    target_in_pool = kind == "without"
    beaten, excluded, _ = planted(target_in_pool)
    p = protocol(25, kind, target_in_pool)
    reps = 12_000
    cells = run(p, beaten, excluded, reps, seed=4).sampled[:, :, 0].astype(int)
    rng = np.random.default_rng(5)
    drawn = brute_force(p, beaten, excluded, reps, rng)
    apart = np.column_stack(
        [brute_force(p, beaten, excluded, reps, rng)[:, k] for k in range(len(beaten))]
    )
    for other, same in ((drawn, True), (apart, False)):
        diffs = cells[:, 0] - cells[:, 1], other[:, 0] - other[:, 1]
        ties = [np.count_nonzero(d == 0) for d in diffs]
        reversals = [np.count_nonzero(d > 0) for d in diffs]
        pvalues = (
            two_sample_pvalue(*diffs),
            proportions_pvalue(ties[0], reps, ties[1], reps),
            proportions_pvalue(reversals[0], reps, reversals[1], reps),
        )
        if same:
            assert min(pvalues) > ALPHA, pvalues
        else:
            assert pvalues[0] < 1e-6, pvalues
    # the marginals of the apart draws are right: only the pairing was broken
    assert two_sample_pvalue(cells[:, 1], apart[:, 1]) > ALPHA


def test_every_item_drawn_gives_the_exact_rank():
    """m = n without replacement draws the whole pool: the sampled rank is the rank,
    in every repetition, with or without the held-out item in the pool (8
    recommenders)."""
    rng = np.random.default_rng(6)
    n_users, n_items, pool = 40, 80, 50
    excluded = np.ones((n_users, n_items), dtype=bool)
    for u in range(n_users):
        excluded[u, rng.choice(n_items, pool, replace=False)] = False
    # eight recommenders: 256 cells, the widest code
    qs = np.linspace(0.05, 0.95, MAX_RECOMMENDERS)
    beaten = [~excluded & (rng.random((n_users, n_items)) < q) for q in qs]
    ranks = np.stack([1 + b.sum(axis=1) for b in beaten])
    for target_in_pool in (False, True):
        p = protocol(pool, "without", target_in_pool)
        out = simulate_cells(
            p, beaten, excluded, np.ones(n_items), np.flatnonzero(excluded[0])[:1].repeat(
                n_users), start=0, repetitions=7, seed=7,
        )  # fmt: skip
        np.testing.assert_array_equal(out.sampled, np.broadcast_to(ranks, out.sampled.shape))


@pytest.mark.parametrize("kind", list(KINDS))
def test_limits_beaten_by_nothing_and_by_everything(kind):
    """A recommender that beats nothing gets 1 (and a Hansen-Hurwitz estimate of 1);
    one that beats every item of the pool gets 1 + m (DaisyRec, distinct draws), its
    estimate 1 + n; the others keep their laws' means."""
    beaten, excluded, n = planted()
    pool = ~excluded
    beaten = [beaten[0], np.zeros_like(pool), pool.copy()]
    m = 30
    out = run(protocol(m, kind), beaten, excluded, 2_000, seed=8)
    assert np.all(out.sampled[:, 1] == 1)
    if kind == "collapse":  # the distinct items of m draws from all n
        assert np.all(out.sampled[:, 2] <= 1 + m) and np.any(out.sampled[:, 2] < 1 + m)
    else:
        assert np.all(out.sampled[:, 2] == 1 + m)
    if kind != "without":
        assert np.all(out.hansen_hurwitz[:, 1] == 1.0)
        np.testing.assert_allclose(out.hansen_hurwitz[:, 2], 1.0 + n)
    b = len(A_ITEMS)
    mean = b * (1 - (1 - 1 / n) ** m) if kind == "collapse" else m * b / n
    assert abs(out.sampled[:, 0].mean() - 1 - mean) < 0.3


def study_block(n_users=100, n_items=250, recommenders=3, seed=9):
    """Users across four chunks (the last one short): beaten masks, pools, held-out items."""
    rng = np.random.default_rng(seed)
    training = rng.random((n_users, n_items)) < 0.2
    test = np.array([rng.choice(np.flatnonzero(~row)) for row in training])
    scores = rng.normal(size=(n_users, n_items))
    beaten = []
    for k in range(recommenders):
        noisy = scores + (k + 1) * 0.5 * rng.normal(size=scores.shape)
        mask = noisy > noisy[np.arange(n_users), test][:, None] + 0.5
        mask[training] = False
        mask[np.arange(n_users), test] = False
        beaten.append(mask)
    without_target = training.copy()
    without_target[np.arange(n_users), test] = True
    return beaten, training, without_target, test


STUDY = ("ncf", "elliot", "recbole-uni100", "daisyrec")


@pytest.mark.parametrize("name", STUDY)
def test_result_does_not_depend_on_the_blocks(name):
    """Blocks of 32 + 64 + 4 users, or precounted cells, give the very same arrays as
    the 100 users at once."""
    beaten, training, without_target, test = study_block()
    p = FRAMEWORK_PROTOCOLS[name]
    excluded = training if p.target_in_pool else without_target
    kwargs = dict(repetitions=5, seed=10)
    whole = simulate_cells(p, beaten, excluded, np.ones(250), test, start=0, **kwargs)
    parts = [
        simulate_cells(
            p, [b[a:z] for b in beaten], excluded[a:z], np.ones(250), test[a:z], start=a,
            **kwargs,
        )
        for a, z in ((0, 32), (32, 96), (96, 100))
    ]  # fmt: skip
    np.testing.assert_array_equal(whole.sampled, np.concatenate([r.sampled for r in parts], 2))
    np.testing.assert_array_equal(
        whole.hansen_hurwitz, np.concatenate([r.hansen_hurwitz for r in parts], 2)
    )
    counted = simulate_cells(
        p, beaten, excluded, np.ones(250), test, start=0,
        counts=cell_counts(beaten, excluded), **kwargs,
    )  # fmt: skip
    np.testing.assert_array_equal(whole.sampled, counted.sampled)
    other = simulate_cells(p, beaten, excluded, np.ones(250), test, start=0, repetitions=5, seed=11)
    assert not np.array_equal(whole.sampled, other.sampled)  # the seed matters


def moment_z(a: np.ndarray, b: np.ndarray) -> tuple:
    """z of the difference of (mean, variance) over repetitions (axis 0), summed over
    users (axis 1): each user's difference over its standard error, pooled."""
    z = []
    for moment in ("mean", "var"):
        diff, var = 0.0, 0.0
        for x in (a, b):
            n = x.shape[0]
            if moment == "mean":
                estimate, se2 = x.mean(axis=0), x.var(axis=0, ddof=1) / n
            else:
                centred = x - x.mean(axis=0)
                estimate = x.var(axis=0, ddof=1)
                se2 = ((centred**4).mean(axis=0) - estimate**2) / n
            diff = estimate - diff if x is a else diff - estimate
            var = var + se2
        z.append(float(diff.sum() / np.sqrt(var.sum())))
    return tuple(z)


@pytest.mark.parametrize("name", STUDY)
def test_agrees_with_drawing_items(name):
    """The means and variances of the sampled ranks (and Hansen-Hurwitz estimates)
    over repetitions agree with ``simulate``'s within their standard errors, the
    popularity-weighted ranks to the bit; the same comparison rejects ``simulate`` run
    with another law (independent draws for distinct ones; with replacement, repeats
    collapsed or not the other way)."""
    beaten, training, without_target, test = study_block(n_users=64)
    p = FRAMEWORK_PROTOCOLS[name]
    excluded = training if p.target_in_pool else without_target
    args = (beaten, excluded, np.ones(250), test)
    kwargs = dict(start=0, repetitions=300)
    cells = simulate_cells(p, *args, seed=12, **kwargs)
    items = simulate(p, *args, seed=13, **kwargs)
    np.testing.assert_array_equal(cells.weighted_rank, items.weighted_rank)
    for k in range(len(beaten)):
        a, b = cells.sampled[:, k].astype(float), items.sampled[:, k].astype(float)
        assert max(map(abs, moment_z(a, b))) < Z
        if p.replacement:
            z = moment_z(cells.hansen_hurwitz[:, k], items.hansen_hurwitz[:, k])
            assert max(map(abs, z)) < Z
    collapse = p.replacement and not p.collapse
    flipped = Protocol(p.name, p.m, 0.0, True, collapse, p.target_in_pool, "")
    wrong = simulate(flipped, *args, seed=14, **kwargs)
    z = [moment_z(cells.sampled[:, k].astype(float), wrong.sampled[:, k]) for k in range(3)]
    assert max(abs(v) for pair in z for v in pair) > 2 * Z


@pytest.mark.parametrize("target_in_pool", [False, True])
def test_weighted_rank_is_simulates_to_the_bit(target_in_pool):
    """R^pi as ``simulate`` computes it, even for beaten masks that hold excluded items
    (its masses count every item), counted here or passed in, weights 1 or 2."""
    rng = np.random.default_rng(16)
    beaten = [rng.random((40, 90)) < 0.4 for _ in range(3)]
    excluded = rng.random((40, 90)) < 0.3
    test = rng.integers(0, 90, 40)
    excluded[np.arange(40), test] = not target_in_pool
    p = protocol(5, "count", target_in_pool)
    for weights in (np.ones(90), np.full(90, 2.0)):
        expected = simulate(p, beaten, excluded, weights, test, start=0, repetitions=1, seed=0)
        for counts in (None, cell_counts(beaten, excluded)):
            out = simulate_cells(
                p, beaten, excluded, weights, test, start=0, repetitions=1, seed=0,
                counts=counts,
            )  # fmt: skip
            np.testing.assert_array_equal(out.weighted_rank, expected.weighted_rank)


def test_cell_counts_count_codes_over_the_pool():
    """The cells against a count per code, item by item, with 3 and 8 recommenders."""
    rng = np.random.default_rng(15)
    for recommenders in (3, MAX_RECOMMENDERS):
        beaten = [rng.random((40, 90)) < 0.4 for _ in range(recommenders)]
        excluded = rng.random((40, 90)) < 0.3
        counts = cell_counts(beaten, excluded)
        codes = sum(b.astype(int) << k for k, b in enumerate(beaten))
        for u in range(40):
            expected = np.bincount(codes[u][~excluded[u]], minlength=1 << recommenders)
            np.testing.assert_array_equal(counts[u], expected)


def test_refuses_what_it_cannot_draw():
    """Popularity weights and more than 8 recommenders go to ``simulate``; a pool
    smaller than m without replacement is refused as by ``simulate``."""
    beaten, excluded, _ = planted()
    pop = FRAMEWORK_PROTOCOLS["recbole-pop100"]
    counts = np.arange(1.0, 61.0)
    with pytest.raises(ValueError, match="use simulate"):
        simulate_cells(pop, beaten, excluded, counts, [TARGET], start=0, repetitions=1, seed=0)
    assert simulator(pop, counts, 3) is simulate
    nine = beaten * 3
    with pytest.raises(ValueError, match="at most 8"):
        run(protocol(5, "count"), nine, excluded, 1)
    assert simulator(FRAMEWORK_PROTOCOLS["daisyrec"], np.ones(60), 9) is simulate
    assert simulator(FRAMEWORK_PROTOCOLS["daisyrec"], np.ones(60), 8) is simulate_cells
    with pytest.raises(ValueError, match="fewer than 51"):
        run(protocol(51, "without"), beaten, excluded, 1)
    with pytest.raises(ValueError, match="multiple of"):
        simulate_cells(protocol(5, "count"), beaten, excluded, np.ones(60), [TARGET], start=3,
                       repetitions=1, seed=0)  # fmt: skip
