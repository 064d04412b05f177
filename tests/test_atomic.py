"""Atomic writes (sampled_metrics.io.atomic): whole files under their final name,
with the permissions of the umask, flushed to disk before and after the rename."""

import os
import stat

import pandas as pd
import pytest

from sampled_metrics.io import atomic


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o077, 0o002])
def test_outputs_get_the_permissions_of_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        atomic.write_text("x", tmp_path / "a.txt")
        atomic.write_csv(pd.DataFrame({"a": [1.5]}), tmp_path / "b.csv")
    finally:
        os.umask(old)
    for name in ("a.txt", "b.csv"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~umask, name


def test_the_file_and_its_folder_are_flushed_before_and_after_the_rename(tmp_path, monkeypatch):
    events = []
    fsync, replace = os.fsync, os.replace

    def record_fsync(fd):
        events.append(("fsync", os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))))
        fsync(fd)

    def record_replace(source, target):
        events.append(("replace", os.path.basename(target)))
        replace(source, target)

    monkeypatch.setattr(os, "fsync", record_fsync)
    monkeypatch.setattr(os, "replace", record_replace)
    atomic.write_text("hello", tmp_path / "out.txt")
    # the checksum record is renamed into place just before the file
    assert events[1] == ("replace", "out.txt.sha256")
    events = [event for event in events if event[1] != "out.txt.sha256"]
    assert [kind for kind, _ in events] == ["fsync", "replace", "fsync"]
    assert events[0][1].startswith(".out.txt.")  # the temporary file, before the rename
    assert events[2][1] == tmp_path.name  # the folder, after it
    assert (tmp_path / "out.txt").read_text() == "hello"


def test_a_failed_write_leaves_nothing(tmp_path):
    def fail(tmp):
        tmp.write_text("half")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        atomic.write_atomic(tmp_path / "out.txt", fail)
    assert list(tmp_path.iterdir()) == []  # nor a checksum record


# A job's script, cut short by SIGTERM while it writes a file.
_WRITER = """
import os, sys, time
from pathlib import Path
from sampled_metrics.io.forked import forked_map
from sampled_metrics.io.atomic import atomic_path
from sampled_metrics.pipeline.runs import exit_on_sigterm

def worker(folder, task):
    try:
        os.write(1, b"worker\\n")  # one write: the two workers' lines never interleave
        time.sleep(60)
    finally:  # skipped: a forked worker stops at once
        (Path(folder) / f"worker-{task}-cleaned").touch()

exit_on_sigterm()
folder = Path(sys.argv[1])
with atomic_path(folder / "out.npy") as tmp:
    tmp.write_bytes(b"part")
    forked_map(worker, str(folder), [1, 2], workers=2)
"""


def test_sigterm_during_a_write_leaves_no_temporary(tmp_path):
    import signal
    import subprocess
    import sys

    job = subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert [job.stdout.readline() for _ in range(2)] == ["worker\n"] * 2
    os.killpg(job.pid, signal.SIGTERM)  # the job and its forked workers, as Ctrl-C's group
    assert job.wait(timeout=60) == 128 + signal.SIGTERM
    assert sorted(p.name for p in tmp_path.iterdir()) == []
