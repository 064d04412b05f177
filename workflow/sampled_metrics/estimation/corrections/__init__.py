"""Corrected sampled metrics, section 5 of Krichene & Rendle (KDD 2020).

A correction is a vector M^ over the sampled rank r~ = 1..m+1; the corrected
metric of an evaluation instance is M^[r~ - 1] (``apply_correction``). Every
correction here estimates the exact metric M(r) over true ranks r = 1..n.

The least-squares family (eqs 21-26) uses, with the law P[r, r~] = p(r~ | r)
and a prior p(r) over true ranks (uniform by default):

    A[r, r~] = sqrt(p(r)) p(r~ | r),   b[r] = sqrt(p(r)) M(r),
    c[r~]    = sum_r p(r) p(r~ | r).

(Eq 23 as printed abbreviates A; this is the form obtained from eq 21.)

Every solver works on the (m+1)-dimensional form of these systems
(``reduced_system``): one QR factorization A = Q R, shared by all metrics of a
law, turns ||A x - b||^2 into ||R x - Q^T b||^2 + const, so a solve no longer
touches the n rows of the law.

Method names used throughout the project: ``sampled`` (no correction),
``rank_estimate``, ``ls``, ``cls``, and ``bv_<gamma>`` such as ``bv_0.1``; they are
entries of :mod:`sampled_metrics.estimation.registry` (:func:`parse_method`).

This package is one public face over its modules:

* :mod:`.law_cache`  the law of the sampled rank, cached read-only
* :mod:`.systems`    the systems of eqs 21-25 (A, b, c; the QR-reduced and normal forms)
* :mod:`.solvers`    least squares, bias-variance and CLS solved on those systems
* :mod:`.methods`    one function per correction (eqs 20-26)
* :mod:`.vectors`    corrections by name, many at once, per n, applied to sampled ranks
"""

from __future__ import annotations

from ..registry import parse_method
from .law_cache import cached_law, clear_law_cache
from .methods import (
    bias_variance_correction,
    constrained_least_squares_correction,
    least_squares_correction,
    posterior_mean_correction,
    rank_estimate_correction,
)
from .solvers import CLS_CONSTRAINTS
from .systems import (
    ReducedSystem,
    average_squared_bias,
    least_squares_design,
    normal_equations,
    reduced_system,
    uniform_prior,
)
from .vectors import apply_correction, corrected_metric, correction_vectors, correction_vectors_by_n

__all__ = [
    "apply_correction",
    "average_squared_bias",
    "bias_variance_correction",
    "CLS_CONSTRAINTS",
    "ReducedSystem",
    "cached_law",
    "clear_law_cache",
    "constrained_least_squares_correction",
    "corrected_metric",
    "correction_vectors",
    "correction_vectors_by_n",
    "least_squares_correction",
    "least_squares_design",
    "normal_equations",
    "parse_method",
    "posterior_mean_correction",
    "rank_estimate_correction",
    "reduced_system",
    "uniform_prior",
]
