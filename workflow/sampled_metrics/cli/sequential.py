"""The file-based loop of a sequential design (docs/deciding.md):

* ``plan RANKS --sequential --budget B --seed S --out chosen1.csv`` writes wave 1
  (:func:`first_design`);
* ``plan RANKS --continue chosenK.csv --exact EXACT --out chosenK+1.csv`` prints every
  pair's estimate, repeated confidence interval and verdict, and writes the next wave
  (a design holding every wave so far) or says in one line that every pair is decided or
  the budget spent, writing nothing (:func:`continue_design`);
* ``correct RANKS --exact EXACT --design chosenK.csv`` prints the same for the waves so
  far (:func:`sequential_results`, :func:`sequential_text`).

The looks are recomputed from the waves and the exact ranks at every command
(:func:`~sampled_metrics.estimation.decisions.family_looks`): nothing but the design file
carries them from one command to the next.
"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np

from ..estimation.decisions import (
    DECISION_DEFAULTS,
    FAMILY_METHODS,
    SPENDING,
    Look,
    Waves,
    design_looks,
    design_strata,
    loop_state,
    next_wave,
    plan_first_wave,
)
from .decision_inputs import DecisionInputs
from .design_file import DesignSettings, waves_digest
from .errors import InputError
from .inputs import ResolvedRanks
from .results import Result, SequentialDifference, WaveCost
from .text import number, table

__all__ = [
    "continue_design",
    "first_design",
    "pair_results",
    "sequential_record",
    "sequential_results",
    "sequential_text",
    "wave_cost",
    "waves_text",
]


def _sampled(resolved: ResolvedRanks) -> np.ndarray:
    return np.stack([e.ranks for e in resolved.ranks.evaluations.values()])


def first_design(
    resolved: ResolvedRanks, settings: DesignSettings
) -> tuple[Waves, tuple[int, ...]]:
    """Wave 1 of a sequential design of ``settings`` and the users planned by each look."""
    data = resolved.ranks.first
    return plan_first_wave(_sampled(resolved), data.m, data.n, budget=settings.budget,
                           seed=settings.seed, law=data.law,
                           metric=settings.metric)  # fmt: skip


def sequential_record(
    waves: Waves,
    user_ids: np.ndarray,
    totals: tuple[int, ...],
    confidence: float,
    spending: str,
    family: str,
) -> dict:
    """The sidecar's key ``sequential`` (:mod:`.design_file`)."""
    chosen = np.flatnonzero(waves.chosen)
    return {
        "totals": list(totals),
        "first_wave": DECISION_DEFAULTS["first_wave"],
        "growth": DECISION_DEFAULTS["growth"],
        "confidence": confidence,
        "spending": spending,
        "family": family,
        "wave_users": np.bincount(waves.wave[chosen], minlength=waves.count + 1)[1:].tolist(),
        "waves_digest": waves_digest(np.asarray(user_ids)[chosen], waves.wave[chosen]),
    }


def _waves(inputs: DecisionInputs) -> Waves:
    """The design's waves with every user's stratum from phase 1 (the strata are fixed)."""
    design = inputs.design
    if design.waves is None:
        raise InputError(
            "not a sequential design (no waves): plan --sequential writes one",
            path=design.path,
        )
    stratum, _ = design_strata(_sampled(inputs.ranks), edges=design.edges, cells=design.cells)
    return Waves(stratum, design.design.stratum_sizes, design.waves)


def _record(inputs: DecisionInputs) -> dict:
    record = inputs.design.record or {}
    sequential = record.get("sequential") or {}
    confidence = sequential.get("confidence")
    sidecar, fix = (
        f"{inputs.design.path}.design.json",
        "run sampled-metrics plan --sequential again",
    )
    if not isinstance(confidence, float) or not 0 < confidence < 1:
        raise InputError(f"confidence is {confidence!r}, not a number in (0, 1)", path=sidecar,
                         fix=fix)  # fmt: skip
    if sequential.get("spending") not in SPENDING:
        raise InputError(f"spending is {sequential.get('spending')!r}, not one of "
                         f"{', '.join(SPENDING)}", path=sidecar, fix=fix)  # fmt: skip
    if sequential.get("family") not in FAMILY_METHODS:
        raise InputError(f"family is {sequential.get('family')!r}, not one of "
                         f"{', '.join(FAMILY_METHODS)}", path=sidecar, fix=fix)  # fmt: skip
    return {**record, **sequential}


def _looks(inputs: DecisionInputs, waves: Waves, metric: str, record: dict
           ) -> dict[tuple[int, int], list[Look]]:  # fmt: skip
    data = inputs.ranks.ranks.first
    return design_looks(waves, inputs.exact.values, _sampled(inputs.ranks), data.m, data.n,
                        metric, confidence=record["confidence"], budget=record["totals"][-1],
                        law=data.law, spending=record["spending"],
                        family=record["family"])  # fmt: skip


