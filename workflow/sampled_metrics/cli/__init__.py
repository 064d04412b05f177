"""The command-line tool ``sampled-metrics``: one command, a sub-command per task
(:data:`~.commands.COMMANDS`, one module each with ``add_parser`` and ``run``).

- ``correct FILE``: each held-out item's sampled rank (its rank among the m items sampled
  for it, 1..m + 1) read from a csv, tsv or parquet file, with each row's m and n, and
  every metric corrected by every estimator of :mod:`sampled_metrics.estimation.estimators`
  (point estimates: their bias is unknown, so no interval) and the range that holds
  whatever the ranks (the identification interval, bias included); with several rank
  columns also the paired differences of each pair of models, with the range of each
  and the verdict it supports. A file with a sidecar (``FILE.meta.json``,
  :mod:`sampled_metrics.frameworks.rank_meta`) is read as it says; else ``--protocol``
  names a framework's protocol (``ncf``, ``recbole-uni100``, ``elliot-50``, ...).
- ``plan FILE --out CHOSEN``: the users to rank exactly, chosen by a two-phase design;
  ``correct FILE --exact EXACT --design CHOSEN`` then estimates every metric and every
  pair's difference with an interval and a verdict (docs/deciding.md).
- ``recbole CHECKPOINT``: RecBole's evaluation of a checkpoint as rank files.
- ``cornac DATA --model SPEC``: cornac models trained and ranked, as rank files.

``docs/cli.md`` documents the input, every option and the protocols of common
frameworks. Bad input stops with one line on stderr, ``sampled-metrics <sub-command>:
error: ...``, naming the file and the row (its line in a csv or tsv file, header = line
1) or the column, and exit status 2.

Modules: ``commands`` (the table and :func:`main`), ``arguments`` (the parser, option
types and defaults the sub-commands share), ``errors`` (:class:`InputError`, bad input
as data); the inputs: ``reading`` (how to read a rank file: its options and their
resolution with the sidecar), ``inputs`` (the rank files resolved into one typed
object), ``decision_inputs`` (the design and the exact ranks, checked against the
sampled ranks); the formats: ``rank_file`` (a file of ranks), ``design_file`` (the
design's csv and its record; the rank sidecar is
:mod:`sampled_metrics.frameworks.rank_meta`, which the adapters write); the results:
``results`` (typed records, one JSON form), ``text`` (numbers and tables), ``report``
(``correct``'s results and tables), ``decide`` (``correct --exact --design``: its
options, their rules, its results), ``paired`` (a full ranking's paired test); the
outputs: ``outputs`` (never over an input, nor over an existing file unless
``--force``); the sub-commands: ``correct``, ``plan``, ``recbole``, ``cornac``. Each
sub-command resolves its inputs, computes typed results and only formats and prints
them. ``python -m
sampled_metrics.cli`` runs :func:`main`. The frameworks are imported only when their
sub-command runs.
"""

from .arguments import DEFAULT_ESTIMATORS, DEFAULT_METRICS
from .commands import COMMANDS, main
from .errors import InputError
from .rank_file import RankFile, read_rank_file

__all__ = [
    "COMMANDS",
    "DEFAULT_ESTIMATORS",
    "DEFAULT_METRICS",
    "InputError",
    "RankFile",
    "main",
    "read_rank_file",
]
