"""The design study (sampled_metrics.studies.decisions: study, methods, summary,
report): the simulation against closed forms, coverage near the nominal level
on a population with known truth, full ranking exact, the cost accounting, the outputs
and the configuration."""

import re

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import CONFIG_FILE, REPO, run

from sampled_metrics.pipeline.config import SCHEMA_FILE, ConfigError
from sampled_metrics.pipeline.validation import load_config, validate_config
from sampled_metrics.studies.decisions.methods import (
    adaptive_ranks,
    simulate_sampled_ranks,
)
from sampled_metrics.studies.decisions.registry import KINDS, Method, study_methods
from sampled_metrics.studies.decisions.report import write_decisions
from sampled_metrics.studies.decisions.study import run_study
from sampled_metrics.studies.decisions.summary import SUMMARY_COLUMNS, Goals, goals, summarize

N = 400  # every user's ranked-set size


def population(users=1500, seed=0):
    """Three correlated models' exact ranks, heavy-tailed (a log-normal relative rank):
    A and B close, C worse."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0.0, 1.6, users)
    ranks = [
        np.clip(np.ceil(np.exp(2.0 + skill + rng.normal(0.0, 0.8, users) + shift)), 1, N)
        for shift in (0.0, 0.15, 0.8)
    ]
    return np.stack(ranks).astype(np.int64), np.full(users, N)


@pytest.mark.parametrize("law", ["binomial", "hypergeometric"])
def test_the_sampled_ranks_have_the_laws_mean(law):
    # E[r~ - 1] = m (r - 1)/(n - 1) under either law (eq 15, section 4.4)
    rng = np.random.default_rng(1)
    r = np.repeat([[1, 40, 200, 400]], 20000, axis=0).T
    sampled = simulate_sampled_ranks(r, N, 30, law, rng)
    expected = 30 * (r[:, 0] - 1) / (N - 1)
    assert np.allclose(sampled.mean(axis=1) - 1, expected, atol=0.05)
    assert sampled.min() >= 1 and sampled.max() <= 31


def test_adaptive_sampling_grows_only_the_users_ranked_first():
    rng = np.random.default_rng(2)
    exact = np.array([1, 1, 300, 2])
    # rank 1 never meets an item above it: every step taken (capped at n - 1 = 399)
    ranks, m_u = adaptive_ranks(exact, N, [1, 1, 5, 1], 50, "hypergeometric", rng, (100, 1000))
    assert m_u.tolist()[:3] == [399, 399, 50] and ranks.tolist()[:3] == [1, 1, 5]
    # rank 2: the one item above is found by the time all 399 are drawn
    assert ranks[3] == 2 and m_u[3] in (150, 399)
    ranks, m_u = adaptive_ranks(exact, N, [1, 1, 5, 1], 50, "binomial", rng, (100, 1000))
    assert m_u[0] == 1050 and ranks[0] == 1


def test_the_methods_of_a_study_and_an_unknown_one():
    methods = study_methods(["design", "full", "adaptive-em"], [0.1, 0.2], [0.25], [100, 200])
    assert [m.name for m in methods] == ["design-0.1", "design-0.2", "full", "adaptive-em"]
    assert [m.budget for m in methods] == [0.1, 0.2, None, None]
    assert methods[-1].steps == (100, 200) and methods[0].steps == ()
    with pytest.raises(ValueError, match="unknown methods"):
        study_methods(["full", "oracle"], [0.1], [0.25])


def test_the_configuration_runs_the_kinds_of_the_registry():
    schema = yaml.safe_load(SCHEMA_FILE.read_text())
    run = schema["properties"]["decisions"]["properties"]["run"]
    assert run["items"]["enum"] == run["default"] == list(KINDS)


def first_column(doc: str, heading: str) -> list[str]:
    """The first column of the table under ``## heading`` in ``doc``, code quotes off."""
    section = doc.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [row.split("|")[1].strip().strip("`") for row in rows]


def test_the_docs_list_the_registry_kinds_and_the_configured_goals():
    doc = (REPO / "docs" / "decisions_study.md").read_text()
    assert first_column(doc, "The methods") == list(KINDS)
    schema = yaml.safe_load(SCHEMA_FILE.read_text())
    goals_schema = schema["properties"]["decisions"]["properties"]["goals"]["properties"]
    assert first_column(doc, "The goals") == list(goals_schema)
    assert set(goals_schema) == {goal for goal in default_goals_frame()["goal"]}


