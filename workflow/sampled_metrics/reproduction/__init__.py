"""The reproduction of the paper from our runs.

* :mod:`.paper`        its published numbers (for comparison only)
* :mod:`.toy_example`  the toy recommenders A, B, C (sections 3.2, 4.2; Tables 1-2)
* :mod:`.toy_ranks`    their ranks, the toy example's data
* :mod:`.tables`       Tables 3-4, the estimators' errors, the sampling cross-check
* :mod:`.curves`       Figure 6: expected metrics against the sample size
* :mod:`.sensitivity`  Table 3 under each reading of the correction protocol
* :mod:`.claims`       the paper's conclusions checked on our numbers
"""
