"""Checks of config.yaml beyond its JSON schema (workflow/schemas/).

The schema checks types and names; these check what a schema cannot: that the
data sets to run exist, that each recommender's type and hyperparameters are
valid, that the metric names parse. Each problem raises one ``ConfigError``
naming the key.
"""

from __future__ import annotations


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

    if not isinstance(schema, dict):
        import yaml

        with open(schema) as f:
            schema = yaml.safe_load(f)
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


def check_config(config: dict) -> None:
    """Raise ConfigError naming the first key whose value cannot work."""
    from .metrics import metric_by_name
    from .recommenders import validate_spec

    datasets_to_run(config)
    for name, spec in config["recommenders"].items():
        try:
            validate_spec(spec)
        except ValueError as error:
            raise ConfigError(f"recommenders.{name}: {error}") from None
    for metric in config["metrics"]:
        _check(metric_by_name, metric, "metrics")
    _check_methods(config.get("corrections", {}).get("methods", []), "corrections.methods")
    fig6 = config.get("fig6", {})
    if "metric" in fig6:
        _check(metric_by_name, fig6["metric"], "fig6.metric")
    _check_methods(fig6.get("methods", []), "fig6.methods")
    for name in fig6.get("pair", []):
        if name not in config["recommenders"]:
            raise ConfigError(f"fig6.pair: {name!r} is not a key of recommenders")
    toy = config.get("toy", {})
    from .toy_example import TOY_RANKS

    largest = max(max(ranks) for ranks in TOY_RANKS.values())
    if toy.get("n", largest) < largest:
        raise ConfigError(
            f"toy.n: {toy['n']} is smaller than the toy example's largest rank {largest}"
        )
    _check_methods(toy.get("fig4_methods", []), "toy.fig4_methods")
    for key in ("m", "fig4_m"):
        if key in toy and "n" in toy and toy[key] >= toy["n"]:
            raise ConfigError(f"toy.{key}: {toy[key]} must be smaller than toy.n = {toy['n']}")


def _check(parse, value, key: str) -> None:
    try:
        parse(value)
    except ValueError as error:
        raise ConfigError(f"{key}: {error}") from None


def _check_methods(methods, key: str) -> None:
    from .corrections import parse_method

    for method in methods:
        _check(parse_method, method, key)
