"""Studies that measure the library on a run's ranks: experiments, not tools.

* :mod:`.decisions`  the design study: every way of deciding between models, simulated
                     from their exact ranks
* :mod:`.protocols`  the protocol study: the frameworks' sampling protocols simulated on
                     real scores, every estimator on them
"""
