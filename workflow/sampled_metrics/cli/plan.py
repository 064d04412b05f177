"""``sampled-metrics plan RANKS --budget B --seed S --out chosen.csv``: the users to
rank exactly so that ``correct --exact --design`` can decide between the models.

Phase 2 of two-phase sampling (:func:`~sampled_metrics.estimation.decisions.draw_design`):
strata from every model's sampled rank, the budget allocated by Neyman's rule to the
strata where the metric is predicted to vary, users drawn without replacement in each;
each chosen user's inclusion probability is written with it (:mod:`.design_file`).
RANKS is read as ``correct`` reads it (its sidecar, or ``--protocol``, ``--m``, ``--n``,
``--law``).

``--sequential`` writes wave 1 of a sequential design, ``--continue CHOSEN --exact EXACT``
its next wave or the line that says none is due (:mod:`.sequential`).
"""

from __future__ import annotations

import argparse
import secrets
import shlex
from typing import Any

import numpy as np

from ..estimation.decisions import (
    DECISION_DEFAULTS,
    FAMILY_METHODS,
    SPENDING,
    UNITS,
    Design,
    draw_design,
)
from .arguments import PROG, metric, non_negative_int, share
from .decision_inputs import resolve_decision
from .design_file import DesignSettings, design_record, design_sidecar, write_design
from .errors import InputError
from .inputs import ResolvedRanks, resolve_ranks
from .outputs import check_outputs, rank_file_inputs
from .rank_file import repeated_user
from .reading import ReadOptions, add_reading_options
from .sequential import continue_design, first_design, sequential_record, sequential_text
from .text import table

__all__ = ["add_parser", "run"]


# The record's keys that are the settings of the draw (DesignSettings' fields).
SETTINGS = ("budget", "unit", "metric", "edges", "cells", "floor", "seed")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """The ``plan`` sub-command's parser."""
    parser = subparsers.add_parser(
        "plan",
        help="choose the users to rank exactly, so that correct --exact --design decides",
        description="From a file of sampled ranks, draw the users to rank exactly: strata "
        "from every model's sampled rank, the budget where the metric varies (Neyman's "
        "allocation), each chosen user's probability written with it. Rank those users "
        "exactly and give their ranks to correct --exact EXACT --design CHOSEN. See "
        "docs/deciding.md.",
    )
    parser.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="the file of sampled ranks (as for correct); several files of the same users "
        "(e.g. one per RecBole checkpoint) are read as one",
    )
    add_reading_options(parser)
    design = parser.add_argument_group("design")
    design.add_argument(
        "--budget",
        type=share,
        help="the share of the users to rank exactly, or of a full ranking's scored items "
        f"with --budget-unit items (default: {DECISION_DEFAULTS['budget']}); with "
        "--sequential the most the waves may rank (default: "
        f"{DECISION_DEFAULTS['sequential_budget']})",
    )
    design.add_argument(
        "--budget-unit",
        choices=UNITS,
        default=DECISION_DEFAULTS["unit"],
        help=f"default: {DECISION_DEFAULTS['unit']}",
    )
    design.add_argument(
        "--metric",
        type=metric,
        default=DECISION_DEFAULTS["metric"],
        help="the metric the design is tuned for (any can be estimated; default: "
        f"{DECISION_DEFAULTS['metric']})",
    )
    design.add_argument(
        "--seed",
        type=non_negative_int,
        help="seed of the draw, a non-negative integer (default: a fresh one, written down)",
    )
    sequential = parser.add_argument_group("sequential design (docs/deciding.md)")
    sequential.add_argument(
        "--sequential",
        action="store_true",
        help="write wave 1 of a sequential design: the users are ranked in waves and each "
        "pair is decided as soon as its interval allows (--budget: the most it may rank)",
    )
    sequential.add_argument(
        "--spending",
        choices=SPENDING,
        help="with --sequential: the error spending function; obrien-fleming keeps the last "
        "interval near a fixed design's, pocock stops far-apart pairs sooner, "
        "hwang-shih-decani lies in between (default: "
        f"{DECISION_DEFAULTS['spending']})",
    )
    sequential.add_argument(
        "--family",
        choices=FAMILY_METHODS,
        help="with --sequential and three models or more: holm passes a decided pair's "
        "error to the pairs left, which are then decided sooner (the verdicts wrong together "
        "at most at the error; the intervals not simultaneous); bonferroni keeps every pair "
        f"at its share (simultaneous intervals) (default: {DECISION_DEFAULTS['family']})",
    )
    sequential.add_argument(
        "--continue",
        dest="continue_from",
        metavar="CHOSEN",
        help="a sequential design so far: print each pair's interval and verdict and write "
        "the next wave to --out (nothing when every pair is decided or the budget spent); "
        "with --exact",
    )
    sequential.add_argument(
        "--exact",
        nargs="+",
        metavar="EXACT",
        help="with --continue: the exact ranks of every user chosen so far (as for correct)",
    )
    parser.add_argument("--out", required=True, metavar="CHOSEN", help="the design's csv file")
    parser.add_argument("--force", action="store_true", help="replace an existing CHOSEN")
    return parser


