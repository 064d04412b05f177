"""What the tests share, each defined once.

* ``REPO`` and ``CONFIG_FILE``: the repository and its config.yaml;
* hypothesis profiles: "ci" (derandomized, no deadline) when the environment
  variable CI is set, else "dev" (random examples);
* :class:`LocalServer` and the ``http_server`` fixture: bytes served per path
  on 127.0.0.1, for the download tests;
* the tiny synthetic data set of the workflow tests (``write_synthetic_interactions``,
  ``TINY_CONFIG``, the ``tiny_workdir`` fixture), ``run`` (snakemake in a work
  directory) and two finished runs of it shared by several files (``reference``,
  ``second_run``);
* ``await_framework_envs``: the wait for the frameworks' environments that CI
  builds while the tests run;
* ``offline_dataset``: the offline MovieLens copy of config.yaml's ``ml-1m-offline``
  entry (skipped when absent, a failure under CI);
* the claims report read back, and its verdicts recomputed from the run's tables.

Test modules import the plain helpers with ``from conftest import ...``; no test
module imports another.
"""

from __future__ import annotations

import copy
import http.server
import io
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import settings

from sampled_metrics.pipeline.validation import load_config
from sampled_metrics.recommenders import PAPER_RECOMMENDERS
from sampled_metrics.reproduction.paper import published

# --------------------------------------------------------------------------
# Hypothesis: fixed examples in CI, random ones elsewhere. Loaded here, before
# the test modules are imported, so that a test's own @settings(max_examples=...)
# inherits the fields it does not set from the loaded profile.
# --------------------------------------------------------------------------

IN_CI = bool(os.environ.get("CI"))

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", derandomize=False)
settings.load_profile("ci" if IN_CI else "dev")

# --------------------------------------------------------------------------
# Order: the test files marked ``minutes`` (a whole MovieLens run, the SLURM
# cluster) first, so that pytest-xdist (``-n auto --dist loadfile`` in
# pyproject.toml) starts them at once on separate workers and the short files
# fill the time around them. Otherwise the collection order is kept.
# --------------------------------------------------------------------------


def pytest_collection_modifyitems(items) -> None:
    items.sort(key=lambda item: item.get_closest_marker("minutes") is None)


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto``: one worker more than the cores, as several tests spend much of their
    time waiting (the SLURM cluster's job polls, the download stalls, the interruptions)."""
    return (os.cpu_count() or 1) + 1


# The repository and its config.yaml (the user's file, not package data).
REPO = Path(__file__).resolve().parents[1]
CONFIG_FILE = REPO / "config.yaml"
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]


# --------------------------------------------------------------------------
# A local HTTP server
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    """What the server answers on one path."""

    body: bytes
    status: int = 200
    length: int | None = None  # the Content-Length announced; None: len(body)
    chunk: int | None = None  # bytes per write; None: the body at once
    pause: float = 0.0  # seconds of sleep after each chunk (a slow download)
    content_type: str = "application/zip"


NOT_FOUND = Route(b"not found", status=404, content_type="text/plain")


class LocalServer:
    """An HTTP server on 127.0.0.1 (a free port) serving the bytes registered
    per path with :meth:`serve`; any other path answers 404. ``requests`` lists
    every path asked for, in order; ``started`` is set once a slow route (one
    with a pause) has sent its first chunk. A client that hangs up mid-body is
    ignored. Use it as a context manager, or through the ``http_server`` fixture."""

    def __init__(self):
        self.routes: dict[str, Route] = {}
        self.requests: list[str] = []
        self.started = threading.Event()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server API)
                server._answer(self)

            def log_message(self, *args):
                pass

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()

    def serve(self, path: str, body: bytes, **route) -> str:
        """Answer ``path`` with ``body`` (options: the fields of :class:`Route`);
        return its URL."""
        self.routes[path] = Route(body, **route)
        return self.url + path

    def _answer(self, handler: http.server.BaseHTTPRequestHandler) -> None:
        self.requests.append(handler.path)
        route = self.routes.get(handler.path, NOT_FOUND)
        handler.send_response(route.status)
        handler.send_header("Content-Type", route.content_type)
        length = len(route.body) if route.length is None else route.length
        handler.send_header("Content-Length", str(length))
        handler.end_headers()
        chunk = route.chunk or max(len(route.body), 1)
        try:
            for start in range(0, len(route.body), chunk):
                handler.wfile.write(route.body[start : start + chunk])
                handler.wfile.flush()
                if route.pause:
                    self.started.set()
                    time.sleep(route.pause)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client is gone (a killed download)
        handler.close_connection = True

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@pytest.fixture
def http_server():
    """A fresh :class:`LocalServer`: no route, no request yet."""
    with LocalServer() as server:
        yield server


