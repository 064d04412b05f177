"""Download an archive atomically, with retries and an md5 check."""

from __future__ import annotations

import hashlib
import http.client
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

from tqdm.auto import tqdm

from ..atomic import atomic_path
from .errors import DataError

__all__ = ["check_md5", "download", "md5sum"]


def md5sum(path, chunk_size: int = 1 << 20) -> str:
    """Hex md5 digest of the file at ``path``, read in chunks."""
    digest = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()


class _TransientError(Exception):
    """A download attempt failed in a way that a retry may fix."""


def download(
    url: str,
    dest,
    md5: str | None = None,
    *,
    timeout: float = 60,
    retries: int = 3,
    progress: bool = True,
    backoff: float = 1.0,
) -> Path:
    """Download ``url`` to ``dest`` atomically and return ``Path(dest)``.

    If ``dest`` exists it is used as is when ``md5`` is None or matches (no
    request is made, so an archive placed there by hand works offline); a
    wrong md5 raises :class:`DataError`.

    Otherwise the body is streamed into a temporary file beside ``dest``
    (:func:`sampled_metrics.atomic.atomic_path`), checked against the
    Content-Length (when sent) and ``md5``, then renamed onto ``dest``. On any
    failure the temporary file is removed and ``dest`` is not created.

    Network errors, HTTP 5xx and truncated bodies are retried ``retries``
    times (so at most ``retries + 1`` requests) after sleeping
    ``backoff * 2**k`` seconds; HTTP 4xx and an md5 mismatch are not retried.
    ``timeout`` is the per-request socket timeout in seconds. A tqdm progress
    bar is shown when ``progress`` is true.
    """
    dest = Path(dest)
    if dest.exists():
        check_md5(dest, md5)
        return dest
    last_error: Exception | None = None
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(backoff * 2 ** (attempt - 1))
        try:
            _download_once(url, dest, md5, timeout, progress)
            return dest
        except _TransientError as e:
            last_error = e
    raise DataError(
        f"could not download {url} to {dest} after {retries + 1} attempt(s): {last_error}"
    ) from last_error


def check_md5(path, md5: str | None) -> None:
    """Raise DataError naming ``path`` unless its md5 is ``md5`` (None: no check).
    Used on an archive that is already in place, downloaded or put there by hand."""
    if md5 is None:
        return
    actual = md5sum(path)
    if actual != md5.lower():
        raise DataError(
            f"{path}: existing file has md5 {actual}, expected {md5}; delete it to download again"
        )


def _download_once(url: str, dest: Path, md5: str | None, timeout: float, progress: bool) -> None:
    with atomic_path(dest) as tmp:
        with open(tmp, "wb") as out:
            actual_md5 = _stream(url, out, dest.name, timeout, progress)
        if md5 is not None and actual_md5 != md5.lower():
            raise DataError(f"{dest}: downloaded from {url} with md5 {actual_md5}, expected {md5}")


def _stream(url: str, out: IO[bytes], label: str, timeout: float, progress: bool) -> str:
    """Write the body of ``url`` to ``out``; return its md5. Checks the size."""
    request = urllib.request.Request(url, headers={"User-Agent": "sampled-metrics"})
    digest = hashlib.md5()
    written = 0
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            expected = int(length) if length is not None else None
            with tqdm(
                total=expected,
                unit="B",
                unit_scale=True,
                desc=label,
                disable=not progress,
                leave=False,
            ) as bar:
                for chunk in iter(lambda: response.read(1 << 16), b""):
                    out.write(chunk)
                    digest.update(chunk)
                    written += len(chunk)
                    bar.update(len(chunk))
    except urllib.error.HTTPError as e:
        if 400 <= e.code < 500:
            raise DataError(f"{url}: HTTP {e.code} {e.reason}") from e
        raise _TransientError(f"HTTP {e.code} {e.reason}") from e
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError) as e:
        raise _TransientError(f"{type(e).__name__}: {e}") from e
    if expected is not None and written != expected:
        raise _TransientError(f"truncated body: got {written} of {expected} bytes")
    return digest.hexdigest()
