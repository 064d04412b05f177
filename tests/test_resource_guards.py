"""Resource guards (issue 13): a compressed input that decompresses to more than
``limits.decompressed_mb`` is refused, before it is read when its header says so
and by counting the decompressed stream otherwise (a lying zip header, a gzip
whose ISIZE trailer lies), without decompressing it into memory; a download has
an overall deadline, ``limits.download_seconds``, retries included, and leaves
no file when it passes. Through the library (limits in bytes and seconds) and
through the workflow (the config keys, in MiB and seconds).
"""

from __future__ import annotations

import gzip
import io
import time
import tracemalloc
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import CONFIG_FILE, leftovers, run, tiny_config, write_synthetic_interactions

from sampled_metrics.data import (
    DataError,
    download,
    load_delimited,
    load_movielens_dat,
    read_events,
)
from sampled_metrics.pipeline.config import ConfigError
from sampled_metrics.pipeline.validation import load_config, validate_config

DECOMPRESSED_KEY = "limits.decompressed_mb"
DOWNLOAD_KEY = "limits.download_seconds"
MiB = 2**20
COLUMNS = {"user": "u", "item": "i", "time": "t"}


def events_text(rows: int = 200) -> str:
    return "u,i,t\n" + "".join(f"{k % 9},{100 + k},{k}\n" for k in range(rows))


def dat_text(rows: int = 200) -> str:
    return "".join(f"{k % 9}::{100 + k}::5::{k}\n" for k in range(rows))


def write_zip(path: Path, member: str, text: str) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(member, text)
    return path


def load(kind: str, path: Path, max_bytes: int | None) -> pd.DataFrame:
    """Load ``path`` with the loader of ``kind`` (delimited or movielens_dat)."""
    if kind == "delimited":
        return load_delimited(path, columns=COLUMNS, max_bytes=max_bytes)
    return load_movielens_dat(path, max_bytes=max_bytes)


def text_of(kind: str) -> str:
    return events_text() if kind == "delimited" else dat_text()


def write_gzip_of_zeros(path: Path, first_line: bytes, mib: int) -> Path:
    """``first_line`` then ``mib`` MiB of zeros, gzip-compressed a MiB at a time
    (the test never holds the whole content)."""
    zeros = b"0" * MiB
    with gzip.open(path, "wb", compresslevel=6) as f:
        f.write(first_line)
        for _ in range(mib):
            f.write(zeros)
    return path


def set_isize(path: Path, size: int) -> Path:
    """Overwrite the gzip ISIZE trailer (the last 4 bytes) of ``path``."""
    data = bytearray(path.read_bytes())
    data[-4:] = size.to_bytes(4, "little")
    path.write_bytes(bytes(data))
    return path


def refused(call) -> tuple[str, int]:
    """The DataError message of ``call()`` and the peak of memory traced while it ran."""
    tracemalloc.start()
    try:
        with pytest.raises(DataError) as error:
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return str(error.value), peak


@pytest.fixture
def forbid_decompression(monkeypatch):
    """Once called, opening a zip member or a gzip stream fails the test: what
    must be refused before it is read is refused on its header alone."""

    def forbidden(*args, **kwargs):
        raise AssertionError("the compressed content was opened")

    def forbid() -> None:
        monkeypatch.setattr(zipfile.ZipFile, "open", forbidden)
        monkeypatch.setattr(gzip, "open", forbidden)

    return forbid


# --------------------------------------------------------------------------
# Decompressed size: refused on the header, before reading
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["delimited", "movielens_dat"])
def test_a_zip_member_declaring_more_than_the_limit_is_refused_before_reading(
    kind, tmp_path, forbid_decompression
):
    text = text_of(kind)
    archive = write_zip(tmp_path / "big.zip", "big/ratings.dat", text)
    forbid_decompression()
    with pytest.raises(DataError) as error:
        load(kind, archive, max_bytes=100)
    message = str(error.value)
    assert message.startswith(f"{archive}:big/ratings.dat: declares {len(text)} bytes")
    assert "limit of 100 bytes" in message and DECOMPRESSED_KEY in message
    assert "\n" not in message


@pytest.mark.parametrize("kind", ["delimited", "movielens_dat"])
def test_a_gzip_bomb_is_refused_on_its_isize_before_reading(kind, tmp_path, forbid_decompression):
    first = b"u,i,t\n" if kind == "delimited" else b""
    bomb = write_gzip_of_zeros(tmp_path / "bomb.gz", first, mib=50)
    forbid_decompression()
    assert bomb.stat().st_size < MiB  # 50 MiB of zeros compress to about 50 kB
    message, _ = refused(lambda: load(kind, bomb, max_bytes=MiB))
    assert message.startswith(f"{bomb}: declares {50 * MiB + len(first)} bytes decompressed")
    assert f"limit of {MiB} bytes" in message and DECOMPRESSED_KEY in message


