"""The configuration's vocabulary and a bound of the sampling it stops at start-up.

* A key renamed for one vocabulary (the law of the draws ``law``: binomial |
  hypergeometric; the estimator registry's names ``estimators``; ``per_user_nodes``)
  given in a config file or ``--config`` stops validation with one error naming the
  new key, before anything runs; nothing translates it.
* ``sampling.m`` with replacement far beyond the catalogue (more than 10 times the
  number of items, the largest ranked set a user can have) stops at start-up, naming
  ``sampling.m`` and the number of items: from a synthetic entry's keys, from the
  facts of a file's entry, else once the split exists.
"""

from __future__ import annotations

import copy
import re
import time

import pytest
import yaml
from conftest import CONFIG_FILE, run, tiny_config

from sampled_metrics.pipeline.config import ConfigError
from sampled_metrics.pipeline.validation import validate_config

SHIPPED = yaml.safe_load(CONFIG_FILE.read_text())

# old key (a dotted path), a value it held, the message (written out, not read from the code)
RENAMED = [
    (
        "sampling.replacement",
        False,
        "sampling.replacement was renamed: use sampling.law: hypergeometric (false) or "
        "binomial (true)",
    ),
    ("corrections.methods", ["cls"], "corrections.methods was renamed: use estimation.estimators"),
    ("corrections.law", "binomial", "corrections.law was renamed: use estimation.law"),
    ("corrections.n", "per_user", "corrections.n was renamed: use estimation.n"),
    (
        "corrections.rank_estimate_rounding",
        "floor",
        "corrections.rank_estimate_rounding was renamed: use estimation.rank_estimate_rounding",
    ),
    (
        "corrections.cls_constraint",
        "monotone",
        "corrections.cls_constraint was renamed: use estimation.cls_constraint",
    ),
    (
        "corrections.protocol_nodes",
        64,
        "corrections.protocol_nodes was renamed: use protocol_sensitivity.per_user_nodes",
    ),
    ("fig6.methods", ["sampled"], "fig6.methods was renamed: use fig6.estimators"),
    ("protocols.methods", ["sampled"], "protocols.methods was renamed: use protocols.estimators"),
    ("toy.fig4_methods", ["sampled"], "toy.fig4_methods was renamed: use toy.fig4_estimators"),
]


def with_key(config: dict, dotted: str, value) -> dict:
    """``config`` with ``dotted`` set to ``value`` (its sections made when absent)."""
    *parents, last = dotted.split(".")
    where = config
    for key in parents:
        where = where.setdefault(key, {})
    where[last] = value
    return config


@pytest.mark.parametrize(("old", "value", "expected"), RENAMED, ids=[r[0] for r in RENAMED])
def test_an_old_key_gets_one_error_naming_the_new_one(old, value, expected):
    """Beside the new keys of config.yaml, as a config file merged over it gives them."""
    with pytest.raises(ConfigError) as error:
        validate_config(with_key(copy.deepcopy(SHIPPED), old, value))
    assert str(error.value) == f"config: {expected}"


def test_the_old_section_alone_names_the_new_section():
    config = copy.deepcopy(SHIPPED)
    config["corrections"] = {}
    with pytest.raises(ConfigError, match=r"^config: corrections was renamed: use estimation$"):
        validate_config(config)


def test_the_shipped_config_uses_the_new_keys_only():
    config = validate_config(copy.deepcopy(SHIPPED))
    assert config["sampling"]["law"] == "hypergeometric"  # the NCF protocol, as the paper's
    assert "estimators" in config["estimation"] and "estimators" in config["fig6"]
    assert config["protocol_sensitivity"]["per_user_nodes"] >= 2


def config_error_line(result) -> str:
    lines = (result.stdout + result.stderr).splitlines()
    where = next(i for i, line in enumerate(lines) if line.startswith("ConfigError in file"))
    return lines[where + 1]


