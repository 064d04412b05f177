"""put_ties_first under the random order, against its definition item by item: a tied
item is put before the held-out one when its key is below the held-out item's, whether
few items are tied (each tied entry keyed) or most are (every item keyed)."""

from __future__ import annotations

import numpy as np
import pytest

from sampled_metrics.passes import ties
from sampled_metrics.passes.ties import put_ties_first, tie_order_keys


@pytest.mark.parametrize("share_tied", [0.0, 0.02, 0.3, 0.9, 1.0])
def test_random_ties_first_are_the_tied_items_keyed_below_the_held_out_one(share_tied, monkeypatch):
    rng = np.random.default_rng(1)
    rows, items, seed = 40, 300, 11
    monkeypatch.setattr(ties, "_TIED_ENTRIES", 10 * items)  # blocks of 10 rows
    tied = rng.random((rows, items)) < share_tied
    tied[:10] = rng.random((10, items)) < 0.9  # blocks of both kinds in one call
    above = rng.random((rows, items)) < 0.1
    users, test = rng.integers(0, 10**6, rows), rng.integers(0, items, rows)
    expected = above.copy()
    for u in range(rows):
        for item in np.flatnonzero(tied[u]):
            key = int(tie_order_keys(users[u], item, seed))
            expected[u, item] |= key < int(tie_order_keys(users[u], test[u], seed))
    put_ties_first(above, tied, test, users, "random", seed)
    np.testing.assert_array_equal(above, expected)
