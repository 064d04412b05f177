"""Bad input: bad data and bad config stop with one line and no output; NaN and
inf scores are refused; held-out items unseen in training are kept and ranked;
a sample size m larger than a user's pool names sampling.m.

docs/reliability.md reports what they measure.
"""

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import yaml
from conftest import (
    CONFIG_FILE,
    TARGETS,
    TINY_CONFIG,
    LocalServer,
    leftovers,
    run,
    tiny_config,
    tiny_movielens_zip,
)

from sampled_metrics.data import leave_last_out_split
from sampled_metrics.passes.ranking import exact_ranks, rank_from_scores
from sampled_metrics.passes.sampling import excluded_items, sampled_ranks
from sampled_metrics.pipeline.config import ConfigError, check_config_files
from sampled_metrics.pipeline.data_checks import check_data_sizes
from sampled_metrics.pipeline.validation import load_config, validate_config
from sampled_metrics.recommenders import PrecomputedScores, all_scores, fit_recommender

# --------------------------------------------------------------------------
# Bad data through the workflow
# --------------------------------------------------------------------------


def good_dat_lines():
    return [f"{u}::{100 + (u * 7 + k) % 40}::5::{k}" for u in range(1, 31) for k in range(6)]


# name -> (entry, file name, content, log whose last line holds the error, expected text)
BAD_DATA = {
    "malformed_line": (
        {"path": "malformed.dat", "format": "movielens_dat"},
        "malformed.dat",
        "\n".join(good_dat_lines()[:20] + ["7::101::5"] + good_dat_lines()[20:]) + "\n",
        "split",
        "malformed.dat, line 21: expected 4 '::'-separated fields, found 3",
    ),
    "non_numeric_id": (
        {"path": "ids.dat", "format": "movielens_dat"},
        "ids.dat",
        "\n".join(good_dat_lines()[:5] + ["u7::101::5::3"] + good_dat_lines()[5:]) + "\n",
        "split",
        "ids.dat, line 6: user 'u7' is not an integer",
    ),
    "missing_column": (
        {
            "path": "nocol.csv",
            "format": "delimited",
            "sep": ",",
            "header": True,
            "columns": {"user": "uid", "item": "iid", "time": "timestamp"},
        },
        "nocol.csv",
        "uid,iid,t\n1,100,1\n1,101,2\n",
        "split",
        "nocol.csv: column(s) time='timestamp' not in the file",
    ),
    "empty_file": (
        {
            "path": "empty.csv",
            "format": "delimited",
            "sep": ",",
            "header": True,
            "columns": {"user": "uid", "item": "iid", "time": "t"},
        },
        "empty.csv",
        "",
        "split",
        "empty.csv: empty file",
    ),
    "truncated_zip": (
        {"path": "truncated.zip", "format": "movielens_dat", "member": "tiny/ratings.dat"},
        "truncated.zip",
        None,
        "split",
        "truncated.zip: not a readable zip archive",
    ),
    "archive_by_hand": (
        {
            "url": "http://127.0.0.1:9/never.zip",
            "md5": "0" * 32,
            "archive": "data/raw/truncated.zip",
            "format": "movielens_dat",
            "member": "tiny/ratings.dat",
        },
        "data/raw/truncated.zip",
        None,
        "split",
        "data/raw/truncated.zip: existing file has md5 ",
    ),
    "threshold_keeps_nothing": (
        {
            "path": "low.csv",
            "format": "delimited",
            "sep": ",",
            "header": True,
            "columns": {"user": "u", "item": "i", "time": "t", "rating": "r"},
            "binarize_threshold": 4,
        },
        "low.csv",
        "u,i,t,r\n1,100,1,3\n1,101,2,2\n",
        "split",
        "low.csv: datasets.threshold_keeps_nothing: binarize(threshold=4): no rating reaches",
    ),
    "every_user_short": (
        {"path": "short.dat", "format": "movielens_dat"},
        "short.dat",
        "1::100::5::1\n2::101::5::1\n",
        "split",
        "short.dat: datasets.every_user_short: leave_last_out_split: no user has 2 or more",
    ),
    "md5_mismatch": (None, None, None, "download", "data/raw/md5.zip: downloaded from "),
}


