"""Corrections of section 5 against the identities the paper states."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sampled_metrics.estimation import corrections as C
from sampled_metrics.estimation import metrics as M
from sampled_metrics.estimation.expected import expected_sampled_metric, metric_on_sample
from sampled_metrics.estimation.laws import LAWS, sampled_rank_law

ML1M_ITEMS, SAMPLES = 3706, 100


def test_rank_estimate_by_hand():
    """Eq 20 with n = 11, m = 2: estimates 1, 6, 11."""
    assert C.rank_estimate_correction("ap", 11, 2).tolist() == [1, 1 / 6, 1 / 11]
    # n = 10, m = 3: estimates 1, 4, 7, 10 exactly; n = 12: 1, 4.67, 8.33, 12 -> floor 1, 4, 8, 12
    assert C.rank_estimate_correction("ap", 12, 3).tolist() == [1, 1 / 4, 1 / 8, 1 / 12]
    linear = C.rank_estimate_correction("ap", 12, 3, interpolation="linear")
    np.testing.assert_allclose(linear[1], (1 / 3) * (1 / 4) + (2 / 3) * (1 / 5))


def test_rank_estimate_makes_recall_and_ndcg_identical_on_movielens():
    """Section 6.3: under the rank estimate, Recall@10 and NDCG@10 coincide at n = 3706, m = 100."""
    recall = C.rank_estimate_correction("recall@10", ML1M_ITEMS, SAMPLES)
    ndcg = C.rank_estimate_correction("ndcg@10", ML1M_ITEMS, SAMPLES)
    assert np.array_equal(recall, ndcg)
    assert recall[0] == 1 and recall[1:].sum() == 0


@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("name", ["recall@10", "ndcg@10", "ap"])
def test_bv_with_gamma_one_is_the_posterior_mean_eq26(law, name):
    P = sampled_rank_law(ML1M_ITEMS, SAMPLES, law)
    exact = M.metric_vector(name, ML1M_ITEMS)
    # eq 26 computed directly: sum_r p(r|r~) M(r) with
    # p(r|r~) = P[r, r~] / sum_r P[r, r~] (uniform prior)
    posterior = P / P.sum(axis=0, keepdims=True)
    np.testing.assert_allclose(
        C.bias_variance_correction(exact, P, 1.0), posterior.T @ exact, atol=1e-12
    )
    np.testing.assert_allclose(
        C.posterior_mean_correction(exact, P), posterior.T @ exact, atol=1e-12
    )


def test_bv_with_gamma_one_uses_the_prior():
    n, m = 40, 4
    P = sampled_rank_law(n, m, "binomial")
    prior = np.linspace(2, 0.1, n)
    exact = M.metric_vector("ndcg", n)
    joint = (prior / prior.sum())[:, None] * P
    np.testing.assert_allclose(
        C.bias_variance_correction(exact, P, 1.0, prior),
        joint.T @ exact / joint.sum(axis=0),
        atol=1e-12,
    )


@pytest.mark.parametrize("law", LAWS)
def test_bv_tends_to_least_squares_as_gamma_goes_to_zero(law):
    n, m = 30, 4  # small enough for A to be well conditioned
    P = sampled_rank_law(n, m, law)
    exact = M.metric_vector("ap", n)
    ls = C.least_squares_correction(exact, P)
    gaps = [
        np.abs(C.bias_variance_correction(exact, P, g) - ls).max() for g in (1e-2, 1e-4, 1e-6, 1e-8)
    ]
    assert all(b < a for a, b in zip(gaps, gaps[1:]))
    assert gaps[-1] < 1e-5
    # and LS satisfies the normal equations of eq 22
    A, b, _ = C.least_squares_design(exact, P)
    np.testing.assert_allclose(A.T @ (A @ ls - b), 0, atol=1e-12)


@pytest.mark.parametrize(("n", "m"), [(300, 1000), (1392, 2000), (1000, 999), (60, 40)])
def test_bv_at_large_m_solves_eq25(n, m):
    """Eq 25 whatever the Gram's bandwidth (Figure 6's sample sizes, some above n): the
    solver's answer against the dense system built from the law by hand."""
    P = sampled_rank_law(n, m, "binomial")
    exact = M.metric_vector("recall@10", n)
    gamma = 0.1
    lhs = (1 - gamma) * P.T @ P / n + gamma * np.diag(P.mean(axis=0))
    expected = np.linalg.solve(lhs, P.T @ exact / n)
    found = C.bias_variance_correction(exact, P, gamma)
    np.testing.assert_allclose(found, expected, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("law", LAWS)
@pytest.mark.parametrize("name", ["recall@10", "ndcg@10", "ap"])
def test_cls_is_monotone_and_beats_every_monotone_vector_we_try(law, name):
    P = sampled_rank_law(ML1M_ITEMS, SAMPLES, law)
    exact = M.metric_vector(name, ML1M_ITEMS)
    cls = C.constrained_least_squares_correction(exact, P, constraint="monotone")
    assert np.all(np.diff(cls) <= 1e-12)
    objective = C.average_squared_bias(cls, exact, P)
    rivals = {
        "rank estimate": C.rank_estimate_correction(name, ML1M_ITEMS, SAMPLES),
        "uncorrected": metric_on_sample(name, SAMPLES),
        "posterior mean": C.posterior_mean_correction(exact, P),
        "isotonic-projected LS": np.minimum.accumulate(C.least_squares_correction(exact, P)),
    }
    rng = np.random.default_rng(0)
    for i in range(20):  # feasible perturbations of the optimum
        step = -np.cumsum(rng.exponential(size=SAMPLES + 1)) * 10.0 ** rng.integers(-8, -3)
        rivals[f"perturbed {i}"] = np.minimum.accumulate(cls + step * rng.choice([-1, 1]))
    for label, vector in rivals.items():
        assert np.all(np.diff(vector) <= 1e-12), label
        assert objective <= C.average_squared_bias(vector, exact, P) + 1e-15, label
    # and it is no better than the unconstrained optimum
    assert (
        objective >= C.average_squared_bias(C.least_squares_correction(exact, P), exact, P) - 1e-15
    )


@pytest.mark.parametrize("name", ["recall@10", "ndcg@10", "ap"])
def test_bias_order_ls_bv_uncorrected_on_movielens_size(name):
    """Uniform prior, n = 3706, m = 100: bias^2(LS) <= bias^2(BV 0.1) <= bias^2(uncorrected)."""
    P = sampled_rank_law(ML1M_ITEMS, SAMPLES)
    exact = M.metric_vector(name, ML1M_ITEMS)
    ls = C.average_squared_bias(C.least_squares_correction(exact, P), exact, P)
    bv = C.average_squared_bias(C.bias_variance_correction(exact, P, 0.1), exact, P)
    raw = C.average_squared_bias(metric_on_sample(name, SAMPLES), exact, P)
    assert ls <= bv <= raw
    assert bv < raw / 10  # the correction removes most of the bias


def test_variance_grows_as_gamma_shrinks():
    """Eq 24's trade-off: lower gamma -> lower bias, higher average variance."""
    P = sampled_rank_law(ML1M_ITEMS, SAMPLES)
    exact = M.metric_vector("recall@10", ML1M_ITEMS)

    def bias_and_variance(vector):
        mean = P @ vector
        return np.mean((mean - exact) ** 2), np.mean(P @ vector**2 - mean**2)

    results = [
        bias_and_variance(C.bias_variance_correction(exact, P, g)) for g in (1, 0.1, 0.01, 0.001)
    ]
    biases, variances = zip(*results)
    assert list(biases) == sorted(biases, reverse=True)
    assert list(variances) == sorted(variances)


def test_corrected_metric_by_name_dispatches():
    n, m = 50, 5
    P = sampled_rank_law(n, m)
    exact = M.metric_vector("ndcg@10", n)
    assert np.array_equal(
        C.corrected_metric("ndcg@10", "sampled", n, m), metric_on_sample("ndcg@10", m)
    )
    np.testing.assert_allclose(
        C.corrected_metric("ndcg@10", "bv_0.1", n, m), C.bias_variance_correction(exact, P, 0.1)
    )
    np.testing.assert_allclose(
        C.corrected_metric("ndcg@10", "cls", n, m), C.constrained_least_squares_correction(exact, P)
    )
    assert C.parse_method("bv_0.001") == ("bv", 0.001)
    for bad in ("bv_2", "bv_x", "median", "bv_-0.1"):
        with pytest.raises(ValueError, match="bv_|unknown"):
            C.parse_method(bad)


def test_apply_correction_looks_up_each_rank():
    vector = np.array([1.0, 0.5, 0.25])
    assert C.apply_correction(vector, [3, 1, 1, 2]).tolist() == [0.25, 1.0, 1.0, 0.5]
    with pytest.raises(ValueError):
        C.apply_correction(vector, [4])


def test_prior_is_validated():
    P = sampled_rank_law(10, 3)
    exact = M.metric_vector("ap", 10)
    with pytest.raises(ValueError, match="prior"):
        C.bias_variance_correction(exact, P, 0.5, prior=-np.ones(10))
    with pytest.raises(ValueError, match="prior"):
        C.bias_variance_correction(exact, P, 0.5, prior=np.ones(9))
    with pytest.raises(ValueError, match="gamma"):
        C.bias_variance_correction(exact, P, 1.5)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(5, 300),
    m=st.integers(1, 60),
    gamma=st.floats(0.001, 1.0),
    law=st.sampled_from(LAWS),
    seed=st.integers(0, 2**16),
    name=st.sampled_from(["recall@10", "ndcg@10", "ap", "auc"]),
)
def test_corrections_are_finite_and_cls_monotone_for_random_problems(n, m, gamma, law, seed, name):
    m = min(m, n - 1)
    prior = np.random.default_rng(seed).random(n) + 1e-3
    P = sampled_rank_law(n, m, law)
    exact = M.metric_vector(name, n)
    bv = C.bias_variance_correction(exact, P, gamma, prior)
    cls = C.constrained_least_squares_correction(exact, P, prior)
    assert np.all(np.isfinite(bv)) and np.all(np.isfinite(cls))
    assert np.all(np.diff(cls) <= 1e-9)
    # bias^2 of BV never exceeds that of the posterior mean (gamma = 1), its most regularized case
    assert (
        C.average_squared_bias(bv, exact, P, prior)
        <= C.average_squared_bias(C.bias_variance_correction(exact, P, 1.0, prior), exact, P, prior)
        + 1e-12
    )


