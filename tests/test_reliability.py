"""Reliability: interrupted runs, determinism, provenance, bad input, fuzzing.

The workflow tests share a few finished runs (module-scoped fixtures) on the
tiny synthetic data set of test_workflow.py; docs/reliability.md reports what
they measure.
"""

import copy
import gzip
import hashlib
import http.server
import io
import os
import shutil
import signal
import subprocess
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_workflow import SNAKEMAKE, TINY_CONFIG, run, write_synthetic_interactions

from sampled_metrics import corrections as C
from sampled_metrics import metrics as M
from sampled_metrics.data import DataError, leave_last_out_split, load_delimited, load_movielens_dat
from sampled_metrics.laws import LAWS, sampled_rank_law
from sampled_metrics.ranking import exact_ranks, rank_from_scores
from sampled_metrics.recommenders import PrecomputedScores, all_scores, fit_recommender
from sampled_metrics.runs import PACKAGES, clear_stale_locks, record_lock_owner
from sampled_metrics.sampling import excluded_items, sampled_ranks

# What the tiny runs build: every table of the data set but the figures.
TARGETS = [
    "results/tiny/exact_metrics.csv",
    "results/tiny/sampling.csv",
    "results/tiny/table3.csv",
    "results/tiny/table4.csv",
    "results/tiny/provenance/versions.txt",
    "results/tiny/provenance/config.yaml",
]


def new_workdir(tmp_path_factory, name, config=None) -> Path:
    workdir = tmp_path_factory.mktemp(name)
    write_synthetic_interactions(workdir / "tiny.csv")
    (workdir / "config.yaml").write_text(yaml.safe_dump(config or TINY_CONFIG))
    return workdir


def finished(workdir: Path, *args: str) -> Path:
    result = run(workdir, *args)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return workdir


def result_files(workdir: Path, pattern: str) -> dict[str, bytes]:
    """Bytes of the final-named files under results/ and data/ (no benchmarks)."""
    return {
        str(p.relative_to(workdir)): p.read_bytes()
        for top in ("results", "data")
        for p in (workdir / top).rglob(pattern)
        if p.is_file() and "benchmarks" not in p.parts
    }


def leftovers(workdir: Path) -> list[str]:
    """Temporary files of an interrupted write (hidden names or .part-)."""
    return sorted(
        str(p.relative_to(workdir))
        for top in ("results", "data")
        if (workdir / top).exists()
        for p in (workdir / top).rglob("*")
        if p.is_file() and (p.name.startswith(".") or ".part-" in p.name)
    )


def assert_same_files(workdir, reference, pattern, expected_names):
    ours, theirs = result_files(workdir, pattern), result_files(reference, pattern)
    assert set(expected_names) <= set(ours), sorted(ours)
    differ = [name for name in ours if ours[name] != theirs.get(name)]
    assert not differ, differ


# --------------------------------------------------------------------------
# Shared runs
# --------------------------------------------------------------------------