def sequential_results(
    inputs: DecisionInputs, metrics: list[str]
) -> tuple[list[Result], dict[tuple[int, int], list[Look]], Waves]:
    """Every pair's last look for each metric (the design's metric's looks returned too,
    for the next wave) and the waves' cost."""
    record = _record(inputs)
    waves = _waves(inputs)
    looks = {metric: _looks(inputs, waves, metric, record)
             for metric in dict.fromkeys([record["metric"], *metrics])}  # fmt: skip
    n = inputs.ranks.ranks.first.n
    results = pair_results(inputs.models, {key: pairs for key, pairs in looks.items()
                                          if key in metrics},
                           record["confidence"], record["family"])  # fmt: skip
    state = loop_state(looks[record["metric"]], waves, record["totals"][-1])
    results.append(wave_cost(waves, n, float(record["budget"]), state))
    return results, looks[record["metric"]], waves


def pair_results(
    models: list[str],
    looks: dict[str, dict[tuple[int, int], list[Look]]],
    confidence: float,
    family: str,
) -> list[Result]:
    """Every pair's last look at each metric (``looks``: metric -> pair -> looks), as
    records."""
    results: list[Result] = []
    for metric, pairs in looks.items():
        for i, j in combinations(range(len(models)), 2):
            last = pairs[i, j][-1]
            boundary = None if math.isinf(last.boundary) else last.boundary
            results.append(SequentialDifference(
                models[i], models[j], metric, last.wave, last.n_chosen, last.value, last.low,
                last.high, last.standard_error, boundary, confidence, family,
                last.verdict))  # fmt: skip
    return results


def wave_cost(waves: Waves, n: np.ndarray, budget: float, state: str) -> WaveCost:
    """The users ranked by each wave, their share of the users and of a full ranking's
    scored items (n per user)."""
    sizes = np.asarray(n, dtype=float)
    cumulative = [int(np.count_nonzero((waves.wave >= 1) & (waves.wave <= k)))
                  for k in range(1, waves.count + 1)]  # fmt: skip
    return WaveCost(tuple(cumulative), cumulative[-1] / waves.wave.size,
                    float(sizes[waves.chosen].sum() / sizes.sum()), budget,
                    state)  # fmt: skip


def sequential_text(inputs: DecisionInputs, results: list[Result]) -> str:
    """The pairs' table and the waves' cost in words."""
    return waves_text(str(inputs.design.path), inputs.design.design.n_users, results)


def waves_text(design: str, users: int, results: list[Result]) -> str:
    """The pairs' table and the cost of the waves of ``design`` (a file, or what ran
    them) over ``users`` users, in words."""
    pairs = [r for r in results if isinstance(r, SequentialDifference)]
    cost = next(r for r in results if isinstance(r, WaveCost))
    level = f"{100 * pairs[0].confidence:g}%" if pairs else ""
    one_pair = len({(r.first, r.second) for r in pairs}) == 1
    together = (
        f"all pairs' intervals at every look cover together at {level}, however the looks stopped"
        if not pairs or pairs[0].family == "bonferroni" or one_pair
        else f"the verdicts all right together at {level}, however the looks stopped; each "
        "interval at the error left to its pair by those decided, not simultaneous"
    )
    lines = [
        f"sequential design {design}: {len(cost.users)} waves, "
        f"{cost.users[-1]} of {users} users ranked exactly "
        f"({100 * cost.share_of_users:.1f}% of the users, {100 * cost.share_of_items:.1f}% "
        f"of a full ranking's scored items; budget {100 * cost.budget:g}% of the users)",
        "",
        f"each pair at its last look: the estimate of first - second and its repeated "
        f"confidence interval ({together}; docs/deciding.md):",
        "",
    ]
    rows = [
        [r.first, r.second, r.metric, str(r.wave), str(r.users), number(r.difference),
         number(r.low), number(r.high), r.verdict.label(r.first, r.second)]
        for r in pairs
    ]  # fmt: skip
    header = ["first", "second", "metric", "wave", "users", "difference", "low", "high",
              "verdict"]  # fmt: skip
    lines.append(table(header, rows, {3, 4, 5, 6, 7}))
    return "\n".join(lines)


def continue_design(inputs: DecisionInputs) -> tuple[list[Result], Waves | None, str]:
    """Every pair's last look, the next wave (None: every pair done or the budget spent)
    and, without one, the line that says why."""
    record = _record(inputs)
    results, looks, waves = sequential_results(inputs, [record["metric"]])
    grown = next_wave(waves, looks, list(record["totals"]), floor=int(record["floor"]),
                      seed=int(record["seed"]))  # fmt: skip
    cost = next(r for r in results if isinstance(r, WaveCost))
    if grown is not None:
        return results, grown, ""
    if cost.state == "decided":
        return (
            results,
            None,
            (
                f"every pair is decided (or has spent its error) after {len(cost.users)} waves, "
                f"{cost.users[-1]} users ranked: nothing more to rank, nothing written"
            ),
        )
    return (
        results,
        None,
        (
            f"the budget is spent ({cost.users[-1]} users ranked in {len(cost.users)} waves): "
            "the intervals above are final, nothing written"
        ),
    )
