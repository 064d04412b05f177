"""Atomic writes: every output appears whole under its final name, or not at all;
and a record of what was written, so that a file damaged later is noticed.

Every output of the pipeline is written under a temporary name in the same
folder and renamed into place, so an interrupted run never leaves a partial
file under the final name. Its SHA-256 is recorded beside it, in
``<folder>/.checksums/<name>.sha256``; :func:`verify_checksum` (run on every
input of every job, ``sampled_metrics.pipeline.runs.start_job``) refuses a file whose
content no longer matches, e.g. one cut, overwritten or edited by hand.
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import os
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # a frame writes itself: a job that writes none need not import pandas
    import pandas as pd

# What reading a cut or damaged file raises (besides the format's own ValueError).
CORRUPT_FILE_ERRORS = (OSError, EOFError, zlib.error, zipfile.BadZipFile, UnicodeDecodeError)


def remove_stale_temporaries(path: str | Path, prefix: str | None = None) -> list[Path]:
    """Delete temporary files left beside ``path`` by a killed write of it
    (names starting with ``prefix``, default ``.<name>.``). A job is the only
    writer of its outputs, so any such file is a leftover; returns them."""
    path = Path(path)
    pattern = glob.escape(prefix or f".{path.name}.") + "*"
    stale = [p for p in path.parent.glob(pattern) if p.is_file()]
    for p in stale:
        p.unlink(missing_ok=True)
    return stale


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` when the
    block succeeds, delete it when the block fails. Temporaries of an earlier,
    killed write of ``path`` are deleted first.

    Before the rename the file gets the permissions of a new file under the
    process's umask (``mkstemp`` makes it 0600) and is flushed to disk; after it
    the folder is flushed too, so that the new name survives a power loss."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())
        _fsync(tmp, os.O_RDONLY)
        _record_checksum(path, sha256(tmp))
        os.replace(tmp, path)
        _fsync(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    finally:
        Path(tmp).unlink(missing_ok=True)


def sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, as hex."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def checksum_path(path: str | Path) -> Path:
    """Where the checksum of ``path`` is recorded: ``<folder>/.checksums/<name>.sha256``."""
    path = Path(path)
    return path.parent / ".checksums" / f"{path.name}.sha256"


def _record_checksum(path: Path, digest: str) -> None:
    """Write ``digest`` as the record of ``path``, itself atomically (written before
    ``path`` is renamed into place: a crash in between leaves a record that the old
    file, if any, fails, so it is rebuilt rather than trusted)."""
    record = checksum_path(path)
    record.parent.mkdir(exist_ok=True)
    remove_stale_temporaries(record)
    fd, tmp = tempfile.mkstemp(prefix=f".{record.name}.", dir=record.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(f"{digest}  {path.name}\n")
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, record)
    finally:
        Path(tmp).unlink(missing_ok=True)


def verify_checksum(path: str | Path) -> bool:
    """Check ``path`` against the checksum recorded when it was written.

    Returns True when it matches, False when no checksum was recorded (a file
    the pipeline did not write, such as a raw data file); raises ValueError
    "<path>: changed or damaged since it was written ...; delete it and rerun"
    when the content differs.

    Parameters
    ----------
    path : str or Path
        A file.

    Returns
    -------
    bool
        Whether a recorded checksum was found (and matched).

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> write_text("a,b\\n1,2\\n", folder / "t.csv")
    >>> verify_checksum(folder / "t.csv")
    True
    >>> _ = (folder / "t.csv").write_text("a,b\\n1,3\\n")
    >>> verify_checksum(folder / "t.csv")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: ...t.csv: changed or damaged since it was written (...); delete it and rerun
    """
    record = checksum_path(path)
    try:
        expected = record.read_text().split()[0]
    except (FileNotFoundError, IndexError):
        return False
    actual = sha256(path)
    if actual != expected:
        raise ValueError(
            f"{path}: changed or damaged since it was written (SHA-256 {actual[:12]}..., "
            f"recorded {expected[:12]}... in {record}); delete it and rerun"
        )
    return True


def _umask() -> int:
    """The process's umask (read by setting it and setting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync(path, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: str | Path, write: Callable[[Path], object]) -> None:
    """Call ``write(tmp_path)`` and move the result onto ``path`` atomically."""
    with atomic_path(path) as tmp:
        write(tmp)


def write_csv(frame: pd.DataFrame, path: str | Path, **kwargs: Any) -> None:
    """A csv written atomically, floats with a fixed format for identical bytes."""
    kwargs.setdefault("index", False)
    kwargs.setdefault("float_format", "%.10g")
    write_atomic(path, lambda tmp: frame.to_csv(tmp, **kwargs))


def write_text(text: str, path: str | Path) -> None:
    write_atomic(path, lambda tmp: tmp.write_text(text))


def write_npy(array: np.ndarray, path: str | Path) -> None:
    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            np.save(f, array)

    write_atomic(path, write)


def write_npz(arrays: dict, path: str | Path, *, compressed: bool = False) -> None:
    """An .npz file of ``arrays`` written atomically (``np.savez_compressed`` if asked)."""
    save = np.savez_compressed if compressed else np.savez

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as f:
            save(f, **arrays)

    write_atomic(path, write)


def read_npz(path: str | Path, keys: Iterable[str], what: str) -> dict:
    """The arrays ``keys`` of an .npz file; a cut, damaged or incomplete file raises
    ValueError "<path>: not a <what> (...); delete it and rerun"."""
    try:
        with np.load(path) as data:
            return {key: data[key] for key in keys}
    except (*CORRUPT_FILE_ERRORS, ValueError, KeyError) as error:
        raise ValueError(f"{path}: not a {what} ({error}); delete it and rerun") from None
