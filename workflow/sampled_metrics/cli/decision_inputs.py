"""The inputs of ``correct RANKS --exact EXACT --design CHOSEN`` read and checked against
each other (:func:`resolve_decision`): the design against the rank file it was drawn from
and the record that pins its users (:mod:`.design_file`), the exact ranks against the
design (every chosen user once, no other, RANKS' n) and against the sampled ranks they
must explain: an exact rank that cannot have produced its sampled rank is an error, and
exact ranks under which the sampled ranks are far less likely than they should be stop
the command unless ``allow_unlikely`` (:mod:`~sampled_metrics.estimation.decisions.consistency`).

EXACT is a full ranking's file of the chosen users: ``user``, one exact-rank column per
model named as in RANKS (or the column its sidecar, protocol ``full``, gives the model),
``n`` (or the sidecar's ``n_column``); or one such file per model, each naming its models
in its sidecar.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..estimation.decisions import Design
from ..estimation.decisions.consistency import first_impossible, likelihood_check
from ..estimation.laws import sampling_law
from ..frameworks.rank_meta import read_rank_meta
from .design_file import DesignFile, read_design
from .errors import InputError
from .inputs import ResolvedRanks
from .rank_file import MissingColumn, RankFile, read_rank_file

__all__ = ["DecisionInputs", "ExactRanks", "resolve_decision"]

# What a file of exact ranks that does not explain its sampled ranks probably is.
LIKELY_CAUSES = (
    "probably another model's or another checkpoint's exact ranks, ranks against other "
    "sampled items than RANKS', or swapped columns"
)


@dataclass(frozen=True)
class ExactRanks:
    """The chosen users' exact ranks: ``values`` (models, U), nan for the users not
    ranked exactly; each model's file (``paths``) and each value's line (or row) in it
    (``lines``, -1 where nan); the files as given (``files``)."""

    values: np.ndarray
    paths: tuple[str, ...]
    lines: np.ndarray
    files: tuple[str, ...]
    row_word: str = "line"


@dataclass(frozen=True)
class DecisionInputs:
    """Every input of a decision, read and checked: the rank files, the design, the
    exact ranks."""

    ranks: ResolvedRanks
    design: DesignFile
    exact: ExactRanks

    @property
    def models(self) -> list[str]:
        return list(self.ranks.ranks.evaluations)


def resolve_decision(
    resolved: ResolvedRanks, exact_paths: list[str], design_path: str, allow_unlikely: bool
) -> DecisionInputs:
    """Read the design and the exact ranks and check them against the rank files.

    Raises
    ------
    InputError
        One line naming the file, the line, the user and the model, both values and
        the fix.
    """
    ranks = resolved.ranks
    if resolved.reading.full:
        raise InputError("--exact and --design read a file of sampled ranks", path=ranks.path)
    design = read_design(design_path, ranks)
    models = list(ranks.evaluations)
    exact = _exact_ranks(exact_paths, models, ranks, design.design, design_path)
    checked = _checked_values(exact, resolved)
    if np.isnan(checked).all():
        return DecisionInputs(resolved, design, exact)
    _check_possible(exact, checked, ranks, models)
    if not allow_unlikely:
        _check_likely(exact, checked, ranks, models, design)
    return DecisionInputs(resolved, design, exact)


def _checked_values(exact: ExactRanks, resolved: ResolvedRanks) -> np.ndarray:
    """The exact ranks the checks read: a user ranked exactly within a framework's own
    top-k order among ties (a sidecar's ``framework_top_k``, RecBole's torch.topk) is
    left out, since the framework's full and sampled evaluations may order its ties
    apart. The users left out are chosen by their exact ranks alone, so the others'
    sampled ranks keep their law given their exact ranks and the checks stay valid."""
    metas = [read_rank_meta(path) for path in dict.fromkeys(exact.paths)]
    metas.append(resolved.reading.meta)
    top_k = max((meta.framework_top_k or 0 for meta in metas if meta is not None), default=0)
    values = exact.values.copy()
    if top_k:
        values[:, np.any(values <= top_k, axis=0)] = np.nan
    return values


def _exact_ranks(
    paths: list[str], models: list[str], ranks: RankFile, design: Design, design_path: str
) -> ExactRanks:
    """The exact ranks of the chosen users from the EXACT files: one file holds every
    model, or each file the models its sidecar names."""
    if len(paths) == 1:
        values, lines, word = _exact_file(Path(paths[0]), models, ranks, design, design_path)
        return ExactRanks(values, (str(paths[0]),) * len(models), lines, tuple(paths), word)
    values = np.full((len(models), design.n_users), np.nan)
    lines = np.full((len(models), design.n_users), -1, dtype=np.int64)
    found: dict[str, str] = {}
    word = "line"
    for path in map(Path, paths):
        meta = read_rank_meta(path)
        if meta is None:
            raise InputError(
                f"no sidecar ({path.name}.meta.json): with several --exact "
                "files, each names its models in its sidecar",
                path=path,
            )
        held = [model for model in models if model in meta.rank_columns.values()]
        for model in held:
            if model in found:
                raise InputError(
                    f"model {model} is in {found[model]} too",
                    path=path,
                    fix="give each model's exact ranks once",
                )
            found[model] = str(path)
        rows = [models.index(model) for model in held]
        values[rows], lines[rows], word = _exact_file(path, held, ranks, design, design_path)
    missing = [model for model in models if model not in found]
    if missing:
        raise InputError(f"no --exact file holds model {missing[0]}", fix="give its exact ranks")
    given = tuple(map(str, paths))
    return ExactRanks(values, tuple(found[model] for model in models), lines, given, word)


def _columns(meta_columns: dict, models: list[str]) -> list[str]:
    """A column per model: the one its sidecar gives the model (the one named after it,
    where several rank it: cornac's _pessimistic columns), else the model's name."""
    column_of: dict[str, str] = {}
    for column, model in meta_columns.items():
        if column == model or model not in column_of:
            column_of[model] = column
    return [column_of.get(model, model) for model in models]


def _exact_file(
    path: Path, models: list[str], ranks: RankFile, design: Design, design_path: str
) -> tuple[np.ndarray, np.ndarray, str]:
    """(models, U) exact ranks of the chosen users from one EXACT file (nan for the
    others) and their lines, checked: every chosen user once, no other, RANKS' n."""
    meta = read_rank_meta(path)
    if meta is not None and not meta.full:
        raise InputError(
            f"its sidecar says protocol {meta.protocol}: --exact needs a full "
            "ranking's exact ranks (protocol full)",
            path=path,
        )
    columns = _columns(meta.rank_columns if meta else {}, models)
    try:
        exact = read_rank_file(
            path,
            rank_columns=columns,
            n_column=meta.n_column if meta else None,
            full=True,
            meta=meta,
        )
    except MissingColumn as error:
        if error.name not in columns:
            raise
        model = models[columns.index(error.name)]
        raise InputError(
            f"no column {error.name!r} for model {model} (the file has: {', '.join(error.have)})",
            path=path,
            fix=f"give a second --exact file (one per model) or a column named {error.name}",
        ) from None
    if exact.users is None:
        raise InputError("no column 'user': the exact ranks must name their users", path=path)
    users = _users(ranks)
    row_of = {user: row for row, user in enumerate(users)}
    chosen = set(np.flatnonzero(design.chosen).tolist())
    values = np.full((len(models), design.n_users), np.nan)
    lines = np.full((len(models), design.n_users), -1, dtype=np.int64)
    n = ranks.first.n
    seen: set[int] = set()
    file_lines = np.asarray(exact.lines)  # read_rank_file gives every row's line
    for k, user in enumerate(exact.users):
        line = int(file_lines[k])
        row = row_of.get(user)
        if row is None or row not in chosen:
            raise InputError(
                f"user {user} was not chosen by the design {design_path}",
                path=path,
                line=line,
                row_word=exact.row_word,
            )
        if row in seen:
            raise InputError(
                f"user {user} is there twice", path=path, line=line, row_word=exact.row_word
            )
        seen.add(row)
        if exact.first.n[k] != n[row]:
            raise InputError(
                f"n = {exact.first.n[k]}, but {ranks.path} has n = {n[row]}",
                path=path,
                line=line,
                row_word=exact.row_word,
                user=user,
            )
        values[:, row] = [exact.evaluations[column].ranks[k] for column in columns]
        lines[:, row] = line
    missing = sorted(chosen - seen)
    if missing:
        raise InputError(
            f"no row for user {users[missing[0]]}, chosen by {design_path} "
            f"({len(missing)} chosen users missing)",
            path=path,
        )
    return values, lines, exact.row_word


def _users(ranks: RankFile) -> np.ndarray:
    """The rank file's users (a design names its users: read_design checked them)."""
    if ranks.users is None:
        raise InputError("no user column: the design names its users", path=ranks.path)
    return ranks.users


def _sampled(ranks: RankFile, models: list[str]) -> np.ndarray:
    return np.stack([ranks.evaluations[model].ranks for model in models])


def _check_possible(
    exact: ExactRanks, checked: np.ndarray, ranks: RankFile, models: list[str]
) -> None:
    """Every exact rank can have produced its sampled rank (the law's support)."""
    data = ranks.first
    found = first_impossible(checked, _sampled(ranks, models), data.m, data.n, data.law)
    if found is None:
        return
    u, k = found.index, found.model
    replacement = sampling_law(data.law).replacement
    rule = "with replacement" if replacement else "without replacement s <= r <= n - m + s - 1, so"
    allowed = f"{found.low}..{found.high}" if found.low <= found.high else "none"
    raise InputError(
        f"exact rank {found.exact} cannot have produced sampled rank {found.sampled} "
        f"({ranks.path}, m = {data.m[u]}, n = {data.n[u]}): {rule} the exact rank is in "
        f"{allowed}",
        path=exact.paths[k],
        line=int(exact.lines[k, u]),
        row_word=exact.row_word,
        user=_users(ranks)[u],
        model=models[k],
        fix=f"give model {models[k]}'s exact ranks of the users and items of RANKS (not "
        "another model's or checkpoint's, nor swapped columns)",
    )


def _check_likely(
    exact: ExactRanks,
    checked: np.ndarray,
    ranks: RankFile,
    models: list[str],
    design: DesignFile,
) -> None:
    """The sampled ranks are not far less likely under the exact ranks than they should
    be (a test of level 1e-6 per file, over the chosen users given their strata)."""
    data = ranks.first
    checks = likelihood_check(
        checked,
        _sampled(ranks, models),
        data.m,
        data.n,
        data.law,
        strata=design.design.stratum,
        edges=design.edges,
        cells=design.cells,
    )
    suspect = next((check for check in checks if check.suspect), None)
    if suspect is None:
        return
    k, u = suspect.model, suspect.rows[0]
    raise InputError(
        f"the exact ranks of model {models[k]} are far less likely than they should be: "
        f"{suspect.extreme} of {suspect.users} chosen users have P(sampled | exact) at most "
        f"{suspect.threshold:g}, expected {suspect.expected:.2g} (p = {suspect.p_value:.1g}); "
        f"the least likely: {exact.row_word} {exact.lines[k, u]}, user {_users(ranks)[u]}, "
        f"exact rank {int(exact.values[k, u])}, sampled rank {_sampled(ranks, models)[k, u]} "
        f"({ranks.path}); {LIKELY_CAUSES}",
        path=exact.paths[k],
        fix="check the files, or give --allow-unlikely to go on",
    )
