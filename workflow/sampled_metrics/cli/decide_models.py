"""``--decide``: from checkpoints or models to a verdict in one command
(``sampled-metrics recbole A.pth B.pth --decide``, ``sampled-metrics cornac DATA --model A
--model B --decide``; docs/deciding.md, "One command from models to a verdict").

The framework's command loads every model once and gives its sampled evaluation and a
function that ranks some users exactly; the loop is
:func:`~sampled_metrics.frameworks.decide.decide_ranks`'s. Here: the options
(:func:`add_decide_options`, :func:`check_decide`), the report (each pair's estimate,
repeated confidence interval and verdict as ``correct --design`` prints them, and the
cost: users ranked exactly, share of a full ranking's scored items, wall time beside an
estimate of ranking everyone; ``--json`` the same as records) and, with ``--out``, the
files of the file loop (every model's sampled and exact rank files and the design), so
that ``sampled-metrics correct`` re-checks the verdict (:func:`write_decision`).
"""

from __future__ import annotations

import argparse
import json
import shlex
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..estimation.decisions import DECISION_DEFAULTS, FAMILY_METHODS, SPENDING, Waves
from ..frameworks.decide import Decision
from ..frameworks.rank_meta import check_overwrite, write_rank_file
from ..frameworks.registry import FULL
from .arguments import PROG, metric, non_negative_int, share
from .design_file import DesignSettings, design_record, design_sidecar, write_design
from .inputs import resolve_ranks
from .outputs import check_outputs
from .reading import ReadOptions
from .results import DecisionCost, Result, records
from .sequential import pair_results, sequential_record, wave_cost, waves_text

__all__ = [
    "DESIGN_FILE",
    "add_decide_options",
    "check_decide",
    "check_files",
    "decide_settings",
    "decision_report",
    "planned_files",
    "write_decision",
]

# The design file's name in --out.
DESIGN_FILE = "design.csv"
# The options that go with --decide, and their argparse destinations.
DECIDE_OPTIONS = {"--budget": "budget", "--family": "family", "--spending": "spending",
                  "--confidence": "confidence", "--metric": "metric",
                  "--json": "json"}  # fmt: skip


def add_decide_options(parser: argparse.ArgumentParser, *, seed: bool) -> None:
    """``--decide`` and the sequential design's options (``seed``: ``--seed`` too)."""
    group = parser.add_argument_group("deciding between the models (docs/deciding.md)")
    if seed:
        group.add_argument(
            "--seed",
            type=non_negative_int,
            help="with --decide: the seed of the waves' draws (default: a fresh one, printed)",
        )
    group.add_argument(
        "--decide",
        action="store_true",
        help="decide between the models (two or more): the sampled evaluation "
        "of every model on the same sampled items, then a sequential design's "
        "waves ranked exactly until every pair is decided or the budget spent",
    )
    group.add_argument(
        "--budget",
        type=share,
        help="the most of the users the waves may rank (default: "
        f"{DECISION_DEFAULTS['sequential_budget']})",
    )
    group.add_argument(
        "--family",
        choices=FAMILY_METHODS,
        help=f"how the pairs share the error (default: {DECISION_DEFAULTS['family']})",
    )
    group.add_argument(
        "--spending",
        choices=SPENDING,
        help=f"the error spending function (default: {DECISION_DEFAULTS['spending']})",
    )
    group.add_argument(
        "--confidence",
        type=share,
        help=f"the family's confidence (default: {DECISION_DEFAULTS['confidence']})",
    )
    group.add_argument(
        "--metric",
        type=metric,
        help=f"the metric decided on (default: {DECISION_DEFAULTS['metric']})",
    )
    group.add_argument("--json", action="store_true", help="the report as JSON records")


def check_decide(args: argparse.Namespace, models: int, what: str) -> None:
    """The decide options go with ``--decide``; ``--decide`` with two ``what`` or more."""
    if not args.decide:
        given = next((o for o, d in DECIDE_OPTIONS.items() if getattr(args, d)), None)
        if given is not None:
            raise ValueError(f"{given} goes with --decide")
        return
    if models < 2:
        raise ValueError(f"--decide compares two {what} or more: give another")
    if args.confidence is not None and args.confidence >= 1:
        raise ValueError(f"--confidence {args.confidence} is not below 1")


def decide_settings(args: argparse.Namespace, seed: int) -> dict:
    """:func:`~sampled_metrics.frameworks.decide.decide_ranks`' settings from the options."""
    given = {"budget": args.budget, "metric": args.metric, "confidence": args.confidence,
             "spending": args.spending, "family": args.family}  # fmt: skip
    defaults = {**DECISION_DEFAULTS, "budget": DECISION_DEFAULTS["sequential_budget"]}
    return {key: defaults[key] if value is None else value
            for key, value in given.items()} | {"seed": seed}  # fmt: skip


