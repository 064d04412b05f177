"""Checks of exact ranks against sampled ranks (estimation/decisions/consistency) from
first principles.

The support of the law is compared with the package's pmf by brute force; the
likelihood check runs on simulated files whose sampled ranks are drawn here with
numpy's binomial and hypergeometric generators (never the package's laws), from exact
ranks of a heavy-tailed distribution at MovieLens 1M's sizes (n = 3700, m = 100, 3000
users): under the truth it must keep its level, also when the users checked were chosen
by a design on their sampled ranks and when two models' sampled ranks come from one
shared draw of items; a wrong file (swapped columns, another checkpoint, another
user's ranks) it must stop.
"""

from __future__ import annotations

import numpy as np
import pytest

from sampled_metrics.estimation.decisions import (
    Impossible,
    draw_design,
    exact_rank_bounds,
    first_impossible,
    likelihood_check,
    tail_probabilities,
)
from sampled_metrics.estimation.laws import LAWS, sampled_rank_law

N_ITEMS, M, USERS, BUDGET = 3700, 100, 3000, 0.25


@pytest.mark.parametrize("law", LAWS)
def test_bounds_are_the_support_of_the_law(law):
    for n in range(2, 13):
        for m in range(1, (n - 1 if law == "hypergeometric" else 13) + 1):
            positive = sampled_rank_law(n, m, law) > 0  # (r, s)
            s = np.arange(1, m + 2)
            low, high = exact_rank_bounds(s, m, n, law)
            r = np.arange(1, n + 1)[:, None]
            inside = (r >= low[None, :]) & (r <= high[None, :])
            assert np.array_equal(inside, positive), (law, n, m)


def test_bounds_refuse_a_sampled_rank_beyond_m_plus_one():
    with pytest.raises(ValueError, match=r"1\.\.m \+ 1"):
        exact_rank_bounds([12], 10, 100, "binomial")


def test_tail_probability_by_hand():
    # r = 3 of n = 5, m = 2 with replacement: p = 1/2, law of s - 1: 1/4, 1/2, 1/4
    t = tail_probabilities([3, 3, 3], [1, 2, 3], 2, 5, "binomial")
    assert np.allclose(t, [0.5, 1.0, 0.5])
    # restricted to s in {1, 2}: 1/3, 2/3
    allowed = np.array([[True, True, False]] * 2)
    assert np.allclose(tail_probabilities([3, 3], [1, 2], 2, 5, "binomial", allowed), [1 / 3, 1])
    # restricted to a sampled rank whose probability is below the smallest double
    tiny = tail_probabilities([N_ITEMS - 1], [1], M, N_ITEMS, "binomial", [[True] + [False] * M])
    assert tiny.tolist() == [1.0]
    assert tail_probabilities([1], [2], 2, 5, "binomial").tolist() == [0.0]  # impossible


def heavy_tailed(rng, size) -> np.ndarray:
    """Log-uniform exact ranks over 1..n: many near the top, a long tail."""
    return np.clip(np.floor(np.exp(rng.uniform(0, np.log(N_ITEMS), size))), 1, N_ITEMS)


def population(rng) -> np.ndarray:
    """(2, U) exact ranks of two correlated models."""
    a = heavy_tailed(rng, USERS)
    b = np.clip(np.round(a * np.exp(rng.normal(0.0, 1.0, USERS))), 1, N_ITEMS)
    return np.stack([a, b]).astype(np.int64)


def successes(rng, law: str, above, others, draws) -> np.ndarray:
    """How many of ``draws`` items drawn from ``others`` fall among ``above``."""
    if law == "binomial":
        return rng.binomial(draws, above / np.maximum(others, 1))
    return rng.hypergeometric(above, others - above, draws)


def sampled_ranks(rng, law: str, exact: np.ndarray, draws: str) -> np.ndarray:
    """Sampled ranks from the exact ones: each model its own draw of m items
    ("independent"), or one draw for both, the items above the better-ranked model's
    item among those above the other's ("nested": as dependent as can be) or apart from
    them ("disjoint": they share items only when they must)."""
    if draws == "independent":
        return 1 + successes(rng, law, exact - 1, N_ITEMS - 1, np.full(exact.shape, M))
    if draws == "nested":
        small, big = exact.min(axis=0), exact.max(axis=0)
        first = successes(rng, law, small - 1, N_ITEMS - 1, np.full(USERS, M))
        # the m - first draws not above the smaller: among the N - small items left
        more = successes(rng, law, big - small, N_ITEMS - small, M - first)
        low, high = 1 + first, 1 + first + more
        return np.where(exact[0] <= exact[1], np.stack([low, high]), np.stack([high, low]))
    above_a, above_b = exact[0] - 1, exact[1] - 1
    both = np.maximum(0, above_a + above_b - (N_ITEMS - 1))
    in_a = successes(rng, law, above_a, N_ITEMS - 1, np.full(USERS, M))
    in_both = successes(rng, law, both, above_a, in_a)
    b_only = successes(rng, law, above_b - both, N_ITEMS - 1 - above_a, M - in_a)
    return 1 + np.stack([in_a, in_both + b_only])


