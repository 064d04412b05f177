"""A stalled download ends at its deadline (issue 24, part 5).

``download(..., deadline=)`` cuts every wait on the server to the time left: the
connection and the headers, and each read of the body (the socket timeout is set
again before every read). A local server that stalls before its headers, in the
middle of the body, or trickles the body, stops the download within the deadline
plus a small margin, even when the per-read timeout is longer than the time left,
with one line naming the url and the deadline, and no file.

``download(..., min_rate=, rate_window=)``: a body that keeps trickling, slower than
the minimum rate over a whole window, stops after that window (long before the
deadline) with one line naming the url and what was received, and no file; a body
faster than the minimum rate, however long, is not stopped.
"""

from __future__ import annotations

import re
import socket
import threading
import time

import pytest

from sampled_metrics.data import DataError, download

DEADLINE = 2.0
MARGIN = 1.0  # scheduling on a shared 2-core machine; the old bound was deadline + timeout


class StallingServer:
    """HTTP on 127.0.0.1 that answers every request by ``mode``:

    * ``before_headers``: reads the request and sends nothing;
    * ``mid_body``: headers for 1000 bytes, 100 of them at once, then a trickle of
      10 bytes every ``0.2`` s for ``trickle`` seconds, then nothing;
    * ``trickle``: headers for 10**6 bytes, then one byte every 0.2 s;
    * ``steady``: headers for 600 bytes, then 30 bytes every 0.1 s (300 bytes/s).

    Stalls last until the test ends (``close``)."""

    def __init__(self, mode: str, trickle: float = 0.0):
        self.mode, self.trickle = mode, trickle
        self.requests = 0
        self._done = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/stall.zip"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self._done.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            self.requests += 1
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket):
        with connection:
            try:
                connection.recv(65536)  # the request
                if self.mode == "before_headers":
                    self._done.wait()
                    return
                length = {"mid_body": 1000, "steady": 600}.get(self.mode, 10**6)
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/zip\r\n"
                    + f"Content-Length: {length}\r\n\r\n".encode()
                )
                if self.mode == "mid_body":
                    connection.sendall(b"x" * 100)
                    until = time.monotonic() + self.trickle
                    while time.monotonic() < until and not self._done.wait(0.2):
                        connection.sendall(b"y" * 10)
                    self._done.wait()
                elif self.mode == "steady":
                    for _ in range(length // 30):
                        self._done.wait(0.1)
                        connection.sendall(b"s" * 30)
                else:
                    while not self._done.wait(0.2):
                        connection.sendall(b"z")
            except OSError:
                pass  # the client hung up

    def close(self):
        self._done.set()
        self._listener.close()


@pytest.fixture
def stalling_server():
    servers = []

    def make(mode: str, **options) -> StallingServer:
        servers.append(StallingServer(mode, **options))
        return servers[-1]

    yield make
    for server in servers:
        server.close()


CASES = {
    # the server never answers: the request's timeout is the time left
    "before_headers": ({}, 60),
    # headers and part of the body, then silence: the read waits the time left, not
    # the per-read timeout (60 s, the download rule's)
    "mid_body": ({}, 60),
    # the body trickles for 1.8 s, then stops: the socket timeout set when the request
    # started (the 2 s then left) would let the last read wait until 3.8 s
    "mid_body_after_a_trickle": ({"trickle": 1.8}, 60),
    # a byte every 0.2 s, for ever: every read is quick, the whole is too slow
    "trickle": ({}, 60),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_stalled_download_ends_at_its_deadline_with_one_line(case, stalling_server, tmp_path):
    options, timeout = CASES[case]
    mode = case if case in ("before_headers", "trickle") else "mid_body"
    server = stalling_server(mode, **options)
    dest = tmp_path / "data/raw/stall.zip"
    started = time.monotonic()
    with pytest.raises(DataError) as error:
        download(
            server.url,
            dest,
            timeout=timeout,
            retries=3,
            backoff=0.1,
            progress=False,
            deadline=DEADLINE,
        )
    elapsed = time.monotonic() - started
    message = str(error.value)
    assert message.startswith(
        f"could not download {server.url} to {dest} within the deadline of 2 s "
        "(limits.download_seconds in config.yaml)"
    ), message
    assert "\n" not in message
    assert DEADLINE - 0.1 < elapsed < DEADLINE + MARGIN, elapsed
    assert not dest.parent.exists() or list(dest.parent.iterdir()) == []  # no file, no temporary


def test_a_stall_shorter_than_the_time_left_is_retried(stalling_server, tmp_path):
    """With a per-read timeout (0.5 s) well below the deadline, a stalled request is
    given up after that timeout and retried, as before; the deadline still ends it."""
    server = stalling_server("before_headers")
    started = time.monotonic()
    with pytest.raises(DataError, match="within the deadline of 2 s") as error:
        download(
            server.url,
            tmp_path / "x.zip",
            timeout=0.5,
            retries=10,
            backoff=0.05,
            progress=False,
            deadline=DEADLINE,
        )
    assert time.monotonic() - started < DEADLINE + MARGIN
    assert server.requests >= 2
    assert "last error: " in str(error.value) and "timed out" in str(error.value)


def test_a_trickling_download_stops_below_its_minimum_rate_with_one_line(stalling_server, tmp_path):
    """A byte every 0.2 s (5 bytes/s) against a minimum of 100 bytes/s over 1 s: stopped
    after about 1 s, not at the 30 s deadline, not retried, naming what was received."""
    server = stalling_server("trickle")
    dest = tmp_path / "data/raw/stall.zip"
    started = time.monotonic()
    with pytest.raises(DataError) as error:
        download(
            server.url,
            dest,
            timeout=60,
            retries=3,
            backoff=0.1,
            progress=False,
            deadline=30,
            min_rate=100,
            rate_window=1.0,
        )
    elapsed = time.monotonic() - started
    message = str(error.value)
    found = re.fullmatch(
        re.escape(f"could not download {server.url} to {dest}: ")
        + r"(\d+) bytes in the last 1 s, below the minimum rate of 100 bytes/s "
        r"\((\d+) of 1,000,000 bytes received\); stopped, no file kept",
        message,
    )
    assert found, message
    received, written = map(int, found.groups())
    assert 2 <= received <= written <= 10  # 5 bytes a second, give or take a read
    assert 1.0 <= elapsed < 1.0 + MARGIN, elapsed
    assert server.requests == 1  # not retried
    assert not dest.parent.exists() or list(dest.parent.iterdir()) == []


def test_a_body_above_its_minimum_rate_is_not_stopped(stalling_server, tmp_path):
    """300 bytes/s for 2 s against a minimum of 100 bytes/s over 0.5 s: downloaded whole."""
    server = stalling_server("steady")
    dest = download(
        server.url, tmp_path / "steady.zip", progress=False, min_rate=100, rate_window=0.5
    )
    assert dest.read_bytes() == b"s" * 600