# --------------------------------------------------------------------------
# Decompressed size: the stream is counted when the header lies
# --------------------------------------------------------------------------


def lying_gzip(path: Path, how: str) -> Path:
    """A 50 MiB gzip bomb whose last ISIZE trailer says 10 bytes: patched, or a
    small gzip member appended (the trailer then only describes that member)."""
    write_gzip_of_zeros(path, b"u,i,t\n", mib=50)
    if how == "patched_trailer":
        return set_isize(path, 10)
    with open(path, "ab") as f:
        f.write(gzip.compress(b"0,1,2\n"))
    return path


@pytest.mark.parametrize("kind", ["delimited", "movielens_dat"])
@pytest.mark.parametrize("how", ["patched_trailer", "small_last_member"])
def test_a_gzip_whose_isize_lies_is_stopped_by_the_counting_stream(kind, how, tmp_path):
    bomb = lying_gzip(tmp_path / "lying.gz", how)
    message, peak = refused(lambda: load(kind, bomb, max_bytes=MiB))
    assert message.startswith(f"{bomb}: decompresses to more than the limit of {MiB} bytes")
    assert DECOMPRESSED_KEY in message and "\n" not in message
    # the 50 MiB were never held: at most the limit and a few buffers (traced
    # memory: without a limit, three of these four cases trace 50 to 300 MiB)
    assert peak < 8 * MiB, peak


def test_a_zip_whose_header_understates_the_member_is_not_read_beyond_it(tmp_path):
    """A central directory (and local header) declaring 10 bytes for a 50 MiB
    member: nothing beyond the declared size is decompressed, and the member's
    check sum then fails, a DataError naming the file."""
    archive = tmp_path / "lying.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        with zf.open("big/ratings.dat", "w", force_zip64=False) as f:
            for _ in range(50):
                f.write(b"0" * MiB)
    data = bytearray(archive.read_bytes())
    local, central = data.find(b"PK\x03\x04"), data.find(b"PK\x01\x02")
    assert data[local + 22 : local + 26] == (50 * MiB).to_bytes(4, "little")
    data[local + 22 : local + 26] = (10).to_bytes(4, "little")
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")
    archive.write_bytes(bytes(data))
    assert zipfile.ZipFile(archive).getinfo("big/ratings.dat").file_size == 10
    message, peak = refused(lambda: load_movielens_dat(archive, max_bytes=MiB))
    assert message.startswith(f"{archive}"), message
    assert peak < 8 * MiB, peak


# --------------------------------------------------------------------------
# Within the limit: read as without one; the boundary; plain files
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["delimited", "movielens_dat"])
@pytest.mark.parametrize("container", ["zip", "gz", "gz_empty_last_member"])
def test_an_input_within_the_limit_reads_normally_and_one_byte_more_is_refused(
    kind, container, tmp_path
):
    text = text_of(kind)
    size = len(text.encode())
    if container == "zip":
        path = write_zip(tmp_path / "events.zip", "events/ratings.dat", text)
    else:
        path = tmp_path / "events.gz"
        path.write_bytes(gzip.compress(text.encode()))
        if container == "gz_empty_last_member":  # a valid gzip whose last ISIZE is 0:
            path.write_bytes(path.read_bytes() + gzip.compress(b""))  # only the count tells
    expected = load(kind, path, max_bytes=None)
    pd.testing.assert_frame_equal(load(kind, path, max_bytes=size), expected)
    pd.testing.assert_frame_equal(load(kind, path, max_bytes=100 * size), expected)
    with pytest.raises(DataError, match=DECOMPRESSED_KEY) as error:
        load(kind, path, max_bytes=size - 1)
    stream = container == "gz_empty_last_member"
    assert ("decompresses to more" in str(error.value)) == stream


def test_a_plain_file_has_no_decompressed_limit(tmp_path):
    path = tmp_path / "events.csv"
    path.write_text(events_text())
    frame = load_delimited(path, columns=COLUMNS, max_bytes=1)
    pd.testing.assert_frame_equal(frame, load_delimited(path, columns=COLUMNS))


def test_read_events_passes_the_limit_to_the_loader(tmp_path):
    archive = write_zip(tmp_path / "x.zip", "x/ratings.dat", dat_text())
    entry = {"format": "movielens_dat", "member": None}
    assert len(read_events(archive, entry, max_bytes=MiB)) == 200
    with pytest.raises(DataError, match=DECOMPRESSED_KEY):
        read_events(archive, entry, max_bytes=10)


# --------------------------------------------------------------------------
# Download deadline
# --------------------------------------------------------------------------


