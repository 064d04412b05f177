"""Interrupted runs: SIGTERM and SIGKILL during the download, the training and
the sampling, then the plain rerun command; stale locks of dead owners.

The kills start from a copy of the shared ``reference`` run (conftest.py);
docs/reliability.md reports what they measure.
"""

import hashlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import (
    assert_same_files,
    leftovers,
    run,
    snakemake_command,
    tiny_config,
    tiny_movielens_zip,
)

from sampled_metrics.pipeline.runs import clear_stale_locks, record_lock_owner


def start_and_kill(workdir: Path, targets, detect, sig, timeout=240):
    """Start snakemake in its own process group, send ``sig`` to the group as
    soon as ``detect()`` returns something, wait until every process is gone."""
    with open(workdir / "interrupted.out", "w") as out:
        proc = subprocess.Popen(
            snakemake_command(workdir, "--cores", "2", *targets),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + timeout
    try:
        while not (found := detect()):
            assert proc.poll() is None, "the run ended before the stage was reached"
            assert time.monotonic() < deadline, "the stage was never reached"
            time.sleep(0.005)
        os.killpg(proc.pid, sig)
        proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    for _ in range(500):  # the job processes of the group are gone too
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.02)
    else:
        pytest.fail("processes of the killed run are still alive")
    assert proc.returncode != 0
    return found


def assert_interrupted(workdir, rule, sig):
    """The job of ``rule`` was running when the signal came: after SIGTERM
    Snakemake reports it failed and the job left no temporary file, after SIGKILL
    it never reported it finished."""
    out = (workdir / "interrupted.out").read_text()
    assert f"rule {rule}:" in out
    if sig == signal.SIGTERM:
        assert f"Error in rule {rule}:" in out, out[-3000:]
        assert leftovers(workdir) == []
    else:
        assert f"(Rule: {rule})" not in out, out[-3000:]


def log_of(workdir, pattern):
    return lambda: (
        next(iter(sorted((workdir / "logs").glob(pattern))), None)
        if (workdir / "logs").exists()
        else None
    )


def check_rerun(workdir, targets, sig):
    """The plain rerun command succeeds and leaves no temporary file."""
    locks = list((workdir / ".snakemake/locks").glob("*.lock"))
    if sig == signal.SIGKILL:
        assert locks, "a SIGKILLed snakemake should leave its locks behind"
    result = run(workdir, "--cores", "2", *targets)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    if locks:
        assert (
            "Removed the locks and incomplete markers of a killed run"
            in result.stderr + result.stdout
        )
    assert leftovers(workdir) == []
    assert not (workdir / ".snakemake/locks").exists() or not list(
        (workdir / ".snakemake/locks").iterdir()
    )


def copy_of(reference, tmp_path_factory, name) -> Path:
    workdir = tmp_path_factory.mktemp(name) / "run"
    shutil.copytree(reference, workdir)
    return workdir