def _cost_share(design: Design, n: np.ndarray) -> tuple[float, float]:
    """The chosen users' scored items, and their expectation, as shares of every user's."""
    total = float(n.sum())
    return float(n[design.chosen].sum()) / total, float(np.sum(design.probability * n)) / total


def _bins(edges: tuple[int, ...]) -> list[str]:
    """The labels of the sampled-rank bins of ``cells="min"``: <= 1, 2, 3, 4-5, ..."""
    labels, low = [], 1
    for high in edges:
        labels.append(str(high) if high == low else f"{low}-{high}")
        low = high + 1
    return [*labels, f">= {low}"]


def _next_step(resolved: ResolvedRanks, options: ReadOptions, out: str, wave: int) -> str:
    """The command that uses the design, with the reading options given to plan: one
    EXACT per model file when the ranks came from several files (each model ranked
    exactly where it was evaluated); for wave ``wave`` of a sequential design (0: not
    one), ``plan --continue``."""
    files = shlex.join([*resolved.paths, *options.command_line()])
    if len(resolved.paths) == 1:
        exact = "EXACT"
    else:
        exact = " ".join(f"EXACT-{'-'.join(models)}" for models in resolved.models_of)
    if wave:
        return (
            f"next: rank every user of {out} exactly (EXACT: all waves so far), then {PROG} "
            f"plan {files} --continue {out} --exact {exact} --out NEXT.csv (docs/deciding.md)"
        )
    return (
        f"next: rank the chosen users exactly, then {PROG} correct {files} "
        f"--exact {exact} --design {out} (docs/deciding.md)"
    )


def _summary(
    resolved: ResolvedRanks,
    options: ReadOptions,
    design: Design,
    settings: DesignSettings,
    out: str,
    wave: int = 0,
) -> str:
    chosen, expected = _cost_share(design, resolved.ranks.first.n)
    lines = [
        f"{out}: {design.n_chosen} of {design.n_users} users chosen "
        f"({100 * design.n_chosen / design.n_users:.1f}%), seed {settings.seed}; ranking them "
        f"exactly scores {100 * chosen:.1f}% of the items a full ranking of every user scores "
        f"(expected {100 * expected:.1f}%); the design's record: {design_sidecar(out).name}",
    ]
    lines += [design.note] if design.note else []
    lines += [f"wave {wave} of a sequential design (docs/deciding.md)"] if wave else []
    sizes, counts = design.stratum_sizes, design.stratum_chosen
    labels = _bins(settings.edges)
    rows = [
        [str(h), labels[h], str(sizes[h]), str(counts[h]), f"{counts[h] / sizes[h]:.3f}"]
        for h in np.flatnonzero(sizes)
    ]
    header = ["stratum", "best sampled rank", "users", "chosen", "probability"]
    lines += ["", table(header, rows, {2, 3, 4}), "", _next_step(resolved, options, out, wave)]
    return "\n".join(lines)


def _users(resolved: ResolvedRanks) -> np.ndarray:
    """The rank files' users: a design names the users it chooses, each once."""
    ranks = resolved.ranks
    if resolved.reading.full:
        raise InputError(
            "a full ranking's ranks are exact: there is nothing to plan", path=ranks.path
        )
    if ranks.users is None:
        raise InputError("no user column: the design names the users it chooses", path=ranks.path)
    twice = repeated_user(ranks.users)
    if twice is not None:
        raise InputError("several rows: plan needs one per user", path=ranks.path, user=twice)
    return ranks.users


