"""Many models at once (estimation/decisions/family): Holm's step-down against its
definition and a hand-worked example, and simulated families of six models whose
truth is known: per-user metrics drawn here (a user's hit probability shared by the
models, each model's hit drawn apart), so that the models' mean metrics are set by
construction. A wrong verdict names a model that is not better; the family-wise error
is the share of simulated families with at least one."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from scipy import stats
from scipy.special import ndtri

from sampled_metrics.estimation.decisions import (
    Verdict,
    adjusted_p_values,
    draw_design,
    estimate_difference,
    family_verdicts,
    may_be_best,
    metric_proxy,
    paired_family,
    predicted_spread,
)

ALPHA = 0.05
PAIRS = list(combinations(range(6), 2))


def three_errors(p: float, draws: int) -> float:
    """Three binomial standard errors of a share near p over ``draws`` draws."""
    return 3 * np.sqrt(p * (1 - p) / draws)


def families(rng, shifts, users: int, count: int) -> np.ndarray:
    """(count, k, users) 0/1 metrics: user u hits with probability p_u + shift of the
    model, p_u in [0.05, 0.45] shared by the models; model i's mean is E p + shifts[i]."""
    p = rng.uniform(0.05, 0.45, (count, 1, users))
    return (rng.random((count, len(shifts), users)) < p + np.reshape(shifts, (1, -1, 1))).astype(
        np.float64
    )


def wrong(verdicts, shifts) -> bool:
    """Whether any verdict names a model that is not better (equal or worse)."""
    for (i, j), v in zip(PAIRS, verdicts):
        truth = np.sign(shifts[i] - shifts[j])
        if v is Verdict.FIRST and truth <= 0 or v is Verdict.SECOND and truth >= 0:
            return True
    return False


def test_holm_on_a_hand_worked_example():
    # Four p-values at alpha = 0.05 (Holm 1979's rule worked by hand): sorted 0.005,
    # 0.01, 0.03, 0.04 meet the thresholds 0.05/4 = 0.0125 (yes), 0.05/3 = 0.0167
    # (yes), 0.05/2 = 0.025 (0.03: no, stop): the pairs of 0.005 and 0.01 are decided.
    # Adjusted: 4 x 0.005 = 0.02, 3 x 0.01 = 0.03, 2 x 0.03 = 0.06, max(0.06, 1 x 0.04).
    p = np.array([0.01, 0.04, 0.03, 0.005])
    assert np.allclose(adjusted_p_values(p), [0.03, 0.06, 0.06, 0.02])
    # The same family as estimates: d = z s with 2 (1 - Phi(z)) = p, signs mixed.
    s = np.array([0.01, 0.02, 0.005, 0.01])
    d = ndtri(1 - p / 2) * s * np.array([1, -1, -1, -1])
    f = family_verdicts(d, s, confidence=1 - ALPHA)
    assert np.allclose(f.p_value, p)
    assert [v.value for v in f.verdicts] == ["A better", "undecided", "undecided", "B better"]
    # Two decided of four: the intervals are at Holm's last step, 1 - 0.05 / 2.
    assert f.level == pytest.approx(1 - ALPHA / 2)
    assert f.low[0] > 0 and f.high[3] < 0 and f.low[2] < 0 < f.high[2]
    # Bonferroni's 0.05 / 4 = 0.0125 decides the same two here, at the level 1 - 0.05 / 4
    bonferroni = family_verdicts(d, s, confidence=1 - ALPHA, method="bonferroni")
    assert [v.decided for v in bonferroni.verdicts] == [True, False, False, True]
    assert bonferroni.level == pytest.approx(1 - ALPHA / 4)


