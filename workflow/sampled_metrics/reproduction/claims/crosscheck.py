"""The claim of section 4.3 on real sampling: the mean of the sampling repetitions
equals the expectation under the law of the sampled rank.
"""

from __future__ import annotations

import pandas as pd

from .claim import Claim, _not_applicable

__all__ = ["crosscheck_claim"]


def crosscheck_claim(check: pd.DataFrame, z_limit: float = 4.0) -> Claim:
    """Real sampling against the law of section 4.3: the mean over repetitions
    of every (recommender, metric, method) lies within ``z_limit`` standard
    errors of the analytic expectation (``check`` from
    ``tables.sampling_crosscheck``); N/A when ``check`` has no cell."""
    statement = (
        "The mean of the sampling repetitions equals the law's expectation "
        f"(every cell within {z_limit:g} standard errors)"
    )
    z = check["z"].abs()
    if z.dropna().empty:
        return _not_applicable("4.3", statement, "the cross-check has no cell")
    worst = check.loc[z.idxmax()]
    return Claim(
        "4.3",
        statement,
        bool((z <= z_limit).all()),
        f"{len(check)} cells; largest |z| = {z.max():.2f} ({worst['recommender']}, "
        f"{worst['metric']}, {worst['method']}); {int((z > 3).sum())} beyond 3",
    )