def _check_modes(args: argparse.Namespace) -> None:
    """--continue takes its settings from the design; --exact goes with --continue."""
    if args.exact is not None and args.continue_from is None:
        raise InputError("--exact goes with --continue: the exact ranks of the waves so far",
                         option="--exact")  # fmt: skip
    if args.continue_from is None:
        for name, value in (("--spending", args.spending), ("--family", args.family)):
            if value is not None and not args.sequential:
                raise InputError(f"{name} goes with --sequential", option=name)
        if args.sequential and args.budget_unit != "users":
            raise InputError("--sequential takes its budget in users (--budget-unit users)",
                             option="--budget-unit")  # fmt: skip
        return
    if args.exact is None:
        raise InputError("--continue needs --exact: the exact ranks of the users chosen so far",
                         option="--continue")  # fmt: skip
    given = [name for name, value in (("--sequential", args.sequential),
             ("--budget", args.budget), ("--seed", args.seed), ("--spending", args.spending),
             ("--family", args.family))
             if value]  # fmt: skip
    if given:
        raise InputError(f"{given[0]} does not go with --continue: the design's record "
                         "holds its settings", option=given[0])  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Read RANKS as ``correct`` does, draw the design, write it, print a summary."""
    _check_modes(args)
    outputs = [args.out, design_sidecar(args.out)]
    inputs = rank_file_inputs(args.files)
    if args.continue_from is not None:
        inputs[args.continue_from] = f"the design {args.continue_from}"
        inputs[str(design_sidecar(args.continue_from))] = f"the sidecar of {args.continue_from}"
        inputs.update({path: f"the exact ranks {path}" for path in args.exact})
    check_outputs("--out", outputs, inputs, force=args.force)
    options = ReadOptions.from_args(args)
    resolved = resolve_ranks(args.files, options)
    users = _users(resolved)
    if args.continue_from is not None:
        return _continue(args, resolved, options, users)
    default = DECISION_DEFAULTS["sequential_budget" if args.sequential else "budget"]
    settings = DesignSettings(
        budget=default if args.budget is None else args.budget,
        unit=args.budget_unit,
        metric=args.metric,
        edges=DECISION_DEFAULTS["edges"],
        cells=DECISION_DEFAULTS["cells"],
        floor=DECISION_DEFAULTS["floor"],
        seed=secrets.randbits(32) if args.seed is None else args.seed,
    )
    if args.sequential:
        waves, totals = first_design(resolved, settings)
        design = waves.design(1)
        sequential = sequential_record(
            waves,
            users,
            totals,
            DECISION_DEFAULTS["confidence"],
            args.spending or DECISION_DEFAULTS["spending"],
            args.family or DECISION_DEFAULTS["family"],
        )
        record = design_record(design, users, resolved.ranks, resolved.paths, settings,
                               sequential)  # fmt: skip
        write_design(args.out, design, users, record, waves.wave)
        print(_summary(resolved, options, design, settings, args.out, waves.count))
        return 0
    design = _draw(resolved, settings)
    record = design_record(design, users, resolved.ranks, resolved.paths, settings)
    write_design(args.out, design, users, record)
    print(_summary(resolved, options, design, settings, args.out))
    return 0


def _continue(args: argparse.Namespace, resolved: ResolvedRanks, options: ReadOptions,
              users: np.ndarray) -> int:  # fmt: skip
    """Print where every pair stands and write the next wave, or say why none is due."""
    inputs = resolve_decision(resolved, args.exact, args.continue_from, allow_unlikely=False)
    results, grown, why = continue_design(inputs)
    print(sequential_text(inputs, results))
    if grown is None:
        print("", why, sep="\n")
        return 0
    record = inputs.design.record or {}
    settings = DesignSettings(**{key: record[key] for key in SETTINGS if key != "edges"},
                              edges=tuple(record["edges"]))  # fmt: skip
    sequential = record["sequential"]
    design = grown.design(grown.count)
    totals = tuple(sequential["totals"])
    next_record = design_record(design, users, resolved.ranks, resolved.paths, settings,
                                sequential_record(grown, users, totals,
                                                  sequential["confidence"],
                                                  sequential["spending"],
                                                  sequential["family"]))  # fmt: skip
    write_design(args.out, design, users, next_record, grown.wave)
    print("", _summary(resolved, options, design, settings, args.out, grown.count), sep="\n")
    return 0


def _draw(resolved: ResolvedRanks, settings: DesignSettings) -> Design:
    data = resolved.ranks.first
    sampled = np.stack([e.ranks for e in resolved.ranks.evaluations.values()])
    return draw_design(
        sampled,
        data.m,
        data.n,
        law=data.law,
        seed=settings.seed,
        budget=settings.budget,
        unit=settings.unit,
        metric=settings.metric,
        edges=settings.edges,
        cells=settings.cells,
        floor=settings.floor,
    )
