"""A small data set with the shipped config (issue 24): what only the protocol study or
Figure 6 needs stops nothing. A protocol of protocols.run drawing more distinct items than
the data set's smallest pool, and a Figure 6 sample size above its n - 1, are left out of
their outputs, named with why; sampling.m above the smallest pool stays a start-up error.

The data set: a synthetic entry of 300 users and 120 items, at most 21 events a user, so
its smallest pool of items outside a history is 99: NCF's 99 distinct draws fit, Elliot's
and BERT4Rec's 100 do not; the protocols with replacement (RecBole, DaisyRec's 999) need one
item. Figure 6 takes the shipped fig6.m_values, of which those above n - 1 = 119 are left
out. The real rules run, with protocols.run and fig6 as config.yaml ships them (the models
are the tiny X and Y, the study's estimators the cheap sampled and bv_0.1, plus Hansen-Hurwitz).
"""

import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import CONFIG_FILE, leftovers, snakemake_command, tiny_config

from sampled_metrics.pipeline.validation import load_config

SMALL = "small120"
SMALLEST_POOL = 99  # 120 items - 21 events of the most active users
SUPPORTED = ["ncf", "recbole-uni100", "recbole-pop100", "daisyrec"]
LEFT_OUT = ["elliot", "bert4rec"]  # 100 distinct items each
SHIPPED = load_config(CONFIG_FILE)


def small_config(**changes) -> dict:
    """The tiny models X and Y on the small synthetic entry, few repetitions, sampling.m
    lowered to fit; protocols.run and Figure 6 as shipped."""
    config = tiny_config()
    for key in ("fig6", "datasets"):
        del config[key]
    config["recommenders"]["Z"] = None
    # CLS and EM at DaisyRec's m = 999 take seconds each; the study's choice is not tested
    config["protocols"] = {"estimators": ["sampled", "bv_0.1"], "repetitions": 6}
    config["dataset"] = SMALL
    config["datasets"] = {
        SMALL: {
            "format": "synthetic",
            "users": 300,
            "items": 120,
            "interactions": 3000,
            "popularity_exponent": 1.0,
            "activity_exponent": 0.3,
            "min_events_per_user": 5,
            "max_events_per_user": 21,
            "seed": 2020,
        }
    }
    config["sampling"] = {"m": 20, "repetitions": 3, "law": "hypergeometric"}
    config.update(changes)
    return config


def write_config(workdir, config) -> None:
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))


def snakemake(workdir, *targets, cores: str = "2") -> subprocess.CompletedProcess:
    return subprocess.run(
        snakemake_command(workdir, "--cores", cores, targets=targets),
        capture_output=True,
        text=True,
        timeout=600,
    )


def succeeds(workdir, *targets) -> None:
    result = snakemake(workdir, *targets)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]


@pytest.fixture(scope="module")
def fig5_run(tmp_path_factory):
    """Figure 5 alone: nothing of the study or of Figure 6 may stop it."""
    workdir = tmp_path_factory.mktemp("small") / "run"
    workdir.mkdir()
    write_config(workdir, small_config())
    succeeds(workdir, f"figures/{SMALL}/fig5.pdf")
    return workdir


@pytest.fixture(scope="module")
def study_run(fig5_run):
    """Then the study in the same work directory (the split made: the start-up checks
    read its sizes)."""
    succeeds(fig5_run, f"figures/{SMALL}/protocols.png", f"results/{SMALL}/protocols.md")
    return fig5_run


@pytest.fixture(scope="module")
def fig6_run(fig5_run):
    """Then Figure 6 in the same work directory."""
    succeeds(fig5_run, f"figures/{SMALL}/fig6.png")
    return fig5_run


def test_a_run_asking_for_figure5_is_not_stopped_by_the_study(fig5_run):
    assert (fig5_run / f"figures/{SMALL}/fig5.pdf").stat().st_size > 0
    assert not (fig5_run / f"results/{SMALL}/protocols").exists()  # nothing of the study ran
    assert leftovers(fig5_run) == []


