"""Reading an input within the memory available (issue 24, part 5).

The decompression limit is the smaller of ``limits.decompressed_mb`` and what the
memory available can read (``compressed.memory_available`` divided by
``READ_MEMORY_FACTOR``); a plain file larger than that is refused too, before it is
read; a ``MemoryError`` while reading (the parser's, pandas' "C error: out of
memory", anything) becomes one DataError naming the file, the memory needed and
the memory available. The memory available is monkeypatched here: no test
exhausts the machine's memory.
"""

from __future__ import annotations

import gzip
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from conftest import leftovers, run, tiny_config

from sampled_metrics.data import (
    DataError,
    compressed,
    formats,
    load_delimited,
    load_movielens_dat,
    read_events,
)
from sampled_metrics.data.compressed import READ_MEMORY_FACTOR, Memory, memory_available

MiB = 2**20
COLUMNS = {"user": "u", "item": "i", "time": "t"}
CONFIGURED = 16384 * MiB  # limits.decompressed_mb's default, in bytes
DAT = "".join(f"{k % 9}::{100 + k}::5::{k}\n" for k in range(2000))  # about 30 kB
CSV = "u,i,t\n" + "".join(f"{k % 9},{100 + k},{k}\n" for k in range(2000))


def load(kind: str, path: Path, max_bytes: int | None = CONFIGURED) -> pd.DataFrame:
    if kind == "delimited":
        return load_delimited(path, columns=COLUMNS, max_bytes=max_bytes)
    return load_movielens_dat(path, max_bytes=max_bytes)


def write(kind: str, container: str, folder: Path) -> tuple[Path, str, int]:
    """The events of ``kind`` in ``container`` (plain, gz, zip): the file, its label
    in messages, and its bytes of text."""
    text = DAT if kind == "movielens_dat" else CSV
    if container == "zip":
        path = folder / "events.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("events/ratings.dat", text)
        return path, f"{path}:events/ratings.dat", len(text)
    if container == "gz":
        path = folder / "events.gz"
        path.write_bytes(gzip.compress(text.encode()))
        return path, str(path), len(text)
    path = folder / "events.dat"
    path.write_text(text)
    return path, str(path), len(text)


@pytest.fixture
def memory(monkeypatch):
    """``memory(n)``: from now on, ``n`` bytes are available (None: unknown)."""

    def set_available(available: int | None) -> None:
        value = None if available is None else Memory(available, "MemAvailable in test")
        monkeypatch.setattr(compressed, "memory_available", lambda: value)

    return set_available


def one_line(error) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


KINDS = ["delimited", "movielens_dat"]
CONTAINERS = ["plain", "gz", "zip"]


# --------------------------------------------------------------------------
# Refused before reading when the memory available cannot read it
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("container", CONTAINERS)
def test_an_input_the_memory_cannot_read_is_refused_before_reading(
    kind, container, tmp_path, memory, monkeypatch
):
    path, label, size = write(kind, container, tmp_path)
    memory(READ_MEMORY_FACTOR * size - 1)  # one byte short: below the configured limit
    opened = []
    for module, name in ((zipfile.ZipFile, "open"), (gzip, "open")):
        monkeypatch.setattr(module, name, lambda *a, **k: opened.append(a))
    with pytest.raises(DataError) as error:
        load(kind, path)
    message = one_line(error)
    what = "holds" if container == "plain" else "declares"
    assert message.startswith(f"{label}: {what} {size} bytes"), message
    need = size * READ_MEMORY_FACTOR / MiB
    available = (READ_MEMORY_FACTOR * size - 1) / MiB
    assert f"reading it needs about {need:.1f} MiB of memory ({READ_MEMORY_FACTOR} bytes a " in (
        message
    )
    assert f"more than the {available:.1f} MiB available (MemAvailable in test)" in message
    assert opened == []  # the compressed content was never opened


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("container", CONTAINERS)
def test_an_input_the_memory_can_read_reads_as_without_a_guard(kind, container, tmp_path, memory):
    path, _, size = write(kind, container, tmp_path)
    memory(None)
    expected = load(kind, path, max_bytes=None)
    memory(READ_MEMORY_FACTOR * size)  # just enough
    pd.testing.assert_frame_equal(load(kind, path), expected)