def _results(decision: Decision, load_seconds: float) -> list[Result]:
    run, settings = decision.run, decision.settings
    results = pair_results(list(decision.models), {settings["metric"]: run.looks},
                           settings["confidence"], settings["family"])  # fmt: skip
    results.append(wave_cost(run.waves, decision.sampled["n"].to_numpy(),
                             settings["budget"], run.state))  # fmt: skip
    seconds = decision.seconds
    total = load_seconds + seconds["sampled"] + seconds["exact"]
    ranked = decision.users_ranked
    results.append(DecisionCost(ranked, ranked / len(decision.sampled), decision.share_of_items,
                                load_seconds, seconds["sampled"], seconds["exact"], total,
                                decision.full_ranking_seconds))  # fmt: skip
    return results


def decision_report(decision: Decision, label: str, load_seconds: float, as_json: bool) -> str:
    """The pairs and the cost, in words or (``as_json``) as JSON records."""
    results = _results(decision, load_seconds)
    if as_json:
        return json.dumps(records(results), indent=1)
    cost = next(r for r in results if isinstance(r, DecisionCost))
    users = len(decision.sampled)
    lines = [
        waves_text(label, users, results),
        "",
        f"cost: {cost.users} users ranked exactly by each model ({100 * cost.share_of_users:.1f}% "
        f"of the users, {100 * cost.share_of_items:.1f}% of a full ranking's scored items); "
        f"wall time {cost.total_seconds:.1f} s: loading {cost.load_seconds:.1f} s, sampled "
        f"evaluation {cost.sampled_seconds:.1f} s, exact waves {cost.exact_seconds:.1f} s",
        f"ranking all {users} users exactly by every model: about "
        f"{cost.full_ranking_estimate:.1f} s beside the loads (an estimate: a line through "
        "the waves' times, a set-up per pass plus a time per user)",
    ]
    return "\n".join(lines)


def planned_files(out: Path, names: tuple[str, ...], protocol: str) -> tuple[list[Path], ...]:
    """The files ``--out`` gets: every model's sampled rank file, its exact rank file,
    and the design with its sidecar."""
    sampled = [out / f"{name}-{protocol}.csv" for name in names]
    exact = [out / f"{name}-{FULL}.csv" for name in names]
    return sampled, exact, [out / DESIGN_FILE, design_sidecar(out / DESIGN_FILE)]


def check_files(out: Path, names: tuple[str, ...], protocol: str,
                meta: Callable[[str, str, dict | None], dict], force: bool) -> None:  # fmt: skip
    """Stop before any work when ``--out`` holds files of other ranks (without --force)."""
    sampled, exact, design = planned_files(out, names, protocol)
    for name, path in zip(names, sampled):
        check_overwrite(path, meta(protocol, name, None), force=force)
    subset = {"file": DESIGN_FILE, "count": -1}  # some users: never another run's
    for name, path in zip(names, exact):
        check_overwrite(path, meta(FULL, name, subset), force=force)
    check_outputs("--out", design, {}, force=force)


def write_decision(decision: Decision, out: Path, protocol: str,
                   meta: Callable[[str, str, dict | None], dict], force: bool) -> str:  # fmt: skip
    """Write the file loop's files for ``decision`` (:func:`planned_files`; ``meta``
    gives a rank file's sidecar: protocol, model, users) and return the command that
    re-checks the verdict."""
    sampled, exact, (design_path, _) = planned_files(out, decision.models, protocol)
    for name, path in zip(decision.models, sampled):
        write_rank_file(decision.sampled[["user", name, "m", "n"]], path,
                        meta(protocol, name, None), force=force)  # fmt: skip
    subset = {"file": DESIGN_FILE, "count": len(decision.exact)}
    for name, path in zip(decision.models, exact):
        write_rank_file(decision.exact[["user", name, "n"]], path, meta(FULL, name, subset),
                        force=force)  # fmt: skip
    resolved = resolve_ranks([str(path) for path in sampled], ReadOptions())
    users = np.asarray(resolved.ranks.users)
    position = {user: row for row, user in enumerate(decision.sampled["user"].astype(str))}
    order = np.array([position[str(user)] for user in users])
    run, settings = decision.run, decision.settings
    waves = Waves(run.waves.stratum[order], run.waves.sizes, run.waves.wave[order])
    design = waves.design(waves.count)
    chosen = DesignSettings(budget=settings["budget"], unit="users", metric=settings["metric"],
                            edges=DECISION_DEFAULTS["edges"], cells=DECISION_DEFAULTS["cells"],
                            floor=DECISION_DEFAULTS["floor"], seed=settings["seed"])  # fmt: skip
    sequential = sequential_record(waves, users, run.totals, settings["confidence"],
                                   settings["spending"], settings["family"])  # fmt: skip
    record = design_record(design, users, resolved.ranks, resolved.paths, chosen, sequential)
    write_design(str(design_path), design, users, record, waves.wave)
    words = [PROG, "correct", *map(str, sampled), "--exact", *map(str, exact), "--design",
             str(design_path), "--metrics", settings["metric"]]  # fmt: skip
    return f"re-check: {shlex.join(words)}"
