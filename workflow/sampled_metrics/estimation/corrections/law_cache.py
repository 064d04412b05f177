"""The law of the sampled rank, cached: every metric and method of one (n, m, law) reads
the same read-only matrix P[r - 1, r~ - 1] = p(r~ | r) (section 4.3)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..laws import sampled_rank_law

__all__ = ["cached_law", "clear_law_cache"]


# Laws of at most this many entries (32 MB) are cached, 8 of them: the cache stays
# under 256 MB while Figure 6 builds laws of n x n entries at its largest m.
_CACHED_LAW_ENTRIES = 2**22


def cached_law(n: int, m: int, law: str, tails: bool = True) -> np.ndarray:
    """``sampled_rank_law`` cached by (n, m, law, tails), read-only: metrics and methods
    share one law.

    Parameters
    ----------
    n : int
        Number of ranked items.
    m : int
        Number of sampled irrelevant items.
    law : {"hypergeometric", "binomial"}
        Sampling without or with replacement.
    tails : bool, default True
        As :func:`.laws.sampled_rank_pmf` (False: the entries below ``laws.NEGLIGIBLE``
        far from each row's mean are 0, for the bias-variance systems).

    Returns
    -------
    numpy.ndarray
        The (n, m + 1) matrix of :func:`.laws.sampled_rank_law`, not writeable;
        the same object for the same arguments while it is in the cache (an LRU
        cache of 8 laws of at most ``_CACHED_LAW_ENTRIES`` entries; a larger law
        is built anew each time).

    Raises
    ------
    ValueError
        As :func:`.laws.sampled_rank_pmf`.

    Examples
    --------
    >>> P = cached_law(3, 2, "hypergeometric")
    >>> P.flags.writeable, cached_law(3, 2, "hypergeometric") is P
    (False, True)
    """
    if n * (m + 1) <= _CACHED_LAW_ENTRIES:
        return _read_only_law(n, m, law, tails)
    return _read_only_law.__wrapped__(n, m, law, tails)


@lru_cache(maxsize=8)
def _read_only_law(n: int, m: int, law: str, tails: bool) -> np.ndarray:
    P = sampled_rank_law(n, m, law, tails=tails)
    P.setflags(write=False)
    return P


def clear_law_cache() -> None:
    """Empty the cache of :func:`cached_law` (for timing it cold).

    Parameters
    ----------
    None

    Returns
    -------
    None

    Examples
    --------
    >>> P = cached_law(3, 2, "binomial"); clear_law_cache()
    >>> cached_law(3, 2, "binomial") is P
    False
    """
    _read_only_law.cache_clear()
