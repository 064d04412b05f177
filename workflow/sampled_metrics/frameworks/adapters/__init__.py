"""Adapters that read a framework's own evaluation rank by rank and write the rank
files ``sampled-metrics correct`` reads (docs/cli.md), each with its sidecar
(:mod:`~sampled_metrics.frameworks.rank_meta`).

- ``recbole``   RecBole's uniN / popN and full-sort evaluations: a context manager
                around ``trainer.evaluate`` and a checkpoint's ranks
                (``sampled-metrics recbole``, docs/recbole.md); ``recbole_decide``:
                several checkpoints loaded on one data set, for ``--decide``
- ``cornac``    cornac's full-ranking evaluation (``ranking_eval``: its pool, its
                tie order), and a named protocol's sampled ranks from the model's
                scores, since cornac has no sampled protocol (``sampled-metrics cornac``,
                docs/cornac.md)

Each adapter imports its framework inside its functions: it imports without it, and
raises :class:`FrameworkNotInstalled` when the framework is missing, with the commands
that give an environment where it runs (:func:`not_installed`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["FrameworkNotInstalled", "UnknownUser", "not_installed"]


class FrameworkNotInstalled(ImportError):
    """An adapter's framework (RecBole and torch, cornac) is not installed here; the
    message names the environment to run the adapter in.

    Examples
    --------
    >>> str(FrameworkNotInstalled("cornac is not installed here: run it in .envs/cornac"))
    'cornac is not installed here: run it in .envs/cornac'
    """


def _repository() -> str:
    """This package's repository, where the package runs from one (an editable install
    or a checkout); else a placeholder for a clone of it (an install from a wheel)."""
    root = Path(__file__).resolve().parents[4]
    if (root / "pyproject.toml").is_file() and (root / ".ci" / "envs").is_dir():
        return str(root)
    return "<a clone of this package's repository>"


def not_installed(framework: str, needs: str, elsewhere: str) -> FrameworkNotInstalled:
    """The error of an adapter whose framework is missing: the commands that build the
    repository's environment for it (``.ci/envs/<framework>.sh``, which installs this
    package too) or add this package to ``elsewhere``, an environment that has it.

    Parameters
    ----------
    framework : str
        The adapter's command and environment: ``recbole``, ``cornac``.
    needs : str
        What is missing, as a subject: ``"RecBole and torch"``.
    elsewhere : str
        The user's own environment that has the framework.

    Examples
    --------
    >>> error = not_installed("cornac", "cornac", "the environment that trained your model")
    >>> print(str(error).replace(_repository(), "R"))
    sampled-metrics cornac needs cornac (not installed here): run it in an environment
    that has it: `bash R/.ci/envs/cornac.sh` builds one with this package (then
    `R/.envs/cornac/bin/sampled-metrics cornac ...`), or `cd R && python -m pip install
    --no-deps -c constraints.txt -e .` adds this package to the environment that trained
    your model (docs/cornac.md)
    """
    repository = _repository()
    return FrameworkNotInstalled(
        f"sampled-metrics {framework} needs {needs} (not installed here): run it in "
        f"an environment that has it: `bash {repository}/.ci/envs/{framework}.sh` builds one "
        f"with this package (then `{repository}/.envs/{framework}/bin/sampled-metrics "
        f"{framework} ...`), or `cd {repository} && python -m pip install --no-deps -c "
        f"constraints.txt -e .` adds this package to {elsewhere} (docs/{framework}.md)"
    )


class UnknownUser(ValueError):
    """A user asked for (``users=``) that the framework's evaluation does not have:
    ``user`` is its id as given.

    Examples
    --------
    >>> error = UnknownUser("u9")
    >>> error.user, str(error)
    ('u9', 'user u9 is not a test user of the evaluation')
    """

    def __init__(self, user: object) -> None:
        super().__init__(f"user {user} is not a test user of the evaluation")
        self.user = user