def default_goals_frame() -> pd.DataFrame:
    """Every goal measured once, on an empty study with every method."""
    methods = study_methods(list(KINDS), [0.1, 0.25], [0.25])
    empty = pd.DataFrame(columns=SUMMARY_COLUMNS)
    return goals(empty, methods, default_goals())


def default_goals() -> Goals:
    return Goals.from_config(load_config(CONFIG_FILE)["decisions"]["goals"])


@pytest.fixture(scope="module")
def study():
    exact, n = population()
    methods = [
        Method(KINDS["full"]),
        Method(KINDS["uniform"], 0.25),
        Method(KINDS["design"], 0.25),
        Method(KINDS["adaptive-em"], steps=(100, 200, 400, 800, 1600)),
    ]
    rows = run_study(
        exact, n, ["A", "B", "C"], seeds=40, m=30, law="hypergeometric",
        metrics=["recall@10", "ndcg@10"], methods=methods, base_seed=7,
    )  # fmt: skip
    return exact, n, methods, rows


def test_intervals_cover_near_the_nominal_level(study):
    _, _, _, rows = study
    for method in ("uniform-0.25", "design-0.25"):
        covered = rows.loc[rows["method"] == method, "covered"]
        # 40 seeds x 12 cells at 95 %: the mean within a few standard errors
        assert 0.89 <= covered.mean() <= 0.995, (method, covered.mean())


def test_full_ranking_is_exact_and_never_wrong(study):
    exact, n, _, rows = study
    full = rows[(rows["method"] == "full") & (rows["target"] != "family")]
    assert (full["width"] == 0).all() and (full["covered"] == 1).all()
    assert (full["cost"] == 1).all()
    pairs = full[full["target"] == "pair"]
    assert (pairs["wrong"] == 0).all()
    # C is far worse than A: the paired t-test decides it, right, at every seed
    far = pairs[pairs["name"] == "A-C"]
    assert (far["right"] == 1).all()
    recall_a = np.mean(exact[0] <= 10)
    model_a = full[(full["name"] == "A") & (full["metric"] == "recall@10")]
    assert np.allclose(model_a["estimate"], recall_a)


def test_the_cost_of_the_design_is_phase_1_plus_its_users(study):
    _, n, _, rows = study
    users = n.size
    design = rows.loc[rows["method"] == "design-0.25", "cost"]
    # one n for all: (m + 1)/n of phase 1, then round(b U) users of n items each
    assert np.allclose(design, (30 + 1) / N + round(0.25 * users) / users)
    uniform = rows.loc[rows["method"] == "uniform-0.25", "cost"]
    assert np.allclose(uniform, round(0.25 * users) / users)
    adaptive = rows.loc[rows["method"] == "adaptive-em", "cost"]
    assert ((adaptive > (30 + 1) / N) & (adaptive < 1)).all()


def test_the_summary_counts_verdicts_against_the_truth(study):
    _, _, methods, rows = study
    summary = summarize(rows)
    assert list(summary.columns) == SUMMARY_COLUMNS
    pairs = summary[summary["target"] == "pair"]
    total = pairs["right"] + pairs["wrong"] + pairs["undecided"]
    assert np.allclose(total, 100)
    measured = goals(summary, methods, default_goals())
    assert set(measured["goal"]) >= {"cost", "coverage", "decided", "wrong", "equal"}


def test_the_standard_errors_predict_the_spread_between_studies():
    """A summary's standard errors against a known truth: 400 independent studies of
    200 seeds each (one method a study), coverage and verdicts Bernoulli, widths and
    errors normal; each measure's spread between the studies is the standard error the
    summary gives each study."""
    rng = np.random.default_rng(5)
    studies, seeds = 400, 200
    size = studies * seeds
    error = rng.normal(0.0, 0.01, size)
    right = (rng.random(size) < 0.7).astype(float)
    rows = pd.DataFrame({
        "seed": np.tile(np.arange(seeds), studies), "method": np.repeat(np.arange(studies), seeds),
        "target": "pair", "name": "A-B", "metric": "recall@10", "exact": 0.02,
        "estimate": 0.02 + error, "low": np.nan, "high": np.nan,
        "covered": (rng.random(size) < 0.9).astype(float), "width": rng.normal(0.02, 0.005, size),
        "verdict": "", "right": right, "wrong": 0.0, "cost": rng.uniform(0.1, 0.2, size),
    })  # fmt: skip
    summary = summarize(rows)
    for column in ("coverage", "width", "right", "undecided", "rmse", "cost"):
        spread = summary[column].std()
        assert 0.9 < summary[f"{column}_se"].mean() / spread < 1.1, column
    assert (summary["wrong_se"] == 0).all()  # never wrong: no spread


