"""``sampled-metrics correct RANKS --exact EXACT --design chosen.csv``: every model's
metric and every pair's difference estimated from all users' sampled ranks and the
exact ranks of the users a design chose (``sampled-metrics plan``), with an interval
and a verdict that hold (:mod:`sampled_metrics.estimation.decisions`; docs/deciding.md).

EXACT is a full ranking's file of the chosen users: ``user``, one exact-rank column per
model named as in RANKS (or the column its sidecar, protocol ``full``, gives the model),
``n`` (or the sidecar's ``n_column``). Every
chosen user must be in it, and no other; its n must be RANKS'.
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np

from ..estimation.decisions import (
    DECISION_DEFAULTS,
    POPULATIONS,
    Design,
    estimate_difference,
    estimate_metric,
    metric_proxy,
)
from ..frameworks.rank_meta import read_rank_meta
from .arguments import DEFAULT_METRICS
from .design_file import read_design
from .rank_file import InputError, RankFile, read_rank_file
from .report import _fmt, _heading, _table, _verdict

__all__ = ["ESTIMATOR", "add_decision_options", "decision_records", "run_decision", "uses_design"]

# The records' estimator: the difference estimator of the two-phase design.
ESTIMATOR = "design"
ABOUT = {"finite": "these users", "superpopulation": "users like them"}


def add_decision_options(parser) -> None:
    """``correct``'s options of a two-phase design (docs/deciding.md)."""
    group = parser.add_argument_group("deciding with a few users ranked exactly (docs/deciding.md)")
    group.add_argument(
        "--exact",
        nargs="+",
        metavar="EXACT",
        help="the exact ranks of the users the design chose: user, a column per model "
        "named as in FILE, n (a full ranking's file), or one file per model (each named "
        "by its sidecar); with --design",
    )
    group.add_argument(
        "--design", metavar="CHOSEN", help="the design sampled-metrics plan wrote (chosen.csv)"
    )
    group.add_argument(
        "--population",
        choices=POPULATIONS,
        help="finite: the intervals are about the file's users (the default); "
        "superpopulation: about users like them",
    )


def uses_design(args) -> bool:
    """Whether ``correct`` estimates from a design (``--exact``, ``--design``); an
    InputError for ``--population`` without them."""
    if args.exact is None and args.design is None:
        if args.population is not None:
            raise InputError("--population applies to --exact and --design")
        return False
    return True


def _exact_ranks(paths, models: list, ranks: RankFile, design: Design, design_path) -> np.ndarray:
    """(models, U) exact ranks of the chosen users from the EXACT files (nan for the
    others): one file holds every model, or each file the models its sidecar names."""
    if len(paths) == 1:
        return _exact_file(Path(paths[0]), models, ranks, design, design_path)
    values = np.full((len(models), design.n_users), np.nan)
    found = {}
    for path in map(Path, paths):
        meta = read_rank_meta(path)
        if meta is None:
            raise InputError(f"{path}: no sidecar ({path.name}.meta.json): with several "
                             "--exact files, each names its models in its sidecar")  # fmt: skip
        held = [model for model in models if model in meta.rank_columns.values()]
        for model in held:
            if model in found:
                raise InputError(f"{path}: model {model} is in {found[model]} too")
            found[model] = path
        rows = [models.index(model) for model in held]
        values[rows] = _exact_file(path, held, ranks, design, design_path)
    missing = [model for model in models if model not in found]
    if missing:
        raise InputError(f"no --exact file holds model {missing[0]}: give its exact ranks")
    return values


def _exact_file(path, models: list, ranks: RankFile, design: Design, design_path) -> np.ndarray:
    """(models, U) exact ranks of the chosen users from one EXACT file (nan for the
    others), checked: every chosen user once, no other, RANKS' n."""
    meta = read_rank_meta(path)
    if meta is not None and not meta.full:
        raise InputError(
            f"{path}: its sidecar says protocol {meta.protocol}: --exact needs a full "
            "ranking's exact ranks (protocol full)"
        )
    # a column per model: the one its sidecar gives the model (the one named after it,
    # where several rank it: cornac's _pessimistic columns), else the model's name
    column_of = {}
    for column, model in (meta.rank_columns if meta else {}).items():
        if column == model or model not in column_of:
            column_of[model] = column
    columns = [column_of.get(model, model) for model in models]
    exact = read_rank_file(
        path, rank_columns=columns, n_column=meta.n_column if meta else None, full=True, meta=meta
    )
    if exact.users is None:
        raise InputError(f"{path}: no column 'user': the exact ranks must name their users")
    row_of = {user: row for row, user in enumerate(ranks.users)}
    chosen = set(np.flatnonzero(design.chosen).tolist())
    values = np.full((len(models), design.n_users), np.nan)
    n = ranks.first.n
    seen = set()
    for k, user in enumerate(exact.users):
        row = row_of.get(user)
        if row is None or row not in chosen:
            raise InputError(f"{path}: user {user} was not chosen by the design {design_path}")
        if row in seen:
            raise InputError(f"{path}: user {user} is there twice")
        seen.add(row)
        if exact.first.n[k] != n[row]:
            raise InputError(
                f"{path}: user {user}: n = {exact.first.n[k]}, but {ranks.path} has n = {n[row]}"
            )
        values[:, row] = [exact.evaluations[column].ranks[k] for column in columns]
    missing = sorted(chosen - seen)
    if missing:
        raise InputError(
            f"{path}: no row for user {ranks.users[missing[0]]}, chosen by {design_path} "
            f"({len(missing)} chosen users missing)"
        )
    return values