@pytest.mark.slow
def test_an_old_key_stops_a_dry_run_from_a_file_and_from_the_command_line(tmp_path):
    config = tiny_config()
    config["sampling"] = {"m": 10, "repetitions": 6, "replacement": False}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    result = run(tmp_path, "--cores", "1", "-n")
    assert result.returncode != 0
    assert config_error_line(result) == f"config: {RENAMED[0][2]}"
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(tiny_config()))
    result = run(tmp_path, "--cores", "1", "-n", "--config", "fig6={'methods': ['sampled']}")
    assert result.returncode != 0
    assert config_error_line(result) == "config: fig6.methods was renamed: use fig6.estimators"
    assert not any((tmp_path / top).exists() for top in ("results", "data", "logs"))


# --------------------------------------------------------------------------
# sampling.m with replacement far beyond the catalogue
# --------------------------------------------------------------------------

FORTY = {
    "format": "synthetic",
    "users": 60,
    "items": 40,
    "interactions": 600,
    "popularity_exponent": 1.0,
    "activity_exponent": 0.3,
    "min_events_per_user": 5,
    "max_events_per_user": 20,
    "seed": 2020,
}


def forty_items(m: int, law: str) -> dict:
    """The shipped config on a synthetic data set of 40 items, sampling m by ``law``."""
    config = copy.deepcopy(SHIPPED)
    config["datasets"]["forty"] = dict(FORTY)
    config["dataset"] = "forty"
    config["sampling"].update(m=m, law=law)
    return config


def test_m_far_beyond_a_synthetic_catalogue_stops_naming_m_and_the_items():
    """40 items: a ranked set of at most 40, so at most 400 draws with replacement."""
    validate_config(forty_items(400, "binomial"))
    with pytest.raises(ConfigError) as error:
        validate_config(forty_items(40_000, "binomial"))
    message = str(error.value)
    assert message.startswith(
        "sampling.m: 40000 draws with replacement (sampling.law: binomial) are more than 10 "
        "times the 40 items of forty (datasets.forty.items - max_events_per_user)"
    ), message
    assert "informed by at most that many distinct items" in message
    assert message.endswith("lower sampling.m to at most 400")
    with pytest.raises(ConfigError, match=r"^sampling.m: 401 draws with replacement"):
        validate_config(forty_items(401, "binomial"))
    # without replacement the smallest pool (40 - 20 items) bounds m instead
    with pytest.raises(ConfigError, match=r"^sampling.m: 400 is larger than the smallest"):
        validate_config(forty_items(400, "hypergeometric"))


def test_m_far_beyond_the_items_a_files_facts_promise_stops_at_start_up():
    """ml-1m-offline's facts give 3706 items: 37,060 draws pass, 37,061 stop."""
    config = copy.deepcopy(SHIPPED)
    config["dataset"] = "ml-1m-offline"
    config["sampling"].update(m=37_060, law="binomial")
    validate_config(copy.deepcopy(config))
    config["sampling"]["m"] = 37_061
    with pytest.raises(ConfigError) as error:
        validate_config(config)
    assert re.match(
        r"sampling.m: 37061 draws with replacement \(sampling.law: binomial\) are more than "
        r"10 times the 3706 items of ml-1m-offline \(datasets.ml-1m-offline.facts.n_items\)",
        str(error.value),
    ), str(error.value)


@pytest.mark.slow
def test_m_far_beyond_the_catalogue_stops_a_run_at_once(tmp_path):
    """Before the guard, m = 40,000 with replacement on 40 items ran for minutes without a
    word; now snakemake stops at start-up with the one line, having made nothing."""
    config = tiny_config()
    config["datasets"] = {"forty": dict(FORTY)}
    config["dataset"] = "forty"
    config["sampling"] = {"m": 40_000, "repetitions": 6, "law": "binomial"}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    started = time.monotonic()
    result = run(tmp_path, "--cores", "1")
    assert result.returncode != 0
    assert config_error_line(result).startswith("sampling.m: 40000 draws with replacement")
    assert time.monotonic() - started < 120
    assert not any((tmp_path / top).exists() for top in ("results", "data", "figures"))
