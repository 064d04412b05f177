"""The memory estimates of the start-up check (sampled_metrics.recommenders.memory)
against measured fits: for every registered type at two sizes, the fit's own peak (the
kernel's VmHWM, reset before the fit, less the resident memory before it) lies between
1/2.5 and 1 times the estimate (never above it: the check is conservative). Whole jobs at
MovieLens 1M and ml-20m-like size are measured by benchmarks/bench_fit_memory.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run, tiny_config

from sampled_metrics.recommenders import recommender_types
from sampled_metrics.recommenders.memory import (
    fit_memory_bytes,
    fit_memory_shortfalls,
)

WORKFLOW = Path(__file__).resolve().parents[1] / "workflow"
FACTOR = 2.5  # measured <= estimate <= FACTOR x measured
SIZES = ((10_000, 2500, 100), (20_000, 4000, 100))  # users, items, events per user
SPECS = {
    "ials": {"type": "ials", "iterations": 2},  # the memory does not grow with iterations
    "item_knn": {"type": "item_knn", "k_prime": 10},
    "popularity": {"type": "popularity"},
    "ease": {"type": "ease"},
    "bpr": {"type": "bpr", "iterations": 2},
}

CHILD = r"""
import gc, json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np, scipy.sparse as sp
from sampled_metrics.recommenders import fit_recommender

def status(key):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(key + ":"))

users, items, per_user = map(int, sys.argv[2:5])
spec = json.loads(sys.argv[5])
rng = np.random.default_rng(0)
p = 1.0 / np.arange(1, items + 1)
rows = np.repeat(np.arange(users), per_user)
train = sp.csr_matrix((np.ones(rows.size, dtype=np.float32),
                       (rows, rng.choice(items, rows.size, p=p / p.sum()))), shape=(users, items))
train.data[:] = 1.0
del rows
fit_recommender({**spec, "name": "warm-up"}, train[:20, :50])  # the imports
gc.collect()
before = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # VmHWM := VmRSS
model = fit_recommender(spec, train, seed=0)
print(json.dumps({"events": int(train.nnz), "fit": status("VmHWM") - before}))
"""


def measured_fit(spec, users, items, per_user) -> tuple[int, int]:
    """(events, bytes): the peak a fit of ``spec`` adds in a fresh process."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(WORKFLOW), str(users), str(items), str(per_user)]
        + [json.dumps(spec)],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return result["events"], result["fit"]


def clear_refs_works() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def test_every_registered_type_has_an_estimate():
    assert set(SPECS) == set(recommender_types())


@pytest.mark.skipif(not clear_refs_works(), reason="needs Linux's /proc/self/clear_refs")
@pytest.mark.parametrize("kind", sorted(SPECS))
def test_estimates_bound_measured_fits(kind):
    for users, items, per_user in SIZES:
        events, measured = measured_fit(SPECS[kind], users, items, per_user)
        estimate = fit_memory_bytes(SPECS[kind], users, items, events, process=False)
        assert 1.0 <= estimate / measured <= FACTOR, (kind, users, items, measured, estimate)


def test_a_job_is_its_fit_and_the_process():
    spec = {"type": "ease"}
    job = fit_memory_bytes(spec, 6040, 3706, 994_169)
    fit = fit_memory_bytes(spec, 6040, 3706, 994_169, process=False)
    assert job > fit > 3706**2 * 8  # the float64 items x items array at least


def test_the_estimates_grow_with_the_data():
    for kind, spec in SPECS.items():
        small = fit_memory_bytes(spec, 6040, 3706, 994_169)
        large = fit_memory_bytes(spec, 138_493, 26_744, 20_000_263)
        assert large > small, kind
    # ml-20m-like's jobs stay under 6 GB: EASE in float32 above 16,384 items (at 16,384,
    # float64 and its float32 copy take more than float32 at 26,744)
    for items in (16_384, 16_385, 26_744):
        assert fit_memory_bytes({"type": "ease"}, 138_493, items, 20_000_263) < 6 * 2**30


def test_shortfalls_name_the_model_and_the_memory_it_needs():
    specs = {"Pop": {"type": "popularity"}, "EASE": {"type": "ease"}, "Off": None}
    sizes = (138_493, 26_744, 20_000_263)
    need = fit_memory_bytes({"type": "ease"}, *sizes)
    assert fit_memory_shortfalls(specs, *sizes, available=need) == []
    (message,) = fit_memory_shortfalls(specs, *sizes, available=need - 1)
    assert message.startswith("recommenders.EASE: its fit needs about ")
    assert f"{need / 2**30:.1f} GB" in message and "26,744 items" in message
    assert fit_memory_shortfalls(specs, *sizes, available=0)[0].startswith("recommenders.Pop")


def test_a_run_stops_at_start_up_naming_the_model_that_cannot_fit(tiny_workdir):
    """A synthetic data set's sizes are known before anything runs: a catalogue of
    400,000 items needs about 600 GB for EASE's items x items array and 1.3 TB for
    item-kNN's float64 similarity, more than any machine running this test has. The
    dry run stops before any job with one line per such model; iALS fits."""
    config = tiny_config()
    config["dataset"] = "huge"
    config["datasets"]["huge"] = {
        "format": "synthetic",
        "users": 1000,
        "items": 400_000,
        "interactions": 20_000,
        "popularity_exponent": 1.0,
        "activity_exponent": 0.3,
        "min_events_per_user": 20,
        "max_events_per_user": 20,
        "seed": 1,
    }
    config["recommenders"]["EASE"] = {"type": "ease"}
    workdir = tiny_workdir("huge", config)
    result = run(workdir, "--cores", "1", "--dry-run", timeout=300)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    for name, kind in (("Y", "item_knn"), ("Z", "item_knn"), ("EASE", "ease")):
        assert re.search(
            rf"recommenders\.{name}: its fit needs about [\d.]+ GB \({kind}, 400,000 items, "
            r"20,000 events\); [\d.]+ GB available: leave it out",
            output,
        ), (name, output[-3000:])
    assert "recommenders.X:" not in output
    assert "huge (1,000 users; datasets.huge)" in output
    assert not (workdir / "data").exists() and not (workdir / "results").exists()
