"""The protocol study: the frameworks' sampling protocols
(:mod:`sampled_metrics.frameworks.registry`) simulated on real scores, and every
estimator on the sampled ranks they give.

* :mod:`.estimates`  every estimator on the simulated ranks
* :mod:`.report`     the study's report, protocols.md
"""