def test_a_download_past_its_deadline_stops_and_leaves_no_file(http_server, tmp_path):
    """A body trickled in 40 chunks 0.1 s apart: every read is well within the
    socket timeout, but the whole takes 4 s, past a 1 s deadline."""
    body = bytes(range(256)) * 16
    url = http_server.serve("/slow.zip", body, chunk=len(body) // 40, pause=0.1)
    folder = tmp_path / "data/raw"
    dest = folder / "slow.zip"
    started = time.monotonic()
    with pytest.raises(DataError) as error:
        download(url, dest, timeout=30, retries=3, backoff=0.1, progress=False, deadline=1)
    elapsed = time.monotonic() - started
    message = str(error.value)
    assert url in message and "deadline of 1 s" in message and DOWNLOAD_KEY in message
    assert "\n" not in message
    assert elapsed < 3, elapsed
    assert http_server.requests == ["/slow.zip"]  # past the deadline: no retry
    assert sorted(p.name for p in folder.iterdir()) == []  # neither the file nor a temporary


def test_the_deadline_counts_the_retries(http_server, tmp_path):
    """A server failing with 503: retries (and their sleeps) stop at the deadline,
    whose error also says the last failure."""
    url = http_server.serve("/busy.zip", b"busy", status=503, content_type="text/plain")
    dest = tmp_path / "busy.zip"
    started = time.monotonic()
    with pytest.raises(DataError) as error:
        download(url, dest, timeout=30, retries=50, backoff=0.2, progress=False, deadline=1)
    elapsed = time.monotonic() - started
    message = str(error.value)
    assert url in message and DOWNLOAD_KEY in message and "HTTP 503" in message
    assert elapsed < 2, elapsed
    assert 1 < len(http_server.requests) < 50
    assert list(tmp_path.iterdir()) == []


def test_a_download_within_its_deadline_is_unchanged(http_server, tmp_path):
    body = bytes(range(256)) * 64
    url = http_server.serve("/fast.zip", body, chunk=1024, pause=0.01)
    dest = download(url, tmp_path / "fast.zip", progress=False, deadline=30)
    assert dest.read_bytes() == body
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["fast.zip"]  # no temporary


# --------------------------------------------------------------------------
# Config
# --------------------------------------------------------------------------


def test_limits_default_from_the_schema_and_are_checked():
    limits = load_config(CONFIG_FILE)["limits"]
    assert limits == {"decompressed_mb": 16384, "download_seconds": 3600}
    for key in ("decompressed_mb", "download_seconds"):
        config = yaml.safe_load(CONFIG_FILE.read_text())
        config["limits"] = {key: 0}
        with pytest.raises(ConfigError, match=rf"^limits\.{key}: 0 is less than the minimum of 1"):
            validate_config(config)


# --------------------------------------------------------------------------
# Through the workflow: the config keys reach rules split and download
# --------------------------------------------------------------------------


@pytest.mark.slow
def test_the_workflow_applies_both_limits(http_server, tiny_workdir):
    """limits.decompressed_mb: 1 refuses a gzip of 2 MiB in rule split;
    limits.download_seconds: 1 stops a slow download in rule download. Each
    names its key; neither leaves a file."""
    workdir = tiny_workdir("limits")
    big = io.StringIO()
    write_synthetic_interactions(big)
    with gzip.open(workdir / "big.csv.gz", "wt") as f:
        f.write(big.getvalue() * (2 * MiB // len(big.getvalue()) + 1))
    body = bytes(range(256)) * 16
    url = http_server.serve("/slow.zip", body, chunk=len(body) // 40, pause=0.1)
    config = tiny_config()
    config["limits"] = {"decompressed_mb": 1, "download_seconds": 1}
    config["datasets"]["big"] = {**config["datasets"]["tiny"], "path": "big.csv.gz"}
    config["datasets"]["slow"] = {
        "url": url,
        "md5": "0" * 32,
        "archive": "data/raw/slow.zip",
        "format": "movielens_dat",
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    result = run(
        workdir,
        "--cores",
        "2",
        "--keep-going",
        "data/processed/big/split.npz",
        "data/raw/slow.zip",
        timeout=300,
    )
    assert result.returncode != 0
    console = (result.stdout + result.stderr).splitlines()
    log = (workdir / "logs/big/split.log").read_text().splitlines()
    assert log[-1].startswith("sampled_metrics.data.errors.DataError: big.csv.gz: declares "), log
    assert f"limit of {MiB} bytes ({DECOMPRESSED_KEY}" in log[-1]
    said = [line for line in console if line.startswith("download of data/raw/slow.zip failed: ")]
    assert len(said) == 1, console[-30:]
    assert url in said[0] and DOWNLOAD_KEY in said[0] and "deadline of 1 s" in said[0]
    assert not (workdir / "data/processed/big/split.npz").exists()
    assert not (workdir / "data/raw").exists() or list((workdir / "data/raw").iterdir()) == []
    assert leftovers(workdir) == []