def test_the_study_names_the_protocols_left_out_and_runs_the_others(study_run):
    results = study_run / "results" / SMALL
    text = (results / "protocols.md").read_text()
    for name in LEFT_OUT:
        line = (
            f"- {name} (m = 100, distinct): draws 100 distinct items per user, more than the "
            f"smallest candidate pool, {SMALLEST_POOL} items"
        )
        assert line in text.splitlines(), text
    assert f"## Left out on {SMALL}" in text
    left_out = pd.read_csv(results / "protocols_left_out.csv")
    assert list(left_out.columns) == [
        "dataset", "protocol", "m", "replacement", "smallest_pool", "reason"
    ]  # fmt: skip
    assert left_out["protocol"].tolist() == LEFT_OUT
    assert (left_out["smallest_pool"] == SMALLEST_POOL).all()
    # the supported ones have numbers; the left-out ones none, anywhere
    errors = pd.read_csv(results / "protocols.csv")
    pairs = pd.read_csv(results / "protocols_pairs.csv")
    assert list(dict.fromkeys(errors["protocol"])) == SUPPORTED
    assert list(dict.fromkeys(pairs["protocol"])) == SUPPORTED
    assert np.isfinite(errors["rmse"]).all() and len(errors) > 0
    for name in SUPPORTED:
        assert any(line.startswith(f"| {name} ") for line in text.splitlines()), name
    for name in LEFT_OUT:
        assert not any(line.startswith(f"| {name} ") for line in text.splitlines()), name
    # the log says so, and the figure is made
    for log in ("protocol_ranks", "protocols"):
        logged = (study_run / f"logs/{SMALL}/{log}.log").read_text()
        assert all(f"{name} left out" in logged for name in LEFT_OUT), logged
    assert (study_run / f"figures/{SMALL}/protocols.png").stat().st_size > 10_000


def test_figure6_leaves_out_the_sample_sizes_above_n_minus_1(fig6_run):
    results = fig6_run / "results" / SMALL
    shipped = SHIPPED["fig6"]["m_values"]
    kept, above = [m for m in shipped if m <= 119], [m for m in shipped if m > 119]
    assert above and kept
    curves = pd.read_csv(results / "fig6.csv")
    assert sorted(set(curves["m"])) == kept
    assert curves["expected"].notna().all()
    left_out = pd.read_csv(results / "fig6_left_out.csv")
    assert list(left_out.columns) == ["key", "m", "largest_m", "reason"]
    assert left_out["m"].tolist() == above
    assert set(left_out["key"]) == {"fig6.m_values"} and set(left_out["largest_m"]) == {119}
    assert set(left_out["reason"]) == {"above the largest sample size, n - 1 = 119 (120 items)"}
    logged = (fig6_run / f"logs/{SMALL}/fig6_corrections.log").read_text()
    assert f"m = {', '.join(map(str, above))} left out of Figure 6" in logged
    assert (fig6_run / f"figures/{SMALL}/fig6.png").stat().st_size > 10_000


def test_with_every_protocol_left_out_the_study_still_says_so(study_run, tmp_path):
    workdir = tmp_path / "run"
    shutil.copytree(study_run, workdir)
    write_config(workdir, small_config(protocols={"run": LEFT_OUT}))
    succeeds(workdir, f"figures/{SMALL}/protocols.png")
    results = workdir / "results" / SMALL
    text = (results / "protocols.md").read_text()
    assert f"No protocol of protocols.run could be simulated on {SMALL}" in text
    assert all(f"- {name} (m = 100, distinct)" in text for name in LEFT_OUT)
    assert pd.read_csv(results / "protocols.csv").empty
    assert pd.read_csv(results / "protocols_pairs.csv").empty
    assert pd.read_csv(results / "protocols_left_out.csv")["protocol"].tolist() == LEFT_OUT
    assert (workdir / f"figures/{SMALL}/protocols.png").stat().st_size > 0


def test_sampling_m_above_the_smallest_pool_stops_at_start_up(tmp_path):
    """The shipped sampling.m (100 distinct items) on a smallest pool of 99: one line
    naming sampling.m, a non-zero exit, nothing made."""
    config = small_config()
    del config["sampling"]
    write_config(tmp_path, config)
    result = snakemake(tmp_path, f"figures/{SMALL}/fig5.pdf", cores="1")
    assert result.returncode != 0
    lines = (result.stdout + result.stderr).splitlines()
    where = next(i for i, line in enumerate(lines) if line.startswith("ConfigError in file"))
    assert lines[where + 1] == (
        f"sampling.m: 100 is larger than the smallest candidate pool, {SMALLEST_POOL} items "
        f"({SMALL}: 120 items; datasets.{SMALL}.items - max_events_per_user); lower "
        "sampling.m or set sampling.law: binomial"
    )
    assert not any((tmp_path / top).exists() for top in ("results", "data", "figures"))
