"""The synthetic data sets (format: synthetic): determinism, sizes, long tails, the
law of each user's items, the split, config errors, and the workflow end to end.

Sizes: ``users`` and ``interactions`` are exact (every user has events, the
total is the configured one), every user's count lies within
[min_events_per_user, max_events_per_user], and at most ``items`` items occur
(all of them in the shipped presets; an item nobody drew does not occur).
"""

from __future__ import annotations

import copy
import hashlib
import subprocess

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import CONFIG_FILE, snakemake_command, tiny_config

from sampled_metrics.data import (
    check_facts,
    check_synthetic,
    leave_last_out_split,
    load_events,
    synthetic_events,
)
from sampled_metrics.data import synthetic as synthetic_module
from sampled_metrics.pipeline.config import ConfigError, source_file
from sampled_metrics.pipeline.validation import validate_config

SMALL = "synthetic-small"
PRESETS = (SMALL, "ml-20m-like", "netflix-like")


def shipped_config() -> dict:
    """config.yaml as written."""
    return yaml.safe_load(CONFIG_FILE.read_text())


def small_entry() -> dict:
    """The validated synthetic-small entry of config.yaml, defaults filled in."""
    config = shipped_config()
    config["dataset"] = SMALL
    return validate_config(config)["datasets"][SMALL]


@pytest.fixture(scope="module")
def small() -> pd.DataFrame:
    """The events of synthetic-small, as the split rule loads them."""
    return load_events(None, small_entry())


def generate(**changes) -> pd.DataFrame:
    """A small frame (300 users, 200 items, 9000 events), some users racing."""
    parameters = dict(
        users=300,
        items=200,
        interactions=9000,
        popularity_exponent=1.0,
        activity_exponent=0.5,
        min_events_per_user=5,
        max_events_per_user=150,
        seed=7,
    )
    return synthetic_events(**(parameters | changes))


def digest(events: pd.DataFrame) -> str:
    """sha256 of the three columns as little-endian int32."""
    h = hashlib.sha256()
    for column in ("user", "item", "time"):
        h.update(np.ascontiguousarray(events[column].to_numpy(), dtype="<i4").tobytes())
    return h.hexdigest()


# --------------------------------------------------------------------------
# determinism
# --------------------------------------------------------------------------


def test_same_seed_same_frame_other_seed_other_frame():
    first, second = generate(), generate()
    assert first.equals(second)
    assert digest(first) == digest(second)
    other = generate(seed=8)
    assert len(other) == len(first) and not other.equals(first)
    assert digest(other) != digest(first)


def test_events_are_pinned_byte_for_byte():
    """The same events on every machine and run: a change of this digest is a
    change of the generator (or of numpy's random streams), to be made on purpose."""
    assert digest(generate()) == (
        "4029371fbf7fe8bbd0ca9c3fb737b9d85ca79f717c85fac461e65617fde939e8"
    )


# --------------------------------------------------------------------------
# sizes and shape
# --------------------------------------------------------------------------


def test_sizes_of_synthetic_small(small):
    entry = small_entry()
    assert list(small.columns) == ["user", "item", "time"]
    assert all(small[c].dtype == np.int32 for c in small.columns)
    assert len(small) == entry["interactions"] == 100_000  # exact
    assert small["user"].nunique() == entry["users"] == 2000  # exact
    assert sorted(small["user"].unique()) == list(range(1, 2001))
    assert small["item"].between(1, entry["items"]).all()
    assert small["item"].nunique() == entry["items"]  # every item occurs here
    sizes = small.groupby("user").size()
    assert sizes.min() == entry["min_events_per_user"] == 20
    assert sizes.max() <= entry["max_events_per_user"]


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"popularity_exponent": 0.0, "activity_exponent": 0.0},
        {"popularity_exponent": 2.5, "activity_exponent": 2.0},
        {"min_events_per_user": 150, "interactions": 300 * 150},  # every user at the ceiling
        {"min_events_per_user": 5, "interactions": 300 * 5},  # every user at the floor
        {"items": 150, "max_events_per_user": 150, "interactions": 300 * 120},  # most race
        {
            "users": 1,
            "items": 1,
            "interactions": 1,
            "min_events_per_user": 1,
            "max_events_per_user": 1,
        },
        {"max_events_per_user": 200, "interactions": 30000, "seed": 3},
    ],
)
def test_sizes_exact_within_bounds_and_no_repeated_pair(changes):
    parameters = (
        dict(
            users=300,
            items=200,
            interactions=9000,
            min_events_per_user=5,
            max_events_per_user=150,
        )
        | changes
    )
    events = generate(**changes)
    assert len(events) == parameters["interactions"]
    assert events["user"].nunique() == parameters["users"]
    assert events["item"].between(1, parameters["items"]).all()
    sizes = events.groupby("user").size()
    assert sizes.min() >= parameters["min_events_per_user"]
    assert sizes.max() <= parameters["max_events_per_user"]
    assert not events.duplicated(["user", "item"]).any()
    # each user's times are 0..c-1, in row order
    size = events.groupby("user")["time"].transform("size")
    assert (events["time"] < size).all()
    assert (events.groupby("user").cumcount() == events["time"]).all()


