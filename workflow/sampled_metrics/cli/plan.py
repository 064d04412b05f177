"""``sampled-metrics plan RANKS --budget B --seed S --out chosen.csv``: the users to
rank exactly so that ``correct --exact --design`` can decide between the models.

Phase 2 of two-phase sampling (:func:`~sampled_metrics.estimation.decisions.draw_design`):
strata from every model's sampled rank, the budget allocated by Neyman's rule to the
strata where the metric is predicted to vary, users drawn without replacement in each;
each chosen user's inclusion probability is written with it (:mod:`.design_file`).
RANKS is read as ``correct`` reads it (its sidecar, or ``--protocol``, ``--m``, ``--n``,
``--law``).
"""

from __future__ import annotations

import argparse
import secrets
import shlex
from typing import Any

import numpy as np

from ..estimation.decisions import DECISION_DEFAULTS, UNITS, Design, draw_design
from .arguments import PROG, metric, non_negative_int
from .design_file import DesignSettings, design_record, design_sidecar, write_design
from .errors import InputError
from .inputs import ResolvedRanks, resolve_ranks
from .outputs import check_outputs, rank_file_inputs
from .rank_file import repeated_user
from .reading import ReadOptions, add_reading_options
from .text import table

__all__ = ["add_parser", "run"]


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{value} is not in (0, 1]")
    return value


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
        type=_budget,
        default=DECISION_DEFAULTS["budget"],
        help="the share of the users to rank exactly, or of a full ranking's scored items "
        f"with --budget-unit items (default: {DECISION_DEFAULTS['budget']})",
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


def _next_step(resolved: ResolvedRanks, options: ReadOptions, out: str) -> str:
    """The command that uses the design, with the reading options given to plan: one
    EXACT per model file when the ranks came from several files (each model ranked
    exactly where it was evaluated)."""
    files = shlex.join([*resolved.paths, *options.command_line()])
    if len(resolved.paths) == 1:
        exact = "EXACT"
    else:
        exact = " ".join(f"EXACT-{'-'.join(models)}" for models in resolved.models_of)
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
) -> str:
    chosen, expected = _cost_share(design, resolved.ranks.first.n)
    lines = [
        f"{out}: {design.n_chosen} of {design.n_users} users chosen "
        f"({100 * design.n_chosen / design.n_users:.1f}%), seed {settings.seed}; ranking them "
        f"exactly scores {100 * chosen:.1f}% of the items a full ranking of every user scores "
        f"(expected {100 * expected:.1f}%); the design's record: {design_sidecar(out).name}",
    ]
    lines += [design.note] if design.note else []
    sizes, counts = design.stratum_sizes, design.stratum_chosen
    labels = _bins(settings.edges)
    rows = [
        [str(h), labels[h], str(sizes[h]), str(counts[h]), f"{counts[h] / sizes[h]:.3f}"]
        for h in np.flatnonzero(sizes)
    ]
    header = ["stratum", "best sampled rank", "users", "chosen", "probability"]
    lines += ["", table(header, rows, {2, 3, 4}), "", _next_step(resolved, options, out)]
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


def run(args: argparse.Namespace) -> int:
    """Read RANKS as ``correct`` does, draw the design, write it, print a summary."""
    outputs = [args.out, design_sidecar(args.out)]
    check_outputs("--out", outputs, rank_file_inputs(args.files), force=args.force)
    options = ReadOptions.from_args(args)
    resolved = resolve_ranks(args.files, options)
    users = _users(resolved)
    settings = DesignSettings(
        budget=args.budget,
        unit=args.budget_unit,
        metric=args.metric,
        edges=DECISION_DEFAULTS["edges"],
        cells=DECISION_DEFAULTS["cells"],
        floor=DECISION_DEFAULTS["floor"],
        seed=secrets.randbits(32) if args.seed is None else args.seed,
    )
    design = _draw(resolved, settings)
    record = design_record(design, users, resolved.ranks, resolved.paths, settings)
    write_design(args.out, design, users, record)
    print(_summary(resolved, options, design, settings, args.out))
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