def test_every_correction_is_closer_in_expectation_on_a_toy_rank_set():
    """Section 5.4 / Figure 4: all corrected AP are closer, in expectation over
    the true ranks, to the exact AP than the uncorrected one (n = 10,000, m = 100)."""
    n, m = 10_000, 100
    ranks = np.arange(1, n + 1)
    exact = M.metric_vector("ap", n)
    raw_gap = abs(
        expected_sampled_metric(metric_on_sample("ap", m), ranks, n).mean() - exact.mean()
    )
    for method in ("rank_estimate", "cls", "bv_1", "bv_0.1", "bv_0.01"):
        vector = C.corrected_metric("ap", method, n, m)
        gap = abs(expected_sampled_metric(vector, ranks, n).mean() - exact.mean())
        assert gap < raw_gap, method


# --------------------------------------------------------------------------
# CLS: the two constraints against independent solvers, and the reduced form
# --------------------------------------------------------------------------


def _slsqp_in_range(exact, P, seeds=4):
    """min bias^2 over non-increasing x within [min M, max M], by SLSQP from several starts."""
    from scipy import optimize

    low, high = exact.min(), exact.max()
    constraints = [
        {"type": "ineq", "fun": lambda x: -np.diff(x)},
        {"type": "ineq", "fun": lambda x: x - low},
        {"type": "ineq", "fun": lambda x: high - x},
    ]
    best = np.inf
    for seed in range(seeds):
        start = np.sort(np.random.default_rng(seed).uniform(low, high, P.shape[1]))[::-1]
        result = optimize.minimize(
            lambda x: C.average_squared_bias(x, exact, P),
            start,
            constraints=constraints,
            method="SLSQP",
            options={"ftol": 1e-16, "maxiter": 2000},
        )
        best = min(best, result.fun)
    return best