# --------------------------------------------------------------------------
# The tiny synthetic data set and its workflow runs
# --------------------------------------------------------------------------


def write_synthetic_interactions(path, n_users=90, n_items=45, seed=0) -> None:
    """Users in three taste clusters, each preferring a third of the items
    (columns uid, iid, t); ``path`` is a file name or a text buffer."""
    rng = np.random.default_rng(seed)
    rows = []
    for user in range(1, n_users + 1):
        cluster = user % 3
        weights = np.where(np.arange(n_items) % 3 == cluster, 6.0, 1.0)
        size = int(rng.integers(8, 20))
        items = rng.choice(n_items, size=size, replace=False, p=weights / weights.sum())
        rows += [(user, 100 + int(item), position) for position, item in enumerate(items)]
    pd.DataFrame(rows, columns=["uid", "iid", "t"]).to_csv(path, index=False)


TINY_CONFIG = {
    "dataset": "tiny",
    "datasets": {
        "tiny": {
            "path": "tiny.csv",
            "format": "delimited",
            "sep": ",",
            "header": True,
            "columns": {"user": "uid", "item": "iid", "time": "t"},
            "facts": {"n_users": 90},
            "split_facts": {"n_users": 90, "n_test": 90},
        }
    },
    "recommenders": {
        "X": {"type": "ials", "factors": 4, "regularization": 1.0, "alpha": 0.5, "iterations": 4},
        "Y": {"type": "item_knn", "q": 3, "k": None, "k_prime": None},
        "Z": {"type": "item_knn", "q": 1, "k": None, "k_prime": 5},
        # config.yaml's baselines left out (null): the tiny runs test the paper's three
        "Pop": None,
        "EASE": None,
        "BPR": None,
    },
    "sampling": {"m": 10, "repetitions": 6, "law": "hypergeometric"},
    # the runs' fitted models are compared (tests/test_determinism.py): kept
    "ranking": {"keep_models": True},
    # protocols with replacement: the tiny catalogue (45 items) holds fewer than 99 unseen
    "protocols": {"run": ["recbole-uni100", "recbole-pop100"], "repetitions": 6},
    # the design study: 90 users hold the floors of the design's strata at half of them
    "decisions": {"seeds": 4, "range_seeds": 1, "budgets": [0.5], "uniform_budgets": [0.5]},
    "fig6": {"m_values": [1, 2, 5, 10, 20, 30], "pair": ["X", "Y"]},
    "toy": {
        "n": 10000,
        "m": 20,
        "repetitions": 30,
        "fig2_m_values": [1, 10, 100],
        "fig3_m_values": [10, 100],
        "fig3_max_rank": 100,
        "fig4_m": 20,
    },
}

# What the shared tiny runs build: every table of the data set but the figures.
TARGETS = [
    "results/tiny/exact_metrics.csv",
    "results/tiny/sampling.csv",
    "results/tiny/table3.csv",
    "results/tiny/table4.csv",
    "results/tiny/provenance/versions.txt",
    "results/tiny/provenance/config.yaml",
]


def tiny_config() -> dict:
    """A copy of TINY_CONFIG to edit."""
    return copy.deepcopy(TINY_CONFIG)


