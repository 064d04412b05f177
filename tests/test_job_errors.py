"""A failed job's one-line error reaches the console (issue 24, part 4).

A job's traceback goes to its log (``runs.start_log``); the job says its error in
one line on its own stderr, the console of a local run (``runs.start_job``'s
excepthook), and the workflow's ``onerror`` handler says it again below Snakemake's
account of the failure, read back from each failed job's log (``runs.failed_jobs_text``).
Checked here through ``snakemake --cores 1`` with no other flag, on a job that fails
inside its script (rule ``split``), and in the library.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest
from conftest import leftovers, run, tiny_config

from sampled_metrics.pipeline.runs import (
    error_in_log,
    failed_jobs_text,
    job_error_line,
    logged_cpu_seconds,
)

TRACEBACK = "Traceback (most recent call last):"

# Jobs that fail inside their script on the tiny data set, with the error they raise.
FAILING_SPLITS = {
    # a DataError: the configured time column is not in the file
    "missing_column": (
        lambda c: c["datasets"]["tiny"]["columns"].update(time="timestamp"),
        "DataError: tiny.csv: column(s) time='timestamp' not in the file "
        "(file has ['uid', 'iid', 't'])",
    ),
    # a ConfigError only the split can raise on a first run (the sizes of the data)
    "m_above_a_pool": (
        lambda c: c["sampling"].update(m=40),
        "ConfigError: sampling.m: 40 is larger than the smallest candidate pool, ",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(FAILING_SPLITS))
def test_a_failed_job_says_its_error_on_the_console(case, tiny_workdir):
    edit, error = FAILING_SPLITS[case]
    config = tiny_config()
    edit(config)
    workdir = tiny_workdir(case, config)
    result = run(workdir, "--cores", "1", "data/processed/tiny/split.npz", timeout=300)
    assert result.returncode != 0
    console = (result.stdout + result.stderr).splitlines()
    prefix = "rule split failed: " + error
    said = [n for n, line in enumerate(console) if line.lstrip().startswith(prefix)]
    # once by the job as it fails, once more below Snakemake's account of the failure
    assert len(said) == 2, console[-30:]
    assert all(console[n].endswith(" (log: logs/tiny/split.log)") for n in said)
    exiting = next(n for n, line in enumerate(console) if line.startswith("Exiting because"))
    assert said[0] < exiting < said[1]
    assert console[said[1] - 1] == "1 failed job, its error from its log:"
    assert console[said[1]] == "  " + console[said[0]]  # the same line, indented
    assert not any(TRACEBACK in line for line in console)  # the traceback stays in the log
    log = (workdir / "logs/tiny/split.log").read_text().splitlines()
    assert TRACEBACK in log
    kind, message = error.split(": ", 1)  # the traceback's last line: the qualified type
    assert re.match(rf"sampled_metrics\.[\w.]+\.{kind}: {re.escape(message)}", log[-1]), log[-3:]
    assert not (workdir / "data/processed/tiny/split.npz").exists()
    assert leftovers(workdir) == []


def job_script(raise_line: str) -> str:
    """A rule's script in miniature: start_job on a log, then ``raise_line``."""
    return textwrap.dedent(
        f"""
        import sys, types
        from sampled_metrics.data import DataError
        from sampled_metrics.pipeline.runs import start_job
        job = types.SimpleNamespace(log=[sys.argv[1]], input=[], rule="demo")
        log = start_job(job)
        log.info("working")
        {raise_line}
        """
    )