@pytest.mark.parametrize(
    "law, n, m, name",
    [
        ("binomial", 50, 5, "recall@10"),  # the upper bound M^ <= 1 is active
        ("hypergeometric", 60, 8, "recall@10"),
        ("binomial", 200, 10, "recall@100"),
        ("binomial", 40, 6, "ndcg@10"),  # only the lower bound is active
        ("hypergeometric", 30, 4, "ap"),
    ],
)
def test_cls_in_range_is_the_optimum_of_an_independent_solver(law, n, m, name):
    """CLS in range reaches SLSQP's optimum of the same problem, and is feasible."""
    P, exact = sampled_rank_law(n, m, law), M.metric_vector(name, n)
    cls = C.constrained_least_squares_correction(exact, P)
    assert np.all(np.diff(cls) <= 1e-12)
    assert exact.min() - 1e-12 <= cls.min() and cls.max() <= exact.max() + 1e-12
    reference = _slsqp_in_range(exact, P)
    assert C.average_squared_bias(cls, exact, P) <= reference + 1e-12


def test_cls_upper_bound_is_active_when_monotone_alone_exceeds_it():
    """Binomial, n = 50, m = 5: order alone gives Recall@10 M^(1) > 1; in range caps it at 1."""
    P, exact = sampled_rank_law(50, 5, "binomial"), M.metric_vector("recall@10", 50)
    assert C.constrained_least_squares_correction(exact, P, constraint="monotone")[0] > 1.01
    assert C.constrained_least_squares_correction(exact, P)[0] == pytest.approx(1.0, abs=1e-9)