def make_tiny_workdir(workdir: Path, config: dict | None = None) -> Path:
    """``workdir`` made and given tiny.csv and config.yaml (``config``, by default
    TINY_CONFIG)."""
    workdir.mkdir(parents=True, exist_ok=True)
    write_synthetic_interactions(workdir / "tiny.csv")
    (workdir / "config.yaml").write_text(yaml.safe_dump(config or TINY_CONFIG))
    return workdir


@pytest.fixture(scope="session")
def tiny_workdir(tmp_path_factory):
    """``tiny_workdir(name, config=None)``: a new work directory holding tiny.csv
    and config.yaml (``config``, by default TINY_CONFIG)."""

    def make(name: str = "tiny", config: dict | None = None) -> Path:
        return make_tiny_workdir(tmp_path_factory.mktemp(name), config)

    return make


def snakemake_command(workdir: Path, *args: str, targets=()) -> list[str]:
    """Snakemake on the repository's Snakefile in ``workdir``, with its config.yaml.
    ``targets`` come first: an option taking several values (--configfile,
    --set-threads) would swallow targets that follow it. ``args`` follow --configfile,
    so the first of them must be an option."""
    return [
        *SNAKEMAKE,
        *targets,
        "--directory",
        str(workdir),
        "--configfile",
        str(workdir / "config.yaml"),
        *args,
    ]


