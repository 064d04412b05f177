"""The configuration of the pipeline (config.yaml): its files, error, names and look-ups.

* :data:`CONFIG_FILE`, :data:`SCHEMA_FILE`: the repository's config.yaml and its JSON
  schema (``workflow/schemas/config.schema.yaml``), whose ``default`` values are the
  only defaults of the configuration;
* :func:`check_config_files` reads config files (a key given twice refused),
  :func:`check_schema` checks one against the schema;
* :data:`DATASET_NAME`, :data:`RECOMMENDER_NAME`: the names that become folders and
  files; :func:`datasets_to_run`, :func:`fig6_m_values`, :func:`sampling_seed`,
  :func:`source_file`: look-ups in a validated configuration.

Validating and completing a configuration (:func:`~.validation.validate_config`,
:func:`~.validation.load_config`) is :mod:`.validation`'s. Each problem raises one
``ConfigError`` naming the key.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "CONFIG_FILE",
    "DATASET_NAME",
    "RECOMMENDER_NAME",
    "SCHEMA_FILE",
    "ConfigError",
    "check_config_files",
    "check_schema",
    "datasets_to_run",
    "fig6_m_values",
    "sampling_law",
    "sampling_seed",
    "source_file",
]

# The repository this package lives in (workflow/sampled_metrics/ -> the top).
_REPOSITORY = Path(__file__).resolve().parents[3]
CONFIG_FILE = _REPOSITORY / "config.yaml"
SCHEMA_FILE = _REPOSITORY / "workflow" / "schemas" / "config.schema.yaml"


# Names that become folders and file names (results/<data set>/, models/<recommender>.pkl):
# no path separator, no "..", no space; the Snakefile's wildcard constraints use them too.
DATASET_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]*"
RECOMMENDER_NAME = r"[A-Za-z0-9_]+"


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


def check_config_files(paths) -> list[dict]:
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
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def mapping(loader, node):
        first = {}
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
    >>> config = load_config()
    >>> fig6_m_values(config, "ml-1m")[0]
    'fig6.m_values'
    >>> fig6_m_values(config, "synthetic-small")[1][-1]
    999
    """
    entry = config["datasets"][name]
    if "fig6_m_values" in entry:
        return f"datasets.{name}.fig6_m_values", entry["fig6_m_values"]
    return "fig6.m_values", config["fig6"]["m_values"]


def sampling_law(config: dict) -> str:
    """The law of the sampled items, a name of ``estimation.laws.SAMPLING_LAWS``:
    ``sampling.replacement`` read as binomial (with) or hypergeometric (without).

    Examples
    --------
    >>> sampling_law({"sampling": {"replacement": False}})
    'hypergeometric'
    """
    return "binomial" if config["sampling"]["replacement"] else "hypergeometric"


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
