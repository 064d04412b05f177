"""Memos of pure functions that ``estimate_table``, ``compare`` and the identification
intervals call, kept while the coverage benchmark runs (:class:`Shortcuts`): speed, not
a different computation (``bench_coverage.py --check`` prints the largest difference
with the plain calls)."""

from __future__ import annotations

import hashlib
import importlib

import numpy as np

from sampled_metrics.estimation.estimators import ESTIMATOR_DEFAULTS

# the module, not the function ``estimate`` its package exports under the same name
_estimate_module = importlib.import_module("sampled_metrics.estimation.estimators.estimate")
_learned_module = importlib.import_module("sampled_metrics.estimation.estimators.learned")
_prior_module = importlib.import_module("sampled_metrics.estimation.estimators.learned_prior")
_bounds_module = importlib.import_module("sampled_metrics.estimation.estimators.bounds")
# laws kept by the benchmark's own memo: at most this many, of at most 2**22 entries each
_LAWS_KEPT = 96
# the identification interval's coefficients kept: at most this many cells' worth
_COEFFICIENTS_KEPT = 64


def _key(data) -> bytes:
    digest = hashlib.blake2b(digest_size=16)
    for array in (data.ranks, data.m, data.n):
        digest.update(np.ascontiguousarray(array).tobytes())
    digest.update(data.law.encode())
    return digest.digest()


class Shortcuts:
    """Memos of pure functions that ``estimate_table`` and ``compare`` call, kept while
    active (the results are the same to the last bit: ``--check``):

    * the paper's correction vectors per (m, n, law): the command builds them anew on
      every call, one set per distinct n (743 on MovieLens 1M);
    * a learned distribution (EM, maximum entropy) of an evaluation already met since the
      last :meth:`forget`: ``compare`` re-learns the same evaluation and bootstrap
      resamples for every metric and method. EM of many evaluations at once stays
      ``em_distributions``' batch (the bootstrap's own); only those not in the memo are
      learned;
    * a metric on EM's grid averaged over the users' n (``_metric_on_grid_at``, an LRU of
      64 in the library): the bootstrap's resamples take the same users in every seed,
      so with per-user n the plug-in's table of each resample is the same in every seed
      and population;
    * the law p(r~ | r) at the learned-prior corrections' nodes of n (``cached_law``, an
      LRU of 8 in the library), which the resamples' ranges of n make many;
    * the identification interval's coefficients (``bounds._coefficients``): the extremes
      of E[f(r~)] over each cell, which depend on the users' n, m and the law, never on
      the sampled ranks, so every seed of a population shares them (without the memo
      they are most of its time: 14 s of 15 at m = 1000 without replacement on ML-1M).
    """

    def __init__(self):
        self.vectors: dict = {}
        self.learned: dict = {}
        self.grids: dict = {}
        self.laws: dict = {}
        self.coefficients: dict = {}
        self.memo = self.alone = 0

    def forget(self) -> None:
        self.learned = {}

    def focus(self, m: int, law: str) -> None:
        """Keep the correction vectors of (m, law) and of small m only (memory)."""
        for key in [k for k in self.vectors if (k[0], k[2]) != (m, law) and k[0] > 200]:
            del self.vectors[key]
        self.laws = {}

    def __enter__(self):
        module = _estimate_module
        fixed, learn, batch = (
            module._fixed_values,
            module.learned_rank_distribution,
            module.em_distributions,
        )
        self._saved = fixed, learn, batch

        def cached_fixed(metrics, methods, data, options, cache):
            return fixed(metrics, methods, data, options, self.vectors)

        def learned(data, kind, **options):
            setting = options["em_iterations"] if kind == "em" else options["maxent_gamma"]
            key = _key(data), kind, setting
            if key in self.learned:
                self.memo += 1
            else:
                self.alone += 1
                self.learned[key] = learn(data, kind, **options)
            return self.learned[key].copy()

        def em_batch(datas, iterations=ESTIMATOR_DEFAULTS["em_iterations"]):
            datas = list(datas)
            keys = [(_key(data), "em", iterations) for data in datas]
            todo = [i for i, key in enumerate(keys) if key not in self.learned]
            self.memo += len(datas) - len(todo)
            self.alone += len(todo)
            for i, pi in zip(todo, batch([datas[i] for i in todo], iterations)):
                self.learned[keys[i]] = pi
            return [self.learned[key].copy() for key in keys]

        grid_table, law_of = _learned_module._metric_on_grid_at, _prior_module.cached_law
        self._saved_deep = grid_table, law_of

        def grid_memo(metric, grid, values, counts):
            key = metric, grid, values, counts
            if key not in self.grids:
                self.grids[key] = grid_table(metric, grid, values, counts)
            return self.grids[key]

        def law_memo(n, m, law):
            if n * (m + 1) > 2**22:
                return law_of(n, m, law)
            if (n, m, law) not in self.laws:
                if len(self.laws) >= _LAWS_KEPT:
                    self.laws = {}
                self.laws[n, m, law] = law_of(n, m, law)
            return self.laws[n, m, law]

        coefficients = _bounds_module._coefficients
        self._saved_bounds = coefficients

        def coefficients_memo(cells, ks, replacement, resolution):
            digest = hashlib.blake2b(digest_size=16)
            for array in (cells.n, cells.low, cells.high, ks):
                digest.update(np.ascontiguousarray(array).tobytes())
            key = digest.digest(), cells.m, bool(replacement), float(resolution)
            if key not in self.coefficients:
                if len(self.coefficients) >= _COEFFICIENTS_KEPT:
                    self.coefficients = {}
                self.coefficients[key] = coefficients(cells, ks, replacement, resolution)
            return self.coefficients[key]

        _bounds_module._coefficients = coefficients_memo
        module._fixed_values = cached_fixed
        module.learned_rank_distribution = learned
        module.em_distributions = em_batch
        _learned_module._metric_on_grid_at = grid_memo
        _prior_module.cached_law = law_memo
        return self

    def __exit__(self, *exc):
        module = _estimate_module
        module._fixed_values, module.learned_rank_distribution, module.em_distributions = (
            self._saved
        )
        _learned_module._metric_on_grid_at, _prior_module.cached_law = self._saved_deep
        _bounds_module._coefficients = self._saved_bounds
        return False


class Plain:
    """The library's own functions for a while, inside an active :class:`Shortcuts`."""

    def __init__(self, shortcuts):
        self.shortcuts = shortcuts

    def __enter__(self):
        module = _estimate_module
        self.patched = (
            module._fixed_values,
            module.learned_rank_distribution,
            (module.em_distributions),
        )
        module._fixed_values, module.learned_rank_distribution, module.em_distributions = (
            self.shortcuts._saved
        )
        self.deep = _learned_module._metric_on_grid_at, _prior_module.cached_law
        _learned_module._metric_on_grid_at, _prior_module.cached_law = self.shortcuts._saved_deep
        self.bounds = _bounds_module._coefficients
        _bounds_module._coefficients = self.shortcuts._saved_bounds

    def __exit__(self, *exc):
        module = _estimate_module
        module._fixed_values, module.learned_rank_distribution, module.em_distributions = (
            self.patched
        )
        _learned_module._metric_on_grid_at, _prior_module.cached_law = self.deep
        _bounds_module._coefficients = self.bounds
        return False