def test_the_smaller_limit_names_itself(tmp_path, memory):
    """The configured limit, when it is the smaller, keeps its message and its key."""
    path, label, size = write("movielens_dat", "zip", tmp_path)
    memory(READ_MEMORY_FACTOR * size * 100)
    with pytest.raises(DataError, match="limits.decompressed_mb in config.yaml; raise it"):
        load("movielens_dat", path, max_bytes=size - 1)
    memory(READ_MEMORY_FACTOR * (size - 1))
    with pytest.raises(DataError) as error:
        load("movielens_dat", path, max_bytes=size * 100)
    assert "memory" in one_line(error) and "limits.decompressed_mb" not in str(error.value)


@pytest.mark.parametrize("kind", KINDS)
def test_a_gzip_whose_isize_lies_stops_at_what_the_memory_can_read(kind, tmp_path, memory):
    path, label, size = write(kind, "gz", tmp_path)
    data = bytearray(path.read_bytes())
    data[-4:] = (10).to_bytes(4, "little")  # the trailer says 10 bytes
    path.write_bytes(bytes(data))
    memory(READ_MEMORY_FACTOR * 1000)
    with pytest.raises(DataError) as error:
        load(kind, path)
    message = one_line(error)
    assert message.startswith(f"{label}: decompresses to more than 1000 bytes; reading it ")
    assert "needs over " in message and "MiB available (MemAvailable in test)" in message


def test_without_a_reading_of_memory_only_the_configured_limit_applies(tmp_path, memory):
    path, _, size = write("delimited", "gz", tmp_path)
    memory(None)
    assert len(load("delimited", path, max_bytes=size)) == 2000
    with pytest.raises(DataError, match="limits.decompressed_mb"):
        load("delimited", path, max_bytes=size - 1)


# --------------------------------------------------------------------------
# A MemoryError while reading: one DataError
# --------------------------------------------------------------------------


def out_of_memory(*args, **kwargs):
    raise MemoryError


def c_parser_out_of_memory(*args, **kwargs):
    raise pd.errors.ParserError("Error tokenizing data. C error: out of memory")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("container", CONTAINERS)
@pytest.mark.parametrize("failure", [out_of_memory, c_parser_out_of_memory])
def test_a_memory_error_in_the_parser_is_one_error_naming_the_file(
    kind, container, failure, tmp_path, memory, monkeypatch
):
    path, label, size = write(kind, container, tmp_path)
    memory(3 * 2**30)
    monkeypatch.setattr(formats.pd, "read_csv", failure)
    with pytest.raises(DataError) as error:
        read_events(
            path,
            {"format": "movielens_dat", "member": None}
            if kind == "movielens_dat"
            else {
                "format": "delimited",
                "sep": ",",
                "header": True,
                "columns": COLUMNS,
                "member": None,
            },
            max_bytes=CONFIGURED,
        )
    message = one_line(error)
    need = size * READ_MEMORY_FACTOR / MiB
    assert message == (
        f"{label}: out of memory while reading it: its {size} bytes of text need about "
        f"{need:.1f} MiB of memory ({READ_MEMORY_FACTOR} bytes a byte), 3072.0 MiB were "
        "available (MemAvailable in test); free memory or use a machine with more"
    )
    # no chained traceback: the log and the console say this one line
    assert error.value.__cause__ is None and error.value.__context__ is None


def test_a_memory_error_anywhere_in_reading_is_caught(tmp_path, memory, monkeypatch):
    """Not only the parser: here the decoding of the text fails."""
    path, label, _ = write("movielens_dat", "plain", tmp_path)
    memory(None)
    monkeypatch.setattr(formats, "_read_bytes", out_of_memory)
    with pytest.raises(DataError) as error:
        load("movielens_dat", path)
    assert one_line(error).startswith(f"{label}: out of memory while reading it: its ")
    assert "the memory available is unknown" in str(error.value)