def phase_two(rng, law: str, sampled: np.ndarray, cells: str = "min") -> tuple:
    """(chosen, strata): a design at a quarter of the users, its spread any function of
    phase 1 (here one that favours small sampled ranks, as a top-k metric's does)."""
    spread = 1.0 / sampled.min(axis=0) ** 2
    seed = rng.integers(2**32)
    design = draw_design(
        sampled, M, N_ITEMS, budget=BUDGET, law=law, cells=cells, spread=spread, seed=seed
    )
    return design.chosen, design.stratum


def checked_file(rng, law: str, exact, sampled, design: bool) -> tuple:
    """(exact ranks, sampled ranks, strata or None): the users ranked exactly chosen by
    a design on the sampled ranks (nan for the others), or uniformly at random (the
    file of those users alone)."""
    if design:
        chosen, strata = phase_two(rng, law, sampled)
        return np.where(chosen[None, :], exact, np.nan), sampled, strata
    chosen = rng.permutation(USERS) < BUDGET * USERS
    return exact[:, chosen].astype(float), sampled[:, chosen], None


def test_first_impossible_finds_a_planted_pair_and_nothing_in_the_truth():
    rng = np.random.default_rng(1)
    for law in LAWS:
        exact = population(rng)
        sampled = sampled_ranks(rng, law, exact, "independent")
        assert first_impossible(exact, sampled, M, N_ITEMS, law) is None
        wrong = exact.astype(float)
        late = int(np.flatnonzero(sampled[1] > 1)[-1])
        wrong[1, late] = 1.0  # s > 1 needs an item above: r >= 2
        early = int(np.flatnonzero(sampled[0] > 1)[0])
        wrong[0, early] = np.nan  # not ranked exactly: skipped
        wrong[1, early] = 1.0 if sampled[1, early] > 1 else wrong[1, early]
        first = min(early if sampled[1, early] > 1 else late, late)
        found = first_impossible(wrong, sampled, M, N_ITEMS, law)
        low = 2 if law == "binomial" else int(sampled[1, first])
        high = N_ITEMS - 1 if law == "binomial" else N_ITEMS - M + int(sampled[1, first]) - 1
        high = N_ITEMS if law == "binomial" and sampled[1, first] == M + 1 else high
        assert found == Impossible(first, 1, int(sampled[1, first]), 1, low, high)


def test_the_last_rank_forces_the_last_sampled_rank():
    found = first_impossible([[3, N_ITEMS]], [[1, 1]], M, N_ITEMS, "binomial")
    assert found == Impossible(1, 0, 1, N_ITEMS, 1, N_ITEMS - 1)
    # without replacement, the last rank needs every one of the m items above: s = m + 1
    found = first_impossible([N_ITEMS], [1], M, N_ITEMS, "hypergeometric")
    assert found == Impossible(0, 0, 1, N_ITEMS, 1, N_ITEMS - M)


# Files per case: the level is checked on the pooled count of extreme users, sharp
# enough at this number (about 1.5e5 users checked per case); the rate of stopped files
# is a loose check beside it.
FILES, LOOSE = 100, 0.05


@pytest.mark.parametrize(
    ("law", "draws", "design"),
    [
        ("hypergeometric", "independent", False),
        ("hypergeometric", "independent", True),
        ("binomial", "nested", True),
        ("hypergeometric", "disjoint", True),
    ],
)
def test_likelihood_check_keeps_its_level_under_the_truth(law, draws, design):
    """Over FILES simulated files the check stops at most LOOSE of them (+3 s.e.); the
    users of tail probability at most a are at most a of those checked (+3 s.e. of
    their binomial count), a = 1e-2 and 1e-3: the tails are super-uniform; and the sum
    of the users' surprises -log q_u(s_u) is on average at most its expectation under
    the truth (+3 s.e.): also given the strata of a design that chose the users on their
    sampled ranks, also when one draw of items gave both models' sampled ranks."""
    rng = np.random.default_rng([7, design, LAWS.index(law), len(draws)])
    stopped, thresholds = 0, np.array([1e-2, 1e-3])
    extreme, checked, excess = np.zeros(2), 0, []
    for _ in range(FILES):
        exact = population(rng)
        known, sampled, strata = checked_file(
            rng, law, exact, sampled_ranks(rng, law, exact, draws), design
        )
        checks = likelihood_check(known, sampled, M, N_ITEMS, law, strata=strata, level=LOOSE)
        stopped += any(c.suspect for c in checks)
        excess.append([c.surprise - c.entropy for c in checks])
        users = ~np.isnan(known[0])
        for model in range(2):
            allowed = None
            if design:
                allowed = allowed_by_stratum(sampled[:, users], model, strata[users])
            t = tail_probabilities(
                known[model, users], sampled[model, users], M, N_ITEMS, law, allowed
            )
            extreme += np.count_nonzero(t[:, None] <= thresholds[None, :], axis=0)
            checked += int(users.sum())
    assert stopped / FILES <= LOOSE + 3 * np.sqrt(LOOSE * (1 - LOOSE) / FILES)
    assert np.all(extreme <= thresholds * checked + 3 * np.sqrt(thresholds * checked))
    excess = np.array(excess)
    assert np.all(excess.mean(axis=0) <= 3 * excess.std(axis=0) / np.sqrt(FILES))


