"""Validating the configuration of the pipeline (config.yaml): completed, checked.

:func:`validate_config` is what the Snakefile runs at start-up, and what tests
and benchmarks use through :func:`load_config`:

1. a key renamed since (:data:`~.config.RENAMED_KEYS`) stops with one error naming
   its new key; the JSON schema (:data:`~.config.SCHEMA_FILE`, package data) checks
   types and names; its ``default`` values are the only defaults of the configuration and
   are filled in here;
2. each recommender's hyperparameters are completed with its type's defaults
   (``sampled_metrics.recommenders``), so the effective configuration that
   provenance records is complete;
3. what a schema cannot check (:func:`check_config`): that the data sets to run
   exist, the sizes of a synthetic data set (and no file keys in it), recommender
   hyperparameters, metric and estimator names; and what a data set's sizes must
   allow (:mod:`.data_checks`). A protocol
   of the study or a Figure 6 sample size the sizes cannot support is no error: its
   rule leaves it out and says so.

Before any model is trained, :func:`~.data_checks.check_fit_memory` compares what each
model's fit needs on the data set's sizes with the memory available (the Snakefile at
start-up when the sizes are known, else rule split).

Each problem raises one :class:`~.config.ConfigError` naming the key.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from .config import (
    DATASET_NAME,
    RECOMMENDER_NAME,
    SCHEMA_FILE,
    ConfigError,
    _schema,
    check_config_files,
    check_renamed_keys,
    check_schema,
    datasets_to_run,
)
from .data_checks import check_data_sizes, check_draws_with_replacement

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

__all__ = [
    "check_config",
    "load_config",
    "validate_config",
]


def load_config(path: str | Path) -> dict:
    """Read a config file (e.g. the repository's config.yaml) and return it
    validated and completed by :func:`validate_config`."""
    return validate_config(check_config_files([path])[0])


def validate_config(config: dict, schema: dict | Traversable = SCHEMA_FILE) -> dict:
    """Refuse a renamed key, check ``config`` against the schema, drop the recommenders
    set to null, fill in the schema's defaults and each recommender's hyperparameter
    defaults (in place), then :func:`check_config`.
    Returns ``config``; raises one ConfigError naming the first bad key."""
    schema = _schema(schema)
    check_renamed_keys(config)
    check_schema(config, schema)
    _leave_out_null_recommenders(config)
    _fill_defaults(config, schema)
    _fill_hyperparameters(config["recommenders"])
    check_config(config)
    return config


def _leave_out_null_recommenders(config: dict) -> None:
    """An entry ``recommenders.<name>: null`` (in a config file over config.yaml, which
    merges and cannot delete) leaves that recommender out."""
    recommenders = config["recommenders"]
    for name in [name for name, spec in recommenders.items() if spec is None]:
        del recommenders[name]
    if not recommenders:
        raise ConfigError("recommenders: every entry is null; keep at least one recommender")


def _fill_defaults(instance, schema: dict) -> None:
    """Set every absent key that has a ``default`` in the schema (a copy of it),
    in objects, their sub-objects and the values of ``additionalProperties``."""
    if not isinstance(instance, dict):
        return
    properties = schema.get("properties", {})
    for key, sub in properties.items():
        if key not in instance and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if key in instance:
            _fill_defaults(instance[key], sub)
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for key, value in instance.items():
            if key not in properties:
                _fill_defaults(value, extra)


def _fill_hyperparameters(recommenders: dict) -> None:
    from ..recommenders import hyperparameter_defaults, recommender_types

    for spec in recommenders.values():
        if spec["type"] not in recommender_types():
            continue  # check_config names it
        for key, value in hyperparameter_defaults(spec["type"]).items():
            spec.setdefault(key, value)


def check_config(config: dict) -> None:
    """Raise ConfigError naming the first key whose value cannot work (on a
    configuration that passed the schema)."""
    from ..estimation.metrics import metric_by_name
    from ..recommenders import validate_spec

    for kind, names, pattern in (
        ("datasets", config["datasets"], DATASET_NAME),
        ("recommenders", config["recommenders"], RECOMMENDER_NAME),
    ):
        for name in names:
            _check_name(name, pattern, kind)
    for name, entry in config["datasets"].items():
        _check_synthetic(name, entry)
        _check_download(name, entry)
    for name in datasets_to_run(config):
        entry = config["datasets"][name]
        if entry["format"] == "synthetic":  # its sizes are known before it is generated
            smallest_pool = entry["items"] - entry["max_events_per_user"]
            source = f"datasets.{name}.items - max_events_per_user"
            check_data_sizes(config, name, entry["items"], smallest_pool, source)
        else:  # a catalogue size its facts promise (the loader asserts them)
            for facts in ("facts", "split_facts"):
                if "n_items" in entry[facts]:
                    source = f"datasets.{name}.{facts}.n_items"
                    check_draws_with_replacement(config, name, entry[facts]["n_items"], source)
    if config["ranking"]["tie_policy"] == "average":
        raise ConfigError(
            "ranking.tie_policy: 'average' gives half-integer ranks, which the sampled-rank "
            "law of the corrections, the cross-check and Figure 6 cannot take; choose "
            "random (the default), pessimistic or optimistic"
        )
    for name, spec in config["recommenders"].items():
        try:
            validate_spec(spec)
        except ValueError as error:
            raise ConfigError(f"recommenders.{name}: {error}") from None
    for metric in config["metrics"]:
        _check(metric_by_name, metric, "metrics")
    _check_estimators(config["estimation"]["estimators"], "estimation.estimators", learned=True)
    for key, names in (
        ("metrics", config["metrics"]),
        ("estimation.estimators", config["estimation"]["estimators"]),
        ("fig6.estimators", config["fig6"]["estimators"]),
        ("toy.fig4_estimators", config["toy"]["fig4_estimators"]),
    ):
        _check_unique(names, key)
    _check_protocols(config["protocols"])
    _check_decisions(config["decisions"])
    fig6 = config["fig6"]
    _check(metric_by_name, fig6["metric"], "fig6.metric")
    _check_estimators(fig6["estimators"], "fig6.estimators")
    _check_pair(fig6["pair"], config["recommenders"], "fig6.pair")
    toy = config["toy"]
    from ..reproduction.toy_ranks import TOY_RANKS

    largest = max(max(ranks) for ranks in TOY_RANKS.values())
    if toy["n"] < largest:
        raise ConfigError(
            f"toy.n: {toy['n']} is smaller than the toy example's largest rank {largest}"
        )
    _check_estimators(toy["fig4_estimators"], "toy.fig4_estimators")
    for key in ("m", "fig4_m"):
        if toy[key] >= toy["n"]:
            raise ConfigError(f"toy.{key}: {toy[key]} must be smaller than toy.n = {toy['n']}")


def _check_protocols(protocols: dict) -> None:
    from ..frameworks.registry import FRAMEWORK_PROTOCOLS, HANSEN_HURWITZ

    for name in protocols["run"]:
        if name not in FRAMEWORK_PROTOCOLS:
            raise ConfigError(
                f"protocols.run: unknown protocol {name!r}; known: {', '.join(FRAMEWORK_PROTOCOLS)}"
            )
    if HANSEN_HURWITZ in protocols["estimators"]:
        raise ConfigError(
            f"protocols.estimators: {HANSEN_HURWITZ} is added by itself for the protocols "
            "with replacement; leave it out"
        )
    _check_estimators(protocols["estimators"], "protocols.estimators", learned=True)
    _check_unique(protocols["run"], "protocols.run")
    _check_unique(protocols["estimators"], "protocols.estimators")


def _check_decisions(decisions: dict) -> None:
    from ..estimation.metrics import metric_by_name

    for metric in decisions["metrics"]:
        _check(metric_by_name, metric, "decisions.metrics")
    for key in ("metrics", "run", "budgets", "uniform_budgets"):
        _check_unique(decisions[key], f"decisions.{key}")
    if decisions["range_seeds"] > decisions["seeds"]:
        raise ConfigError(
            f"decisions.range_seeds: {decisions['range_seeds']} is more than decisions.seeds "
            f"= {decisions['seeds']}"
        )
    steps = decisions["adaptive_steps"]
    if any(later <= earlier for earlier, later in zip(steps, steps[1:])):
        raise ConfigError(
            f"decisions.adaptive_steps: {steps} must increase (cumulative extra sampled items)"
        )


def _check_unique(names, key: str) -> None:
    """Each name once: a repeated one would be two rows of the same cell in the tables."""
    seen = set()
    for name in names:
        if name in seen:
            raise ConfigError(f"{key}: {name!r} is listed twice")
        seen.add(name)


def _check(parse, value, key: str) -> None:
    try:
        parse(value)
    except ValueError as error:
        raise ConfigError(f"{key}: {error}") from None


# The keys of a data set read from a file, none of which a synthetic one has (a
# default of null is no value).
_FILE_KEYS = (
    "url",
    "md5",
    "archive",
    "path",
    "member",
    "sep",
    "header",
    "columns",
    "binarize_threshold",
)


def _check_synthetic(name: str, entry: dict) -> None:
    """A ``format: synthetic`` entry: no file keys, and parameters that can work
    (``sampled_metrics.data.synthetic.check_synthetic``); another entry: no
    synthetic keys."""
    from ..data.synthetic import SYNTHETIC_KEYS, check_synthetic

    key = f"datasets.{name}"
    if entry["format"] != "synthetic":
        for extra in SYNTHETIC_KEYS:
            if extra in entry:
                raise ConfigError(
                    f"{key}.{extra}: only a data set with format: synthetic has this key "
                    f"(this one has format: {entry['format']})"
                )
        return
    for extra in _FILE_KEYS:
        if entry.get(extra) is not None:
            raise ConfigError(
                f"{key}.{extra}: a synthetic data set is generated, it reads no file "
                f"(leave out {', '.join(_FILE_KEYS)})"
            )
    try:
        check_synthetic(**{k: entry[k] for k in SYNTHETIC_KEYS})
    except ValueError as error:
        raise ConfigError(f"{key}.{error}") from None


def _check_name(name, pattern: str, kind: str) -> None:
    """A data set's or recommender's name becomes a folder or a file name."""
    if not re.fullmatch(pattern, str(name)):
        raise ConfigError(
            f"{kind}: {name!r} cannot name a folder or file (allowed: {pattern}; "
            "no '/', no '..', no spaces)"
        )


def _check_download(name: str, entry: dict) -> None:
    """A download comes over http(s) and is kept inside the working directory."""
    key = f"datasets.{name}"
    if "url" in entry and not re.match(r"https?://", entry["url"]):
        raise ConfigError(f"{key}.url: {entry['url']!r} is not an http:// or https:// address")
    if "archive" in entry:
        archive = PurePosixPath(entry["archive"])
        inside = not archive.is_absolute() and ".." not in archive.parts
        if not inside or not re.fullmatch(r"[A-Za-z0-9_.+/-]+", str(archive)):
            raise ConfigError(
                f"{key}.archive: {str(archive)!r} must be a relative path inside the working "
                "directory (no '..', no leading '/', no spaces), e.g. data/raw/<file>.zip"
            )


def _check_pair(pair, recommenders, key: str) -> None:
    """Two different keys of ``recommenders``."""
    for name in pair:
        if name not in recommenders:
            raise ConfigError(
                f"{key}: {name!r} is not a key of recommenders (known: {', '.join(recommenders)})"
            )
    if len(set(pair)) != len(pair):
        raise ConfigError(
            f"{key}: names {pair[0]!r} twice; the pair needs two different recommenders"
        )


def _check_estimators(names, key: str, learned: bool = False) -> None:
    """Known estimator names: the paper's corrections, and with ``learned`` also the
    learned estimators of sampled_metrics.estimation.estimators (they have no fixed
    vector, so Figure 6 and the toy example take the paper's only)."""
    from ..estimation.registry import parse_estimator, parse_method

    for name in names:
        _check(parse_estimator if learned else parse_method, name, key)
