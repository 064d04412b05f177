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

__all__ = ["FrameworkNotInstalled", "UnknownUser"]


class FrameworkNotInstalled(ImportError):
    """An adapter's framework (RecBole and torch, cornac) is not installed here; the
    message names the environment to run the adapter in.

    Examples
    --------
    >>> str(FrameworkNotInstalled("cornac is not installed here: run it in .envs/cornac"))
    'cornac is not installed here: run it in .envs/cornac'
    """


class UnknownUser(ValueError):
    """A user asked for (``users=``) that the framework's evaluation does not have:
    ``user`` is its id as given.

    Examples
    --------
    >>> error = UnknownUser("u9")
    >>> error.user, str(error)
    ('u9', 'user u9 is not a test user of the evaluation')
    """

    def __init__(self, user):
        super().__init__(f"user {user} is not a test user of the evaluation")
        self.user = user
