"""The optional dependencies: imported where a feature needs one, with one error naming
the extra that installs them when one is missing.

The library and the ``sampled-metrics`` command need only numpy, scipy, pandas, tqdm and
threadpoolctl; the workflow's models (implicit), figures (matplotlib) and configuration
(PyYAML, jsonschema) come with the extra ``workflow`` (``pyproject.toml``).
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["INSTALL_WORKFLOW", "optional_import"]

INSTALL_WORKFLOW = 'pip install "sampled-metrics[workflow]"'


def optional_import(module: str, purpose: str) -> ModuleType:
    """Import ``module`` of an optional dependency, or say which extra installs it.

    Parameters
    ----------
    module : str
        A dotted module name, e.g. ``"implicit.cpu.als"``.
    purpose : str
        What needs it, named in the error (e.g. ``"the iALS recommender"``).

    Returns
    -------
    module

    Raises
    ------
    ModuleNotFoundError
        "<purpose> needs <package>, which is not installed: pip install
        "sampled-metrics[workflow]"", when the module's top-level package is missing (a
        module missing inside an installed package is raised as it is).

    Examples
    --------
    >>> optional_import("math", "a square root").sqrt(4.0)
    2.0
    >>> optional_import("no_such_package.sub", "the example")
    Traceback (most recent call last):
    ModuleNotFoundError: the example needs no_such_package, which is not installed: pip
    install "sampled-metrics[workflow]"
    """
    package = module.partition(".")[0]
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name != package:
            raise
        raise ModuleNotFoundError(
            f"{purpose} needs {package}, which is not installed: {INSTALL_WORKFLOW}",
            name=package,
        ) from None