def test_the_outputs_are_written_whole_with_their_columns(study, tmp_path):
    _, _, methods, rows = study
    summary = summarize(rows)
    measured = goals(summary, methods, default_goals())
    setup = {"users": 1500, "models": ["A", "B", "C"], "m": 30, "law": "hypergeometric",
             "seeds": 40, "fewer_seeds": {}, "confidence": 0.95, "steps": (100, 200)}  # fmt: skip
    csv, md = tmp_path / "decisions.csv", tmp_path / "decisions.md"
    write_decisions(summary, measured, csv, md, dataset="toy", setup=setup)
    assert list(pd.read_csv(csv).columns) == [*SUMMARY_COLUMNS, "dataset"]
    text = md.read_text()
    assert "## Per method" in text and "## Goals" in text and "independently" in text
    # a failure while rendering leaves the files as they were
    before = csv.read_bytes(), md.read_bytes()
    with pytest.raises(KeyError):
        write_decisions(summary, measured, csv, md, dataset="other", setup={})
    assert (csv.read_bytes(), md.read_bytes()) == before
    assert sorted(p.name for p in tmp_path.glob("decisions*")) == ["decisions.csv", "decisions.md"]


def test_the_configuration_section_validates():
    config = load_config(CONFIG_FILE)
    assert config["decisions"]["seeds"] == 200 and "design" in config["decisions"]["run"]
    for change, match in (
        ({"budgets": [0.1, 1.5]}, "decisions.budgets"),
        ({"run": ["full", "oracle"]}, "decisions.run"),
        ({"seeds": 1}, "decisions.seeds"),
        ({"metrics": ["recall@x"]}, "decisions.metrics"),
        ({"range_seeds": 300}, "decisions.range_seeds"),
        ({"budgets": [0.1, 0.1]}, "decisions.budgets"),
        ({"adaptive_steps": [100, 100]}, "decisions.adaptive_steps"),
        ({"goals": {"wrong": {"at_most": 101}}}, "decisions.goals.wrong.at_most"),
    ):
        config = load_config(CONFIG_FILE)
        config["decisions"].update(change)
        with pytest.raises(ConfigError, match=match) as error:
            validate_config(config)
        assert "\n" not in str(error.value).strip()


def test_a_design_per_pair_decides_its_pair_with_a_narrower_interval():
    """Planned for the pair A-B alone, the design spends its budget where A's or B's
    sampled rank says their metric varies, not where other models' do: with four more
    models that each rank a different fifth of the users near the top, its A-B interval
    is narrower than the one design for every model at the same budget, and it reports
    pairs only."""
    (a, b, _), n = population(users=3000, seed=5)
    rng = np.random.default_rng(6)
    others = [
        np.where(rng.random(n.size) < 0.2, rng.integers(1, 3, n.size), rng.integers(50, N, n.size))
        for _ in range(4)
    ]
    exact = np.stack([a, b, *others])
    methods = study_methods(["design", "pair-design"], [0.2], [])
    rows = run_study(exact, n, ["A", "B", "C", "D", "E", "F"], seeds=30, m=50,
                     metrics=["recall@10"], methods=methods)  # fmt: skip
    pair = rows[rows["method"] == "pair-design-0.2"]
    assert set(pair["target"]) == {"pair", "family"}
    pair = pair[pair["target"] == "pair"]
    width = rows[rows["name"] == "A-B"].groupby("method")["width"].mean()
    assert width["pair-design-0.2"] < 0.97 * width["design-0.2"], width
    assert pair["covered"].mean() >= 0.85
    # the cost: phase 1 plus a fifth of the users ranked exactly, as the joint design's
    cost = rows.groupby("method")["cost"].mean()
    assert abs(cost["pair-design-0.2"] - cost["design-0.2"]) < 0.01


