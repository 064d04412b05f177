"""The mathematics of sampled evaluation: pure functions on arrays, importing no other
part of the package but :mod:`sampled_metrics.io`.

* :mod:`.metrics`      the metrics of section 3 (eqs 2-13), one definition each
* :mod:`.laws`         the law of the sampled rank p(r~ | r) (section 4.3)
* :mod:`.expected`     expected sampled metrics (eqs 16, 18, 19)
* :mod:`.popularity`   the law of popularity-sampled negatives, the popularity-weighted rank
* :mod:`.corrections`  the paper's corrected metrics (section 5, eqs 20-26)
* :mod:`.estimators`   every estimator from sampled ranks behind one API
"""
