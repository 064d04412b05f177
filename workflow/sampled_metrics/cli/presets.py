"""The command line's presets: the sampling protocols of common frameworks as
``--preset`` sets them (m and the law), built from the frameworks' records
(:data:`sampled_metrics.frameworks.registry.FRAMEWORKS`), each with the framework's code
it was read from (docs/cli.md, "Presets").
"""

from __future__ import annotations

from dataclasses import dataclass

from ..frameworks.registry import FRAMEWORKS

__all__ = ["PRESETS", "Preset"]


@dataclass(frozen=True)
class Preset:
    """A sampling protocol of a framework: the defaults of m and of the law it implies.

    Parameters
    ----------
    name : str
        The value of ``--preset``.
    m : int or None
        Sampled items per held-out item; None when the protocol has no fixed number
        (then ``--negatives`` gives it).
    law : str
        ``binomial`` (with replacement) or ``hypergeometric`` (without).
    summary : str
        What the framework does, in one sentence.
    source : str
        Where that was read: repository, path and commit.
    collapse : bool, default False
        An item drawn twice is ranked once (RecBole): the sampled rank's law is then
        hypergeometric in the number of distinct items drawn, not binomial in the draws.

    Examples
    --------
    >>> PRESETS["ncf"].m, PRESETS["ncf"].law
    (99, 'hypergeometric')
    >>> PRESETS["recbole-uni"].m is None, PRESETS["recbole-uni"].collapse
    (True, True)
    """

    name: str
    m: int | None
    law: str
    summary: str
    source: str
    collapse: bool = False


# The preset of each framework that has one: its first protocol's law, and its m
# unless the framework's number of sampled items is a setting (then --negatives).
PRESETS = {
    framework.preset: Preset(
        framework.preset,
        framework.protocols[0].m if framework.fixed_m else None,
        framework.protocols[0].law,
        framework.summary,
        framework.source,
        framework.protocols[0].collapse,
    )
    for framework in FRAMEWORKS
    if framework.preset is not None
}