def test_other_parser_errors_are_unchanged(tmp_path, memory):
    path = tmp_path / "bad.dat"
    path.write_text("1::2::5::3\n1::2::5\n")
    memory(3 * 2**30)
    with pytest.raises(DataError, match=r"line 2: expected 4 '::'-separated fields, found 3"):
        load("movielens_dat", path)


# --------------------------------------------------------------------------
# Where the memory available is read
# --------------------------------------------------------------------------


def fake_cgroup(root: Path, limit: str, current: int, inactive_file: int) -> Path:
    """A cgroup v2 tree: the process in /job, its memory.max ``limit``."""
    (root / "job").mkdir(parents=True)
    (root / "job/memory.max").write_text(limit + "\n")
    (root / "job/memory.current").write_text(f"{current}\n")
    (root / "job/memory.stat").write_text(f"anon 5\ninactive_file {inactive_file}\n")
    own = root / "self_cgroup"
    own.write_text("0::/job\n")
    return own


def test_memory_available_is_memavailable_cut_to_the_cgroup_room(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal: 9000000 kB\nMemFree: 100 kB\nMemAvailable: 4000000 kB\n")
    cgroups = tmp_path / "cgroup"
    own = fake_cgroup(cgroups, str(3 * 2**30), current=2**30, inactive_file=2**28)
    read = memory_available(meminfo, cgroups, own)
    assert read == Memory(2 * 2**30 + 2**28, "the room under the cgroup's memory.max")
    (cgroups / "job/memory.max").write_text("max\n")  # no cgroup limit
    assert memory_available(meminfo, cgroups, own) == Memory(
        4000000 * 1024, f"MemAvailable in {meminfo}"
    )


def test_memory_available_is_unknown_without_proc(tmp_path):
    """No /proc/meminfo and no cgroup (not Linux): unknown, nothing refused for memory."""
    absent = tmp_path / "absent"
    assert memory_available(absent / "meminfo", absent, absent / "cgroup") is None
    own = fake_cgroup(tmp_path / "cg", "1000000", current=400000, inactive_file=0)
    assert memory_available(absent, tmp_path / "cg", own).available == 600000


def test_memory_available_on_this_machine_is_read():
    memory = memory_available()
    if Path("/proc/meminfo").is_file():
        assert memory is not None and memory.available > 0


# --------------------------------------------------------------------------
# Through the workflow: rule split refuses a file no memory can read
# --------------------------------------------------------------------------


@pytest.mark.slow
def test_the_workflow_refuses_a_file_larger_than_memory_in_one_line(tiny_workdir):
    """A sparse plain file of 4 TiB (no disk used): refused by rule split before it
    is read, whatever the machine, with one line on the console; no split."""
    config = tiny_config()
    config["datasets"]["huge"] = {**config["datasets"]["tiny"], "path": "huge.csv"}
    del config["datasets"]["huge"]["facts"], config["datasets"]["huge"]["split_facts"]
    workdir = tiny_workdir("huge", config)
    with open(workdir / "huge.csv", "wb") as f:
        f.truncate(2**42)
    result = run(workdir, "--cores", "1", "data/processed/huge/split.npz", timeout=300)
    assert result.returncode != 0
    console = (result.stdout + result.stderr).splitlines()
    said = [line for line in console if line.startswith("rule split failed: DataError: ")]
    assert len(said) == 1, console[-30:]
    assert said[0].startswith(
        f"rule split failed: DataError: huge.csv: holds {2**42} bytes; reading it needs about "
        f"{2**42 * READ_MEMORY_FACTOR / MiB:.1f} MiB of memory"
    )
    assert "MiB available (MemAvailable in /proc/meminfo" in said[0]
    assert not (workdir / "data/processed/huge/split.npz").exists()
    assert leftovers(workdir) == []
