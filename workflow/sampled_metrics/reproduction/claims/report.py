"""The claims report (``claims.md``): the count of each verdict, then one row per claim."""

from __future__ import annotations

from collections import Counter

from .claim import Claim

__all__ = ["claims_markdown", "claims_summary"]


def claims_summary(claims: list[Claim]) -> str:
    """The report's count of the verdicts.

    Examples
    --------
    >>> print(claims_summary([Claim("6.2", "a", True, ""), Claim("6.2", "b", False, ""),
    ...                       Claim("6.2", "c", None, "not in this run: metric auc")]))
    1 of 3 claims of the paper hold on the reproduced numbers, 1 fails, 1 not applicable
    (N/A: the run has no numbers to check the claim on).
    """
    counts = Counter(c.verdict for c in claims)
    failed = counts["FAIL"]
    return (
        f"{counts['PASS']} of {len(claims)} claims of the paper hold on the reproduced numbers, "
        f"{failed} {'fails' if failed == 1 else 'fail'}, {counts['N/A']} not applicable "
        "(N/A: the run has no numbers to check the claim on)."
    )


def claims_markdown(claims: list[Claim], title: str) -> str:
    """The claims report: the count of each verdict, then one row per claim
    with its verdict (PASS, FAIL or N/A) and its numbers or the reason it is N/A."""
    lines = [
        f"# {title}",
        "",
        claims_summary(claims),
        "",
        "| section | claim | verdict | evidence |",
        "|---|---|---|---|",
    ]
    lines += [f"| {c.section} | {c.statement} | {c.verdict} | {c.evidence} |" for c in claims]
    return "\n".join(lines) + "\n"