@pytest.fixture(scope="module")
def bad_data_run(tiny_workdir):
    """One snakemake --keep-going run splitting every bad data set (and one with
    a held-out item never seen in training); md5_mismatch downloads from a
    local server."""
    body = tiny_movielens_zip()
    workdir = tiny_workdir("bad_data")
    config = tiny_config()
    with LocalServer() as server:
        for name, (entry, file_name, content, _, _) in BAD_DATA.items():
            if name == "md5_mismatch":
                entry = {
                    "url": server.serve("/fast.zip", body),
                    "md5": "0" * 32,
                    "archive": "data/raw/md5.zip",
                    "format": "movielens_dat",
                    "member": "tiny/ratings.dat",
                }
            elif content is None:  # a truncated archive, placed by hand
                (workdir / file_name).parent.mkdir(parents=True, exist_ok=True)
                (workdir / file_name).write_bytes(body[: len(body) // 2])
            else:
                (workdir / file_name).write_text(content)
            config["datasets"][name] = entry
        events = pd.read_csv(workdir / "tiny.csv")
        events = pd.concat(
            [events, pd.DataFrame({"uid": [999] * 3, "iid": [100, 101, 5000], "t": [0, 1, 2]})]
        )
        events.to_csv(workdir / "unseen.csv", index=False)
        config["datasets"]["unseen"] = {
            **TINY_CONFIG["datasets"]["tiny"],
            "path": "unseen.csv",
            "facts": {"n_users": 91},
            "split_facts": {"unseen_test_items": 1},
        }
        (workdir / "config.yaml").write_text(yaml.safe_dump(config))
        result = run(
            workdir,
            "--cores",
            "2",
            "--keep-going",
            *(f"data/processed/{name}/split.npz" for name in [*BAD_DATA, "unseen"]),
        )
    return workdir, result


@pytest.mark.slow
@pytest.mark.parametrize("case", list(BAD_DATA))
def test_bad_data_fails_with_one_message_and_no_output(case, bad_data_run):
    workdir, result = bad_data_run
    _, file_name, _, rule, expected = BAD_DATA[case]
    assert result.returncode != 0
    console = (result.stdout + result.stderr).splitlines()
    assert f"Error in rule {rule}:" in console
    if rule == "split":  # the traceback in the log ends with the one-line message
        lines = [
            line
            for line in (workdir / f"logs/{case}/split.log").read_text().splitlines()
            if line.strip()
        ]
        assert lines[-1].startswith("sampled_metrics.data.errors.DataError: "), lines[-5:]
        message = lines[-1].split(": ", 1)[1]
        assert sum(message in line for line in lines) == 1  # said once
    else:  # the download also says it on the console, once
        said = [
            line for line in console if line.startswith("download of data/raw/md5.zip failed: ")
        ]
        assert len(said) == 1, console[-30:]
        message = said[0]
        assert (
            message.split(" failed: ", 1)[1].split(" (url and md5")[0]
            in (workdir / "logs/download/data/raw/md5.zip.log").read_text()
        )
    assert expected in message
    assert not (workdir / f"data/processed/{case}/split.npz").exists()
    if case == "md5_mismatch":
        assert "expected " + "0" * 32 in message
        assert not (workdir / "data/raw/md5.zip").exists()
    assert leftovers(workdir) == []


# --------------------------------------------------------------------------
# Held-out items unseen in training
# --------------------------------------------------------------------------


@pytest.mark.slow
def test_held_out_item_unseen_in_training_is_kept_and_reported(bad_data_run):
    workdir, _ = bad_data_run
    assert (workdir / "data/processed/unseen/split.npz").is_file()  # split_facts asserted it
    assert "1 held-out items unseen in training" in (workdir / "logs/unseen/split.log").read_text()


def test_unseen_held_out_item_is_ranked_by_every_recommender():
    """An item no user trained on gets the worst pessimistic rank from item-kNN
    (all its similarities are 0) and a finite score from iALS."""
    rows = [(u, i, t) for u in range(6) for t, i in enumerate([(u + k) % 5 for k in range(4)])]
    rows += [(6, 0, 0), (6, 1, 1), (6, 9, 2)]  # item 9: only user 6's held-out item
    split = leave_last_out_split(pd.DataFrame(rows, columns=["user", "item", "time"]))
    assert split.unseen_test_items() == 1
    for spec in (
        {"type": "item_knn", "q": 1, "k": None, "k_prime": None},
        {"type": "ials", "factors": 2, "regularization": 1.0, "alpha": 1.0, "iterations": 3},
    ):
        model = fit_recommender(spec, split.train, seed=0)
        scores = all_scores(model, split.n_users)
        assert np.isfinite(scores).all()
        ranks, n_candidates = exact_ranks(PrecomputedScores(scores), split.train, split.test_items)
        assert ((1 <= ranks) & (ranks <= n_candidates)).all()
        if spec["type"] == "item_knn":
            assert ranks[-1] == n_candidates[-1]


# --------------------------------------------------------------------------
# Bad config
# --------------------------------------------------------------------------


# Sizes the data must allow (data_checks.check_data_sizes): tiny has 45 items and at most 19
# events a user, so the smallest pool of items outside a history is 26 or more.
SIZE_ERRORS = {
    "m_above_a_pool": (
        lambda c: c["sampling"].update(m=40),
        "sampling.m: 40 is larger than the smallest candidate pool, ",
    ),
    # (a Figure 6 sample size above n - 1 is no error: tests/test_small_data.py)
    "hypergeometric_m_above_n_u": (
        lambda c: (
            c.update(estimation={"law": "hypergeometric"})
            or c["sampling"].update(m=40, law="binomial")
        ),
        "estimation.law: hypergeometric needs sampling.m <= n - 1 = ",
    ),
    "binomial_m_far_beyond_the_items": (
        lambda c: c["sampling"].update(m=451, law="binomial"),
        "sampling.m: 451 draws with replacement (sampling.law: binomial) are more than 10 "
        "times the 45 items of tiny (data/processed/tiny/split.npz)",
    ),
}


def _last_line(path) -> str:
    return [line for line in Path(path).read_text().splitlines() if line.strip()][-1]


@pytest.mark.slow
@pytest.mark.parametrize("case", list(SIZE_ERRORS))
def test_sizes_the_data_cannot_allow_stop_at_start_up_once_split(case, reference, tmp_path_factory):
    """With the split made, the sizes are read from it at start-up: one line naming
    the key, before any job."""
    edit, expected = SIZE_ERRORS[case]
    workdir = tmp_path_factory.mktemp(case) / "run"
    shutil.copytree(reference, workdir)
    shutil.rmtree(workdir / "results")
    config = tiny_config()
    edit(config)
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    result = run(workdir, "--cores", "1", *TARGETS)
    lines = (result.stdout + result.stderr).splitlines()
    assert result.returncode != 0
    where = next(i for i, line in enumerate(lines) if line.startswith("ConfigError in file"))
    assert lines[where + 1].startswith(expected), lines[where : where + 3]
    assert "data/processed/tiny/split.npz" in lines[where + 1]
    assert not (workdir / "results").exists()  # no job ran


@pytest.mark.slow
def test_sizes_are_checked_by_the_split_before_any_training(tiny_workdir):
    """On a first run the sizes are known once the split is made: the split job
    stops with the same message and writes no split, so nothing is trained."""
    config = tiny_config()
    SIZE_ERRORS["m_above_a_pool"][0](config)
    workdir = tiny_workdir("first_run_m", config)
    result = run(workdir, "--cores", "1", *TARGETS)
    assert result.returncode != 0
    last = _last_line(workdir / "logs/tiny/split.log")
    assert last.startswith(
        "sampled_metrics.pipeline.config.ConfigError: " + SIZE_ERRORS["m_above_a_pool"][1]
    ), last
    assert "(tiny: 45 items; its split)" in last
    assert not (workdir / "data/processed/tiny/split.npz").exists()
    assert not (workdir / "results/tiny/models").exists()
    assert leftovers(workdir) == []


def test_check_data_sizes_with_replacement_needs_a_nonempty_pool():
    config = validate_config(yaml.safe_load(CONFIG_FILE.read_text()))
    config["sampling"]["law"] = "binomial"
    config["protocols"]["run"] = ["recbole-uni100"]  # with replacement too
    check_data_sizes(config, "ml-1m", 3706, 1, "split")  # one item left is enough
    with pytest.raises(ConfigError, match="^sampling.law: binomial: a user has interacted with"):
        check_data_sizes(config, "ml-1m", 3706, 0, "split")
    config["sampling"]["law"] = "hypergeometric"
    check_data_sizes(config, "ml-1m", 3706, 100, "split")  # m = 100 distinct items: just enough
    with pytest.raises(ConfigError, match="^sampling.m: 100 is larger than"):
        check_data_sizes(config, "ml-1m", 3706, 99, "split")
    config["estimation"]["law"] = "hypergeometric"
    config["fig6"]["m_values"] = [1, 100]
    check_data_sizes(config, "ml-1m", 3706, 100, "split")  # n_u - 1 = 100 >= m
    config["estimation"]["n"] = "catalogue"  # n - 1 = 3705: the pool does not bind the law
    config["sampling"]["law"] = "binomial"
    config["sampling"]["m"] = 500
    config["fig6"]["m_values"] = [3705]
    check_data_sizes(config, "ml-1m", 3706, 100, "split")
    with pytest.raises(ConfigError, match="^estimation.law: hypergeometric needs sampling.m <="):
        check_data_sizes(config, "ml-1m", 400, 100, "split")


def test_a_key_given_twice_in_a_config_file_names_the_file_and_lines(tmp_path):
    text = CONFIG_FILE.read_text().replace("  m: 100\n", "  m: 100\n  m: 50\n", 1)
    (tmp_path / "config.yaml").write_text(text)
    with pytest.raises(ConfigError) as error:
        check_config_files([tmp_path / "config.yaml"])
    line = text.splitlines().index("  m: 50") + 1
    assert str(error.value) == (
        f"{tmp_path / 'config.yaml'}, line {line}: key 'm' given twice (first on line {line - 1})"
    )
    with pytest.raises(ConfigError, match="given twice"):
        load_config(tmp_path / "config.yaml")


@pytest.mark.slow
def test_a_key_given_twice_stops_snakemake_at_start_up(tmp_path):
    config = yaml.safe_dump(tiny_config()) + "seed: 7\nseed: 8\n"
    (tmp_path / "config.yaml").write_text(config)
    result = run(tmp_path, "--cores", "1", "-n")
    lines = (result.stdout + result.stderr).splitlines()
    assert result.returncode != 0
    where = next(i for i, line in enumerate(lines) if line.startswith("ConfigError in file"))
    first = len(config.splitlines()) - 1
    assert lines[where + 1].endswith(f"key 'seed' given twice (first on line {first})")


# A downloaded data set, to spoil one key at a time.
FAR = {
    "url": "https://example.org/a.zip",
    "md5": "0" * 32,
    "archive": "data/raw/a.zip",
    "format": "movielens_dat",
}

CONFIG_ERRORS = {
    "negative_repetitions": (
        lambda c: c["sampling"].update(repetitions=-1),
        "sampling.repetitions: -1 is less than the minimum of 1",
    ),
    "gamma_outside_0_1": (
        lambda c: c.update(estimation={"estimators": ["bv_2"]}),
        "estimation.estimators: method 'bv_2': gamma must be a number in [0, 1]",
    ),
    "unknown_correction": (
        lambda c: c.update(estimation={"estimators": ["cls", "median"]}),
        "estimation.estimators: unknown estimator 'median'",
    ),
    "unknown_recommender_type": (
        lambda c: c["recommenders"]["X"].update(type="svd"),
        "recommenders.X: unknown recommender 'type' 'svd'; "
        "known: bpr, ease, ials, item_knn, popularity",
    ),
    "unknown_key": (lambda c: c["sampling"].update(sed=3), "sampling.sed: unknown key"),
    "unknown_top_level_key": (lambda c: c.update(sampling_seed=3), "sampling_seed: unknown key"),
    "fig6_pair_twice": (
        lambda c: c["fig6"].update(pair=["X", "X"]),
        "fig6.pair: names 'X' twice; the pair needs two different recommenders",
    ),
    "fig6_pair_unknown": (
        lambda c: c["fig6"].update(pair=["X", "W"]),
        "fig6.pair: 'W' is not a key of recommenders (known: X, Y, Z)",
    ),
    "metric_twice": (
        lambda c: c.update(metrics=["recall@10", "ap", "recall@10"]),
        "metrics: 'recall@10' is listed twice",
    ),
    "method_twice": (
        lambda c: c.update(estimation={"estimators": ["cls", "bv_0.1", "cls"]}),
        "estimation.estimators: 'cls' is listed twice",
    ),
    "tie_policy_average": (
        lambda c: c.update(ranking={"tie_policy": "average"}),
        "ranking.tie_policy: 'average' gives half-integer ranks",
    ),
    "dataset_name_leaves_the_folder": (
        lambda c: c.update(dataset="../up", datasets={"../up": c["datasets"]["tiny"]}),
        "datasets: '../up' cannot name a folder or file",
    ),
    "recommender_name_with_a_space": (
        lambda c: c["recommenders"].update({"my model": {"type": "ials"}}),
        "recommenders: 'my model' cannot name a folder or file",
    ),
    "archive_outside": (
        lambda c: c["datasets"].update(far={**FAR, "archive": "../a.zip"}),
        "datasets.far.archive: '../a.zip' must be a relative path inside the working directory",
    ),
    "archive_absolute": (
        lambda c: c["datasets"].update(far={**FAR, "archive": "/tmp/a.zip"}),
        "datasets.far.archive: '/tmp/a.zip' must be a relative path inside the working",
    ),
    "url_not_http": (
        lambda c: c["datasets"].update(far={**FAR, "url": "file:///etc/passwd"}),
        "datasets.far.url: 'file:///etc/passwd' is not an http:// or https:// address",
    ),
    "seed_beyond_32_bits": (
        lambda c: c.update(seed=2**32),
        "seed: 4294967296 is greater than the maximum of 4294967295",
    ),
    "decompressed_limit_zero": (
        lambda c: c.update(limits={"decompressed_mb": 0}),
        "limits.decompressed_mb: 0 is less than the minimum of 1",
    ),
}


@pytest.fixture(scope="module")
def config_error_runs(tmp_path_factory):
    """Every bad config through snakemake, three at a time."""
    workdirs = {}
    for case, (edit, _) in CONFIG_ERRORS.items():
        config = tiny_config()
        edit(config)
        workdirs[case] = tmp_path_factory.mktemp(case)
        (workdirs[case] / "config.yaml").write_text(yaml.safe_dump(config))
    with ThreadPoolExecutor(3) as pool:
        results = dict(
            zip(workdirs, pool.map(lambda w: run(w, "--cores", "1", *TARGETS), workdirs.values()))
        )
    return {case: (workdirs[case], results[case]) for case in workdirs}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CONFIG_ERRORS))
