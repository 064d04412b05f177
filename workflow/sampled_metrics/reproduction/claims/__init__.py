"""The paper's conclusions, checked against reproduced numbers.

Each check returns a ``Claim``: what the paper says, its verdict and the numbers
behind it. The verdict is PASS or FAIL when the run has numbers to check the
claim on, and N/A (not applicable) when it has none: a metric, method or
recommender the claim is about is not in the run, or the run's Figure 6 is not
the paper's (another metric or pair); the evidence then says why. No claim is
checked on an empty set of numbers.

- ``claim``         a claim and its verdict, the recommenders the claims are about
- ``table_claims``  sections 6.2 and 6.3 on Tables 3-4 and the Figure 6 thresholds
- ``distribution``  section 6.1 on Figure 5's rank distribution
- ``crosscheck``    section 4.3: real sampling against the law of the sampled rank
- ``report``        the claims report, ``claims.md``
"""

from .claim import VERDICTS, Claim, paper_trio
from .crosscheck import crosscheck_claim
from .distribution import rank_distribution_claims
from .report import claims_markdown, claims_summary
from .table_claims import FIGURE6_METRIC, LOW_STD_FACTOR, TOP_HEAVY, check_claims

__all__ = [
    "FIGURE6_METRIC",
    "LOW_STD_FACTOR",
    "TOP_HEAVY",
    "VERDICTS",
    "Claim",
    "check_claims",
    "claims_markdown",
    "claims_summary",
    "crosscheck_claim",
    "paper_trio",
    "rank_distribution_claims",
]
