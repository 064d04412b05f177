"""Deciding between models with a little exact information, chosen well: two-phase
sampling.

Phase 1 is every user's sampled rank r~_u under each model (cheap, everyone). Phase 2
ranks a few users exactly, drawn with known probabilities pi_u that depend on phase 1:
strata from every model's sampled rank, the budget allocated by Neyman's rule to where
the metric is predicted to vary (for a top-k metric, users whose held-out item beat
(almost) every sampled one), users drawn without replacement within strata
(:mod:`.design`). The difference estimator (1/U) sum_u g_u + (1/U) sum_{chosen} (y_u -
g_u) / pi_u, y_u the exact metric, g_u its posterior mean given r~_u (:mod:`.proxy`), is
unbiased over the design whatever the proxy; an interval follows from the stratified
variance (floored by the proxy's predicted variance; Student's t at Satterthwaite's
degrees of freedom), for one model's metric or the paired difference of two on the same
users, and a verdict from whether it excludes 0 (:mod:`.estimate`; Sarndal, Swensson and
Wretman 1992, ch. 9; prediction-powered inference, Angelopoulos et al. 2023). When every
user is ranked exactly, the paired t-test over users (:mod:`.full_ranking`). With many
models, every pair's verdict with the family-wise error controlled (Holm 1979) and the
set of models that may be best (:mod:`.family`). Exact ranks in waves, each pair decided
at the first look whose repeated confidence interval excludes 0 (:mod:`.sequential`:
Lan and DeMets' error spending, :mod:`.boundaries`; the waves, :mod:`.waves`).
The design study that measures these against other ways of deciding lives apart, in
:mod:`sampled_metrics.studies.decisions`.

* :mod:`.defaults`      the defaults of the design and the estimators
* :mod:`.proxy`         phase 1's prediction: posterior mean and variance of M(r) given r~
* :mod:`.design`        strata, Neyman's allocation, the draw; a design to and from a table
* :mod:`.promise`       when a design can promise its coverage (else every user is ranked)
* :mod:`.estimate`      the difference estimator and its interval
* :mod:`.verdict`       the verdict an interval, or an exact difference, gives
* :mod:`.full_ranking`  the paired test when every user is ranked exactly
* :mod:`.family`        many pairs at once: family-wise verdicts, the models that may be best
* :mod:`.boundaries`    group-sequential boundaries by error spending (numerical integration)
* :mod:`.waves`         the waves of a sequential design: how many users by each look, which
* :mod:`.sequential`    each pair's looks, repeated confidence intervals, the next wave
* :mod:`.loop`          the sequential loop in memory, exact ranks from a function
* :mod:`.consistency`   whether the exact ranks explain the sampled ranks
"""

from __future__ import annotations

from .allocation import allocate
from .boundaries import SPENDING, crossing_probabilities, spending_boundaries
from .consistency import (
    Impossible,
    LikelihoodCheck,
    exact_rank_bounds,
    first_impossible,
    likelihood_check,
    tail_probabilities,
)
from .defaults import DECISION_DEFAULTS
from .design import (
    CELLS,
    UNITS,
    Design,
    design_from_table,
    design_strata,
    design_table,
    draw_design,
)
from .estimate import (
    POPULATIONS,
    TUNINGS,
    Estimate,
    estimate_difference,
    estimate_mean,
    estimate_metric,
)
from .family import (
    FAMILY_METHODS,
    FamilyVerdicts,
    adjusted_p_values,
    family_verdicts,
    may_be_best,
    paired_family,
)
from .full_ranking import DISTRIBUTIONS, PairedTest, paired_test
from .loop import SequentialRun, design_looks, loop_state, plan_first_wave, run_waves
from .promise import predicted_degrees
from .proxy import PRIORS, Proxy, em_prior, metric_proxy, model_ranks, predicted_spread
from .sequential import Look, family_looks, next_wave, pair_looks
from .verdict import EQUAL_WITHIN, Verdict, exact_verdict, interval_verdict
from .waves import Waves, first_wave, grow, wave_totals

__all__ = [
    "CELLS",
    "DECISION_DEFAULTS",
    "EQUAL_WITHIN",
    "FAMILY_METHODS",
    "DISTRIBUTIONS",
    "POPULATIONS",
    "PRIORS",
    "SPENDING",
    "TUNINGS",
    "UNITS",
    "Design",
    "Estimate",
    "FamilyVerdicts",
    "Impossible",
    "LikelihoodCheck",
    "Look",
    "PairedTest",
    "Proxy",
    "SequentialRun",
    "Verdict",
    "Waves",
    "adjusted_p_values",
    "allocate",
    "crossing_probabilities",
    "design_from_table",
    "design_looks",
    "design_strata",
    "design_table",
    "draw_design",
    "em_prior",
    "estimate_difference",
    "estimate_mean",
    "exact_rank_bounds",
    "estimate_metric",
    "exact_verdict",
    "family_looks",
    "family_verdicts",
    "first_wave",
    "grow",
    "first_impossible",
    "interval_verdict",
    "likelihood_check",
    "loop_state",
    "may_be_best",
    "metric_proxy",
    "next_wave",
    "pair_looks",
    "model_ranks",
    "paired_family",
    "paired_test",
    "plan_first_wave",
    "predicted_degrees",
    "predicted_spread",
    "run_waves",
    "spending_boundaries",
    "tail_probabilities",
    "wave_totals",
]