def decision_records(
    ranks: RankFile, design: Design, exact: np.ndarray, metrics, options: dict
) -> list[dict]:
    """Every model's estimate and every pair's difference with interval and verdict:
    ``correct``'s ``estimate`` and ``comparison`` records, ``low``, ``high``,
    ``verdict`` filled (estimator ``design``)."""
    models = list(ranks.evaluations)
    data = ranks.first
    law = data.law
    records, differences = [], []
    for metric in metrics:
        proxy = {
            model: metric_proxy(ranks.evaluations[model].ranks, data.m, data.n, metric, law=law)
            for model in models
        }
        for k, model in enumerate(models):
            e = estimate_metric(design, exact[k], ranks.evaluations[model].ranks, data.m,
                                data.n, metric, law=law, proxy=proxy[model], **options)  # fmt: skip
            records.append(
                {"kind": "estimate", "model": model, "metric": metric, "estimator": ESTIMATOR,
                 "estimate": e.value, "low": e.low, "high": e.high,
                 "standard_error": e.standard_error, "population": options["population"]}
            )  # fmt: skip
        for (i, first), (j, second) in combinations(enumerate(models), 2):
            sampled = [ranks.evaluations[first].ranks, ranks.evaluations[second].ranks]
            pair = [proxy[first], proxy[second]]
            e = estimate_difference(design, exact[[i, j]], sampled, data.m, data.n, metric,
                                    law=law, proxy=pair, **options)  # fmt: skip
            differences.append(
                {"kind": "comparison", "first": first, "second": second, "metric": metric,
                 "estimator": ESTIMATOR, "difference": e.value, "low": e.low, "high": e.high,
                 "standard_error": e.standard_error, "population": options["population"],
                 "verdict": _verdict(first, second, e.low, e.high)}
            )  # fmt: skip
    # the order of correct's tables: by model (pair), then metric
    records.sort(key=lambda r: models.index(r["model"]))
    differences.sort(key=lambda r: (models.index(r["first"]), models.index(r["second"])))
    return records + differences


def _text(how, ranks: RankFile, design: Design, args, records) -> str:
    level = f"{100 * args.confidence:g}%"
    about = ABOUT[records[0]["population"]]
    lines = [
        _heading(how, ranks),
        f"design {args.design}: {design.n_chosen} of {design.n_users} users ranked exactly "
        f"({', '.join(args.exact)}), {int(np.count_nonzero(design.stratum_sizes))} strata",
        "",
        f"estimates from every user's sampled rank and the chosen users' exact ranks "
        f"({level} intervals about {about}; docs/deciding.md):",
        "",
    ]
    rows = [[r["model"], r["metric"], _fmt(r["estimate"]), _fmt(r["low"]), _fmt(r["high"])]
            for r in records if r["kind"] == "estimate"]  # fmt: skip
    lines.append(_table(["model", "metric", "estimate", "low", "high"], rows, {2, 3, 4}))
    pairs = [r for r in records if r["kind"] == "comparison"]
    if pairs:
        wrong = f"{100 - 100 * args.confidence:.3g}%"
        lines += [
            "",
            f"paired differences (first - second, {level}, about {about}) and the verdict "
            f"each supports (wrong with probability at most {wrong}):",
            "",
        ]
        rows = [[r["first"], r["second"], r["metric"], _fmt(r["difference"]), _fmt(r["low"]),
                 _fmt(r["high"]), r["verdict"]] for r in pairs]  # fmt: skip
        header = ["first", "second", "metric", "difference", "low", "high", "verdict"]
        lines.append(_table(header, rows, {3, 4, 5}))
    return "\n".join(lines)


def run_decision(args, how, ranks: RankFile) -> int:
    """``correct`` with ``--exact`` and ``--design``: read both, print the records."""
    if args.exact is None or args.design is None:
        given, needed = ("--exact", "--design") if args.design is None else ("--design", "--exact")
        raise InputError(f"{given} needs {needed}: the exact ranks and the design that chose them")
    if how.full:
        raise InputError(f"{ranks.path}: --exact and --design read a file of sampled ranks")
    if args.estimators is not None or args.no_range:
        raise InputError("--exact and --design print the design's estimates: leave out "
                         "--estimators and --no-range")  # fmt: skip
    design = read_design(args.design, ranks)
    exact = _exact_ranks(args.exact, list(ranks.evaluations), ranks, design, args.design)
    population = args.population or DECISION_DEFAULTS["population"]
    options = {"confidence": args.confidence, "population": population}
    metrics = args.metrics or list(DEFAULT_METRICS)
    records = decision_records(ranks, design, exact, metrics, options)
    print(json.dumps(records, indent=1) if args.json else _text(how, ranks, design, args, records))
    return 0
