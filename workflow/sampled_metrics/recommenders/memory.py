"""How much memory a fit needs: what lets a run say at start-up that a model cannot be
fitted, naming the model and the memory it needs.

:func:`fit_memory_bytes` estimates the peak resident memory of one fit job (the rule
``fit``: the interpreter and libraries, the training split, the fit, the stored model)
from the sizes of the data and the model's spec; :func:`fit_memory_shortfalls` names
every model of a configuration whose fit needs more than a given memory
(``pipeline.data_checks.check_fit_memory`` gives it what ``data.compressed`` reads:
``MemAvailable``, cut to the cgroup's room). The estimates are the measured costs
of each fit (benchmarks/bench_fit_memory.py; tests/test_fit_memory.py checks them
against measured peaks at two sizes), rounded up, per event, per item x item entry and
per factor:

* every job: the process with its libraries and the loaded split
  (``_PROCESS_BYTES`` + ``_SPLIT_BYTES_PER_EVENT`` per training event);
* ``popularity``: copies of the training matrix;
* ``ials`` / ``bpr``: implicit's copies of the training matrix and the factors
  (users + items) x factors, in the spec's precision (BPR: float32, one more column);
* ``item_knn``: the one dense items x items similarity in its ``dtype``, the training
  copies of the sparse co-occurrence products and their blocks;
* ``ease``: the one dense items x items array in :func:`.ease.ease_dtype`'s precision
  (and its float32 copy on the float64 path), the same training copies and blocks.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .ease import ease_dtype
from .registry import validate_spec

__all__ = ["fit_memory_bytes", "fit_memory_shortfalls"]

_MB = 2**20
# The interpreter, numpy/scipy/implicit and the library (with room over what they take
# with MovieLens 1M's training matrix loaded), and the split as loaded (CSR: int32 indices,
# float32 data: 8 bytes per event; ids, the held-out items).
_PROCESS_BYTES = 150 * _MB
_SPLIT_BYTES_PER_EVENT = 12
# Bytes per training event a fit adds: copies of the binary matrix (float32 CSR, 8 per
# event) and, for the co-occurrence products, its float64 copy and transpose (12 each).
_FIT_BYTES_PER_EVENT = {
    "popularity": 18,
    "ials": 28,
    "bpr": 20,
    "item_knn": 40,
    "ease": 40,
}
# Copies of the (users + items) x factors matrices a factor model's fit holds at once.
_FACTOR_COPIES = {"ials": 3, "bpr": 1}
# Blocks of rows of an items x items product: a sparse block (float64 value and int32
# index) and its dense float64 copy, 20 bytes per entry, of at most this many entries
# (item_knn's and ease's _BLOCK_BYTES / 8).
_BLOCK_ENTRIES = {"item_knn": 8 * _MB, "ease": 2 * _MB}
_BLOCK_BYTES_PER_ENTRY = 20


def fit_memory_bytes(
    spec: Mapping, n_users: int, n_items: int, n_events: int, *, process: bool = True
) -> int:
    """The peak resident memory of a fit job of ``spec`` on a training matrix of
    ``n_users`` x ``n_items`` with ``n_events`` nonzeros, in bytes: an estimate from
    measured fits, rounded up (tests/test_fit_memory.py: never below the measured fit,
    at most twice it; benchmarks/bench_fit_memory.py: whole jobs).

    Parameters
    ----------
    spec : mapping
        A recommender entry of the configuration (``{"type": ..., ...}``).
    n_users, n_items, n_events : int
        The training matrix's shape and number of events.
    process : bool, default True
        Include the job's interpreter, libraries and loaded split; False: only what the
        fit itself adds. A type without an estimate (registered at run time) counts
        only these.

    Returns
    -------
    int

    Examples
    --------
    >>> gb = 2**30
    >>> round(fit_memory_bytes({"type": "ease"}, 138_493, 26_744, 20_000_263) / gb, 2)
    3.82
    >>> round(fit_memory_bytes({"type": "ease"}, 6040, 3706, 994_169) / gb, 2)
    0.35
    """
    kind = spec["type"]
    total = _PROCESS_BYTES + _SPLIT_BYTES_PER_EVENT * n_events if process else 0
    if kind not in _FIT_BYTES_PER_EVENT:
        return int(total)
    params = validate_spec(dict(spec))
    total += _FIT_BYTES_PER_EVENT[kind] * n_events
    square = n_items * n_items
    blocks = _BLOCK_BYTES_PER_ENTRY * min(square, _BLOCK_ENTRIES.get(kind, 0))
    if kind in ("ials", "bpr"):
        itemsize = 8 if params.get("dtype", "float32") == "float64" else 4
        columns = params["factors"] + (1 if kind == "bpr" else 0)
        total += _FACTOR_COPIES[kind] * (n_users + n_items) * columns * itemsize
    elif kind == "item_knn":
        total += square * np.dtype(params["dtype"]).itemsize + blocks
    elif kind == "ease":
        itemsize = ease_dtype(n_items).itemsize
        # the float64 path ends with the float32 copy the model stores
        total += square * itemsize + max(blocks, square * 4 if itemsize == 8 else 0)
    return int(total)


def fit_memory_shortfalls(
    recommenders: Mapping,
    n_users: int,
    n_items: int,
    n_events: int,
    available: int,
) -> list[str]:
    """One message per model of ``recommenders`` whose fit needs more memory than
    ``available``, naming the model, the memory it needs and the memory there is;
    empty when every fit fits.

    Parameters
    ----------
    recommenders : mapping
        Name -> spec (the configuration's ``recommenders``; None entries are skipped).
    n_users, n_items, n_events : int
        The training matrix's shape and number of events.
    available : int
        Bytes.

    Returns
    -------
    list of str

    Examples
    --------
    >>> specs = {"Pop": {"type": "popularity"}, "EASE": {"type": "ease"}}
    >>> for message in fit_memory_shortfalls(specs, 138_493, 26_744, 20_000_263, 3 * 2**30):
    ...     print(message)
    recommenders.EASE: its fit needs about 3.8 GB (ease, 26,744 items, 20,000,263
    events); 3.0 GB available: leave it out (EASE: null) or use a larger machine
    """
    messages = []
    for name, spec in recommenders.items():
        if spec is None:
            continue
        need = fit_memory_bytes(spec, n_users, n_items, n_events)
        if need > available:
            messages.append(
                f"recommenders.{name}: its fit needs about {need / 2**30:.1f} GB "
                f"({spec['type']}, {n_items:,} items, {n_events:,} events); "
                f"{available / 2**30:.1f} GB available: leave it out ({name}: null) "
                "or use a larger machine"
            )
    return messages
