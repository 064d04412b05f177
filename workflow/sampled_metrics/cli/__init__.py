"""The command-line tool ``sampled-metrics``: corrected sampled metrics from a file.

``sampled-metrics correct FILE`` reads each held-out item's sampled rank (its rank
among the m items sampled for it, 1..m + 1) from a csv, tsv or parquet file, with
each row's m (sampled items) and n (ranked-set size: the held-out item and every
item it could have been ranked against), and prints every metric corrected by every
estimator of :mod:`sampled_metrics.estimation.estimators` (point estimates: their bias is
unknown, so no interval) and, as method ``range``, the interval that holds whatever the
ranks (the identification interval, bias included); with several rank columns (several
models evaluated on the same sampled items) also the paired differences of each pair of
models, with the range of each and the verdict it supports. ``docs/cli.md`` documents
the input, every option and the presets of common frameworks (``--preset ncf``, ``recbole-uni``,
``elliot``, ``daisyrec``), each with the framework's code it was read from.

Bad input stops with one line on stderr naming the file and the row (its line in a
csv or tsv file, header = line 1) or the column, and exit status 2.

Modules: ``presets`` (the frameworks' presets), ``rank_file`` (reading and checking
the file), ``arguments`` (the parser and its options), ``correct`` (the command, its
report, :func:`main`). ``python -m sampled_metrics.cli`` runs :func:`main`.
"""

from .arguments import DEFAULT_METHODS, DEFAULT_METRICS
from .correct import main
from .presets import PRESETS, Preset
from .rank_file import InputError, RankFile, read_rank_file

__all__ = [
    "DEFAULT_METHODS",
    "DEFAULT_METRICS",
    "InputError",
    "PRESETS",
    "Preset",
    "RankFile",
    "main",
    "read_rank_file",
]
