"""Other libraries' warnings and informational log lines kept out of an adapter's
output for the time of one call.

A RecBole or cornac run through an adapter passes through torch, numpy, pandas, RecBole
and cornac, which warn about their own deprecations and log their progress: more than
a hundred lines of stderr that the adapter's user can do nothing about. :func:`quiet`
ignores those warnings and disables log records below WARNING while the adapter runs,
then restores both as they were. Errors still raise, and log records at WARNING and
above still show.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator

__all__ = ["QUIETED", "quiet"]

# The categories a framework and the libraries under it warn with about themselves
# (deprecations, their advice to their own users); RuntimeWarning (a NaN, an overflow
# in the scores) stays.
QUIETED = (DeprecationWarning, PendingDeprecationWarning, FutureWarning, UserWarning)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Inside the block: the :data:`QUIETED` warnings ignored, log records below
    WARNING dropped (``logging.disable``: RecBole logs through the root logger, and
    its ``init_logger`` resets the root's level). On exit, even by an exception, the
    warning filters and the logging threshold are what they were.

    Examples
    --------
    >>> import warnings
    >>> with quiet():
    ...     warnings.warn("np.float is deprecated", DeprecationWarning)
    ...     logging.getLogger("recbole").info("Loading model structure")
    >>> logging.root.manager.disable
    0
    """
    threshold = logging.root.manager.disable
    with warnings.catch_warnings():
        for category in QUIETED:
            warnings.filterwarnings("ignore", category=category)
        logging.disable(max(threshold, logging.INFO))
        try:
            yield
        finally:
            logging.disable(threshold)
