"""Opening an input file within limits: a plain file, a .gz file or a member of a
.zip archive, read as bytes.

A compressed input is a resource guard's concern: its declared decompressed size
(the zip header's, the gzip ISIZE trailer) is refused before it is read when it
exceeds the limit, and its decompressed stream is counted, raising
:class:`~sampled_metrics.data.errors.DataError` as soon as more came out (a lying
header, a gzip bomb). The limit is the smaller of ``limits.decompressed_mb`` of
config.yaml and what the memory available can read: :func:`memory_available`
divided by :data:`READ_MEMORY_FACTOR`, the memory the loaders need per byte of text.
A plain file larger than the memory available can read is refused the same way,
before it is read; and a ``MemoryError`` while a file is read becomes one DataError
naming the file, the memory needed and the memory available (:func:`_within_memory`).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, NamedTuple, TypeVar, cast

from ..io.atomic import CORRUPT_FILE_ERRORS
from .errors import DataError, require_file

__all__ = ["READ_MEMORY_FACTOR", "Memory", "memory_available"]


def _zip_member(zf: zipfile.ZipFile, path: Path, member: str | None, suffix: str) -> str:
    """The requested member, or the single member whose name ends with suffix."""
    names = [n for n in zf.namelist() if not n.endswith("/")]
    if member is not None:
        if member not in names:
            raise DataError(f"{path}: no member {member!r} in the archive (members: {names})")
        return member
    matches = [n for n in names if n.endswith(suffix)]
    if len(matches) != 1:
        raise DataError(
            f"{path}: expected exactly one member ending with "
            f"{suffix!r}, found {matches}; pass member="
        )
    return matches[0]


# The config key of the limit on decompressed sizes, named by the error messages.
_LIMIT_KEY = "limits.decompressed_mb"

# Bytes of memory the loaders need per byte of text read, at their peak (the parser's
# overhead): measured 7.7 for a MovieLens ratings.dat (the text, its '::' replaced, then
# parsed) and 4.7 for a csv, each of 1M MovieLens-like rows (peak RSS less the RSS before,
# pandas 3.1). An input whose text times this is more than the memory available is
# refused before it is read.
READ_MEMORY_FACTOR = 8

_MIB = 2**20


class Memory(NamedTuple):
    """Memory available to this process now, in bytes, and where the figure comes from."""

    available: int
    source: str


def memory_available(
    meminfo: str | Path = "/proc/meminfo",
    cgroup_root: str | Path = "/sys/fs/cgroup",
    own_cgroup: str | Path = "/proc/self/cgroup",
) -> Memory | None:
    """The memory this process can still take: ``MemAvailable`` of ``/proc/meminfo``
    (free memory and the caches the kernel can drop), cut to the room left under the
    memory limit of its cgroup (v2: ``memory.max`` less ``memory.current``, its
    inactive file cache counted as free; the limit of a container or a batch job)
    when that is smaller. None when neither can be read (no ``/proc``: not Linux):
    then no input is refused for memory, only for ``limits.decompressed_mb``, and a
    ``MemoryError`` while reading still gives one DataError.

    Examples
    --------
    >>> memory = memory_available()
    >>> memory is None or memory.available > 0
    True
    """
    found = []
    try:
        with open(meminfo) as f:
            fields = dict(line.split(":", 1) for line in f if ":" in line)
        available = int(fields["MemAvailable"].split()[0]) * 1024
        found.append(Memory(available, f"MemAvailable in {meminfo}"))
    except (OSError, KeyError, ValueError, IndexError):
        pass
    room = _cgroup_room(Path(cgroup_root), Path(own_cgroup))
    if room is not None:
        found.append(Memory(room, "the room under the cgroup's memory.max"))
    return min(found, default=None)


def _cgroup_room(root: Path, own: Path) -> int | None:
    """Bytes left under the tightest memory.max of this process's cgroup (v2) and
    its ancestors; None without a cgroup v2 limit."""
    try:
        relative = next(
            line.split("::", 1)[1].strip()
            for line in own.read_text().splitlines()
            if line.startswith("0::")
        )
    except (OSError, StopIteration):
        return None
    folder, rooms = (root / relative.lstrip("/")).resolve(), []
    while True:
        try:
            limit = (folder / "memory.max").read_text().strip()
            if limit != "max":
                used = int((folder / "memory.current").read_text())
                stat = dict(
                    line.split() for line in (folder / "memory.stat").read_text().splitlines()
                )
                rooms.append(int(limit) - used + int(stat.get("inactive_file", 0)))
        except (OSError, ValueError):
            pass
        if folder == root.resolve() or folder.parent == folder:
            break
        folder = folder.parent
    return max(min(rooms), 0) if rooms else None


def _mib(size: int) -> str:
    return f"{size / _MIB:.1f} MiB"


def _beyond_memory(label: str, what: str, need: str, memory: Memory) -> DataError:
    """An input refused, before it is read, for the memory it needs (``need``)."""
    return DataError(
        f"{label}: {what}; reading it needs {need} of memory ({READ_MEMORY_FACTOR} bytes a "
        f"byte of text), more than the {_mib(memory.available)} available ({memory.source}); "
        "free memory or use a machine with more"
    )


def _declared_too_large(
    label: str, what: str, size: int, limit: int, memory: Memory | None
) -> DataError:
    """An input of ``size`` bytes of text (``what``: how we know) over ``limit``;
    ``memory`` when the limit is what the memory available can read."""
    if memory is not None:
        return _beyond_memory(label, what, f"about {_mib(size * READ_MEMORY_FACTOR)}", memory)
    return _too_large(label, f"{what}, more", limit)


def _too_large(label: str, what: str, limit: int) -> DataError:
    return DataError(
        f"{label}: {what} than the limit of {limit} bytes ({_LIMIT_KEY} in "
        "config.yaml; raise it if the file is genuine)"
    )


def _limit(max_bytes: int | None, memory: Memory | None) -> tuple[int | None, Memory | None]:
    """The limit on decompressed bytes: ``max_bytes`` (None: none) or what ``memory``
    can read, whichever is smaller; and ``memory`` when it is the one that binds."""
    readable = None if memory is None else memory.available // READ_MEMORY_FACTOR
    if readable is not None and (max_bytes is None or readable < max_bytes):
        return readable, memory
    return max_bytes, None


Result = TypeVar("Result")


def _within_memory(
    path: Path, member: str | None, suffix: str, read: Callable[[], Result]
) -> Result:
    """``read()`` of the input ``path`` (``member``, ``suffix``: see :func:`_open_binary`),
    with a ``MemoryError`` raised while it runs (by the parser, the decoding, anything)
    turned into one DataError naming the file, the memory its text needs and the
    memory that was available when it started."""
    memory = memory_available()
    try:
        return read()
    except MemoryError:
        pass  # leave the except block: the traceback, and all read() held, go
    label, size = _text_size(path, member, suffix)
    need = (
        "its size is unknown"
        if size is None
        else (
            f"its {size} bytes of text need about {_mib(size * READ_MEMORY_FACTOR)} of memory "
            f"({READ_MEMORY_FACTOR} bytes a byte)"
        )
    )
    had = (
        "the memory available is unknown"
        if memory is None
        else f"{_mib(memory.available)} were available ({memory.source})"
    )
    raise DataError(
        f"{label}: out of memory while reading it: {need}, {had}; free memory or use a "
        "machine with more"
    )


def _text_size(path: Path, member: str | None, suffix: str) -> tuple[str, int | None]:
    """The name of an input in messages (``archive:member`` for a zip member) and its
    bytes of text: a zip member's declared size, a gzip file's ISIZE trailer, a plain
    file's size (None when it cannot be told)."""
    label = f"{path}:{member}" if member else str(path)
    try:
        if member is not None or path.suffix.lower() == ".zip":
            with zipfile.ZipFile(path) as zf:
                name = _zip_member(zf, path, member, suffix)
                return f"{path}:{name}", zf.getinfo(name).file_size
        if path.suffix.lower() == ".gz":
            return label, _gzip_declared_size(path)
        return label, path.stat().st_size
    except (DataError, *CORRUPT_FILE_ERRORS):
        return label, None


