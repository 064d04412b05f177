"""The design study's work on one model alone, at every seed: its simulated phase 1,
its posterior moments (the design's proxies), its identification intervals and its
adaptive sampling with EM. Nothing here reads another model, so a pipeline runs it as
soon as that model's exact ranks exist; the study then joins the models
(:func:`.study.run_study`).

Each (seed, model) draws from its own stream, seeded by (the study's base seed, the
study, the seed, the model's name): a model's draws do not depend on which models are
drawn beside it or in what order.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ...estimation.decisions.proxy import em_priors, posterior_moments
from ...estimation.estimators import (
    em_distributions,
    identification_intervals,
    point_estimates,
    sampled_evaluation,
)
from ...estimation.laws import WITH_REPLACEMENT
from .methods import adaptive_ranks, simulate_sampled_ranks
from .registry import Method

__all__ = ["model_draws", "model_stream", "model_work", "read_draws", "write_draws"]

# the design study's place among the streams derived from one base seed
_STUDY = zlib.crc32(b"decisions")


def model_stream(base_seed: int, seed: int, name: str) -> np.random.Generator:
    """The generator of one model at one seed: from (base_seed, the study, seed, the
    CRC-32 of the model's name), a name, not a position, so adding a model leaves the
    others' draws as they are.

    Examples
    --------
    >>> a = model_stream(0, 3, "EASE").integers(1 << 30)
    >>> bool(a == model_stream(0, 3, "EASE").integers(1 << 30))
    True
    >>> bool(a == model_stream(0, 3, "BPR").integers(1 << 30))
    False
    """
    return np.random.default_rng([base_seed, _STUDY, seed, zlib.crc32(name.encode())])


def model_work(
    methods: Sequence[Method], seeds: int, fewer_seeds: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """What the per-model work computes for ``methods``: the moments when a design
    reads them, the identification intervals on the range's seeds, adaptive sampling
    on adaptive-em's seeds with its steps (0 seeds for a kind that does not run).

    Examples
    --------
    >>> from sampled_metrics.studies.decisions.registry import study_methods
    >>> model_work(study_methods(["full", "range"], [], []), 10, {"range": 2})
    {'moments': False, 'range_seeds': 2, 'adaptive_seeds': 0, 'steps': ()}
    """
    fewer = dict(fewer_seeds or {})
    kinds = {method.kind.name: method for method in methods}

    def on(kind: str) -> int:
        return min(fewer.get(kind, seeds), seeds) if kind in kinds else 0

    adaptive = kinds.get("adaptive-em")
    return {
        "moments": bool({"design", "pair-design", "sequential", "sequential-pair"} & set(kinds)),
        "range_seeds": on("range"),
        "adaptive_seeds": on("adaptive-em"),
        "steps": adaptive.steps if adaptive is not None else (),
    }


def model_draws(
    exact: ArrayLike,
    n: ArrayLike,
    name: str,
    *,
    seeds: int,
    m: int,
    metrics: Sequence[str],
    law: str = WITH_REPLACEMENT,
    confidence: float = 0.95,
    base_seed: int = 0,
    moments: bool = True,
    range_seeds: int = 0,
    adaptive_seeds: int = 0,
    steps: Sequence[int] = (),
) -> dict[str, np.ndarray]:
    """One model's share of the study at seeds 0..seeds - 1.

    Parameters
    ----------
    exact, n : array_like of int
        (U,) the model's exact ranks and the ranked-set sizes.
    name : str
        The model's name: its streams (:func:`model_stream`).
    seeds, m, metrics, law, confidence, base_seed
        As :func:`.study.run_study`'s.
    moments : bool
        Whether to compute the posterior moments (what a design reads).
    range_seeds, adaptive_seeds : int
        The first seeds the identification intervals and adaptive-em run on.
    steps : sequence of int
        adaptive-em's cumulative extra sample sizes.

    Returns
    -------
    dict
        ``sampled`` (seeds, U): the sampled ranks (:func:`.simulate_sampled_ranks`);
        with ``moments``, ``means`` and ``variances`` (metrics, seeds, U) float32:
        each metric's posterior mean and variance given the sampled rank under the
        model's EM prior at that seed (:func:`.em_prior`; every seed's EM iterates
        together, each on its own ranks: the same priors to rounding); ``range``
        (range_seeds, 2, metrics, 2): the identification interval (low, high) at the
        confidence and at 1 - (1 - confidence)/2 (a pair's Bonferroni half);
        ``adaptive`` (adaptive_seeds, metrics): EM's point estimate after Li et al.'s
        adaptive sampling (:func:`.adaptive_ranks`, drawn from the seed's stream after
        phase 1; every seed's EM at once) and
        ``adaptive_m`` (adaptive_seeds, U) int32: the users' final sample sizes m_u.

    Examples
    --------
    >>> found = model_draws([1, 5, 30, 2], [100] * 4, "A", seeds=2, m=10, law="binomial",
    ...                     metrics=["recall@10"], range_seeds=1)
    >>> found["sampled"].shape, found["means"].shape, found["range"].shape
    ((2, 4), (1, 2, 4), (1, 2, 1, 2))
    """
    r = np.asarray(exact, dtype=np.int64)
    n = np.asarray(n, dtype=np.int64)
    streams = [model_stream(base_seed, seed, name) for seed in range(seeds)]
    sampled = np.stack([simulate_sampled_ranks(r, n, m, law, rng)[0] for rng in streams])
    out = {"sampled": sampled.astype(np.min_scalar_type(m + 1))}
    datas = [sampled_evaluation(row, m, n, law) for row in sampled]
    if moments:
        # every seed's EM at once: two matrix products an iteration for all of them
        found = posterior_moments(datas, em_priors(datas), metrics)
        for key in ("mean", "variance"):
            out[f"{key}s"] = np.array(
                [[getattr(one[metric], key) for one in found] for metric in metrics],
                dtype=np.float32,
            )
    if range_seeds:
        levels = (confidence, 1.0 - (1.0 - confidence) / 2.0)
        bounds = [[identification_intervals(data, metrics, level) for level in levels]
                  for data in datas[:range_seeds]]  # fmt: skip
        out["range"] = np.array(
            [[[level[metric] for metric in metrics] for level in both] for both in bounds],
            dtype=float,
        ).reshape(range_seeds, 2, len(metrics), 2)
    if adaptive_seeds:
        grown = [adaptive_ranks(r, n, row, m, law, rng, steps)
                 for rng, row in zip(streams[:adaptive_seeds], sampled)]  # fmt: skip
        datas = [sampled_evaluation(ranks, m_u, n, law) for ranks, m_u in grown]
        # every seed's EM at once, each on its own ranks and m_u
        points = [
            point_estimates(data, metrics, ["em"], distributions={"em": pi})
            for data, pi in zip(datas, em_distributions(datas))
        ]
        out["adaptive"] = np.array([[point[metric, "em"] for metric in metrics]
                                    for point in points], dtype=float)  # fmt: skip
        out["adaptive_m"] = np.array([m_u for _, m_u in grown], dtype=np.int32)
    return out


def write_draws(path: str | Path, draws: Mapping[str, np.ndarray]) -> None:
    """One model's draws as an .npz (uncompressed: the floats do not compress)."""
    arrays: dict[str, Any] = dict(draws)  # savez's keywords are its arrays' names
    np.savez(path, **arrays)


def read_draws(path: str | Path) -> dict[str, np.ndarray]:
    """:func:`write_draws`'s arrays."""
    with np.load(path) as stored:
        return {key: stored[key] for key in stored.files}
