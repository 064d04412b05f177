"""Download an archive atomically, with retries and an md5 check."""

from __future__ import annotations

import hashlib
import http.client
import time
import urllib.error
import urllib.request
from collections import deque
from pathlib import Path
from typing import IO

from tqdm.auto import tqdm

from ..io.atomic import atomic_path
from .errors import DataError

__all__ = ["check_md5", "download", "md5sum"]


def md5sum(path: str | Path, chunk_size: int = 1 << 20) -> str:
    """Hex md5 digest of the file at ``path``, read in chunks."""
    digest = hashlib.md5()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(chunk_size), b""):
            digest.update(chunk)
    return digest.hexdigest()


class _TransientError(Exception):
    """A download attempt failed in a way that a retry may fix."""


class _DeadlinePassed(Exception):
    """The overall deadline of a download passed (or would before the next retry)."""


class _TooSlow(Exception):
    """The body arrived slower than the minimum rate over a whole window."""

    def __init__(self, received: int, written: int, expected: int | None):
        super().__init__(received, written, expected)
        self.received, self.written, self.expected = received, written, expected


# The config key of the overall deadline, named by the error message.
_DEADLINE_KEY = "limits.download_seconds"


def download(
    url: str,
    dest: str | Path,
    md5: str | None = None,
    *,
    timeout: float = 60,
    retries: int = 3,
    progress: bool = True,
    backoff: float = 1.0,
    deadline: float | None = None,
    min_rate: float = 10_000,
    rate_window: float = 60,
) -> Path:
    """Download ``url`` to ``dest`` atomically and return ``Path(dest)``.

    If ``dest`` exists it is used as is when ``md5`` is None or matches (no
    request is made, so an archive placed there by hand works offline); a
    wrong md5 raises :class:`DataError`.

    Otherwise the body is streamed into a temporary file beside ``dest``
    (:func:`sampled_metrics.io.atomic.atomic_path`), checked against the
    Content-Length (when sent) and ``md5``, then renamed onto ``dest``. On any
    failure the temporary file is removed and ``dest`` is not created.

    Network errors, HTTP 5xx and truncated bodies are retried ``retries``
    times (so at most ``retries + 1`` requests) after sleeping
    ``backoff * 2**k`` seconds; HTTP 4xx and an md5 mismatch are not retried.
    ``timeout`` is the per-request socket timeout in seconds. ``deadline`` is
    the overall limit in seconds of the whole transfer, retries and their sleeps
    included (None: none): past it, or when the next retry would start after it,
    :class:`DataError` names the url and the deadline, and no file is left.
    Every wait on the server is cut to the time left: the connection and the
    headers (the request's socket timeout is the smaller of ``timeout`` and the time
    left when it starts) and each read of the body (its socket timeout is set again
    before every read), so a server that stalls before its headers or in the middle
    of the body stops the download at the deadline, not up to ``timeout`` later.
    A body that keeps arriving, but slower than ``min_rate`` bytes a second on average
    over the last ``rate_window`` seconds (checked at each read once the body has run
    that long), stops the download with :class:`DataError` naming the url and what was
    received, without a retry (a trickling server would trickle again) and without a
    file; a body that stops altogether is the per-read ``timeout``'s.
    A tqdm progress bar is shown when ``progress`` is true.
    """
    dest = Path(dest)
    if dest.exists():
        check_md5(dest, md5)
        return dest
    stop_at = None if deadline is None else time.monotonic() + deadline
    last_error: Exception | None = None
    try:
        for attempt in range(retries + 1):
            if attempt:
                pause = backoff * 2 ** (attempt - 1)
                if stop_at is not None and time.monotonic() + pause >= stop_at:
                    raise _DeadlinePassed
                time.sleep(pause)
            try:
                _download_once(url, dest, md5, timeout, progress, stop_at, (min_rate, rate_window))
                return dest
            except _TransientError as e:
                last_error = e
    except _DeadlinePassed:
        after = f"; last error: {last_error}" if last_error else ""
        raise DataError(
            f"could not download {url} to {dest} within the deadline of {deadline:g} s "
            f"({_DEADLINE_KEY} in config.yaml){after}"
        ) from last_error
    except _TooSlow as slow:
        total = "" if slow.expected is None else f" of {slow.expected:,}"
        raise DataError(
            f"could not download {url} to {dest}: {slow.received:,} bytes in the last "
            f"{rate_window:g} s, below the minimum rate of {min_rate:,.0f} bytes/s "
            f"({slow.written:,}{total} bytes received); stopped, no file kept"
        ) from None
    raise DataError(
        f"could not download {url} to {dest} after {retries + 1} attempt(s): {last_error}"
    ) from last_error