@pytest.mark.parametrize("law", LAWS)
def test_cls_monotone_matches_bounded_variable_least_squares(law):
    """The NNLS solution of the reduced form equals scipy's BVLS on the full n-row problem."""
    from scipy import optimize

    n, m = 300, 12
    P = sampled_rank_law(n, m, law)
    for name in ("recall@10", "ndcg@10", "ap"):
        exact = M.metric_vector(name, n)
        A, b, _ = C.least_squares_design(exact, P)
        U = np.triu(np.ones((m + 1, m + 1)))
        lower = np.r_[np.zeros(m), -np.inf]
        z = optimize.lsq_linear(A @ U, b, bounds=(lower, np.inf), method="bvls", tol=1e-14).x
        ours = C.constrained_least_squares_correction(exact, P, constraint="monotone")
        assert (
            C.average_squared_bias(ours, exact, P)
            <= C.average_squared_bias(U @ z, exact, P) + 1e-15
        )


def test_cls_in_range_keeps_the_unbiased_sampled_auc():
    """Sampled AUC is unbiased, monotone and within [0, 1]: CLS in range has zero bias."""
    n, m = 500, 20
    P, exact = sampled_rank_law(n, m), M.metric_vector("auc", n)
    cls = C.constrained_least_squares_correction(exact, P)
    assert C.average_squared_bias(cls, exact, P) < 1e-20


def test_cls_rejects_an_unknown_constraint():
    P, exact = sampled_rank_law(20, 3), M.metric_vector("ap", 20)
    with pytest.raises(ValueError, match="unknown CLS constraint 'isotonic'"):
        C.constrained_least_squares_correction(exact, P, constraint="isotonic")
    with pytest.raises(ValueError, match="unknown CLS constraint"):
        C.correction_vectors(["ap"], ["cls"], 20, 3, cls_constraint="isotonic")


