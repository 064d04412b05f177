"""Every input of a sub-command read, checked against the others and resolved into one
typed object, before anything is computed or printed: :class:`ResolvedRanks` (the rank
files, read as their sidecars or the options say, joined by user) for ``correct`` and
``plan``; ``correct --exact --design`` adds :class:`~.decision_inputs.DecisionInputs`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..estimation.laws import WITH_REPLACEMENT
from ..frameworks.rank_meta import RankMeta
from .errors import InputError
from .rank_file import RankFile, join_rank_files, read_rank_file
from .reading import Reading, ReadOptions, resolve_reading

__all__ = ["ResolvedRanks", "resolve_ranks"]


@dataclass(frozen=True)
class ResolvedRanks:
    """The rank files read and joined.

    Attributes
    ----------
    reading : Reading
        How the first file was read (every file is read alike: same protocol and law).
    ranks : RankFile
        The files joined by user, their models side by side.
    paths : tuple of str
        The files, as given.
    models_of : tuple of tuple of str
        Each file's models, in the order of ``paths``.
    """

    reading: Reading
    ranks: RankFile
    paths: tuple[str, ...]
    models_of: tuple[tuple[str, ...], ...]


def resolve_ranks(paths: list[str], options: ReadOptions) -> ResolvedRanks:
    """Every file read as :func:`~.reading.resolve_reading` says and joined by user
    (:func:`~.rank_file.join_rank_files`).

    Raises
    ------
    InputError
        A file that cannot be read as it must, or files that do not join.
    """
    if len(paths) > 1 and options.rank_columns:
        raise InputError(
            "--rank-column picks columns of one file; with several files, "
            "each brings all its models",
            option="--rank-column",
        )
    readings = [resolve_reading(options, path) for path in paths]
    first = readings[0]
    for path, how in zip(paths[1:], readings[1:]):
        if (how.full, how.protocol, how.law) != (first.full, first.protocol, first.law):
            said = how.protocol or f"the {how.law} law"
            raise InputError(
                f"{said}, but {paths[0]} has {first.protocol or f'the {first.law} law'}", path=path
            )
    files = [_read(options, how, path) for path, how in zip(paths, readings)]
    models = tuple(tuple(ranks.evaluations) for ranks in files)
    return ResolvedRanks(first, join_rank_files(files), tuple(map(str, paths)), models)


def _read(options: ReadOptions, how: Reading, path: str) -> RankFile:
    """``path`` read as ``how`` says, its m checked, its models named by its sidecar."""
    ranks = read_rank_file(
        path,
        rank_columns=list(how.rank_columns) if how.rank_columns else None,
        user_column=options.user_column,
        m=how.m,
        m_column=how.m_column,
        n=options.n,
        n_column=how.n_column,
        law=how.law or WITH_REPLACEMENT,
        zero_based=options.zero_based,
        sep=options.sep,
        m_source=how.m_source,
        full=how.full,
        meta=how.meta,
    )
    _check_largest_m(how, ranks)
    return _named_by_model(ranks, how.meta)


def _check_largest_m(how: Reading, ranks: RankFile) -> None:
    """With a protocol and a column of m, each row's m is at most the protocol's (RecBole
    ranks the distinct items of its N draws; NCF's row that drew the held-out item 98)."""
    if how.largest_m is None or how.m_column is None:
        return
    largest = max(int(data.m.max()) for data in ranks.evaluations.values())
    if largest > how.largest_m:
        raise InputError(
            f"column {how.m_column!r} has m = {largest}, more than the {how.largest_m} items "
            f"protocol {how.protocol} draws per held-out item",
            path=ranks.path,
            option="--m-column",
        )


def _named_by_model(ranks: RankFile, meta: RankMeta | None) -> RankFile:
    """The rank columns named by the models the sidecar gives them (the pipeline's
    column ``rank`` is its recommender's), where each model has one column."""
    if meta is None:
        return ranks
    models = [meta.rank_columns[column] for column in ranks.evaluations]
    if len(set(models)) < len(models):  # e.g. cornac's BPR and BPR_pessimistic
        return ranks
    evaluations = dict(zip(models, ranks.evaluations.values()))
    return replace(ranks, evaluations=evaluations)