class _CappedStream(io.RawIOBase):
    """The decompressed bytes of ``stream``, raising DataError as soon as more
    than ``limit`` of them came out (a lying zip header, a gzip bomb); ``memory``
    when the limit is what the memory available can read."""

    def __init__(self, stream: IO[bytes], limit: int, label: str, memory: Memory | None):
        self._stream, self._limit, self._label, self._memory = stream, limit, label, memory
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        # never more than one byte past the limit is decompressed
        data = self._stream.read(min(len(buffer), self._limit + 1 - self._count))
        self._count += len(data)
        if self._count > self._limit:
            if self._memory is not None:
                what = f"decompresses to more than {self._limit} bytes"
                need = f"over {_mib(self._limit * READ_MEMORY_FACTOR)}"
                raise _beyond_memory(self._label, what, need, self._memory)
            raise _too_large(self._label, "decompresses to more", self._limit)
        buffer[: len(data)] = data
        return len(data)


def _capped(stream: IO[bytes], limit: int | None, label: str, memory: Memory | None) -> IO[bytes]:
    if limit is None:
        return stream
    return io.BufferedReader(_CappedStream(stream, limit, label, memory))


def _gzip_declared_size(path: Path) -> int | None:
    """The ISIZE trailer of a gzip file: the size of its last member modulo 2**32
    (a cheap early refusal only; the stream itself is counted too)."""
    with open(path, "rb") as f:
        if f.seek(0, io.SEEK_END) < 18:  # header + trailer: a corrupt file, gzip says so
            return None
        f.seek(-4, io.SEEK_END)
        return int.from_bytes(f.read(4), "little")