def test_config_error_stops_before_any_job_with_one_line(case, config_error_runs):
    _, expected = CONFIG_ERRORS[case]
    tmp_path, result = config_error_runs[case]
    out = result.stdout + result.stderr
    assert result.returncode != 0
    lines = out.splitlines()
    where = next(i for i, line in enumerate(lines) if line.startswith("ConfigError in file"))
    assert lines[where + 1].startswith(expected), lines[where : where + 3]
    # after the message only snakemake's "  File ..., line ..." locations
    assert all(line.startswith("  File ") for line in lines[where + 2 :] if line.strip()), lines[
        where:
    ]
    assert not (tmp_path / "results").exists() and not (tmp_path / "data").exists()


@pytest.mark.parametrize("case", list(CONFIG_ERRORS))
def test_config_error_names_the_key_without_snakemake(case):
    """The same errors from validate_config, on config.yaml updated with the bad
    tiny config as snakemake's --configfile does (nested keys merged; fast)."""

    def merge(base: dict, update: dict) -> dict:
        for key, value in update.items():
            if isinstance(value, dict) and isinstance(base.get(key), dict):
                merge(base[key], value)
            else:
                base[key] = value
        return base

    edit, expected = CONFIG_ERRORS[case]
    config = tiny_config()
    edit(config)
    with pytest.raises(ConfigError) as error:
        validate_config(merge(yaml.safe_load(CONFIG_FILE.read_text()), config))
    assert str(error.value).startswith(expected), str(error.value)


# --------------------------------------------------------------------------
# NaN and inf scores: the library refuses them
# --------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_or_inf_scores_are_refused_with_the_user(bad):
    train = sp.csr_matrix(
        np.array([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [1, 1, 0, 0, 0]], dtype=np.float32)
    )
    test = np.array([2, 3, 4])
    scores = np.tile(np.linspace(0, 1, 5), (3, 1))
    scores[1, 4] = bad
    with pytest.raises(
        ValueError,
        match=r"recommender 'M': score of user 1 for item 4 is (nan|-?inf) \(NaN or inf\)",
    ):
        exact_ranks(PrecomputedScores(scores, name="M"), train, test)
    with pytest.raises(
        ValueError, match=r"scores contain 1 NaN or inf value\(s\), first at user 1, item 4"
    ):
        sampled_ranks(scores, test, excluded_items(train, test), 1, 2, seed=0)
    with pytest.raises(ValueError, match="row 1: scores contain NaN or inf"):
        rank_from_scores(scores, None, test)
    # a non-candidate's score is ignored: only ranked items must be finite
    mask = np.ones_like(scores, dtype=bool)
    mask[1, 4] = False
    assert np.isfinite(rank_from_scores(scores, mask, test)).all()
