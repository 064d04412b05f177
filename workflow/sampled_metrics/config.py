"""The configuration of the pipeline (config.yaml): validated, completed, checked.

:func:`validate_config` is what the Snakefile runs at start-up, and what tests
and benchmarks use through :func:`load_config`:

1. the JSON schema (``workflow/schemas/config.schema.yaml``) checks types and
   names; its ``default`` values are the only defaults of the configuration and
   are filled in here;
2. each recommender's hyperparameters are completed with its type's defaults
   (``sampled_metrics.recommenders``), so the effective configuration that
   provenance records is complete;
3. what a schema cannot check: that the data sets to run exist, the sizes of a
   synthetic data set (and no file keys in it), recommender hyperparameters,
   metric and method names.

Each problem raises one ``ConfigError`` naming the key.
"""

from __future__ import annotations

import copy
from pathlib import Path

__all__ = [
    "CONFIG_FILE",
    "SCHEMA_FILE",
    "ConfigError",
    "check_config",
    "check_schema",
    "datasets_to_run",
    "load_config",
    "sampling_seed",
    "source_file",
    "validate_config",
]

# The repository this package lives in (workflow/sampled_metrics/ -> the top).
_REPOSITORY = Path(__file__).resolve().parents[2]
CONFIG_FILE = _REPOSITORY / "config.yaml"
SCHEMA_FILE = _REPOSITORY / "workflow" / "schemas" / "config.schema.yaml"


class ConfigError(ValueError):
    """An impossible or unknown value in config.yaml; the message names the key."""


def datasets_to_run(config: dict) -> list[str]:
    """The names in ``dataset`` (a string or a list), each a key of ``datasets``."""
    chosen = config["dataset"]
    names = [chosen] if isinstance(chosen, str) else list(chosen)
    for name in names:
        if name not in config["datasets"]:
            raise ConfigError(
                f"dataset: {name!r} is not a key of datasets "
                f"(known: {', '.join(config['datasets'])})"
            )
    return names


def check_schema(config: dict, schema) -> None:
    """Validate ``config`` against the JSON schema (a dict or a YAML file);
    raise one one-line ConfigError naming the key of the most relevant error."""
    import jsonschema

    schema = _schema(schema)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(config))
    if not errors:
        return
    error = jsonschema.exceptions.best_match(errors)
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = list(error.schema.get("properties", {}))
        unexpected = sorted(str(k) for k in error.instance if k not in known)
        key = ".".join(filter(None, [where, unexpected[0] if unexpected else ""]))
        raise ConfigError(
            f"{key}: unknown key" + (f" (known: {', '.join(known)})" if known else "")
        )
    if error.validator in ("oneOf", "anyOf"):
        forms = [" + ".join(s["required"]) for s in error.validator_value if "required" in s]
        message = (
            "needs exactly one of: " + " | ".join(forms)
            if forms
            else "matches none of the allowed forms"
        )
    else:
        message = " ".join(error.message.split())
    raise ConfigError(f"{where or 'config'}: {message[:300]}")


def load_config(path=CONFIG_FILE) -> dict:
    """Read a config file (default: the repository's config.yaml) and return it
    validated and completed by :func:`validate_config`."""
    import yaml

    with open(path) as f:
        config = yaml.safe_load(f)
    return validate_config(config)


def validate_config(config: dict, schema=SCHEMA_FILE) -> dict:
    """Check ``config`` against the schema, fill in the schema's defaults and each
    recommender's hyperparameter defaults (in place), then :func:`check_config`.
    Returns ``config``; raises one ConfigError naming the first bad key."""
    schema = _schema(schema)
    check_schema(config, schema)
    _fill_defaults(config, schema)
    _fill_hyperparameters(config["recommenders"])
    check_config(config)
    return config


def sampling_seed(config: dict) -> int:
    """The seed of the sampled items: ``sampling.seed``, or the top-level seed when null."""
    seed = config["sampling"]["seed"]
    return config["seed"] if seed is None else seed


def source_file(entry: dict) -> str | None:
    """The file a data set is read from: its local ``path``, or its downloaded
    ``archive``; None for a ``format: synthetic`` entry, generated from its keys."""
    if entry["format"] == "synthetic":
        return None
    return entry["path"] if "path" in entry else entry["archive"]


def _schema(schema) -> dict:
    if isinstance(schema, dict):
        return schema
    import yaml

    with open(schema) as f:
        return yaml.safe_load(f)


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
    from .recommenders import hyperparameter_defaults, recommender_types

    for spec in recommenders.values():
        if spec["type"] not in recommender_types():
            continue  # check_config names it
        for key, value in hyperparameter_defaults(spec["type"]).items():
            spec.setdefault(key, value)


def check_config(config: dict) -> None:
    """Raise ConfigError naming the first key whose value cannot work (on a
    configuration that passed the schema)."""
    from .metrics import metric_by_name
    from .recommenders import validate_spec

    for name, entry in config["datasets"].items():
        _check_synthetic(name, entry)
    for name in datasets_to_run(config):
        _check_synthetic_sampling(name, config["datasets"][name], config["sampling"])
    for name, spec in config["recommenders"].items():
        try:
            validate_spec(spec)
        except ValueError as error:
            raise ConfigError(f"recommenders.{name}: {error}") from None
    for metric in config["metrics"]:
        _check(metric_by_name, metric, "metrics")
    _check_methods(config["corrections"]["methods"], "corrections.methods")
    for key, names in (
        ("metrics", config["metrics"]),
        ("corrections.methods", config["corrections"]["methods"]),
        ("fig6.methods", config["fig6"]["methods"]),
        ("toy.fig4_methods", config["toy"]["fig4_methods"]),
    ):
        _check_unique(names, key)
    fig6 = config["fig6"]
    _check(metric_by_name, fig6["metric"], "fig6.metric")
    _check_methods(fig6["methods"], "fig6.methods")
    _check_pair(fig6["pair"], config["recommenders"], "fig6.pair")
    toy = config["toy"]
    from .toy_example import TOY_RANKS

    largest = max(max(ranks) for ranks in TOY_RANKS.values())
    if toy["n"] < largest:
        raise ConfigError(
            f"toy.n: {toy['n']} is smaller than the toy example's largest rank {largest}"
        )
    _check_methods(toy["fig4_methods"], "toy.fig4_methods")
    for key in ("m", "fig4_m"):
        if toy[key] >= toy["n"]:
            raise ConfigError(f"toy.{key}: {toy[key]} must be smaller than toy.n = {toy['n']}")


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
    from .data.synthetic import SYNTHETIC_KEYS, check_synthetic

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


def _check_synthetic_sampling(name: str, entry: dict, sampling: dict) -> None:
    """The sampled evaluation without replacement needs ``sampling.m`` items
    outside every user's history: at most ``items - m`` events a user."""
    if entry["format"] != "synthetic" or sampling["replacement"]:
        return
    room = entry["items"] - entry["max_events_per_user"]
    if room < sampling["m"]:
        raise ConfigError(
            f"datasets.{name}.max_events_per_user: {entry['max_events_per_user']} leaves "
            f"{room} of the {entry['items']} items outside the most active user's history, "
            f"fewer than sampling.m = {sampling['m']} (without replacement)"
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


def _check_methods(methods, key: str) -> None:
    from .corrections import parse_method

    for method in methods:
        _check(parse_method, method, key)
