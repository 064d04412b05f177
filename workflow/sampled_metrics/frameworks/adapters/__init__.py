"""Adapters that read a framework's own evaluation rank by rank and write the rank
files ``sampled-metrics correct`` reads (docs/cli.md).

- ``recbole``   RecBole's uniN / popN and full-sort evaluations: a context manager
                around ``trainer.evaluate``, a checkpoint's ranks, and the command
                ``python -m sampled_metrics.frameworks.adapters.recbole`` (docs/recbole.md)
- ``cornac``    cornac's full-ranking evaluation (``ranking_eval``: its pool, its
                tie order), and a named protocol's sampled ranks from the model's
                scores, since cornac has no sampled protocol (docs/cornac.md)

Each adapter imports its framework inside its functions: it imports without it, and
its functions raise :class:`FrameworkNotInstalled` where the framework is missing.
"""

__all__ = ["FrameworkNotInstalled"]


class FrameworkNotInstalled(ImportError):
    """An adapter's framework (RecBole and torch, cornac) is not installed here; the
    message names the environment to run the adapter in."""
