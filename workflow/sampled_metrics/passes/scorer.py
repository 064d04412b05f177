"""What the passes read of a model: its scores of some users over every item."""

from __future__ import annotations

from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["Scorer"]


class Scorer(Protocol):
    """A model as the passes read it: ``scores(users)``, a float array (len(users),
    n_items), higher is better; ``n_items``, the items it scores. A model may also have
    ``scores_into(users, out)``, which fills ``out`` with the same scores."""

    @property
    def n_items(self) -> int: ...

    def scores(self, users: ArrayLike) -> np.ndarray: ...