def test_holm_is_its_definition_and_its_intervals_agree_with_its_verdicts():
    rng = np.random.default_rng(3)
    for _ in range(300):
        k = int(rng.integers(1, 16))
        d = rng.normal(0, 1, k) * rng.choice([0.0, 3.0], k)
        s = rng.uniform(0.2, 1.0, k)
        nu = rng.choice([5.0, 50.0, np.inf], k)
        f = family_verdicts(d, s, nu, limits=(-np.inf, np.inf))
        p = 2 * stats.t.sf(np.abs(d) / s, nu)
        # the step-down written out: decide while p_(i) <= alpha / (k - i + 1)
        decided = np.zeros(k, bool)
        for i, index in enumerate(np.argsort(p)):
            if p[index] > ALPHA / (k - i):
                break
            decided[index] = True
        assert [v.decided for v in f.verdicts] == decided.tolist()
        assert all(
            v is (Verdict.FIRST if x > 0 else Verdict.SECOND)
            for v, x in zip(f.verdicts, d)
            if v.decided
        )
        # every pair's interval holds 0 exactly when it is undecided
        for v, low, high in zip(f.verdicts, f.low, f.high):
            assert v.decided == (low > 0 or high < 0)
        bonferroni = family_verdicts(d, s, nu, method="bonferroni")
        assert all(v.decided <= h.decided for v, h in zip(bonferroni.verdicts, f.verdicts))
        assert bonferroni.level == pytest.approx(1 - ALPHA / k)


def test_exact_differences_are_decided_by_their_sign():
    f = family_verdicts([0.02, 0.0, -0.01], [0.0, 0.0, 0.0])
    assert [v.value for v in f.verdicts] == ["A better", "undecided", "B better"]
    assert f.p_value == (0.0, 1.0, 0.0)


def test_a_paired_family_is_scipys_paired_t_test_per_pair():
    values = families(np.random.default_rng(5), [0.0, 0.02, 0.05], 400, 1)[0]
    pairs, f = paired_family(values)
    for (i, j), p in zip(pairs, f.p_value):
        assert p == pytest.approx(stats.ttest_rel(values[i], values[j]).pvalue, rel=1e-9)


def run_families(shifts, users: int, count: int, seed: int) -> dict:
    """Over ``count`` simulated families: how often some verdict was wrong under Holm,
    Bonferroni and per-pair tests at 95 % without correction, and the sets that may be
    best."""
    values = families(np.random.default_rng(seed), shifts, users, count)
    errors = {"holm": 0, "bonferroni": 0, "per pair": 0}
    sets = []
    for family in values:
        _, holm = paired_family(family, method="holm")
        errors["holm"] += wrong(holm.verdicts, shifts)
        bonferroni = paired_family(family, method="bonferroni")[1]
        errors["bonferroni"] += wrong(bonferroni.verdicts, shifts)
        per_pair = [Verdict.UNDECIDED if p > ALPHA else Verdict.FIRST if d > 0 else Verdict.SECOND
                    for p, d in zip(holm.p_value, holm.difference)]  # fmt: skip
        errors["per pair"] += wrong(per_pair, shifts)
        sets.append(may_be_best(list(range(len(shifts))), PAIRS, holm.verdicts))
    return {"errors": {k: v / count for k, v in errors.items()}, "sets": sets}


def test_six_equal_models_some_wrong_verdict_in_at_most_alpha_of_the_families():
    count = 2000
    found = run_families([0.0] * 6, users=300, count=count, seed=11)
    errors, margin = found["errors"], three_errors(ALPHA, count)
    error = np.sqrt(errors["holm"] * (1 - errors["holm"]) / count)
    print(f"family-wise error of 15 pairs of 6 equal models over {count} families: "
          f"Holm {errors['holm']:.4f} (standard error {error:.4f}), Bonferroni "
          f"{errors['bonferroni']:.4f}, per pair without correction "
          f"{errors['per pair']:.4f}")  # fmt: skip
    assert errors["holm"] <= ALPHA + margin
    assert errors["bonferroni"] <= ALPHA + margin
    # 15 tests at 5 % each: without correction some verdict is wrong far more often
    assert errors["per pair"] > ALPHA + 2 * margin
    # every model equal: every model may be best whenever no verdict is wrong
    assert np.mean([len(s) == 6 for s in found["sets"]]) >= 1 - ALPHA - margin


