"""The design study: every way of deciding between models (full ranking, uniform
subsets, the two-phase design of :mod:`sampled_metrics.estimation.decisions`, the
identification range, adaptive sampling), simulated from the models' exact ranks.

* :mod:`.registry` the methods: one record per kind, one per method a study runs
* :mod:`.methods`  each kind's run on one simulated phase 1, the simulation, the cost
* :mod:`.study`    one seed, every seed: a row per method, model or pair, and metric
* :mod:`.summary`  the rows summarized over the seeds, the configured goals measured
* :mod:`.report`   decisions.md and decisions.csv
"""
