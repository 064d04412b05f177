"""The configuration of the pipeline (config.yaml): its files, error, names and look-ups.

* :data:`SCHEMA_FILE`: the JSON schema of config.yaml (``config.schema.yaml``, package
  data beside this module), whose ``default`` values are the only defaults of the
  configuration;
* :func:`check_config_files` reads config files (a key given twice refused),
  :func:`check_renamed_keys` refuses a key renamed since (:data:`RENAMED_KEYS`),
  :func:`check_schema` checks one against the schema;
* :data:`DATASET_NAME`, :data:`RECOMMENDER_NAME`: the names that become folders and
  files; :func:`datasets_to_run`, :func:`fig6_m_values`, :func:`sampling_seed`,
  :func:`source_file`: look-ups in a validated configuration.

Validating and completing a configuration (:func:`~.validation.validate_config`,
:func:`~.validation.load_config`) is :mod:`.validation`'s. Each problem raises one
``ConfigError`` naming the key.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.resources import files
from pathlib import Path
from typing import Any

from ..io.optional import optional_import

__all__ = [
    "DATASET_NAME",
    "RECOMMENDER_NAME",
    "RENAMED_KEYS",
    "SCHEMA_FILE",
    "ConfigError",
    "check_config_files",
    "check_renamed_keys",
    "check_schema",
    "datasets_to_run",
    "fig6_m_values",
    "sampling_seed",
    "source_file",
]

# Package data, installed with the library; config.yaml is the user's file, not the
# package's (the Snakefile names its configfile, the tests theirs).
SCHEMA_FILE = files(__package__) / "config.schema.yaml"


# Names that become folders and file names (results/<data set>/, models/<recommender>.pkl):
# no path separator, no "..", no space; the Snakefile's wildcard constraints use them too.
DATASET_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
RECOMMENDER_NAME = r"[A-Za-z0-9_]+"


class ConfigError(ValueError):
    """An impossible or unknown value in config.yaml; the message names the key."""


# Keys renamed for one vocabulary (the law of the draws, the estimator registry's names):
# old dotted key -> what to write instead. A config file or --config still using an old
# key stops with one error naming the new one; nothing translates it. A section's
# keys come before the section, so the most precise message wins.
RENAMED_KEYS = {
    "sampling.replacement": "sampling.law: hypergeometric (false) or binomial (true)",
    "corrections.methods": "estimation.estimators",
    "corrections.law": "estimation.law",
    "corrections.n": "estimation.n",
    "corrections.rank_estimate_rounding": "estimation.rank_estimate_rounding",
    "corrections.cls_constraint": "estimation.cls_constraint",
    "corrections.protocol_nodes": "protocol_sensitivity.per_user_nodes",
    "corrections": "estimation",
    "fig6.methods": "fig6.estimators",
    "protocols.methods": "protocols.estimators",
    "toy.fig4_methods": "toy.fig4_estimators",
}


def check_renamed_keys(config: dict) -> None:
    """Refuse the first key of :data:`RENAMED_KEYS` that ``config`` still has.

    Parameters
    ----------
    config : dict
        A configuration as read (config.yaml, with any config file and ``--config``
        merged over it).

    Raises
    ------
    ConfigError
        "config: <old key> was renamed: use <new key>".

    Examples
    --------
    >>> check_renamed_keys({"sampling": {"m": 100, "law": "hypergeometric"}})
    >>> check_renamed_keys({"sampling": {"m": 100, "replacement": False}})
    Traceback (most recent call last):
    sampled_metrics.pipeline.config.ConfigError: config: sampling.replacement was renamed: use
    sampling.law: hypergeometric (false) or binomial (true)
    >>> check_renamed_keys({"corrections": {"methods": ["cls"]}})
    Traceback (most recent call last):
    sampled_metrics.pipeline.config.ConfigError: config: corrections.methods was renamed: use
    estimation.estimators
    """
    for old, new in RENAMED_KEYS.items():
        *parents, last = old.split(".")
        where: object = config
        for key in parents:
            where = where.get(key) if isinstance(where, dict) else None
        if isinstance(where, dict) and last in where:
            raise ConfigError(f"config: {old} was renamed: use {new}")


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


def check_schema(config: dict, schema: dict | str | Path) -> None:
    """Validate ``config`` against the JSON schema (a dict or a YAML file);
    raise one one-line ConfigError naming the key of the most relevant error."""
    jsonschema = optional_import("jsonschema", "checking the configuration")
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


def check_config_files(paths: Iterable[str | Path]) -> list[dict]:
    """Read YAML config files, refusing a key given twice in the same mapping (YAML
    keeps the last one silently; snakemake reads them so). Returns their contents.

    Parameters
    ----------
    paths : iterable of str or Path
        The files (config.yaml and any ``--configfile``).

    Returns
    -------
    list of dict
        Each file's mapping.

    Raises
    ------
    ConfigError
        "<file>, line L: key 'k' given twice (first on line F)".

    Examples
    --------
    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
    ...     _ = f.write("seed: 1\\nsampling:\\n  m: 5\\n  m: 6\\n")
    >>> check_config_files([f.name])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    sampled_metrics.pipeline.config.ConfigError: ...line 4: key 'm' given twice (first on line 3)
    >>> os.remove(f.name)
    """
    yaml = optional_import("yaml", "reading a config file")

    # A subclass, so that the constructor added below leaves yaml.SafeLoader as it is.
    Loader: Any = type("Loader", (yaml.SafeLoader,), {})

    def mapping(loader: Any, node: Any) -> dict:
        first: dict[object, int] = {}
        for key_node, _ in node.value:
            key = loader.construct_object(key_node)
            line = key_node.start_mark.line + 1
            if key in first:
                raise ConfigError(
                    f"{loader.name}, line {line}: key {key!r} given twice "
                    f"(first on line {first[key]})"
                )
            first[key] = line
        return loader.construct_mapping(node, deep=True)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    contents = []
    for path in paths:
        with open(path) as f:
            loader = Loader(f)
            loader.name = str(path)
            try:
                contents.append(loader.get_single_data())
            finally:
                loader.dispose()
    return contents


def fig6_m_values(config: dict, name: str) -> tuple[str, list[int]]:
    """Figure 6's sample sizes for data set ``name`` and the key they come from: its
    entry's ``fig6_m_values`` (sizes fitting its catalogue), else ``fig6.m_values``.

    Parameters
    ----------
    config : dict
        The validated configuration.
    name : str
        A key of ``datasets``.

    Returns
    -------
    key : str
    values : list of int

    Examples
    --------
    >>> from sampled_metrics.pipeline.validation import load_config
    >>> config = load_config("config.yaml")  # the repository's, from its top folder
    >>> fig6_m_values(config, "ml-1m")[0]
    'fig6.m_values'
    >>> fig6_m_values(config, "synthetic-small")[1][-1]
    999
    """
    entry = config["datasets"][name]
    if "fig6_m_values" in entry:
        return f"datasets.{name}.fig6_m_values", entry["fig6_m_values"]
    return "fig6.m_values", config["fig6"]["m_values"]


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
    yaml = optional_import("yaml", "reading the configuration's schema")
    with open(schema) as f:
        return yaml.safe_load(f)