@pytest.mark.parametrize(
    ("raise_line", "expected"),
    [
        (
            "raise DataError(\"x.csv, line 3: user 'u7' is not an integer\")",
            "DataError: x.csv, line 3: user 'u7' is not an integer",
        ),
        ('raise ValueError("first line\\nsecond line")', "ValueError: first line second line"),
        ("raise MemoryError", "MemoryError"),
    ],
)
def test_the_job_says_its_error_in_one_line_and_logs_the_traceback(raise_line, expected, tmp_path):
    log = tmp_path / "logs" / "demo.log"
    result = subprocess.run(
        [sys.executable, "-c", job_script(raise_line), str(log)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr == job_error_line("demo", expected, log) + "\n"
    text = log.read_text()
    assert TRACEBACK in text and "INFO working" in text
    assert error_in_log(log) == expected


def test_a_job_logs_its_cpu_time_with_its_forked_workers(tmp_path):
    """The last line of a finished job's log: its CPU time, the workers' included (each
    of the two forked workers spins for 0.4 s of CPU); a failed job's log ends with its
    traceback instead (above)."""
    log = tmp_path / "demo.log"
    spin = textwrap.dedent(
        """
        import time
        from sampled_metrics.io.forked import forked_map

        def spin(state, task):
            start = time.process_time()
            while time.process_time() - start < state:
                pass

        forked_map(spin, 0.4, [0, 1], workers=2)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", job_script("") + spin, str(log)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stderr) == (0, "")
    last = log.read_text().splitlines()[-1]
    found = re.search(
        r"CPU time ([0-9.]+) s \(this process ([0-9.]+) s, its finished workers ([0-9.]+) s\)$",
        last,
    )
    assert found, last
    total, own, workers = map(float, found.groups())
    assert workers >= 0.8 and own > 0 and abs(total - own - workers) <= 0.02
    assert logged_cpu_seconds(log) == total


def test_a_job_that_exits_on_purpose_says_nothing_more(tmp_path):
    log = tmp_path / "demo.log"
    script = job_script("sys.exit(3)")
    result = subprocess.run(
        [sys.executable, "-c", script, str(log)], capture_output=True, text=True, timeout=60
    )
    assert (result.returncode, result.stderr) == (3, "")
    assert error_in_log(log) is None


def test_error_in_log_reads_the_last_exception_of_the_log(tmp_path):
    log = tmp_path / "job.log"
    log.write_text(
        "2026-01-01 INFO reading\n"
        f"{TRACEBACK}\n  File 'a.py', line 1, in <module>\n    f()\n"
        "KeyError: 'first'\n\nDuring handling of the above exception, another exception "
        "occurred:\n\n"
        f"{TRACEBACK}\n  File 'a.py', line 3, in <module>\n    g()\n    ^^^\n"
        "sampled_metrics.data.errors.DataError: x.csv: empty file\n\n"
    )
    assert error_in_log(log) == "DataError: x.csv: empty file"
    # a progress bar's carriage returns before the traceback
    log.write_text(f" 10%|#   | 1/10\r 20%|##  | 2/10\r{TRACEBACK}\n  File 'a.py'\nOSError: gone\n")
    assert error_in_log(log) == "OSError: gone"
    log.write_text("2026-01-01 INFO fitting X\n")  # killed: no traceback
    assert error_in_log(log) is None
    assert error_in_log(tmp_path / "absent.log") is None


def test_failed_jobs_text_gives_one_line_per_job(tmp_path):
    first, second = tmp_path / "a.log", tmp_path / "b.log"
    first.write_text(f"{TRACEBACK}\n  File 'a.py'\npkg.ConfigError: seed: -1 is negative\n")
    second.write_text("INFO fitting\n")
    text = failed_jobs_text([("split", [str(first)]), ("fit", [str(second)])])
    assert text.splitlines() == [
        "2 failed jobs, their errors from their logs:",
        f"  rule split failed: ConfigError: seed: -1 is negative (log: {first})",
        f"  rule fit failed: no error in its log, see Snakemake's message above (log: {second})",
    ]
    assert failed_jobs_text([]) == ""


def test_a_job_logs_what_its_start_up_cost_before_its_work(tmp_path):
    """The start-up line counts the CPU time before start_job (the interpreter and the
    imports: here numpy's, spent before it) and not the work after it (a 0.3 s spin)."""
    log = tmp_path / "demo.log"
    spin = "import time\nstart = time.process_time()\n"
    spin += "while time.process_time() - start < 0.3: pass\n"
    result = subprocess.run(
        [sys.executable, "-c", "import numpy\n" + job_script("") + spin, str(log)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stderr) == (0, "")
    start_up, total = logged_cpu_seconds(log, "start-up"), logged_cpu_seconds(log)
    assert start_up is not None and total is not None
    assert 0.01 < start_up <= total - 0.3 + 0.02  # the log rounds to 0.01 s
