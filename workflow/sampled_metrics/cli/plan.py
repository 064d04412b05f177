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

import numpy as np

from ..estimation.decisions import DECISION_DEFAULTS, UNITS, draw_design
from .arguments import PROG, metric
from .correct import add_reading_options, read_files
from .design_file import design_sidecar, write_design
from .outputs import check_outputs, rank_file_inputs
from .rank_file import InputError
from .report import _table

__all__ = ["add_parser", "run"]


def _budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{value} is not in (0, 1]")
    return value


def add_parser(subparsers) -> argparse.ArgumentParser:
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
        "--seed", type=int, help="seed of the draw (default: a fresh one, written down)"
    )
    parser.add_argument("--out", required=True, metavar="CHOSEN", help="the design's csv file")
    parser.add_argument("--force", action="store_true", help="replace an existing CHOSEN")
    return parser


def _cost_share(design, n: np.ndarray) -> tuple[float, float]:
    """The chosen users' scored items, and their expectation, as shares of every user's."""
    total = float(n.sum())
    return float(n[design.chosen].sum()) / total, float(np.sum(design.probability * n)) / total


def _bins(edges) -> list:
    """The labels of the sampled-rank bins of ``cells="min"``: <= 1, 2, 3, 4-5, ..."""
    labels, low = [], 1
    for high in edges:
        labels.append(str(high) if high == low else f"{low}-{high}")
        low = high + 1
    return [*labels, f">= {low}"]


def _summary(args, ranks, design, seed: int, rows) -> str:
    chosen, expected = _cost_share(design, ranks.first.n)
    lines = [
        f"{args.out}: {design.n_chosen} of {design.n_users} users chosen "
        f"({100 * design.n_chosen / design.n_users:.1f}%), seed {seed}; ranking them exactly "
        f"scores {100 * chosen:.1f}% of the items a full ranking of every user scores "
        f"(expected {100 * expected:.1f}%); the design's record: {design_sidecar(args.out).name}",
        "",
    ]
    header = ["stratum", "best sampled rank", "users", "chosen", "probability"]
    lines.append(_table(header, rows, {2, 3, 4}))
    files = " ".join(args.files)
    lines += ["", f"next: rank the chosen users exactly, then {PROG} correct {files} "
              f"--exact EXACT --design {args.out} (docs/deciding.md)"]  # fmt: skip
    return "\n".join(lines)


def run(args) -> int:
    """Read RANKS as ``correct`` does, draw the design, write it, print a summary."""
    outputs = [args.out, design_sidecar(args.out)]
    check_outputs("--out", outputs, rank_file_inputs(args.files), force=args.force)
    how, ranks = read_files(args)
    if how.full:
        raise InputError(
            f"{ranks.path}: a full ranking's ranks are exact: there is nothing to plan"
        )
    if ranks.users is None:
        raise InputError(f"{ranks.path}: no user column: the design names the users it chooses")
    if len(set(ranks.users)) != len(ranks.users):
        seen = set()
        twice = next(u for u in ranks.users if u in seen or seen.add(u))
        raise InputError(f"{ranks.path}: user {twice} has several rows: plan needs one per user")
    seed = secrets.randbits(32) if args.seed is None else args.seed
    data = ranks.first
    sampled = np.stack([e.ranks for e in ranks.evaluations.values()])
    settings = {
        "budget": args.budget,
        "unit": args.budget_unit,
        "metric": args.metric,
        "edges": DECISION_DEFAULTS["edges"],
        "cells": DECISION_DEFAULTS["cells"],
        "floor": DECISION_DEFAULTS["floor"],
    }
    design = draw_design(sampled, data.m, data.n, law=data.law, seed=seed, **settings)
    record = {"rank_files": [str(f) for f in args.files], "rank_columns": list(ranks.evaluations),
              "law": data.law, **settings, "seed": seed}  # fmt: skip
    record["edges"] = list(settings["edges"])
    write_design(args.out, design, ranks.users, record)
    sizes, counts = design.stratum_sizes, design.stratum_chosen
    labels = _bins(settings["edges"])
    rows = [[str(h), labels[h], str(sizes[h]), str(counts[h]), f"{counts[h] / sizes[h]:.3f}"]
            for h in np.flatnonzero(sizes)]  # fmt: skip
    print(_summary(args, ranks, design, seed, rows))
    return 0