@contextlib.contextmanager
def _open_binary(
    path: Path, member: str | None, suffix: str = "", max_bytes: int | None = None
) -> Iterator[IO[bytes]]:
    """Open a plain file, a .gz file, or a member of a .zip file for reading.

    A compressed input is refused with DataError when its declared size (the
    zip header's, the gzip ISIZE trailer) exceeds the limit, before it is read,
    and its decompressed stream raises DataError once more than the limit came
    out. The limit is ``max_bytes`` (None: none) or, when smaller, what the memory
    available can read (:func:`memory_available` / :data:`READ_MEMORY_FACTOR`),
    which also refuses a plain file larger than that, before it is read."""
    require_file(path)
    available = memory_available()
    limit, memory = _limit(max_bytes, available)
    if member is not None or path.suffix.lower() == ".zip":
        try:
            zf = zipfile.ZipFile(path)
        except CORRUPT_FILE_ERRORS as e:
            raise DataError(f"{path}: not a readable zip archive ({e})") from e
        with zf:
            name = _zip_member(zf, path, member, suffix)
            label = f"{path}:{name}"
            size = zf.getinfo(name).file_size
            if limit is not None and size > limit:
                what = f"declares {size} bytes decompressed"
                raise _declared_too_large(label, what, size, limit, memory)
            with zf.open(name) as f:
                yield _capped(f, limit, label, memory)
    elif path.suffix.lower() == ".gz":
        if limit is not None:
            declared = _gzip_declared_size(path)
            if declared is not None and declared > limit:
                what = f"declares {declared} bytes decompressed (gzip ISIZE)"
                raise _declared_too_large(str(path), what, declared, limit, memory)
        with gzip.open(path, "rb") as f:
            yield _capped(cast(IO[bytes], f), limit, str(path), memory)  # a GzipFile reads bytes
    else:
        size = path.stat().st_size  # a plain file: only the memory limits it
        if available is not None and size > available.available // READ_MEMORY_FACTOR:
            what = f"holds {size} bytes"
            raise _declared_too_large(str(path), what, size, 0, available)
        with open(path, "rb") as f:
            yield f


def _read_bytes(path: Path, member: str | None, suffix: str, max_bytes: int | None) -> bytes:
    try:
        with _open_binary(path, member, suffix, max_bytes) as f:
            return f.read()
    except DataError:
        raise
    except CORRUPT_FILE_ERRORS as e:
        raise DataError(f"{path}: cannot read, corrupt or truncated ({e})") from e
