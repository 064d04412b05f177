"""sampled_metrics.io.allocator: freed memory reused, not page-faulted in again."""

import platform
import subprocess
import sys

import pytest

# A repetition's draws as the ranking pass makes them: a float temporary and its int64
# copy, a few MB each, made and freed again and again; prints the page faults it took.
_LOOP = """
import resource, sys
import numpy as np
from sampled_metrics.io.allocator import reuse_freed_memory
if sys.argv[1] == "set":
    assert reuse_freed_memory()
rng = np.random.default_rng(0)
pool, u = rng.integers(1400, 3700, size=3850), rng.random((3850, 100))
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(30):
    (u * pool[:, None]).astype(np.int64)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _page_faults(mode: str) -> int:
    run = subprocess.run([sys.executable, "-c", _LOOP, mode], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return int(run.stdout)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt is glibc's")
def test_arrays_made_again_reuse_the_freed_pages():
    default, reused = _page_faults("default"), _page_faults("set")
    # each 3 MB array is 750 pages: by default both arrays of every pass fault in anew
    assert default > 30 * 750
    assert reused < default / 5


def test_start_job_sets_the_allocator(tmp_path, monkeypatch):
    import types

    from sampled_metrics.io import allocator
    from sampled_metrics.pipeline import runs

    calls = []
    monkeypatch.setattr(allocator, "reuse_freed_memory", lambda: calls.append(1) or True)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(sys, "stderr", sys.stderr)
    job = types.SimpleNamespace(log=[str(tmp_path / "job.log")], input=[])
    runs.start_job(job)
    assert calls == [1]