def test_no_duplicate_pairs_and_times_are_positions(small):
    assert not small.duplicated(["user", "item"]).any()
    assert check_facts(small, {"n_duplicate_pairs": 0}, SMALL) == {"n_duplicate_pairs": 0}
    assert (small.groupby("user").cumcount() == small["time"]).all()


def test_item_popularity_has_a_long_tail(small):
    counts = small["item"].value_counts()
    top = counts.iloc[: len(counts) // 100].sum() / len(small)  # top 1% of the items
    assert top > 0.10  # uniform popularity would give 1%; measured 14.8%
    by_id = small["item"].value_counts().reindex([1, 10, 100, 1000]).to_numpy()
    assert (np.diff(by_id) < 0).all()  # ids are popularity ranks
    uniform = generate(popularity_exponent=0.0)["item"].value_counts()
    assert uniform.max() / uniform.min() < 3


def test_user_activity_has_a_long_tail(small):
    sizes = small.groupby("user").size().sort_values(ascending=False)
    assert sizes.iloc[:200].sum() / sizes.sum() > 0.25  # top 10% of the users; measured 30%
    assert sizes.mean() > 1.2 * sizes.median()  # skewed to the right; measured 1.39
    assert (sizes == 20).sum() > 10  # many users at the floor, as MovieLens
    # a larger exponent, a heavier tail: more events in the top 10%, a lower median
    flat, heavy = (
        generate(activity_exponent=b).groupby("user").size().sort_values(ascending=False)
        for b in (0.0, 1.0)
    )
    assert heavy.iloc[:30].sum() > flat.iloc[:30].sum() and heavy.median() < flat.median()


# --------------------------------------------------------------------------
# each user's items: sequential sampling without replacement by popularity
# --------------------------------------------------------------------------


def second_item_law(p: np.ndarray) -> np.ndarray:
    """P(the second item drawn without replacement in proportion to p is j)."""
    return p * ((p / (1 - p)).sum() - p / (1 - p))


def assert_sequential_law(items: np.ndarray, p: np.ndarray, top: int = 30) -> None:
    """The first and second items of the users (rows) follow the law of
    sequential sampling without replacement: |z| < 5 on the ``top`` items."""
    n = len(items)
    for position, law in ((0, p), (1, second_item_law(p))):
        observed = np.bincount(items[:, position], minlength=len(p))[:top] / n
        expected = law[:top]
        z = (observed - expected) / np.sqrt(expected * (1 - expected) / n)
        assert np.abs(z).max() < 5, (position, z)


@pytest.mark.parametrize(
    ("items", "expect_race"),
    [(8, True), (400, False)],  # 8 items: every user races; 400: draws with replacement
)
def test_each_users_items_follow_sequential_sampling(items, expect_race):
    users, per_user = 100_000, 3
    draws = synthetic_module._draws_needed(
        np.full(users, per_user), synthetic_module._popularity(items, 1.0)
    )
    assert ((draws == 0) if expect_race else (draws > 0)).all()
    events = synthetic_events(
        users,
        items,
        users * per_user,
        popularity_exponent=1.0,
        activity_exponent=0.0,
        min_events_per_user=per_user,
        max_events_per_user=per_user,
        seed=11,
    )
    drawn = (events["item"].to_numpy() - 1).reshape(users, per_user)
    assert_sequential_law(drawn, synthetic_module._popularity(items, 1.0))


def test_race_continues_users_whose_draws_fell_short():
    """Too few draws on purpose: most users fall short after 3 draws, and the
    exponential race fills the rest; the law is still sequential sampling."""
    users, per_user, items = 100_000, 3, 8
    p = synthetic_module._popularity(items, 1.0)
    counts = np.full(users, per_user, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    item = np.empty(users * per_user, dtype=np.int32)
    time = np.empty(users * per_user, dtype=np.int32)
    rng = np.random.default_rng(5)
    draws = np.full(users, per_user, dtype=np.int64)
    short, found = synthetic_module._draw_with_replacement(
        counts, draws, offsets, p, item, time, rng
    )
    assert len(short) > users // 2 and set(np.unique(found)) <= {1, 2}
    synthetic_module._race(short, found, counts, offsets, p, item, time, rng)
    assert (time.reshape(users, per_user) == np.arange(per_user)).all()
    drawn = item.reshape(users, per_user).astype(np.int64)
    assert (np.diff(np.sort(drawn, axis=1), axis=1) > 0).all()  # no repeats
    assert_sequential_law(drawn, p, top=items)


# --------------------------------------------------------------------------
# the leave-last-out split on it
# --------------------------------------------------------------------------


def test_leave_last_out_split_on_synthetic_small(small):
    entry = small_entry()
    split = leave_last_out_split(small)
    assert check_facts(split, entry["split_facts"], SMALL) == entry["split_facts"]
    assert split.n_items == 1000 and split.train.nnz == 100_000 - 2000
    assert split.unseen_test_items() == 0
    last = small.loc[small.groupby("user")["time"].idxmax()]
    assert split.item_ids[split.test_items].tolist() == last["item"].tolist()
    assert (split.candidate_counts() >= 1000 - entry["max_events_per_user"] + 1).all()


def test_split_skips_users_with_one_event():
    events = generate(min_events_per_user=1, activity_exponent=0.0, interactions=600)
    single = int((events.groupby("user").size() == 1).sum())
    assert single > 0
    split = leave_last_out_split(events)
    assert split.n_skipped_users == single and split.n_users == 300 - single


# --------------------------------------------------------------------------
# configuration: presets, one clear error naming the key
# --------------------------------------------------------------------------


def test_presets_validate_and_read_no_file():
    config = shipped_config()
    for name in PRESETS:
        entry = validate_config({**copy.deepcopy(config), "dataset": name})["datasets"][name]
        assert entry["format"] == "synthetic" and source_file(entry) is None
        assert not {"url", "path", "archive"} & set(entry)
    sizes = {
        name: tuple(config["datasets"][name][k] for k in ("users", "items", "interactions"))
        for name in PRESETS
    }
    assert sizes == {
        SMALL: (2000, 1000, 100_000),
        "ml-20m-like": (138_493, 26_744, 20_000_263),
        "netflix-like": (480_189, 17_770, 100_480_507),
    }


BAD_ENTRIES = [
    ({"interactions": 2000 * 500 + 1}, "datasets.bad.interactions: 1000001 is more than"),
    ({"interactions": 2000 * 20 - 1}, "datasets.bad.interactions: 39999 is fewer than"),
    ({"max_events_per_user": 1001}, "datasets.bad.max_events_per_user: 1001 is more than items"),
    ({"min_events_per_user": 501}, "datasets.bad.min_events_per_user: 501 is more than max"),
    (
        {"max_events_per_user": 950},
        "sampling.m: 100 is larger than the smallest candidate pool, 50 items (bad: 1000 "
        "items; datasets.bad.items - max_events_per_user)",
    ),
    ({"popularity_exponent": -1}, "datasets.bad.popularity_exponent: -1 is less than"),
    ({"users": "many"}, "datasets.bad.users: 'many' is not of type 'integer'"),
    ({"seed": None}, "datasets.bad: 'seed' is a required property"),
    ({"url": "https://example.org/x.zip"}, "datasets.bad.url: a synthetic data set is generated"),
    ({"path": "data/raw/x.csv"}, "datasets.bad.path: a synthetic data set is generated"),
    ({"binarize_threshold": 4}, "datasets.bad.binarize_threshold: a synthetic data set"),
]


@pytest.mark.parametrize(("changes", "message"), BAD_ENTRIES)
def test_a_bad_synthetic_entry_stops_with_one_message_naming_the_key(changes, message):
    config = shipped_config()
    entry = {**config["datasets"][SMALL], **changes}
    entry = {k: v for k, v in entry.items() if v is not None}
    config["datasets"]["bad"] = entry
    config["dataset"] = "bad"
    with pytest.raises(ConfigError) as error:
        validate_config(config)
    assert str(error.value).startswith(message), str(error.value)
    assert "\n" not in str(error.value)


def test_a_file_entry_with_a_synthetic_key_is_refused():
    config = shipped_config()
    config["datasets"]["ml-1m"]["users"] = 6040
    with pytest.raises(ConfigError, match=r"^datasets\.ml-1m\.users: only a data set with format"):
        validate_config(config)


def test_check_synthetic_names_the_parameter():
    good = dict(
        users=10,
        items=20,
        interactions=100,
        popularity_exponent=1.0,
        activity_exponent=0.5,
        min_events_per_user=2,
        max_events_per_user=20,
        seed=0,
    )
    check_synthetic(**good)
    for key, value in [("users", 0), ("items", 1.5), ("seed", -1), ("activity_exponent", 11)]:
        with pytest.raises(ValueError, match=rf"^{key}: "):
            check_synthetic(**(good | {key: value}))
    with pytest.raises(ValueError, match=r"^interactions: "):
        synthetic_events(**(good | {"interactions": 201}))


# --------------------------------------------------------------------------
# the workflow: no input file, end to end on synthetic-small
# --------------------------------------------------------------------------


def small_run_config() -> dict:
    """synthetic-small (from the repository's config.yaml) with the tiny models,
    few repetitions and a small m."""
    config = tiny_config()
    del config["datasets"]
    config["dataset"] = SMALL
    config["sampling"] = {"m": 20, "repetitions": 3, "law": "hypergeometric"}
    return config


def test_dry_run_of_a_big_preset_needs_no_file_and_no_download(tmp_path):
    (tmp_path / "config.yaml").write_text(
        yaml.safe_dump({**small_run_config(), "dataset": "netflix-like"})
    )
    result = subprocess.run(
        snakemake_command(tmp_path, "-n", targets=["data/processed/netflix-like/split.npz"]),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rule split:" in result.stdout and "rule download" not in result.stdout
    assert "Missing input" not in result.stdout + result.stderr


@pytest.mark.slow
def test_pipeline_runs_end_to_end_on_synthetic_small(tmp_path):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(small_run_config()))
    target = f"results/{SMALL}/exact_metrics.csv"
    result = subprocess.run(
        snakemake_command(tmp_path, "--cores", "2", targets=[target]),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    exact = pd.read_csv(tmp_path / target)
    assert set(exact["recommender"]) == {"X", "Y", "Z"}
    assert set(exact["metric"]) == {"recall@10", "ndcg@10", "ap", "auc"}
    assert exact["value"].between(0, 100).all()  # percent
    auc = exact[exact["metric"] == "auc"].set_index("recommender")["value"]
    assert (auc > 50).all()  # better than chance: the models learn the popularity at least
    ranks = pd.read_csv(tmp_path / f"results/{SMALL}/ranks/X.csv")
    assert len(ranks) == 2000
    log = (tmp_path / f"logs/{SMALL}/split.log").read_text()
    assert f"synthetic {SMALL}: 100000 events" in log and "100000 interactions" in log
    assert not (tmp_path / "data" / "raw").exists()  # nothing downloaded or read