def test_reduced_system_keeps_the_objective_up_to_a_constant():
    rng = np.random.default_rng(3)
    P = sampled_rank_law(80, 9, "binomial")
    exact = np.column_stack([M.metric_vector(name, 80) for name in ("ap", "ndcg@10")])
    system = C.reduced_system(exact, P)
    for j in range(2):
        x, y = rng.normal(size=(2, 10))
        full = C.average_squared_bias(x, exact[:, j], P) - C.average_squared_bias(y, exact[:, j], P)
        reduced = np.sum((system.R @ x - system.Y[:, j]) ** 2) - np.sum(
            (system.R @ y - system.Y[:, j]) ** 2
        )
        assert reduced == pytest.approx(full, rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("law", LAWS)
def test_reduced_system_of_many_rows_keeps_the_objective_up_to_a_constant(law):
    """n = 2,500 rows, factored a block at a time: still ||R x - Y||^2 = ||A x - b||^2
    - const, and R^T [R | Y] = A^T [A | B] (the Gram of the weighted system)."""
    rng = np.random.default_rng(4)
    n, m = 2500, 30
    P = sampled_rank_law(n, m, law)
    exact = np.column_stack([M.metric_vector(name, n) for name in ("ap", "recall@10")])
    system = C.reduced_system(exact, P)
    assert system.R.shape == (m + 1, m + 1) and np.allclose(np.tril(system.R, -1), 0)
    A = P / np.sqrt(n)  # sqrt(p(r)) P at the uniform prior
    scale = np.abs(A.T @ A).max()
    np.testing.assert_allclose(system.R.T @ system.R, A.T @ A, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(system.R.T @ system.Y, A.T @ exact / np.sqrt(n), rtol=0,
                               atol=1e-12 * np.abs(A.T @ exact).max() / np.sqrt(n))  # fmt: skip
    for j in range(2):
        x, y = rng.normal(size=(2, m + 1))
        full = C.average_squared_bias(x, exact[:, j], P) - C.average_squared_bias(y, exact[:, j], P)
        reduced = np.sum((system.R @ x - system.Y[:, j]) ** 2) - np.sum(
            (system.R @ y - system.Y[:, j]) ** 2
        )
        assert reduced == pytest.approx(full, rel=1e-9, abs=1e-14)


@pytest.mark.parametrize("law", LAWS)
def test_correction_vectors_equal_one_method_at_a_time(law):
    """Sharing the law, the QR and the Gram matrix changes no vector."""
    metrics = ["recall@10", "ndcg@10", "ap", "auc"]
    methods = ["sampled", "rank_estimate", "ls", "cls", "bv_1", "bv_0.1", "bv_0"]
    n, m = 400, 20
    shared = C.correction_vectors(metrics, methods, n, m, law)
    assert list(shared) == [(metric, method) for metric in metrics for method in methods]
    P = sampled_rank_law(n, m, law)
    for (metric, method), vector in shared.items():
        exact = M.metric_vector(metric, n)
        if method == "cls":
            alone = C.constrained_least_squares_correction(exact, P)
        elif method.startswith("bv_") and method != "bv_0":
            alone = C.bias_variance_correction(exact, P, float(method[3:]))
        else:
            alone = C.corrected_metric(metric, method, n, m, law)
        scale = max(1.0, np.abs(alone).max())
        np.testing.assert_allclose(vector, alone, atol=1e-9 * scale, err_msg=f"{metric} {method}")


def test_corrections_by_n_in_processes_equal_one_process_and_each_n_alone():
    metrics, methods = ["recall@10", "ap"], ["sampled", "rank_estimate", "cls", "bv_0.1"]
    n_values = [400, 333, 400, 250, 333, 512]  # repeats are built once
    serial = C.correction_vectors_by_n(n_values, metrics, methods, 20, "binomial")
    parallel = C.correction_vectors_by_n(n_values, metrics, methods, 20, "binomial", workers=2)
    assert sorted(serial) == sorted(parallel) == [250, 333, 400, 512]
    for n in serial:
        alone = C.correction_vectors(metrics, methods, n, 20, "binomial")
        for key, vector in alone.items():
            assert serial[n][key].tobytes() == parallel[n][key].tobytes() == vector.tobytes()


def test_rank_estimate_and_closed_form_recall_refuse_what_the_law_refuses():
    from sampled_metrics.estimation.expected import expected_recall_closed_form

    with pytest.raises(ValueError, match="m must be a positive integer, got 0"):
        C.rank_estimate_correction("recall@10", n=100, m=0)  # was 0/0 -> nan
    with pytest.raises(ValueError, match="unknown law 'uniform'"):
        expected_recall_closed_form([1, 2], n=10, m=3, k=1, law="uniform")  # was hypergeometric
    with pytest.raises(ValueError, match="cannot draw m=12"):
        expected_recall_closed_form([1, 2], n=10, m=12, k=1)


def test_a_positive_definite_system_is_solved_from_its_upper_triangle():
    """A x = b recovers x for a symmetric positive definite A, reading only A's upper
    triangle; a matrix that is not positive definite, or not finite, is refused."""
    from sampled_metrics.estimation.corrections.solvers import solve_positive_definite

    rng = np.random.default_rng(11)
    X = rng.normal(size=(40, 30))
    A, x = X.T @ X + np.eye(30), rng.normal(size=(30, 3))
    np.testing.assert_allclose(solve_positive_definite(np.triu(A), A @ x), x, rtol=1e-10)
    with pytest.raises(np.linalg.LinAlgError):
        solve_positive_definite(np.diag([1.0, -1.0]), np.ones(2))
    with pytest.raises(ValueError):
        solve_positive_definite(np.array([[1.0, 0.0], [0.0, np.nan]]), np.ones(2))


def test_cls_under_each_constraint_at_one_node_is_its_own_build():
    """The QR kept between builds at one (n, m, law) serves only the same metrics:
    CLS after a build of other metrics, or under the other constraint, is the CLS of a
    build alone, bit for bit (the kept system is emptied between the two)."""
    from sampled_metrics.estimation.corrections import vectors

    args = (40, 6, "binomial")
    constrained = {
        c: C.correction_vectors(["ap"], ["cls"], *args, cls_constraint=c)
        for c in ("monotone", "monotone_in_range")
    }
    C.correction_vectors(["recall@3"], ["cls"], *args)  # another system, same law
    for constraint, expected in constrained.items():
        vectors._KEPT_SYSTEM.clear()
        alone = C.correction_vectors(["ap"], ["cls"], *args, cls_constraint=constraint)
        np.testing.assert_array_equal(alone["ap", "cls"], expected["ap", "cls"])
    # a monotone solution is non-increasing in r~, whichever build it came from
    assert np.all(np.diff(constrained["monotone"]["ap", "cls"]) <= 1e-12)
