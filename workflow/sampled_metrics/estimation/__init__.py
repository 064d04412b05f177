"""The mathematics of sampled evaluation: pure functions on arrays, importing no other
part of the package but :mod:`sampled_metrics.io`.

* :mod:`.metrics`      the metrics of one relevant item (section 3, eqs 2-13), by name
* :mod:`.set_metrics`  the same metrics of a set of relevant items
* :mod:`.laws`         the law of the sampled rank p(r~ | r) (section 4.3) and the
                       registry of laws (:data:`.laws.SAMPLING_LAWS`)
* :mod:`.expected`     expected sampled metrics (eqs 16, 18, 19)
* :mod:`.popularity`   the law of popularity-sampled negatives, the popularity-weighted
                       rank, the Hansen-Hurwitz rank estimate
* :mod:`.corrections`  the paper's corrected metrics (section 5, eqs 20-26)
* :mod:`.estimators`   every estimator from sampled ranks behind one API, intervals,
                       paired comparisons
* :mod:`.decisions`    two-phase sampling: which users to rank exactly (strata of the
                       sampled ranks, Neyman's allocation), the design-unbiased estimate
                       of a metric or a paired difference, its interval and verdict
* :mod:`.registry`     the estimators by name: label, parameter, colour, what each reads
* :mod:`.nodes`        values of n at which per-user corrections are built
* :mod:`.population`   exact, sampled, expected and learned metrics of a population of
                       users, per repetition
"""
