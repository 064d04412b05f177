"""The claims of section 6.1 on Figure 5: where the held-out items rank, from the
rank-distribution facts of each recommender.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .claim import Claim, _not_applicable

__all__ = ["rank_distribution_claims"]


def rank_distribution_claims(
    distribution: pd.DataFrame, paper: dict, recommenders: Sequence[str]
) -> list[Claim]:
    """The claims of section 6.1 on Figure 5, from its rank-distribution facts.

    Parameters
    ----------
    distribution : pandas.DataFrame
        ``fig5_rank_distribution.csv``: per recommender, users with the held-out
        item in the top 10, the top 100, the bottom half and the last bucket,
        under the pipeline's tie policy and (columns ``pessimistic_*``) with
        every tie ranked above the held-out item.
    paper : dict
        The numbers of the text: {"top_100": 2310, "bottom_half_below": 300,
        "worst_bucket_above": 1600} (``published("figure5")``).
    recommenders : tuple of str
        X, Y and Z.

    Returns
    -------
    list of Claim
        Three claims; N/A when a recommender or a column is missing.

    Examples
    --------
    >>> facts = pd.DataFrame({"recommender": ["X", "Y", "Z"], "top_10": [454, 523, 575],
    ...     "top_100": [2316, 2093, 2242], "bottom_half": [214, 381, 1451],
    ...     "last_bucket": [1, 1, 22], "pessimistic_last_bucket": [1, 1, 1569]})
    >>> paper = {"top_100": 2310, "bottom_half_below": 300, "worst_bucket_above": 1600}
    >>> [c.verdict for c in rank_distribution_claims(facts, paper, ("X", "Y", "Z"))]
    ['PASS', 'PASS', 'FAIL']
    """
    x, y, z = recommenders
    facts = distribution.set_index("recommender")
    top, bottom = paper["top_100"], paper["bottom_half_below"]
    worst = paper["worst_bucket_above"]
    statements = (
        f"{x} puts about {top:g} held-out items in the top 100 (within 10%) "
        f"and fewer than {bottom:g} in the bottom half",
        f"{z} is best in the top 10; {y} is better than {x} in the top 10 but worse overall "
        "(more items in the bottom half)",
        f"{z} puts over {worst:g} users in the worst bucket of Figure 5 (under either tie rule)",
    )
    needed = {"top_10", "top_100", "bottom_half", "last_bucket"}
    if not set(recommenders) <= set(facts.index) or not needed <= set(facts.columns):
        reason = "Figure 5's rank distribution lacks X, Y or Z or a column"
        return [_not_applicable("6.1 / Fig 5", s, reason) for s in statements]
    n = facts["top_10"].to_dict(), facts["bottom_half"].to_dict()
    buckets = {"random ties (the pipeline's)": int(facts.loc[z, "last_bucket"])}
    if "pessimistic_last_bucket" in facts.columns:
        buckets["pessimistic ties"] = int(facts.loc[z, "pessimistic_last_bucket"])
    return [
        Claim(
            "6.1 / Fig 5",
            statements[0],
            abs(facts.loc[x, "top_100"] - top) <= 0.1 * top
            and facts.loc[x, "bottom_half"] < bottom,
            f"top 100: {facts.loc[x, 'top_100']}, bottom half: {facts.loc[x, 'bottom_half']}",
        ),
        Claim(
            "6.1 / Fig 5",
            statements[1],
            n[0][z] > n[0][y] > n[0][x] and n[1][y] > n[1][x],
            "top 10: "
            + ", ".join(f"{k} {n[0][k]}" for k in recommenders)
            + "; bottom half: "
            + ", ".join(f"{k} {n[1][k]}" for k in recommenders),
        ),
        Claim(
            "6.1 / Fig 5",
            statements[2],
            max(buckets.values()) > worst,
            "; ".join(f"{count} with {rule}" for rule, count in buckets.items()),
        ),
    ]
