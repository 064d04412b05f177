"""Determinism and provenance: the same config gives identical bytes whatever
the thread count; the sampling seed changes the sampled values only; the
effective config and versions are recorded; a finished run has nothing left to do.

The runs compared are the shared ``reference`` and ``second_run`` (conftest.py);
docs/reliability.md reports what they measure.
"""

import shutil

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import (
    CONFIG_FILE,
    TARGETS,
    TINY_CONFIG,
    assert_same_files,
    finished,
    run,
    tiny_config,
)
from snakemake.utils import update_config

from sampled_metrics.pipeline.runs import PACKAGES
from sampled_metrics.pipeline.validation import validate_config

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def other_seed(reference, tmp_path_factory):
    """The reference run continued with another sampling.seed."""
    workdir = tmp_path_factory.mktemp("seed") / "run"
    shutil.copytree(reference, workdir)
    config = tiny_config()
    config["sampling"]["seed"] = 7
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    return finished(workdir, "--cores", "2", *TARGETS)


def test_same_config_gives_identical_tables_and_ranks(reference, second_run):
    tables = [
        *TARGETS[:4],
        *(f"results/tiny/ranks/{r}.csv" for r in "XYZ"),
        "results/tiny/crosscheck.csv",
    ]
    assert_same_files(second_run, reference, "*.csv", tables)
    assert_same_files(
        second_run,
        reference,
        "*.npy",
        [f"results/tiny/sampled_ranks/{r}.npy" for r in "XYZ"],
    )
    assert_same_files(
        second_run, reference, "*.pkl", [f"results/tiny/models/{r}.pkl" for r in "XYZ"]
    )
    assert_same_files(second_run, reference, "*.txt", ["results/tiny/provenance/versions.txt"])
    assert_same_files(second_run, reference, "*.yaml", ["results/tiny/provenance/config.yaml"])


def test_thread_count_does_not_change_models_or_ranks(reference, second_run):
    # iALS fits with the rule's 2 threads, or 1; item-kNN's fit uses one either way
    assert "threads: 2" in (reference / "logs/tiny/fit_X.log").read_text()
    assert "threads: 1" in (second_run / "logs/tiny/fit_X.log").read_text()
    for recommender in "XYZ":
        for path in (
            f"results/tiny/models/{recommender}.pkl",
            f"results/tiny/ranks/{recommender}.csv",
        ):
            assert (reference / path).read_bytes() == (second_run / path).read_bytes(), path


def test_sampling_seed_changes_sampled_values_only(reference, other_seed):
    models = [f"results/tiny/models/{r}.pkl" for r in "XYZ"]
    for path in models:  # not refitted: same bytes, never rewritten
        assert (other_seed / path).read_bytes() == (reference / path).read_bytes(), path
        assert (other_seed / path).stat().st_mtime_ns == (reference / path).stat().st_mtime_ns, path
    # the one ranking pass redoes the exact ranks with the sampled ones: the same bytes
    exact = [
        f"results/tiny/{kind}/{r}.csv" for kind in ("ranks", "pessimistic_ranks") for r in "XYZ"
    ]
    for path in [*exact, "results/tiny/exact_metrics.csv"]:
        assert (other_seed / path).read_bytes() == (reference / path).read_bytes(), path
    for recommender in "XYZ":
        path = f"results/tiny/sampled_ranks/{recommender}.npy"
        assert not np.array_equal(np.load(other_seed / path), np.load(reference / path)), path
    ours = pd.read_csv(other_seed / "results/tiny/sampling.csv")
    theirs = pd.read_csv(reference / "results/tiny/sampling.csv")
    assert ours[["recommender", "metric", "method", "rep"]].equals(
        theirs[["recommender", "metric", "method", "rep"]]
    )
    assert (ours["value"] != theirs["value"]).mean() > 0.5
    table3 = pd.read_csv(other_seed / "results/tiny/table3.csv")
    reference3 = pd.read_csv(reference / "results/tiny/table3.csv")
    exact_rows = table3["method"] == "exact"
    pd.testing.assert_frame_equal(table3[exact_rows], reference3[exact_rows])
    assert not table3[~exact_rows]["mean"].equals(reference3[~exact_rows]["mean"])


def test_sampling_seed_defaults_to_the_top_level_seed(reference, tmp_path_factory):
    """Setting sampling.seed to the top-level seed changes no parameter of
    rule draw_plan: nothing downstream of the sampling is redone."""
    workdir = tmp_path_factory.mktemp("same_seed") / "run"
    shutil.copytree(reference, workdir)
    config = tiny_config()
    config["sampling"]["seed"] = 2020  # the top-level seed of config.yaml
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    dry = run(workdir, "--cores", "1", "--dry-run", *TARGETS)
    out = dry.stdout + dry.stderr
    assert dry.returncode == 0, out[-3000:]
    jobs = {
        line.split()[0]
        for line in out.splitlines()
        if line.strip()
        and line.split()[0]
        in {
            "draw_plan",
            "rank_shard",
            "merge_ranks",
            "sampling_recommender",
            "sampling_table",
            "table3",
            "provenance",
        }
    }
    assert jobs == {"provenance"}, out[-3000:]  # the config changed, the sampling did not


def test_provenance_records_versions_and_effective_config(reference, other_seed):
    versions = (reference / "results/tiny/provenance/versions.txt").read_text().splitlines()
    names = {line.split("==")[0] for line in versions}
    assert {"python", *PACKAGES} <= names
    assert {
        "sampled-metrics",
        "numpy",
        "scipy",
        "pandas",
        "implicit",
        "snakemake",
        "matplotlib",
    } <= names
    assert not [line for line in versions if line.endswith("not installed")]
    recorded = yaml.safe_load((reference / "results/tiny/provenance/config.yaml").read_text())
    # the effective config: config.yaml, then the run's --configfile over it, validated
    # and completed (schema defaults, each recommender's hyperparameter defaults)
    effective = yaml.safe_load(CONFIG_FILE.read_text())
    update_config(effective, tiny_config())
    assert recorded == validate_config(effective)
    kept = {name: spec for name, spec in TINY_CONFIG["recommenders"].items() if spec is not None}
    for name, spec in kept.items():
        assert spec.items() <= recorded["recommenders"][name].items(), name
    assert set(recorded["recommenders"]) == set(kept)  # the null entries are left out
    assert TINY_CONFIG["sampling"].items() <= recorded["sampling"].items()
    assert recorded["dataset"] == "tiny" and recorded["seed"] == 2020
    assert {"estimation", "ranking", "metrics", "fig6", "toy"} <= set(
        recorded
    )  # defaults of config.yaml too
    # a changed config reran the rule
    assert (
        yaml.safe_load((other_seed / "results/tiny/provenance/config.yaml").read_text())[
            "sampling"
        ]["seed"]
        == 7
    )


def test_finished_run_has_nothing_left_to_do(reference):
    # --nolock: the run is shared, and other tests copy it meanwhile
    dry = run(reference, "--cores", "1", "--dry-run", "--nolock", *TARGETS)
    assert dry.returncode == 0 and "Nothing to be done" in dry.stdout + dry.stderr, dry.stdout[
        -2000:
    ]