def test_a_kind_on_fewer_seeds_runs_on_the_first_and_leaves_the_others_as_they_are():
    """adaptive-em on the first 3 of 6 seeds: its rows are those seeds', the same as in
    the study that runs it on every seed (each seed draws from its own generator), and
    every other method's rows are unchanged."""
    (a, b, _), n = population(users=800, seed=9)
    methods = study_methods(["uniform", "design", "adaptive-em"], [0.25], [0.25], [100, 200])
    options = {"seeds": 6, "m": 30, "metrics": ["recall@10"], "methods": methods}
    every = run_study(np.stack([a, b]), n, ["A", "B"], **options)
    fewer = run_study(np.stack([a, b]), n, ["A", "B"], fewer_seeds={"adaptive-em": 3}, **options)
    adaptive = fewer["method"] == "adaptive-em"
    assert sorted(set(fewer.loc[adaptive, "seed"])) == [0, 1, 2]
    kept = (every["method"] != "adaptive-em") | (every["seed"] < 3)
    pd.testing.assert_frame_equal(fewer.reset_index(drop=True), every[kept].reset_index(drop=True))


def test_a_models_share_of_the_study_needs_that_model_alone(tiny_workdir):
    """The design study's per-model job of X is planned from X's fit and ranks alone:
    nothing of another recommender runs before it, so it can run beside their fits
    (a dry run of its target on the tiny data set)."""
    workdir = tiny_workdir("decisions_model")
    dry = run(workdir, "--cores", "1", "--dry-run", "results/tiny/decisions/X.npz")
    out = dry.stdout + dry.stderr
    assert dry.returncode == 0, out[-3000:]
    planned = set(re.findall(r"recommender=(\w+)", out))
    assert planned == {"X"}, out[-3000:]
    assert "rule decisions_model:" in out and "rule decisions:" not in out


def test_a_models_draws_do_not_depend_on_the_models_beside_it():
    """Each (seed, model) draws from a stream of its own name: adding a model C leaves
    A's and B's identification intervals and adaptive-em estimates (each model's own
    work) as they were, seed by seed."""
    (a, b, c), n = population(users=600, seed=4)
    methods = study_methods(["range", "adaptive-em"], [], [], [100, 200])
    options = {"seeds": 3, "m": 30, "metrics": ["recall@10"], "methods": methods}
    two = run_study(np.stack([a, b]), n, ["A", "B"], **options)
    three = run_study(np.stack([a, b, c]), n, ["A", "B", "C"], **options)
    models = ["seed", "method", "name", "estimate", "low", "high"]
    kept = three[three["name"].isin(["A", "B"])][models].reset_index(drop=True)
    pd.testing.assert_frame_equal(
        kept, two[two["target"] == "model"][models].reset_index(drop=True)
    )


def test_a_models_moments_are_the_posterior_under_its_em_prior():
    """Each seed's moments of one model are Bayes' posterior of recall@10 given the
    sampled rank, under that seed's EM prior fitted on that seed alone (the job fits
    every seed's at once: the same to rounding) over theta_j = (j - 1)/(N - 1) (every
    n_u = N: the exact rank is j) and the binomial law of eq 15: mean
    sum_{j <= 10} w_j / sum_j w_j, w_j = prior_j p(r~ | theta_j), variance mean (1 - mean)
    (a 0/1 metric); and the prior gives the seed's ranks a higher likelihood than the
    uniform prior EM starts from (EM never lowers it)."""
    from scipy import stats

    from sampled_metrics.estimation.decisions.proxy import em_prior
    from sampled_metrics.estimation.estimators import sampled_evaluation
    from sampled_metrics.studies.decisions.per_model import model_draws

    (a, _, _), n = population(users=500, seed=8)
    m = 20
    found = model_draws(a, n, "A", seeds=3, m=m, law="binomial", metrics=["recall@10"])
    theta = np.linspace(0.0, 1.0, N)
    for seed, ranks in enumerate(found["sampled"].astype(np.int64)):
        prior = em_prior(sampled_evaluation(ranks, m, n, "binomial"))
        like = stats.binom.pmf(ranks[:, None] - 1, m, theta)  # (U, N)
        w = like * prior
        mean = w[:, :10].sum(axis=1) / w.sum(axis=1)
        np.testing.assert_allclose(found["means"][0, seed], mean, atol=1e-6)
        np.testing.assert_allclose(found["variances"][0, seed], mean * (1 - mean), atol=1e-6)
        assert np.log(like @ prior).sum() > np.log(like.mean(axis=1)).sum()
