"""The protocol study's beaten items, stored by the ranking pass so that the study
never scores a model again.

For every user the ranking pass (``block_pass.rank_users``) already holds the scores;
a :class:`BeatenWriter` given to it packs, for each *layer* the study reads, the items
scored above the held-out item and those tied with it (``ranking.above_and_tied``, the
masks the pass ranks with),
eight items a byte. Every tie order's beaten items follow from the two
(``beaten.order_ties``). A layer is a value of ``Protocol.history_in_pool``: False, the
scores with the training items masked (every protocol but RecBole's sequential
models'); True, the unmasked scores.

A file holds one shard of users of one model: an .npy of uint8, shape (users,
2 * layers, ceil(items / 8)), written row block after row block (nothing of it is
held in memory) and read back by :class:`StoredBeaten`, a block of users at a time.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike

from ...io.atomic import CORRUPT_FILE_ERRORS, atomic_path

if TYPE_CHECKING:
    from ...frameworks.registry import Protocol

__all__ = ["BeatenWriter", "StoredBeaten", "study_layers"]


def study_layers(protocols: Sequence[Protocol]) -> list[bool]:
    """The layers (``history_in_pool`` values) the study of ``protocols`` reads, False
    first: False always (the masks are checked against the exact ranks, whose training
    items are masked), True for protocols whose pool holds the history; none without
    protocols.

    Parameters
    ----------
    protocols : list of Protocol

    Returns
    -------
    list of bool

    Examples
    --------
    >>> from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS as P
    >>> study_layers([P["ncf"], P["daisyrec"]]), study_layers([P["recbole-seq-uni100"]])
    ([False], [False, True])
    >>> study_layers([])
    []
    """
    if not protocols:
        return []
    return sorted({False} | {protocol.history_in_pool for protocol in protocols})


def _row_bytes(n_items: int) -> int:
    return -(-n_items // 8)


class BeatenWriter:
    """Writes the packed above and tied masks of users ``start..stop-1``, block after
    block, to an .npy file that appears whole or not at all (``io.atomic``).

    ``rank_users`` calls :meth:`unmasked` (only when :attr:`needs_unmasked`) and then
    :meth:`masked` with each block's masks (``ranking.above_and_tied``), in the order of
    the users; it ranks with the same masks, and they are gone before it makes its other
    arrays, so the pass keeps its memory budget.

    Parameters
    ----------
    path : str or pathlib.Path
    layers : list of bool
        :func:`study_layers`; empty writes a file of no masks.
    start, stop : int
    test_items : array_like of int (n_users,)
        Every user's held-out item.
    n_items : int

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "X.beaten.npy"
    >>> from sampled_metrics.passes.ranking import above_and_tied
    >>> S = np.array([[0.9, 0.5, 0.5], [0.1, 0.2, 0.3]])
    >>> with BeatenWriter(path, [False], 0, 2, [1, 0], 3) as writer:
    ...     writer.masked(*above_and_tied(S, [1, 0]), 0, 2)
    >>> np.load(path).shape, StoredBeaten([path], [(0, 2)], [False], 3).masks(0, 2)[False][1]
    ((2, 2, 1), array([[False, False,  True],
           [False, False, False]]))
    """

    def __init__(
        self,
        path: str | Path,
        layers: list,
        start: int,
        stop: int,
        test_items: ArrayLike,
        n_items: int,
    ) -> None:
        self.path, self.layers = path, list(layers)
        self.test_items = np.asarray(test_items)
        self.start, self.stop, self.n_items = start, stop, n_items
        self.needs_unmasked = True in self.layers
        self._pending: list = []
        self._position = start

    def __enter__(self) -> BeatenWriter:
        self._atomic = atomic_path(self.path)
        tmp = self._atomic.__enter__()
        self._file = open(tmp, "wb")
        shape = (self.stop - self.start, 2 * len(self.layers), _row_bytes(self.n_items))
        header = {"descr": "|u1", "fortran_order": False, "shape": shape}
        np.lib.format.write_array_header_2_0(self._file, header)
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> Literal[False]:
        self._file.close()
        if kind is None and self._position != self.stop:
            incomplete = ValueError(
                f"{self.path}: masks of users {self.start}..{self._position - 1} written, "
                f"not up to {self.stop - 1}"
            )
            self._atomic.__exit__(ValueError, incomplete, None)  # the partial file goes
            raise incomplete
        self._atomic.__exit__(kind, error, trace)
        return False

    def unmasked(self, above: np.ndarray, tied: np.ndarray) -> None:
        """The next block's masks from its scores before the training items are masked."""
        self._pending = [np.packbits(above, axis=1), np.packbits(tied, axis=1)]

    def masked(self, above: np.ndarray, tied: np.ndarray, a: int, b: int) -> None:
        """Block a..b-1's masks from its scores with the training items masked: its rows
        are written."""
        if a != self._position:
            raise ValueError(f"{self.path}: block of users {a}.. after {self._position - 1}")
        history = self._pending
        self._pending = []
        slots = []
        if False in self.layers:
            slots = [np.packbits(above, axis=1), np.packbits(tied, axis=1)]
        slots += history  # in the order of layers: False before True
        if slots:
            self._file.write(np.stack(slots, axis=1).tobytes())
        self._position = b