def run(workdir: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run snakemake in ``workdir`` to the end; output captured as text."""
    return subprocess.run(
        snakemake_command(workdir, *args), capture_output=True, text=True, timeout=timeout
    )


def finished(workdir: Path, *args: str) -> Path:
    """``run`` that must succeed; returns ``workdir``."""
    result = run(workdir, *args)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    return workdir


def paper_outputs(dataset: str) -> list[str]:
    """Every figure (1-6) and table (1-4) of the paper, and the claims, for one data set."""
    expected = [f"figures/fig{i}.{ext}" for i in range(1, 5) for ext in ("pdf", "png")]
    expected += [f"figures/{dataset}/fig{i}.{ext}" for i in (5, 6) for ext in ("pdf", "png")]
    expected += [f"results/toy/table{i}.{ext}" for i in (1, 2) for ext in ("csv", "md", "tex")]
    expected += [
        f"results/{dataset}/table{i}.{ext}" for i in (3, 4) for ext in ("csv", "md", "tex")
    ]
    return expected + [
        f"results/{dataset}/{name}" for name in ("claims.md", "exact_metrics.csv", "sampling.csv")
    ]


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


def result_files(workdir: Path, pattern: str) -> dict[str, bytes]:
    """Bytes of the final-named files under results/ and data/ (no benchmarks, no
    hidden names: temporaries of a killed write, checksum records)."""
    return {
        str(p.relative_to(workdir)): p.read_bytes()
        for top in ("results", "data")
        for p in (workdir / top).rglob(pattern)
        if p.is_file()
        and "benchmarks" not in p.parts
        and not any(part.startswith(".") for part in p.relative_to(workdir).parts)
    }


def assert_same_files(workdir: Path, reference: Path, pattern: str, expected_names) -> None:
    """Every final-named file of ``workdir`` matching ``pattern`` has the bytes of
    the same file in ``reference``, and ``expected_names`` are among them."""
    ours, theirs = result_files(workdir, pattern), result_files(reference, pattern)
    assert set(expected_names) <= set(ours), sorted(ours)
    differ = [name for name in ours if ours[name] != theirs.get(name)]
    assert not differ, differ


def leftovers(workdir: Path) -> list[str]:
    """Temporary files of an interrupted write (hidden names or .part-)."""
    return sorted(
        str(p.relative_to(workdir))
        for top in ("results", "data")
        if (workdir / top).exists()
        for p in (workdir / top).rglob("*")
        if p.is_file() and (p.name.startswith(".") or ".part-" in p.name)
    )


def start(workdir: Path, targets, *options: str) -> subprocess.Popen:
    """Snakemake in the background, stdout and stderr merged."""
    return subprocess.Popen(
        snakemake_command(workdir, *options, targets=targets),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture(scope="session")
def two_runs(tmp_path_factory, worker_id):
    """The same config twice, side by side: the reference with --set-threads fit=2
    (on 2 cores rule fit would give iALS one thread), the second with fit=1. Made once
    per test session: the pytest-xdist workers share them (the first to ask runs them
    while the others wait on a lock in the session's folder); tests copy them before
    changing anything."""
    import fcntl

    root = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        root = root.parent  # the session's folder, above each worker's own
    shared = root / "two_runs"
    with open(root / "two_runs.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / "finished").exists():
            shutil.rmtree(shared, ignore_errors=True)
            reference = make_tiny_workdir(shared / "reference")
            second = make_tiny_workdir(shared / "second")
            procs = [
                start(reference, TARGETS, "--cores", "2", "--set-threads", "fit=2"),
                start(second, TARGETS, "--cores", "2", "--set-threads", "fit=1"),
            ]
            outputs = [proc.communicate(timeout=600)[0] for proc in procs]
            for proc, out in zip(procs, outputs):
                assert proc.returncode == 0, out[-4000:]
            (shared / "finished").touch()
    return shared / "reference", shared / "second"


@pytest.fixture(scope="session")
def reference(two_runs):
    """The uninterrupted run of TARGETS (copy it before changing anything)."""
    return two_runs[0]


@pytest.fixture(scope="session")
def second_run(two_runs):
    """The same config as ``reference``, with one thread for rule fit."""
    return two_runs[1]


# --------------------------------------------------------------------------
# The frameworks' environments, built by CI beside the tests
# --------------------------------------------------------------------------

# The variable by which .ci/run names its background build of .envs/ (the process id).
ENVS_BUILD = "FRAMEWORK_ENVS_BUILD"
ENVS_BUILD_TIMEOUT = 1800  # seconds: longer than any build seen, shorter than CI's limit


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel whether the pid exists
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def await_framework_envs() -> None:
    """Return once the frameworks' environments (.envs/) are built: at once, unless
    .ci/run builds them in the background while the tests run, as ``ENVS_BUILD`` says;
    then when that build ends (built or not), or after ``ENVS_BUILD_TIMEOUT`` seconds."""
    pid = os.environ.get(ENVS_BUILD)
    deadline = time.monotonic() + ENVS_BUILD_TIMEOUT
    while pid and running(int(pid)) and time.monotonic() < deadline:
        time.sleep(1)


# --------------------------------------------------------------------------
# The offline copy of binarized MovieLens 1M
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class OfflineDataset:
    name: str  # the key of config.yaml's datasets
    path: Path  # absolute
    entry: dict  # validated, defaults filled in (format, sep, ..., facts, split_facts)


@pytest.fixture(scope="session")
def offline_dataset() -> OfflineDataset:
    """The data set of config.yaml's ``ml-1m-offline`` entry. Absent, the test is
    skipped, except under CI (which always has the copy), where it fails."""
    name = "ml-1m-offline"
    entry = load_config(CONFIG_FILE)["datasets"][name]
    path = (CONFIG_FILE.parent / entry["path"]).resolve()
    if not path.is_file():
        if IN_CI:
            pytest.fail(f"{path} ({name} of {CONFIG_FILE}) is missing: CI must have it")
        pytest.skip(f"offline MovieLens copy not found at {path} ({name} of {CONFIG_FILE})")
    return OfflineDataset(name, path, entry)


# --------------------------------------------------------------------------
# The claims report and its verdicts recomputed from the tables
# --------------------------------------------------------------------------

CLAIMS_HEADER = "| section | claim | verdict | evidence |"
CLAIMS_SUMMARY = re.compile(
    r"(\d+) of (\d+) claims of the paper hold on the reproduced numbers, (\d+) fails?, "
    r"(\d+) not applicable \(N/A: the run has no numbers to check the claim on\)\."
)


def read_claims(path: Path) -> tuple[dict[str, int], list[dict[str, str]]]:
    """The claims report (results/<dataset>/claims.md): the counts its summary
    line states (PASS, FAIL, N/A and total), and its Markdown table as one dict
    a row (section, claim, verdict, evidence)."""
    lines = path.read_text().splitlines()
    summaries = [m for line in lines if (m := CLAIMS_SUMMARY.fullmatch(line))]
    assert len(summaries) == 1, lines[:5]
    header = lines.index(CLAIMS_HEADER)
    assert lines[header + 1] == "|---|---|---|---|"
    rows = []
    for line in lines[header + 2 :]:
        if not line.strip():
            break
        assert line.startswith("| ") and line.endswith(" |"), line
        cells = line[2:-2].split(" | ")
        assert len(cells) == 4, line
        rows.append(dict(zip(("section", "claim", "verdict", "evidence"), cells)))
    passed, total, failed, not_applicable = (int(n) for n in summaries[0].groups())
    counts = {"PASS": passed, "FAIL": failed, "N/A": not_applicable, "total": total}
    return counts, rows


def recomputed_verdicts(
    results: Path, trio=tuple(PAPER_RECOMMENDERS), fig6_metric="recall@10", fig6_pair=None
) -> dict[str, str]:
    """The verdict of each claim of the paper (PASS, FAIL, or N/A when the run
    has no numbers to check it on), computed here from the run's own tables in
    ``results`` (table3.csv, table4.csv, fig6_thresholds.csv, crosscheck.csv)
    for the recommenders ``trio`` (X, Y, Z) and the Figure 6 of config
    ``fig6.metric`` and ``fig6.pair`` (default X, Y), by claim."""
    x, y, z = trio
    table3 = pd.read_csv(results / "table3.csv")
    table3 = table3[table3["recommender"].isin(trio)]
    mean = table3.set_index(["recommender", "metric", "method"])["mean"]
    top = [k for k in ("recall@10", "ndcg@10", "ap") if k in set(table3["metric"])]
    has_auc = "auc" in set(table3["metric"])
    corrections = [m for m in dict.fromkeys(table3["method"]) if m not in ("exact", "sampled")]
    pairs = [f"{a}<{b}" for a, b in combinations(trio, 2)]
    table4 = pd.read_csv(results / "table4.csv")
    table4 = table4[table4["pair"].isin(pairs)]
    thresholds = pd.read_csv(results / "fig6_thresholds.csv").set_index(["method", "pair"])
    z_scores = pd.read_csv(results / "crosscheck.csv")["z"].abs()
    facts = pd.read_csv(results / "fig5_rank_distribution.csv").set_index("recommender")
    figure5 = published("figure5").set_index("recommender")

    def verdict(applicable: bool, holds) -> str:
        """N/A unless ``applicable``, else whether ``holds()``."""
        return "N/A" if not applicable else "PASS" if holds() else "FAIL"

    def value(rec, metric, method):
        return mean[(rec, metric, method)]

    def best(metric, method):
        """The recommender strictly above the two others, or None."""
        values = {rec: value(rec, metric, method) for rec in trio}
        top_rec = max(values, key=values.get)
        return top_rec if sum(v == values[top_rec] for v in values.values()) == 1 else None

    def worst(metric, method):
        values = {rec: value(rec, metric, method) for rec in trio}
        low = min(values, key=values.get)
        return low if sum(v == values[low] for v in values.values()) == 1 else None

    recall = "recall@10"
    better_two = [k for k in ("ndcg@10", "ap") if k in top]
    std = table3.set_index(["recommender", "metric", "method"])["std"]
    low_gamma = [m for m in ("bv_0.01", "bv_0.001") if m in corrections]
    top_100, bottom_half = figure5.loc[x, "top_100"], figure5.loc[x, "bottom_half_below"]
    worst_bucket = figure5.loc[z, "worst_bucket_above"]
    buckets = [facts.loc[z, c] for c in ("last_bucket", "pessimistic_last_bucket") if c in facts]
    verdicts = {
        f"{x} puts about {top_100:g} held-out items in the top 100 (within 10%) and fewer than "
        f"{bottom_half:g} in the bottom half": verdict(
            True,
            lambda: (
                0.9 * top_100 <= facts.loc[x, "top_100"] <= 1.1 * top_100
                and facts.loc[x, "bottom_half"] < bottom_half
            ),
        ),
        f"{z} is best in the top 10; {y} is better than {x} in the top 10 but worse overall "
        "(more items in the bottom half)": verdict(
            True,
            lambda: (
                facts.loc[z, "top_10"] > facts.loc[y, "top_10"] > facts.loc[x, "top_10"]
                and facts.loc[y, "bottom_half"] > facts.loc[x, "bottom_half"]
            ),
        ),
        f"{z} puts over {worst_bucket:g} users in the worst bucket of Figure 5 (under either tie "
        "rule)": verdict(True, lambda: max(buckets) > worst_bucket),
        f"On the exact metric, {z} > {y} > {x} for Recall, NDCG and AP": verdict(
            bool(top),
            lambda: all(
                value(z, k, "exact") > value(y, k, "exact") > value(x, k, "exact") for k in top
            ),
        ),
        f"On the exact AUC, {x} > {y} > {z}": verdict(
            has_auc,
            lambda: value(x, "auc", "exact") > value(y, "auc", "exact") > value(z, "auc", "exact"),
        ),
        f"Sampled Recall@10 reverses the exact order of {x} and {y}": verdict(
            recall in top,
            lambda: (
                value(x, recall, "exact") < value(y, recall, "exact")
                and value(x, recall, "sampled") > value(y, recall, "sampled")
            ),
        ),
        f"The worst recommender on the exact metric ({x}) looks best on every sampled "
        "top-heavy metric": verdict(
            bool(top), lambda: all(worst(k, "exact") == x and best(k, "sampled") == x for k in top)
        ),
        "Sampled AUC keeps the exact order of every pair": verdict(
            has_auc,
            lambda: all(
                (value(a, "auc", "exact") - value(b, "auc", "exact"))
                * (value(a, "auc", "sampled") - value(b, "auc", "sampled"))
                > 0
                for a, b in combinations(trio, 2)
            ),
        ),
        f"Sampled NDCG and AP keep the exact order of the two better recommenders ({z} > {y})": (
            verdict(
                bool(better_two),
                lambda: all(
                    (value(z, k, "exact") - value(y, k, "exact"))
                    * (value(z, k, "sampled") - value(y, k, "sampled"))
                    > 0
                    for k in better_two
                ),
            )
        ),
        f"The sampled lead of {x} is not variance: on every sampled top-heavy metric it "
        "exceeds 5 standard deviations of the repetitions": verdict(
            bool(top),
            lambda: all(
                min(
                    value(x, k, "sampled") - value(y, k, "sampled"),
                    value(x, k, "sampled") - value(z, k, "sampled"),
                )
                > 5 * max(std[(rec, k, "sampled")] for rec in trio)
                for k in top
            ),
        ),
        "Every correction is closer to the exact value than the uncorrected metric "
        "(Recall, NDCG, AP; means over repetitions)": verdict(
            bool(top and corrections),
            lambda: all(
                abs(value(rec, k, method) - value(rec, k, "exact"))
                < abs(value(rec, k, "sampled") - value(rec, k, "exact"))
                for k in top
                for method in corrections
                for rec in trio
            ),
        ),
        f"Every correction ranks {z} best on Recall, NDCG and AP": verdict(
            bool(top and corrections),
            lambda: all(best(k, method) == z for method in corrections for k in top),
        ),
        f"BV with low gamma also orders {x} below {y} (in expectation)": verdict(
            bool(top and low_gamma),
            lambda: all(
                value(x, k, method) < value(y, k, method) for method in low_gamma for k in top
            ),
        ),
    }
    a, b = fig6_pair or (x, y)
    metric_name = {"recall@10": "Recall@10", "ndcg@10": "NDCG@10", "ap": "AP"}[fig6_metric]
    figure6 = published("figure6")
    for method, target in zip(figure6["method"], figure6["stays_right_from_m"]):
        label = {"sampled": "Uncorrected", "bv_0.1": "BV 0.1"}[method]
        comparable = fig6_metric == recall and {a, b} == {x, y}
        present = (method, f"{a}<{b}") in thresholds.index
        ours = thresholds["stays_right_from_m"].get((method, f"{a}<{b}"), float("nan"))
        verdicts[
            f"{label} {metric_name} needs about m = {target:g} to order {a} and {b} "
            "(within a factor of 2)"
        ] = verdict(
            comparable and present, lambda t=target, o=ours: t / 2 <= o <= 2 * t
        )  # NaN (never right): FAIL
    correct = table4.set_index(["pair", "metric", "method"])["correct"]
    keys = table4[table4["method"] == "sampled"][["pair", "metric"]].itertuples(index=False)
    verdicts["The rank estimate orders every pair at least as often as the uncorrected metric"] = (
        verdict(
            {"rank_estimate", "sampled"} <= set(table4["method"]),
            lambda: all(
                correct[(pair, metric, "rank_estimate")] >= correct[(pair, metric, "sampled")]
                for pair, metric in keys
            ),
        )
    )
    bv = table4[table4["method"] == "bv_0.1"]
    at_most_90 = [c / r <= 0.9 for c, r in zip(bv["correct"], bv["repetitions"])]
    verdicts[
        "BV 0.1 orders all but at most one comparison correctly in more than 90% of repetitions"
    ] = verdict(len(bv) > 0, lambda: sum(at_most_90) <= 1)
    verdicts[
        "The mean of the sampling repetitions equals the law's expectation "
        "(every cell within 4 standard errors)"
    ] = verdict(len(z_scores) > 0, lambda: z_scores.max() <= 4)
    return verdicts


def assert_claims_follow_the_tables(
    results: Path, trio=tuple(PAPER_RECOMMENDERS), fig6_metric="recall@10", fig6_pair=None
) -> list[dict]:
    """The claims report of ``results`` states one verdict per claim, each the
    one recomputed from the run's tables (:func:`recomputed_verdicts`), every
    N/A with its reason, and its summary counts the PASS, FAIL and N/A rows.
    Returns the rows of its table."""
    counts, rows = read_claims(results / "claims.md")
    verdicts = {row["claim"]: row["verdict"] for row in rows}
    assert len(verdicts) == len(rows), "a claim is stated twice"
    assert verdicts == recomputed_verdicts(results, trio, fig6_metric, fig6_pair)
    assert all(row["evidence"] for row in rows if row["verdict"] == "N/A"), rows
    stated = list(verdicts.values())
    assert counts == {v: stated.count(v) for v in ("PASS", "FAIL", "N/A")} | {"total": len(rows)}
    return rows


# --------------------------------------------------------------------------
# Simulated sampled evaluations with a known rank distribution
# --------------------------------------------------------------------------


def simulate(pstar, n, m, users, seed, law="binomial"):
    """Exact ranks drawn from pstar over 1..n, and their sampled ranks (eq 15 / 16)."""
    rng = np.random.default_rng(seed)
    ranks = rng.choice(np.arange(1, n + 1), size=users, p=pstar)
    if law == "binomial":
        sampled = 1 + rng.binomial(m, (ranks - 1) / (n - 1))
    else:
        sampled = 1 + rng.hypergeometric(ranks - 1, n - ranks, m)
    return ranks, sampled


def peaked(n, head=5, share=0.5):
    """``1 - share`` of the mass uniform over 1..n, ``share`` over the top ``head`` ranks."""
    ranks = np.arange(1, n + 1)
    return (1 - share) / n + np.where(ranks <= head, share / head, 0.0)


def chi2_pvalue(observed, expected) -> float:
    """Pearson's chi-square goodness of fit, cells with expected < 5 pooled into one."""
    from scipy import stats

    observed, expected = np.asarray(observed, float), np.asarray(expected, float)
    keep = expected >= 5
    chi2 = np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep])
    cells = int(keep.sum())
    rest_o, rest_e = observed[~keep].sum(), expected[~keep].sum()
    if rest_e > 0:
        chi2 += (rest_o - rest_e) ** 2 / rest_e
        cells += 1
    return float(stats.chi2.sf(chi2, cells - 1))