def check_md5(path: str | Path, md5: str | None) -> None:
    """Raise DataError naming ``path`` unless its md5 is ``md5`` (None: no check).
    Used on an archive that is already in place, downloaded or put there by hand."""
    if md5 is None:
        return
    actual = md5sum(path)
    if actual != md5.lower():
        raise DataError(
            f"{path}: existing file has md5 {actual}, expected {md5}; delete it to download again"
        )


def _download_once(
    url: str,
    dest: Path,
    md5: str | None,
    timeout: float,
    progress: bool,
    stop_at: float | None,
    floor: tuple[float, float],
) -> None:
    with atomic_path(dest) as tmp:
        with open(tmp, "wb") as out:
            actual_md5 = _stream(url, out, dest.name, timeout, progress, stop_at, floor)
        if md5 is not None and actual_md5 != md5.lower():
            raise DataError(f"{dest}: downloaded from {url} with md5 {actual_md5}, expected {md5}")


def _time_left(timeout: float, stop_at: float | None) -> float:
    """The socket timeout of the next wait: ``timeout``, cut to the time left
    before ``stop_at`` (a monotonic time; None: no deadline)."""
    if stop_at is None:
        return timeout
    left = stop_at - time.monotonic()
    if left <= 0:
        raise _DeadlinePassed
    return min(timeout, left)


def _read_timeout(response):
    """A function ``(timeout, stop_at) -> None`` that sets the socket timeout of
    ``response``'s next read to :func:`_time_left` (raising ``_DeadlinePassed`` when
    none is left). The socket is the one http.client reads the body from
    (``HTTPResponse.fp``, a buffered ``socket.SocketIO``); where it cannot be
    reached, every read keeps the request's timeout, cut to the time left when the
    request started."""
    sock = getattr(getattr(getattr(response, "fp", None), "raw", None), "_sock", None)

    def set_timeout(timeout: float, stop_at: float | None) -> None:
        left = _time_left(timeout, stop_at)
        if sock is not None:
            sock.settimeout(left)

    return set_timeout


def _received_too_few(samples: deque, now: float, written: int, min_rate, window) -> int | None:
    """The bytes received over the last ``window`` seconds when fewer than
    ``min_rate * window``, else None (also before the body has run for ``window``).

    ``samples`` holds (time, bytes so far) of the reads, the first the body's start;
    this read's is appended, and those before the window's start but the last dropped.
    Counted from that last one, the bytes over the window are never fewer than
    received in it, so a body at the minimum rate is never stopped.

    Examples
    --------
    >>> samples = deque([(0.0, 0)])
    >>> _received_too_few(samples, 0.5, 10, 100, 1.0) is None  # not a whole window yet
    True
    >>> _received_too_few(samples, 1.2, 60, 100, 1.0)  # 60 bytes since t = 0: < 100
    60
    >>> _received_too_few(samples, 1.6, 500, 100, 1.0) is None  # 490 since t = 0.5
    True
    """
    samples.append((now, written))
    start = now - window
    if samples[0][0] > start:
        return None
    while len(samples) > 1 and samples[1][0] <= start:
        samples.popleft()
    received = written - samples[0][1]
    return received if received < min_rate * window else None


def _stream(
    url: str,
    out: IO[bytes],
    label: str,
    timeout: float,
    progress: bool,
    stop_at: float | None,
    floor: tuple[float, float],
) -> str:
    """Write the body of ``url`` to ``out``; return its md5. Checks the size, the
    deadline ``stop_at`` before every read, which waits at most the time left, and
    after every read the ``floor`` (minimum rate in bytes/s, window in seconds)."""
    request = urllib.request.Request(url, headers={"User-Agent": "sampled-metrics"})
    digest = hashlib.md5()
    written = 0
    try:
        with urllib.request.urlopen(request, timeout=_time_left(timeout, stop_at)) as response:
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
                limit_wait = _read_timeout(response)
                samples = deque([(time.monotonic(), 0)])
                while True:
                    limit_wait(timeout, stop_at)  # a body that stalls: wait the time left
                    # read1: what has arrived, so a trickling body cannot hold a read for long
                    chunk = response.read1(1 << 16)
                    if not chunk:
                        break
                    out.write(chunk)
                    digest.update(chunk)
                    written += len(chunk)
                    bar.update(len(chunk))
                    received = _received_too_few(samples, time.monotonic(), written, *floor)
                    if received is not None:
                        raise _TooSlow(received, written, expected)
    except urllib.error.HTTPError as e:
        if 400 <= e.code < 500:
            raise DataError(f"{url}: HTTP {e.code} {e.reason}") from e
        raise _TransientError(f"HTTP {e.code} {e.reason}") from e
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError) as e:
        _time_left(timeout, stop_at)  # a wait cut short by the deadline ends the download
        raise _TransientError(f"{type(e).__name__}: {e}") from e
    if expected is not None and written != expected:
        raise _TransientError(f"truncated body: got {written} of {expected} bytes")
    return digest.hexdigest()
