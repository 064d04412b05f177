"""Adapters that read a framework's own evaluation rank by rank and write the rank
files ``sampled-metrics correct`` reads (docs/cli.md), each with its sidecar
(:mod:`~sampled_metrics.frameworks.rank_meta`).

- ``recbole``   RecBole's uniN / popN and full-sort evaluations: a context manager
                around ``trainer.evaluate`` and a checkpoint's ranks
                (``sampled-metrics recbole``, docs/recbole.md)
- ``cornac``    cornac's full-ranking evaluation (``ranking_eval``: its pool, its
                tie order), and a named protocol's sampled ranks from the model's
                scores, since cornac has no sampled protocol (``sampled-metrics cornac``,
                docs/cornac.md)

Each adapter imports its framework inside its functions: it imports without it, and
raises :class:`FrameworkNotInstalled` when the framework is missing.
"""

__all__ = ["FrameworkNotInstalled"]


class FrameworkNotInstalled(ImportError):
    """The framework an adapter runs is not installed here: a one-line message naming
    the fix.

    Parameters
    ----------
    framework : str
        The framework's name, as pip installs it.
    fix : str
        What to do (build the environment, run in it).

    Examples
    --------
    >>> str(FrameworkNotInstalled("recbole", "run it in .envs/recbole (.ci/envs/recbole.sh)"))
    'recbole is not installed in this environment: run it in .envs/recbole (.ci/envs/recbole.sh)'
    """

    def __init__(self, framework: str, fix: str):
        super().__init__(f"{framework} is not installed in this environment: {fix}")
        self.framework = framework