SIGNALS = [pytest.param(signal.SIGTERM, id="SIGTERM"), pytest.param(signal.SIGKILL, id="SIGKILL")]


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS)
def test_kill_during_training(sig, reference, tmp_path_factory):
    workdir = copy_of(reference, tmp_path_factory, f"kill_fit_{sig.name}")
    for folder in ("results/tiny/models", "results/tiny/ranks", "logs"):
        shutil.rmtree(workdir / folder)
    targets = [f"results/tiny/ranks/{r}.csv" for r in "XYZ"]
    log = start_and_kill(workdir, targets, log_of(workdir, "tiny/fit_*.log"), sig)
    assert_interrupted(workdir, "fit", sig)
    recommender = log.stem.split("_")[-1]
    # the killed job's output is absent or complete: every final-named file equals the reference
    assert_same_files(workdir, reference, "*.pkl", [])
    assert_same_files(workdir, reference, "*.csv", [])
    assert not all((workdir / target).exists() for target in targets)
    check_rerun(workdir, targets, sig)
    assert_same_files(workdir, reference, "*.csv", targets)
    assert_same_files(workdir, reference, "*.pkl", [f"results/tiny/models/{recommender}.pkl"])


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS)
def test_kill_during_sampling(sig, reference, tmp_path_factory):
    workdir = copy_of(reference, tmp_path_factory, f"kill_sampling_{sig.name}")
    shutil.rmtree(workdir / "results/tiny/sampled_ranks")
    shutil.rmtree(workdir / "logs")
    for name in ("sampling.csv", "crosscheck.csv"):
        (workdir / "results/tiny" / name).unlink()
    targets = ["results/tiny/sampling.csv"]
    # one shard: rule merge_ranks ranks the users itself
    start_and_kill(workdir, targets, log_of(workdir, "tiny/merge_ranks_*.log"), sig)
    assert_interrupted(workdir, "merge_ranks", sig)
    assert not (workdir / "results/tiny/sampling.csv").exists()
    assert_same_files(workdir, reference, "*.npy", [])
    check_rerun(workdir, targets, sig)
    assert_same_files(
        workdir, reference, "*.csv", ["results/tiny/sampling.csv", "results/tiny/crosscheck.csv"]
    )
    assert_same_files(
        workdir, reference, "*.npy", [f"results/tiny/sampled_ranks/{r}.npy" for r in "XYZ"]
    )


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS)
def test_kill_during_download(sig, reference, http_server, tiny_workdir):
    body = tiny_movielens_zip()
    # streamed slowly: 1 KiB every 50 ms, so the kill comes mid-stream
    url = http_server.serve("/slow.zip", body, chunk=1024, pause=0.05)
    config = tiny_config()
    config["datasets"]["tinyzip"] = {
        "url": url,
        "archive": "data/raw/tiny.zip",
        "md5": hashlib.md5(body).hexdigest(),
        "format": "movielens_dat",
        "member": "tiny/ratings.dat",
    }
    config["dataset"] = "tinyzip"
    workdir = tiny_workdir(f"kill_download_{sig.name}", config)
    # SIGTERM goes on to a rank file, SIGKILL stops at the split (to keep the test short)
    targets = [
        "results/tinyzip/ranks/Y.csv"
        if sig == signal.SIGTERM
        else "data/processed/tinyzip/split.npz"
    ]
    start_and_kill(
        workdir,
        targets,
        lambda: http_server.started.is_set() and (workdir / "logs/download").exists(),
        sig,
    )
    assert_interrupted(workdir, "download", sig)
    assert not (workdir / "data/raw/tiny.zip").exists()  # killed mid-stream: no partial archive
    check_rerun(workdir, targets, sig)
    assert (workdir / "data/raw/tiny.zip").read_bytes() == body
    # the same interactions as tiny.csv: the same split and ranks as the uninterrupted run
    ours, theirs = (
        np.load(w / f"data/processed/{d}/split.npz")
        for w, d in ((workdir, "tinyzip"), (reference, "tiny"))
    )
    assert sorted(ours.files) == sorted(theirs.files)
    assert all(np.array_equal(ours[key], theirs[key]) for key in ours.files)
    if sig == signal.SIGTERM:
        assert (workdir / targets[0]).read_bytes() == (
            reference / "results/tiny/ranks/Y.csv"
        ).read_bytes()


def test_stale_locks_are_cleared_only_for_dead_owners(tmp_path):
    locks = tmp_path / "locks"
    locks.mkdir()
    (locks / "0.input.lock").write_text("a\n")
    (locks / "0.output.lock").write_text("b\n")
    dead = subprocess.Popen(["true"])
    dead.wait()

    def owners(*records):
        for owner in locks.glob("owner.*"):
            owner.unlink()
        for record in records:
            record_lock_owner(tmp_path, **record)

    assert clear_stale_locks(tmp_path) == []  # no recorded owner: kept
    owners({})  # this live process: kept
    assert clear_stale_locks(tmp_path) == []
    owners({"pid": dead.pid, "host": "another-host"})  # another host: kept
    assert clear_stale_locks(tmp_path) == []
    owners({"pid": dead.pid}, {})  # one of two owners alive: kept
    assert clear_stale_locks(tmp_path) == []
    (locks / "1.input.lock").write_text("c\n")
    owners({"pid": dead.pid})  # two lock sets, one owner: kept
    assert clear_stale_locks(tmp_path) == []
    (locks / "1.input.lock").unlink()
    (tmp_path / "incomplete").mkdir()
    (tmp_path / "incomplete" / "cmVzdWx0cw==").write_text("{}")
    removed = clear_stale_locks(tmp_path)  # the dead owner's: removed
    assert len(removed) == 4
    assert list(locks.iterdir()) == [] and list((tmp_path / "incomplete").iterdir()) == []
