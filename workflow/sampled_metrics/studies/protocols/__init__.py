"""The protocol study: the frameworks' sampling protocols
(:mod:`sampled_metrics.frameworks.registry`) simulated on real scores, and every
estimator on the sampled ranks they give.

* :mod:`.beaten_files`  the items each model scores above and tied with the held-out
                        one, stored by the ranking pass so the study scores no model again
* :mod:`.stored`        every protocol's sampled ranks from those stored masks
* :mod:`.files`         a protocol's file of ranks, or the record that it was left out
* :mod:`.estimates`     every estimator on the simulated ranks
* :mod:`.report`        the study's report, protocols.md
"""
