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
            raise ConfigError(f"dataset: {name!r} is not a key of datasets "
                              f"(known: {', '.join(config['datasets'])})")
    return names


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
        raise ConfigError(f"toy.n: {toy['n']} is smaller than the toy example's largest rank {largest}")
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