def test_a_stratum_that_fixes_the_sampled_rank_explains_it():
    """Users in stratum 0 (a sampled rank of 1) whose other model ranks the item lower:
    given the stratum their sampled rank is 1 surely, however improbable at their exact
    rank (300 of 3700: 2e-4); without the strata the same users are suspect."""
    exact = np.array([[300.0] * 20, [40.0] * 20])
    sampled = np.array([[1] * 20, [3] * 20])
    strata = np.zeros(20, dtype=np.int64)
    given = likelihood_check(exact, sampled, M, N_ITEMS, "binomial", strata=strata)
    plain = likelihood_check(exact, sampled, M, N_ITEMS, "binomial")
    assert [c.suspect for c in given] == [False, False]
    assert [c.suspect for c in plain] == [True, False]
    assert plain[0].rows == (0, 1, 2, 3, 4) and plain[0].extreme == 20
    with pytest.raises(ValueError, match="stratum of user 0 is 1, but its sampled ranks give 0"):
        likelihood_check(exact, sampled, M, N_ITEMS, "binomial", strata=strata + 1)
    with pytest.raises(ValueError, match=r"strata must be one per user \(20\)"):
        likelihood_check(exact, sampled, M, N_ITEMS, "binomial", strata=strata[1:])


def allowed_by_stratum(sampled, model: int, strata) -> np.ndarray:
    """Whether each sampled rank 1..m + 1 of this model keeps each user's stratum of the
    smallest sampled rank (the design's "min" cells, edges 1, 2, 3, 5, 10), written out
    here: the bin of the model's rank, against the other model's."""
    edges = np.array([1, 2, 3, 5, 10])
    bins = np.searchsorted(edges, np.arange(1, M + 2), side="left")[None, :]
    other = np.searchsorted(edges, sampled[1 - model], side="left")[:, None]
    return np.minimum(bins, other) == strata[:, None]


def possible_only(exact, sampled, law: str) -> np.ndarray:
    """The exact ranks with users of an impossible pair left out (nan): what the
    likelihood check sees after :func:`first_impossible` passed."""
    low, high = exact_rank_bounds(sampled, M, N_ITEMS, law)
    impossible = ((exact < low) | (exact > high)).any(axis=0)
    return np.where(impossible[None, :], np.nan, exact)


@pytest.mark.parametrize(
    ("law", "cells"), [("binomial", "min"), ("hypergeometric", "min"), ("binomial", "joint")]
)
def test_likelihood_check_stops_a_wrong_file(law, cells):
    """At the default level, on users chosen by a design: the right file passes; swapped
    columns, another checkpoint's ranks (each rank moved by a log-normal factor of
    spread 0.7), ranks of other users and sampled ranks of another protocol (a drawn
    item above the held-out one with probability p^0.8, not p) stop, also without
    their impossible pairs."""
    rng = np.random.default_rng([11, LAWS.index(law), len(cells)])
    for _ in range(3):
        exact = population(rng)
        p = (exact - 1) / (N_ITEMS - 1)
        checkpoint = np.clip(np.round(exact[0] * np.exp(rng.normal(0, 0.7, USERS))), 1, N_ITEMS)
        files = {
            "truth": (exact, sampled_ranks(rng, law, exact, "independent")),
            "swapped": (exact[::-1], None),
            "checkpoint": (np.stack([checkpoint, exact[1]]), None),
            "other users": (exact[:, rng.permutation(USERS)], None),
            "other protocol": (exact, 1 + rng.binomial(M, p**0.8)),
        }
        for name, (ranks, sampled) in files.items():
            sampled = files["truth"][1] if sampled is None else sampled
            chosen, strata = phase_two(rng, law, sampled, cells)
            known = possible_only(np.where(chosen[None, :], ranks, np.nan), sampled, law)
            checks = likelihood_check(known, sampled, M, N_ITEMS, law, strata=strata, cells=cells)
            assert any(c.suspect for c in checks) == (name != "truth"), (name, checks)
