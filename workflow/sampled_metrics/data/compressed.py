"""Opening an input file within limits: a plain file, a .gz file or a member of a
.zip archive, read as bytes.

A compressed input is a resource guard's concern: its declared decompressed size
(the zip header's, the gzip ISIZE trailer) is refused before it is read when it
exceeds the limit (``limits.decompressed_mb`` of config.yaml), and its decompressed
stream is counted, raising :class:`~sampled_metrics.data.errors.DataError` as soon
as more came out (a lying header, a gzip bomb).
"""

from __future__ import annotations

import contextlib
import gzip
import io
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ..io.atomic import CORRUPT_FILE_ERRORS
from .errors import DataError, require_file

__all__: list[str] = []


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


def _too_large(label: str, what: str, limit: int) -> DataError:
    return DataError(
        f"{label}: {what} than the limit of {limit} bytes ({_LIMIT_KEY} in "
        "config.yaml; raise it if the file is genuine)"
    )


class _CappedStream(io.RawIOBase):
    """The decompressed bytes of ``stream``, raising DataError as soon as more
    than ``limit`` of them came out (a lying zip header, a gzip bomb)."""

    def __init__(self, stream: IO[bytes], limit: int, label: str):
        self._stream, self._limit, self._label = stream, limit, label
        self._count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        # never more than one byte past the limit is decompressed
        data = self._stream.read(min(len(buffer), self._limit + 1 - self._count))
        self._count += len(data)
        if self._count > self._limit:
            raise _too_large(self._label, "decompresses to more", self._limit)
        buffer[: len(data)] = data
        return len(data)


def _capped(stream: IO[bytes], limit: int | None, label: str) -> IO[bytes]:
    return stream if limit is None else io.BufferedReader(_CappedStream(stream, limit, label))


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
    zip header's, the gzip ISIZE trailer) exceeds ``max_bytes``, before it is
    read, and its decompressed stream raises DataError once more than
    ``max_bytes`` came out (None: no limit). A plain file is read as it is."""
    require_file(path)
    if member is not None or path.suffix.lower() == ".zip":
        try:
            zf = zipfile.ZipFile(path)
        except CORRUPT_FILE_ERRORS as e:
            raise DataError(f"{path}: not a readable zip archive ({e})") from e
        with zf:
            name = _zip_member(zf, path, member, suffix)
            label = f"{path}:{name}"
            size = zf.getinfo(name).file_size
            if max_bytes is not None and size > max_bytes:
                raise _too_large(label, f"declares {size} bytes decompressed, more", max_bytes)
            with zf.open(name) as f:
                yield _capped(f, max_bytes, label)
    elif path.suffix.lower() == ".gz":
        if max_bytes is not None:
            size = _gzip_declared_size(path)
            if size is not None and size > max_bytes:
                raise _too_large(
                    str(path), f"declares {size} bytes decompressed (gzip ISIZE), more", max_bytes
                )
        with gzip.open(path, "rb") as f:
            yield _capped(f, max_bytes, str(path))
    else:
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