class StoredBeaten:
    """One model's stored masks (the files of :class:`BeatenWriter`, one per shard),
    read a block of users at a time, never all at once.

    Parameters
    ----------
    paths : list of path
        The shards' files, in the order of their users.
    bounds : list of (int, int)
        Each shard's users, start and stop (``block_pass.shard_bounds``).
    layers : list of bool
        The layers the files were written with.
    n_items : int
    name : str, optional
        The model's, for messages.

    Raises
    ------
    ValueError
        Naming the file that is cut, damaged or written for other users, items or
        layers.
    """

    def __init__(
        self,
        paths: Sequence[str | Path],
        bounds: Sequence[tuple[int, int]],
        layers: Sequence[bool],
        n_items: int,
        name: str = "model",
    ) -> None:
        self.layers, self.n_items, self.name = list(layers), n_items, name
        self._files = [
            (start, path, _data_offset(path, stop - start, self.layers, n_items), stop - start)
            for path, (start, stop) in zip(paths, bounds, strict=True)
        ]

    def masks(self, a: int, b: int) -> dict:
        """{layer: (above, tied)} of users a..b-1, bool (b - a, n_items) each."""
        packed = self._read(a, b)
        out = {}
        for k, layer in enumerate(self.layers):
            above, tied = (
                np.unpackbits(packed[:, 2 * k + j], axis=1, count=self.n_items).view(bool)
                for j in (0, 1)
            )
            out[layer] = (above, tied)
        return out

    def _read(self, a: int, b: int) -> np.ndarray:
        row = 2 * len(self.layers) * _row_bytes(self.n_items)
        out = np.empty((b - a, 2 * len(self.layers), _row_bytes(self.n_items)), np.uint8)
        for start, path, offset, users in self._files:
            lo, hi = max(a, start), min(b, start + users)
            if lo >= hi:
                continue
            with open(path, "rb") as f:
                data = os.pread(f.fileno(), (hi - lo) * row, offset + (lo - start) * row)
            if len(data) != (hi - lo) * row:
                raise ValueError(f"{path}: cut short; delete it and rerun")
            out[lo - a : hi - a] = np.frombuffer(data, np.uint8).reshape(hi - lo, *out.shape[1:])
        return out


def _data_offset(path, users: int, layers: list, n_items: int) -> int:
    """Where the masks start in a file of :class:`BeatenWriter`, its header and size
    checked against ``users``, ``layers`` and ``n_items``."""
    what = "file of beaten items (rank_shard's output beaten)"
    try:
        with open(path, "rb") as f:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            else:
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
            offset = f.tell()
        size = os.path.getsize(path)
    except (*CORRUPT_FILE_ERRORS, ValueError) as error:
        raise ValueError(f"{path}: not a {what} ({error}); delete it and rerun") from None
    expected = (users, 2 * len(layers), _row_bytes(n_items))
    if dtype != np.uint8 or fortran or tuple(shape) != expected:
        raise ValueError(
            f"{path}: a {what} of shape {tuple(shape)}, not {expected} ({users} users, "
            f"layers {layers}, {n_items} items); delete it and rerun"
        )
    if size != offset + int(np.prod(expected)):
        raise ValueError(f"{path}: {size} bytes, not a whole {what}; delete it and rerun")
    return offset