@pytest.mark.parametrize(
    "shifts",
    [[0.07, 0.06, 0.04, 0.0, 0.0, -0.02], [0.05, 0.05, 0.03, 0.0, -0.01, -0.03]],
    ids=["one best", "two best"],
)
def test_unequal_models_the_best_is_in_the_set_and_verdicts_are_right(shifts):
    count = 1000
    found = run_families(shifts, users=1000, count=count, seed=12)
    margin = three_errors(ALPHA, count)
    best = [i for i, x in enumerate(shifts) if x == max(shifts)]
    kept = np.mean([set(best) <= set(s) for s in found["sets"]])
    worst_out = np.mean([5 not in s for s in found["sets"]])
    print(f"{shifts}: some wrong verdict {found['errors']['holm']:.4f} (Holm), "
          f"{found['errors']['per pair']:.4f} (per pair); every best model in the set "
          f"{kept:.4f}; the worst left out {worst_out:.4f}")  # fmt: skip
    assert found["errors"]["holm"] <= ALPHA + margin
    assert kept >= 1 - ALPHA - margin
    # the set is not every model: the worst (0.08 or more below the best) is left out
    assert worst_out > 0.9


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="method"):
        family_verdicts([0.1], [0.1], method="tukey")
    with pytest.raises(ValueError, match="standard_error"):
        family_verdicts([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="values"):
        paired_family([[1.0, 0.0]])


def equal_models(rng, users: int, n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Six models' exact ranks (6, users), each the same heavy-tailed rank values given
    to the users in another correlated order (so every model's exact metric over these
    users is the same), and their sampled ranks (numpy's hypergeometric, m items)."""
    shared = rng.standard_normal(users)
    values = np.sort(np.clip(np.ceil(np.exp(rng.random(users) ** 2 * np.log(n))), 1, n))
    exact = np.empty((6, users), dtype=np.int64)
    for k in range(6):
        exact[k, np.argsort(0.8 * shared + 0.6 * rng.standard_normal(users))] = values
    sampled = 1 + rng.hypergeometric(exact - 1, n - exact, m)
    return exact, sampled


def test_six_equal_models_by_the_design_some_wrong_verdict_in_at_most_alpha():
    users, n, m, draws = 3000, 3000, 100, 200
    exact, sampled = equal_models(np.random.default_rng(7), users, n, m)
    law = "hypergeometric"
    proxies = [metric_proxy(row, m, n, "recall@10", law=law) for row in sampled]
    spread = predicted_spread(sampled, m, n, "recall@10", law=law)
    wrong_holm = wrong_per_pair = 0
    for seed in range(draws):
        design = draw_design(sampled, m, n, budget=0.25, law=law, spread=spread, seed=seed)
        pairs = [estimate_difference(design, exact[[i, j]], sampled[[i, j]], m, n, law=law,
                                     proxy=[proxies[i], proxies[j]]) for i, j in PAIRS]  # fmt: skip
        family = family_verdicts([e.value for e in pairs], [e.standard_error for e in pairs],
                                 [e.degrees_of_freedom for e in pairs])  # fmt: skip
        wrong_holm += family.decided > 0  # every pair is equal: any verdict is wrong
        wrong_per_pair += any(e.verdict.decided for e in pairs)
    holm, per_pair = wrong_holm / draws, wrong_per_pair / draws
    print(f"six equal models, 15 pairs by the design at 25 %, {draws} designs: some verdict "
          f"wrong in {holm:.3f} (Holm; standard error {np.sqrt(holm * (1 - holm) / draws):.3f}),"
          f" {per_pair:.3f} (per pair without correction)")  # fmt: skip
    assert holm <= ALPHA + three_errors(ALPHA, draws)
    assert per_pair > ALPHA + three_errors(ALPHA, draws)


def test_holms_signs_and_undecided_intervals_hold_together():
    # What Holm's intervals at its last step promise with its verdicts (the module):
    # every decided sign right and every undecided pair's interval covering, at once.
    shifts, count = [0.1, 0.08, 0.06, 0.04, 0.02, 0.0], 1000
    truth = np.array([shifts[i] - shifts[j] for i, j in PAIRS])
    held = 0
    for family in families(np.random.default_rng(2), shifts, 1000, count):
        f = paired_family(family)[1]
        covered = (np.array(f.low) <= truth) & (truth <= np.array(f.high))
        right = [
            v is (Verdict.FIRST if t > 0 else Verdict.SECOND) for v, t in zip(f.verdicts, truth)
        ]
        held += all(r if v.decided else c for v, r, c in zip(f.verdicts, right, covered))
    print(f"{shifts}: decided signs right and undecided intervals covering in {held / count:.3f}")
    assert held / count >= 1 - ALPHA - three_errors(ALPHA, count)