def start(workdir: Path, targets, *options: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            *SNAKEMAKE,
            *targets,
            "--directory",
            str(workdir),
            "--configfile",
            str(workdir / "config.yaml"),
            *options,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    """The same config twice, side by side: the reference with 2 threads for
    rule scores, the second with --set-threads scores=1."""
    reference = new_workdir(tmp_path_factory, "reference")
    second = new_workdir(tmp_path_factory, "second")
    procs = [
        start(reference, TARGETS, "--cores", "2"),
        start(second, TARGETS, "--cores", "2", "--set-threads", "scores=1"),
    ]
    outputs = [proc.communicate(timeout=600)[0] for proc in procs]
    for proc, out in zip(procs, outputs):
        assert proc.returncode == 0, out[-4000:]
    return reference, second


@pytest.fixture(scope="module")
def reference(two_runs):
    """The uninterrupted run."""
    return two_runs[0]


@pytest.fixture(scope="module")
def second_run(two_runs):
    return two_runs[1]


@pytest.fixture(scope="module")
def other_seed(reference, tmp_path_factory):
    """The reference run continued with another sampling.seed."""
    workdir = tmp_path_factory.mktemp("seed") / "run"
    shutil.copytree(reference, workdir)
    config = copy.deepcopy(TINY_CONFIG)
    config["sampling"]["seed"] = 7
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    return finished(workdir, "--cores", "2", *TARGETS)


# --------------------------------------------------------------------------
# A local server for the download (a tiny MovieLens zip, optionally slow)
# --------------------------------------------------------------------------


def tiny_movielens_zip() -> bytes:
    """The synthetic interactions as ml-style ratings.dat inside a zip (stored)."""
    buffer = io.StringIO()
    write_synthetic_interactions(buffer)
    buffer.seek(0)
    frame = pd.read_csv(buffer)
    text = "".join(
        f"{u}::{i}::5::{t}\n" for u, i, t in frame[["uid", "iid", "t"]].itertuples(index=False)
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(zipfile.ZipInfo("tiny/ratings.dat", date_time=(2020, 1, 1, 0, 0, 0)), text)
    return out.getvalue()


class Handler(http.server.BaseHTTPRequestHandler):
    body = b""
    started = threading.Event()  # set when the slow route has sent its first chunk

    def do_GET(self):  # noqa: N802 (http.server API)
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        chunk = 1024 if self.path.startswith("/slow") else len(self.body)
        try:
            for start in range(0, len(self.body), chunk):
                self.wfile.write(self.body[start : start + chunk])
                self.wfile.flush()
                if self.path.startswith("/slow"):
                    type(self).started.set()
                    time.sleep(0.05)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server():
    handler = type(
        "TinyZip", (Handler,), {"body": tiny_movielens_zip(), "started": threading.Event()}
    )
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    thread.start()
    yield handler, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def zip_config(base_url, route="slow", md5=None, archive="data/raw/tiny.zip", body=b""):
    config = copy.deepcopy(TINY_CONFIG)
    config["datasets"]["tinyzip"] = {
        "url": f"{base_url}/{route}.zip",
        "archive": archive,
        "md5": md5 or hashlib.md5(body).hexdigest(),
        "format": "movielens_dat",
        "member": "tiny/ratings.dat",
    }
    config["dataset"] = "tinyzip"
    return config


# --------------------------------------------------------------------------
# 1. Interrupted runs
# --------------------------------------------------------------------------


def start_and_kill(workdir: Path, targets, detect, sig, timeout=240):
    """Start snakemake in its own process group, send ``sig`` to the group as
    soon as ``detect()`` returns something, wait until every process is gone."""
    with open(workdir / "interrupted.out", "w") as out:
        proc = subprocess.Popen(
            [
                *SNAKEMAKE,
                "--directory",
                str(workdir),
                "--configfile",
                str(workdir / "config.yaml"),
                "--cores",
                "2",
                *targets,
            ],
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
    Snakemake reports it failed, after SIGKILL it never reported it finished."""
    out = (workdir / "interrupted.out").read_text()
    assert f"rule {rule}:" in out
    if sig == signal.SIGTERM:
        assert f"Error in rule {rule}:" in out, out[-3000:]
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


SIGNALS = [pytest.param(signal.SIGTERM, id="SIGTERM"), pytest.param(signal.SIGKILL, id="SIGKILL")]


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS)
def test_kill_during_training(sig, reference, tmp_path_factory):
    workdir = tmp_path_factory.mktemp(f"kill_scores_{sig.name}") / "run"
    shutil.copytree(reference, workdir)
    for folder in ("results/tiny/scores", "results/tiny/ranks", "logs"):
        shutil.rmtree(workdir / folder)
    targets = [f"results/tiny/ranks/{r}.csv" for r in "XYZ"]
    log = start_and_kill(workdir, targets, log_of(workdir, "tiny/scores_*.log"), sig)
    assert_interrupted(workdir, "scores", sig)
    recommender = log.stem.split("_")[-1]
    # the killed job's output is absent or complete: every final-named file equals the reference
    assert_same_files(workdir, reference, "*.npy", [])
    assert_same_files(workdir, reference, "*.csv", [])
    assert not all((workdir / target).exists() for target in targets)
    check_rerun(workdir, targets, sig)
    assert_same_files(workdir, reference, "*.csv", targets)
    assert_same_files(workdir, reference, "*.npy", [f"results/tiny/scores/{recommender}.npy"])


@pytest.mark.slow
@pytest.mark.parametrize("sig", SIGNALS)
def test_kill_during_sampling(sig, reference, tmp_path_factory):
    workdir = tmp_path_factory.mktemp(f"kill_sampling_{sig.name}") / "run"
    shutil.copytree(reference, workdir)
    shutil.rmtree(workdir / "results/tiny/sampled_ranks")
    shutil.rmtree(workdir / "logs")
    for name in ("sampling.csv", "crosscheck.csv"):
        (workdir / "results/tiny" / name).unlink()
    targets = ["results/tiny/sampling.csv"]
    start_and_kill(workdir, targets, log_of(workdir, "tiny/sampled_ranks_*.log"), sig)
    assert_interrupted(workdir, "sampled_ranks", sig)
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
def test_kill_during_download(sig, reference, server, tmp_path_factory):
    handler, base = server
    handler.started.clear()
    workdir = new_workdir(
        tmp_path_factory, f"kill_download_{sig.name}", zip_config(base, body=handler.body)
    )
    # SIGTERM goes on to a rank file, SIGKILL stops at the split (to keep the test short)
    targets = [
        "results/tinyzip/ranks/Y.csv"
        if sig == signal.SIGTERM
        else "data/processed/tinyzip/split.npz"
    ]
    start_and_kill(
        workdir,
        targets,
        lambda: handler.started.is_set() and (workdir / "logs/download").exists(),
        sig,
    )
    assert_interrupted(workdir, "download", sig)
    assert not (workdir / "data/raw/tiny.zip").exists()  # killed mid-stream: no partial archive
    check_rerun(workdir, targets, sig)
    assert (workdir / "data/raw/tiny.zip").read_bytes() == handler.body
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


# --------------------------------------------------------------------------
# 2. Determinism
# --------------------------------------------------------------------------


@pytest.mark.slow
def test_same_config_gives_identical_tables_and_ranks(reference, second_run):
    tables = [
        *TARGETS[:4],
        *(f"results/tiny/ranks/{r}.csv" for r in "XYZ"),
        "results/tiny/crosscheck.csv",
    ]
    assert_same_files(second_run, reference, "*.csv", tables)
    assert_same_files(
        second_run,
        reference,
        "*.npy",
        [f"results/tiny/{kind}/{r}.npy" for kind in ("scores", "sampled_ranks") for r in "XYZ"],
    )
    assert_same_files(second_run, reference, "*.txt", ["results/tiny/provenance/versions.txt"])
    assert_same_files(second_run, reference, "*.yaml", ["results/tiny/provenance/config.yaml"])


@pytest.mark.slow
def test_thread_count_does_not_change_scores_or_ranks(reference, second_run):
    for recommender in "XYZ":
        assert "threads: 2" in (reference / f"logs/tiny/scores_{recommender}.log").read_text()
        assert "threads: 1" in (second_run / f"logs/tiny/scores_{recommender}.log").read_text()
        for path in (
            f"results/tiny/scores/{recommender}.npy",
            f"results/tiny/ranks/{recommender}.csv",
        ):
            assert (reference / path).read_bytes() == (second_run / path).read_bytes(), path


@pytest.mark.slow
def test_sampling_seed_changes_sampled_values_only(reference, other_seed):
    exact = [f"results/tiny/ranks/{r}.csv" for r in "XYZ"] + [
        "results/tiny/exact_metrics.csv",
        *(f"results/tiny/scores/{r}.npy" for r in "XYZ"),
    ]
    for path in exact:  # untouched: same bytes, never rewritten
        assert (other_seed / path).read_bytes() == (reference / path).read_bytes(), path
        assert (other_seed / path).stat().st_mtime_ns == (reference / path).stat().st_mtime_ns, path
    for recommender in "XYZ":
        path = f"results/tiny/sampled_ranks/{recommender}.npy"
        assert not np.array_equal(np.load(other_seed / path), np.load(reference / path)), path
    ours = pd.read_csv(other_seed / "results/tiny/sampling.csv")
    theirs = pd.read_csv(reference / "results/tiny/sampling.csv")
    assert ours[["recommender", "metric", "method", "rep"]].equals(
        theirs[["recommender", "metric", "method", "rep"]]
    )
    assert (ours["value"] != theirs["value"]).mean() > 0.5
    table3 = pd.read_csv(other_seed / "results/tiny/table3.csv")
    reference3 = pd.read_csv(reference / "results/tiny/table3.csv")
    exact_rows = table3["method"] == "exact"
    pd.testing.assert_frame_equal(table3[exact_rows], reference3[exact_rows])
    assert not table3[~exact_rows]["mean"].equals(reference3[~exact_rows]["mean"])


@pytest.mark.slow
def test_sampling_seed_defaults_to_the_top_level_seed(reference, tmp_path_factory):
    """Setting sampling.seed to the top-level seed changes no parameter of
    rule sampled_ranks: nothing downstream of the sampling is redone."""
    workdir = tmp_path_factory.mktemp("same_seed") / "run"
    shutil.copytree(reference, workdir)
    config = copy.deepcopy(TINY_CONFIG)
    config["sampling"]["seed"] = 2020  # the top-level seed of config.yaml
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    dry = run(workdir, "--cores", "1", "--dry-run", *TARGETS)
    out = dry.stdout + dry.stderr
    assert dry.returncode == 0, out[-3000:]
    jobs = {
        line.split()[0]
        for line in out.splitlines()
        if line.strip()
        and line.split()[0] in {"sampled_ranks", "sampling_table", "table3", "table4", "provenance"}
    }
    assert jobs == {"provenance"}, out[-3000:]  # the config changed, the sampling did not


# --------------------------------------------------------------------------
# 3. Provenance
# --------------------------------------------------------------------------


@pytest.mark.slow
def test_provenance_records_versions_and_effective_config(reference, other_seed):
    versions = (reference / "results/tiny/provenance/versions.txt").read_text().splitlines()
    names = {line.split("==")[0] for line in versions}
    assert {"python", *PACKAGES} <= names
    assert {
        "sampled-metrics",
        "numpy",
        "scipy",
        "pandas",
        "implicit",
        "snakemake",
        "matplotlib",
    } <= names
    assert not [line for line in versions if line.endswith("not installed")]
    recorded = yaml.safe_load((reference / "results/tiny/provenance/config.yaml").read_text())
    assert recorded["recommenders"] == TINY_CONFIG["recommenders"]
    assert recorded["sampling"] == TINY_CONFIG["sampling"]
    assert recorded["dataset"] == "tiny" and recorded["seed"] == 2020
    assert {"corrections", "ranking", "metrics", "fig6", "toy"} <= set(
        recorded
    )  # defaults of config.yaml too
    # a changed config reran the rule
    assert (
        yaml.safe_load((other_seed / "results/tiny/provenance/config.yaml").read_text())[
            "sampling"
        ]["seed"]
        == 7
    )


@pytest.mark.slow
def test_finished_run_has_nothing_left_to_do(reference):
    dry = run(reference, "--cores", "1", "--dry-run", *TARGETS)
    assert dry.returncode == 0 and "Nothing to be done" in dry.stdout + dry.stderr, dry.stdout[
        -2000:
    ]


# --------------------------------------------------------------------------
# 4. Bad input through the workflow
# --------------------------------------------------------------------------


def good_dat_lines():
    return [f"{u}::{100 + (u * 7 + k) % 40}::5::{k}" for u in range(1, 31) for k in range(6)]


# name -> (entry, file name, content, log whose last line holds the error, expected text)
BAD_DATA = {
    "malformed_line": (
        {"path": "malformed.dat", "format": "movielens_dat"},
        "malformed.dat",
        "\n".join(good_dat_lines()[:20] + ["7::101::5"] + good_dat_lines()[20:]) + "\n",
        "split",
        "malformed.dat, line 21: expected 4 '::'-separated fields, found 3",
    ),
    "non_numeric_id": (
        {"path": "ids.dat", "format": "movielens_dat"},
        "ids.dat",
        "\n".join(good_dat_lines()[:5] + ["u7::101::5::3"] + good_dat_lines()[5:]) + "\n",
        "split",
        "ids.dat, line 6: user 'u7' is not an integer",
    ),
    "missing_column": (
        {
            "path": "nocol.csv",
            "format": "delimited",
            "sep": ",",
            "header": True,
            "columns": {"user": "uid", "item": "iid", "time": "timestamp"},
        },
        "nocol.csv",
        "uid,iid,t\n1,100,1\n1,101,2\n",
        "split",
        "nocol.csv: column(s) time='timestamp' not in the file",
    ),
    "empty_file": (
        {
            "path": "empty.csv",
            "format": "delimited",
            "sep": ",",
            "header": True,
            "columns": {"user": "uid", "item": "iid", "time": "t"},
        },
        "empty.csv",
        "",
        "split",
        "empty.csv: empty file",
    ),
    "truncated_zip": (
        {"path": "truncated.zip", "format": "movielens_dat", "member": "tiny/ratings.dat"},
        "truncated.zip",
        None,
        "split",
        "truncated.zip: not a readable zip archive",
    ),
    "archive_by_hand": (
        {
            "url": "http://127.0.0.1:9/never.zip",
            "md5": "0" * 32,
            "archive": "data/raw/truncated.zip",
            "format": "movielens_dat",
            "member": "tiny/ratings.dat",
        },
        "data/raw/truncated.zip",
        None,
        "split",
        "data/raw/truncated.zip: existing file has md5 ",
    ),
    "md5_mismatch": (None, None, None, "download", "data/raw/md5.zip: downloaded from "),
}


@pytest.fixture(scope="module")
def bad_data_run(server, tmp_path_factory):
    """One snakemake --keep-going run splitting every bad data set (and one with
    a held-out item never seen in training)."""
    handler, base = server
    workdir = new_workdir(tmp_path_factory, "bad_data")
    config = copy.deepcopy(TINY_CONFIG)
    for name, (entry, file_name, content, _, _) in BAD_DATA.items():
        if name == "md5_mismatch":
            entry = {
                "url": f"{base}/fast.zip",
                "md5": "0" * 32,
                "archive": "data/raw/md5.zip",
                "format": "movielens_dat",
                "member": "tiny/ratings.dat",
            }
        elif content is None:  # a truncated archive, placed by hand
            (workdir / file_name).parent.mkdir(parents=True, exist_ok=True)
            (workdir / file_name).write_bytes(handler.body[: len(handler.body) // 2])
        else:
            (workdir / file_name).write_text(content)
        config["datasets"][name] = entry
    events = pd.read_csv(workdir / "tiny.csv")
    events = pd.concat(
        [events, pd.DataFrame({"uid": [999] * 3, "iid": [100, 101, 5000], "t": [0, 1, 2]})]
    )
    events.to_csv(workdir / "unseen.csv", index=False)
    config["datasets"]["unseen"] = {
        **TINY_CONFIG["datasets"]["tiny"],
        "path": "unseen.csv",
        "facts": {"n_users": 91},
        "split_facts": {"unseen_test_items": 1},
    }
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    result = run(
        workdir,
        "--cores",
        "2",
        "--keep-going",
        *(f"data/processed/{name}/split.npz" for name in [*BAD_DATA, "unseen"]),
    )
    return workdir, result


@pytest.mark.slow
@pytest.mark.parametrize("case", list(BAD_DATA))
def test_bad_data_fails_with_one_message_and_no_output(case, bad_data_run):
    workdir, result = bad_data_run
    _, file_name, _, rule, expected = BAD_DATA[case]
    assert result.returncode != 0
    console = (result.stdout + result.stderr).splitlines()
    assert f"Error in rule {rule}:" in console
    if rule == "split":  # the traceback in the log ends with the one-line message
        lines = [
            line
            for line in (workdir / f"logs/{case}/split.log").read_text().splitlines()
            if line.strip()
        ]
        assert lines[-1].startswith("sampled_metrics.data.errors.DataError: "), lines[-5:]
        message = lines[-1].split(": ", 1)[1]
        assert sum(message in line for line in lines) == 1  # said once
    else:  # the download also says it on the console, once
        said = [
            line for line in console if line.startswith("download of data/raw/md5.zip failed: ")
        ]
        assert len(said) == 1, console[-30:]
        message = said[0]
        assert (
            message.split(" failed: ", 1)[1].split(" (url and md5")[0]
            in (workdir / "logs/download/data/raw/md5.zip.log").read_text()
        )
    assert expected in message
    assert not (workdir / f"data/processed/{case}/split.npz").exists()
    if case == "md5_mismatch":
        assert "expected " + "0" * 32 in message
        assert not (workdir / "data/raw/md5.zip").exists()
    assert leftovers(workdir) == []


@pytest.mark.slow
def test_held_out_item_unseen_in_training_is_kept_and_reported(bad_data_run):
    workdir, _ = bad_data_run
    assert (workdir / "data/processed/unseen/split.npz").is_file()  # split_facts asserted it
    assert "1 held-out items unseen in training" in (workdir / "logs/unseen/split.log").read_text()


def test_unseen_held_out_item_is_ranked_by_every_recommender():
    """An item no user trained on gets the worst pessimistic rank from item-kNN
    (all its similarities are 0) and a finite score from iALS."""
    rows = [(u, i, t) for u in range(6) for t, i in enumerate([(u + k) % 5 for k in range(4)])]
    rows += [(6, 0, 0), (6, 1, 1), (6, 9, 2)]  # item 9: only user 6's held-out item
    split = leave_last_out_split(pd.DataFrame(rows, columns=["user", "item", "time"]))
    assert split.unseen_test_items() == 1
    for spec in (
        {"type": "item_knn", "q": 1, "k": None, "k_prime": None},
        {"type": "ials", "factors": 2, "regularization": 1.0, "alpha": 1.0, "iterations": 3},
    ):
        model = fit_recommender(spec, split.train, seed=0)
        scores = all_scores(model, split.n_users)
        assert np.isfinite(scores).all()
        ranks, n_candidates = exact_ranks(PrecomputedScores(scores), split.train, split.test_items)
        assert ((1 <= ranks) & (ranks <= n_candidates)).all()
        if spec["type"] == "item_knn":
            assert ranks[-1] == n_candidates[-1]


@pytest.mark.slow
def test_sampling_m_larger_than_a_pool_names_sampling_m(reference, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("big_m") / "run"
    shutil.copytree(reference, workdir)
    config = copy.deepcopy(TINY_CONFIG)
    config["sampling"]["m"] = 40  # 45 items, up to 19 per user
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    result = run(workdir, "--cores", "1", "results/tiny/sampled_ranks/X.npy")
    assert result.returncode != 0
    lines = [
        line
        for line in (workdir / "logs/tiny/sampled_ranks_X.log").read_text().splitlines()
        if line.strip()
    ]
    assert lines[-1].startswith(
        "sampled_metrics.config.ConfigError: sampling.m: 40 is larger than the "
        "candidate pool of user"
    ), lines[-3:]
    assert "data/processed/tiny/split.npz" in lines[-1]
    assert not (workdir / "results/tiny/sampled_ranks/X.npy").exists()
    assert leftovers(workdir) == []


CONFIG_ERRORS = {
    "negative_repetitions": (
        lambda c: c["sampling"].update(repetitions=-1),
        "sampling.repetitions: -1 is less than the minimum of 1",
    ),
    "gamma_outside_0_1": (
        lambda c: c.update(corrections={"methods": ["bv_2"]}),
        "corrections.methods: method 'bv_2': gamma must be a number in [0, 1]",
    ),
    "unknown_correction": (
        lambda c: c.update(corrections={"methods": ["cls", "median"]}),
        "corrections.methods: unknown correction method 'median'",
    ),
    "unknown_recommender_type": (
        lambda c: c["recommenders"]["X"].update(type="svd"),
        "recommenders.X: unknown recommender 'type' 'svd'; known: ials, item_knn",
    ),
    "unknown_key": (lambda c: c["sampling"].update(sed=3), "sampling.sed: unknown key"),
    "unknown_top_level_key": (lambda c: c.update(sampling_seed=3), "sampling_seed: unknown key"),
}


@pytest.fixture(scope="module")
def config_error_runs(tmp_path_factory):
    """Every bad config through snakemake, three at a time."""
    workdirs = {}
    for case, (edit, _) in CONFIG_ERRORS.items():
        config = copy.deepcopy(TINY_CONFIG)
        edit(config)
        workdirs[case] = tmp_path_factory.mktemp(case)
        (workdirs[case] / "config.yaml").write_text(yaml.safe_dump(config))
    with ThreadPoolExecutor(3) as pool:
        results = dict(
            zip(workdirs, pool.map(lambda w: run(w, "--cores", "1", *TARGETS), workdirs.values()))
        )
    return {case: (workdirs[case], results[case]) for case in workdirs}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CONFIG_ERRORS))
def test_config_error_stops_before_any_job_with_one_line(case, config_error_runs):
    _, expected = CONFIG_ERRORS[case]
    tmp_path, result = config_error_runs[case]
    out = result.stdout + result.stderr
    assert result.returncode != 0
    lines = out.splitlines()
    where = next(i for i, line in enumerate(lines) if line.startswith("ConfigError in file"))
    assert lines[where + 1].startswith(expected), lines[where : where + 3]
    # after the message only snakemake's "  File ..., line ..." locations
    assert all(line.startswith("  File ") for line in lines[where + 2 :] if line.strip()), lines[
        where:
    ]
    assert not (tmp_path / "results").exists() and not (tmp_path / "data").exists()


# --------------------------------------------------------------------------
# NaN and inf scores: the library refuses them
# --------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_or_inf_scores_are_refused_with_the_user(bad):
    train = sp.csr_matrix(
        np.array([[1, 0, 0, 0, 0], [0, 1, 0, 0, 0], [1, 1, 0, 0, 0]], dtype=np.float32)
    )
    test = np.array([2, 3, 4])
    scores = np.tile(np.linspace(0, 1, 5), (3, 1))
    scores[1, 4] = bad
    with pytest.raises(
        ValueError,
        match=r"recommender 'M': score of user 1 for item 4 is (nan|-?inf) \(NaN or inf\)",
    ):
        exact_ranks(PrecomputedScores(scores, name="M"), train, test)
    with pytest.raises(
        ValueError, match=r"scores contain 1 NaN or inf value\(s\), first at user 1, item 4"
    ):
        sampled_ranks(scores, test, excluded_items(train, test), 1, 2, seed=0)
    with pytest.raises(ValueError, match="row 1: scores contain NaN or inf"):
        rank_from_scores(scores, None, test)
    # a non-candidate's score is ignored: only ranked items must be finite
    mask = np.ones_like(scores, dtype=bool)
    mask[1, 4] = False
    assert np.isfinite(rank_from_scores(scores, mask, test)).all()


# --------------------------------------------------------------------------
# 5. Property tests: loaders and corrections
# --------------------------------------------------------------------------

FIELD = st.one_of(
    st.integers(-5, 10**6).map(str),
    st.sampled_from(["", "x", "1.5", "nan", "1e3", " 7", '"3"', "::"]),
    st.text(alphabet="ab9:,\t\"'; \\", max_size=4),
)


def check_frame(frame, rating):
    assert isinstance(frame, pd.DataFrame) and len(frame) > 0
    assert {"user", "item", "time"} <= set(frame.columns) and (
        rating or "rating" not in frame.columns
    )
    assert not frame.isna().to_numpy().any()
    assert pd.api.types.is_numeric_dtype(frame["time"])


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(st.lists(FIELD, min_size=1, max_size=5), max_size=6),
    header=st.booleans(),
    sep=st.sampled_from([",", "\t", ";"]),
    rating=st.booleans(),
    gz=st.booleans(),
)
def test_delimited_loader_returns_a_frame_or_raises_data_error(
    tmp_path, rows, header, sep, rating, gz
):
    names = ["u", "i", "t", "r"]
    text = (sep.join(names) + "\n" if header else "") + "".join(sep.join(r) + "\n" for r in rows)
    path = tmp_path / ("events.csv.gz" if gz else "events.csv")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    columns = dict(
        zip(["user", "item", "time", "rating"][: 3 + rating], names if header else [0, 1, 2, 3])
    )
    try:
        frame = load_delimited(path, sep=sep, header=header, columns=columns)
    except DataError as error:
        assert str(path) in str(error) and "\n" not in str(error).strip()
        return
    check_frame(frame, rating)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(st.lists(FIELD, min_size=1, max_size=5), max_size=6),
    cut=st.integers(0, 400),
    zipped=st.booleans(),
)
def test_movielens_loader_returns_a_frame_or_raises_data_error(tmp_path, rows, cut, zipped):
    text = "".join("::".join(r) + "\n" for r in rows).encode("latin-1", "replace")
    path = tmp_path / ("ml.zip" if zipped else "ratings.dat")
    if zipped:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as zf:
            zf.writestr("ml/ratings.dat", text)
        data = buffer.getvalue()
        path.write_bytes(data[:cut] if cut < len(data) else data)  # sometimes truncated
    else:
        path.write_bytes(text)
    try:
        frame = load_movielens_dat(path)
    except DataError as error:
        assert str(path) in str(error)
        return
    check_frame(frame, True)
    assert all(pd.api.types.is_integer_dtype(frame[c]) for c in ("user", "item", "time"))


METHODS = ["sampled", "rank_estimate", "ls", "cls", "bv_0", "bv_0.001", "bv_0.5", "bv_1"]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 120),
    m=st.integers(1, 119),
    law=st.sampled_from(LAWS),
    method=st.sampled_from(METHODS),
    name=st.sampled_from(["recall@5", "ndcg@10", "ap", "auc", "ndcg"]),
    seed=st.integers(0, 2**16),
    uniform=st.booleans(),
)
def test_every_correction_is_finite_with_its_invariants(n, m, law, method, name, seed, uniform):
    m = min(m, n - 1)
    prior = None if uniform else np.random.default_rng(seed).dirichlet(np.full(n, 0.5)) + 1e-12
    exact = M.metric_vector(name, n)
    kind, gamma = C.parse_method(method)
    P = sampled_rank_law(n, m, law)
    if kind in ("sampled", "rank_estimate"):
        vector = C.corrected_metric(name, method, n, m, law)
    elif kind == "ls":
        vector = C.least_squares_correction(exact, P, prior)
    elif kind == "cls":
        vector = C.constrained_least_squares_correction(exact, P, prior)
    else:
        vector = C.bias_variance_correction(exact, P, gamma, prior)
    assert vector.shape == (m + 1,) and np.isfinite(vector).all()
    if kind == "rank_estimate":  # the metric at an estimated rank
        assert np.isin(vector, exact).all()
    if kind == "bv" and gamma == 1:  # eq 26: a posterior mean lies within the metric's range
        assert exact.min() - 1e-9 <= vector.min() and vector.max() <= exact.max() + 1e-9
    if kind == "cls":
        assert np.all(np.diff(vector) <= 1e-9)
    sampled = np.random.default_rng(seed).integers(1, m + 2, size=20)
    assert np.isfinite(C.apply_correction(vector, sampled)).all()


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(2, 60),
    gamma=st.floats(0, 1),
    name=st.sampled_from(["recall@5", "ndcg", "ap", "auc"]),
)
def test_a_full_sample_needs_no_correction(n, gamma, name):
    """m = n - 1 without replacement: the sampled rank is the true rank, and
    every least-squares correction returns the exact metric."""
    P = sampled_rank_law(n, n - 1, "hypergeometric")
    np.testing.assert_allclose(P, np.eye(n), atol=1e-12)
    exact = M.metric_vector(name, n)
    for vector in (
        C.least_squares_correction(exact, P),
        C.constrained_least_squares_correction(exact, P),
    ):
        np.testing.assert_allclose(vector, exact, atol=1e-6)
    if gamma > 0:
        np.testing.assert_allclose(C.bias_variance_correction(exact, P, gamma), exact, atol=1e-9)
