"""The command-line tool ``sampled-metrics correct`` (sampled_metrics.cli): its
numbers are the library's, a protocol sets m and the law, a sidecar replaces every
option and contradicts none, every bad input is one line naming the file and the row
or column (exit status 2), a removed option is one error naming its replacement, the
estimators print no interval, and docs/cli.md shows exactly what it prints."""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, peaked, simulate

from sampled_metrics.cli import main
from sampled_metrics.estimation.estimators import (
    estimate_table,
    point_estimates,
    sampled_evaluation,
)
from sampled_metrics.frameworks.registry import FRAMEWORKS

DOC = REPO / "docs" / "cli.md"
EXAMPLES = REPO / "docs" / "examples" / "make_cli_examples.py"
SCRIPT = shutil.which("sampled-metrics", path=str(Path(sys.executable).parent))
ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}


def write(path: Path, frame: pd.DataFrame, sep: str = ",") -> Path:
    frame.to_csv(path, sep=sep, index=False)
    return path


def run(capsys, *argv) -> tuple[int, str, str]:
    status = main(["correct", *map(str, argv), "--quiet"])
    out, err = capsys.readouterr()
    return status, out, err


def records(capsys, *argv, kinds=("estimate", "comparison")) -> list[dict]:
    status, out, err = run(capsys, *argv, "--json")
    assert status == 0, err
    return [record for record in json.loads(out) if record["kind"] in kinds]


@pytest.fixture
def ranks_file(tmp_path):
    """400 users, m = 20 sampled with replacement from n = 300, two models (a, b)."""
    _, a = simulate(peaked(300, head=20, share=0.3), 300, 20, 400, seed=1)
    b = np.minimum(a + np.random.default_rng(2).integers(0, 3, a.size), 21)
    frame = pd.DataFrame({"user": np.arange(400), "a": a, "b": b, "m": 20, "n": 300})
    return write(tmp_path / "ranks.csv", frame), a, b


# --------------------------------------------------------------------------
# The numbers are the library's
# --------------------------------------------------------------------------


def test_the_json_records_are_the_librarys_estimates(capsys, ranks_file):
    path, a, _ = ranks_file
    methods = ["sampled", "bv_0.1", "mn_em", "em"]
    got = records(capsys, path, "--rank-column", "a", "--estimators", *methods)
    metrics = ["recall@10", "ndcg@10"]
    expected = point_estimates(sampled_evaluation(a, 20, 300), metrics, methods)
    assert [(r["kind"], r["model"]) for r in got] == [("estimate", "a")] * len(expected)
    assert [(r["metric"], r["estimator"]) for r in got] == [
        (metric, method) for metric in metrics for method in methods
    ]
    for record in got:
        assert record["estimate"] == pytest.approx(
            expected[record["metric"], record["estimator"]], rel=1e-12
        )
        # no interval: an estimator's bias is not in one (docs/estimators.md); a record
        # has only the fields it has a value for
        assert set(record) == {"kind", "model", "metric", "estimator", "estimate"}


def test_the_text_table_has_one_aligned_row_per_model_metric_and_method(capsys, ranks_file):
    path, *_ = ranks_file
    status, out, err = run(
        capsys, path, "--rank-column", "a", "--estimators", "sampled", "ls", "--no-range"
    )
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == (
        f"{path}: 400 rows, 400 users; m = 20 (column m), n = 300 (column n), binomial law"
    )
    assert lines[2].startswith("estimates (no interval: an estimator's bias depends on")
    header = lines[4].split()
    assert header == ["model", "metric", "estimator", "estimate"]
    table = lines[4 : lines.index("", 4)]
    rows = [line.split() for line in table[1:]]
    assert [row[:3] for row in rows] == [
        ["a", metric, method] for metric in ("recall@10", "ndcg@10") for method in ("sampled", "ls")
    ]
    ends = {len(line) for line in table}
    assert len(ends) == 1  # right-aligned numbers end in one column
    assert lines[-1] == "no range (--no-range): nothing above carries an interval"


def test_two_models_print_the_paired_comparison(capsys, ranks_file):
    path, a, b = ranks_file
    status, out, _ = run(capsys, path, "--rank-column", "a", "--rank-column", "b")
    assert status == 0
    assert "paired differences (first - second; no interval" in out
    table = out.split("paired differences (first")[1].split("ranges that hold")[0].splitlines()
    assert table[2].split() == ["first", "second", "metric", "estimator", "difference"]
    rows = [line.split() for line in table[3:] if line.startswith("a ")]
    assert len(rows) == 2 * 3 and all(row[:2] == ["a", "b"] for row in rows)  # 3 estimators
    argv = [path, "--rank-column", "a", "--rank-column", "b", "--estimators", "bv_0.1"]
    got = records(capsys, *argv)
    pairs = [r for r in got if r["kind"] == "comparison"]
    assert [(r["first"], r["second"], r["metric"]) for r in pairs] == [
        ("a", "b", "recall@10"),
        ("a", "b", "ndcg@10"),
    ]
    first, second = (sampled_evaluation(x, 20, 300) for x in (a, b))
    expected = [
        point_estimates(first, [metric], ["bv_0.1"])[metric, "bv_0.1"]
        - point_estimates(second, [metric], ["bv_0.1"])[metric, "bv_0.1"]
        for metric in ("recall@10", "ndcg@10")
    ]
    assert [r["difference"] for r in pairs] == pytest.approx(expected, rel=1e-12)
    assert pairs[1]["difference"] > 0  # b = a + 0..2
    assert set(pairs[1]) == {"kind", "first", "second", "metric", "estimator", "difference"}


def test_the_ranges_are_the_librarys_identification_intervals(capsys, ranks_file):
    """The ranges: every model's metric and every pair's difference get the
    identification interval (estimation.estimators.bounds), in the JSON records and below
    the tables, a difference with the verdict its range supports."""
    from sampled_metrics.estimation.estimators import (
        difference_interval,
        identification_intervals,
    )

    path, a, b = ranks_file
    argv = [path, "--rank-column", "a", "--rank-column", "b", "--estimators", "sampled"]
    got = records(capsys, *argv, kinds=("range", "range_difference"))
    first, second = sampled_evaluation(a, 20, 300), sampled_evaluation(b, 20, 300)
    expected = identification_intervals(first, ["recall@10", "ndcg@10"])
    ranges = [r for r in got if r["kind"] == "range" and r["model"] == "a"]
    assert [(r["metric"], r["low"], r["high"]) for r in ranges] == [
        (metric, *expected[metric]) for metric in ("recall@10", "ndcg@10")
    ]
    difference = [r for r in got if r["kind"] == "range_difference"][1]
    low, high = difference_interval(first, second, "ndcg@10")
    assert (difference["low"], difference["high"]) == (low, high)
    verdict = "a better" if low > 0 else "b better" if high < 0 else "undecided"
    assert difference["verdict"] == verdict
    status, out, _ = run(capsys, *argv)
    section = out.split("ranges that hold whatever the ranks (95%")[1].splitlines()
    assert section[2].split() == ["model", "metric", "low", "high"]
    differences = out.split("ranges of the paired differences (first - second, 95%)")[1]
    lines = differences.splitlines()
    assert lines[2].split() == ["first", "second", "metric", "low", "high", "verdict"]
    assert [line.split()[:3] for line in lines[3:]] == [
        ["a", "b", "recall@10"],
        ["a", "b", "ndcg@10"],
    ]
    assert "wrong with probability at most 5%" in lines[0]
    _, without, _ = run(capsys, path, "--rank-column", "a", "--estimators", "sampled", "--no-range")
    assert "ranges that hold" not in without


def test_formats_zero_based_ranks_and_one_m_and_n_for_all_rows(capsys, tmp_path, ranks_file):
    path, a, _ = ranks_file
    reference = records(capsys, path, "--rank-column", "a", "--estimators", "bv_0.1")
    frame = pd.DataFrame({"above": a - 1})
    variants = [
        (write(tmp_path / "r.tsv", frame, "\t"), []),
        (tmp_path / "r.csv.gz", []),
        (write(tmp_path / "r.txt", frame, ";"), ["--sep", ";"]),
    ]
    with gzip.open(tmp_path / "r.csv.gz", "wt") as handle:
        frame.to_csv(handle, index=False)
    for file, extra in variants:
        got = records(
            capsys,
            file,
            "--rank-column",
            "above",
            "--zero-based",
            "--m",
            "20",
            "--n",
            "300",
            "--estimators",
            "bv_0.1",
            *extra,
        )
        assert [r["estimate"] for r in got] == [r["estimate"] for r in reference], file


def test_a_progress_bar_on_a_terminal_only(capsys, monkeypatch, ranks_file):
    """On a terminal the models and ranges show a bar on stderr; elsewhere (and
    with --quiet) stderr stays empty; stdout is the same either way."""
    path, *_ = ranks_file
    argv = ["correct", str(path), "--rank-column", "a", "--estimators", "mn_em"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(argv) == 0
    assert capsys.readouterr().out == out
    assert "correcting:" in terminal.getvalue()
    terminal.truncate(0)
    assert main([*argv, "--quiet"]) == 0 and terminal.getvalue() == ""


def test_help_is_exit_status_0(capsys):
    assert main(["correct", "--help"]) == 0
    assert "--protocol NAME" in capsys.readouterr().out


def test_per_row_m_and_n(capsys, tmp_path):
    """Users with different m and n: each corrected with its own (m, n)."""
    rng = np.random.default_rng(3)
    m, n = rng.choice([10, 20], 300), rng.choice([100, 150], 300)
    sampled = 1 + rng.binomial(m, rng.random(300) ** 3)
    path = write(tmp_path / "r.csv", pd.DataFrame({"sampled_rank": sampled, "k": m, "size": n}))
    got = records(capsys, path, "--m-column", "k", "--n-column", "size", "--estimators", "cls")
    expected = estimate_table(sampled_evaluation(sampled, m, n), ["recall@10", "ndcg@10"], ["cls"])
    assert [r["estimate"] for r in got] == pytest.approx(expected["estimate"].tolist(), rel=1e-12)


# --------------------------------------------------------------------------
# Protocols: one name sets m and the law
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options, m, law",
    [
        (["--protocol", "ncf"], 99, "hypergeometric"),
        (["--protocol", "elliot-50"], 50, "hypergeometric"),
        (["--protocol", "elliot"], 100, "hypergeometric"),
        (["--protocol", "daisyrec"], 999, "binomial"),
        (["--protocol", "daisyrec-499"], 499, "binomial"),
        (["--protocol", "ncf", "--law", "hypergeometric", "--m", "99"], 99, "hypergeometric"),
        (["--m", "120", "--law", "hypergeometric"], 120, "hypergeometric"),
        (["--m", "30"], 30, "binomial"),
    ],
)
def test_a_protocol_sets_m_and_the_law(capsys, tmp_path, options, m, law):
    rng = np.random.default_rng(4)
    n = rng.choice([3000, 3050, 3100], 200)
    sampled = 1 + rng.hypergeometric(rng.integers(0, 100, 200), n - 100, 30)
    path = write(tmp_path / "r.csv", pd.DataFrame({"sampled_rank": sampled, "n": n}))
    argv = [path, *options, "--estimators", "bv_0.1", "--metrics", "ndcg@10", "--no-range"]
    status, out, err = run(capsys, *argv)
    assert status == 0, err
    assert f"; m = {m} (" in out.splitlines()[0] and out.splitlines()[0].endswith(f", {law} law")
    got = records(capsys, *argv)
    expected = estimate_table(sampled_evaluation(sampled, m, n, law), ["ndcg@10"], ["bv_0.1"])
    assert got[0]["estimate"] == pytest.approx(expected["estimate"].iloc[0], rel=1e-12)


@pytest.mark.parametrize(
    "options, expected",
    [
        (["--protocol", "ncf", "--m", "120"], "--m 120 contradicts --protocol ncf, which says m"),
        (["--protocol", "ncf", "--law", "binomial"], "--law binomial contradicts --protocol ncf"),
        (["--protocol", "daisyrec", "--law", "hypergeometric"], "contradicts --protocol daisyrec"),
        (["--protocol", "recbole-pop100"], "recbole-pop100 draws by popularity: neither law holds"),
        (["--protocol", "bert4rec"], "give --law to read the ranks as uniform draws"),
        (["--protocol", "full", "--m", "5"], "--m does not apply to a full ranking"),
    ],
)
def test_an_option_that_contradicts_the_protocol_is_one_error(capsys, tmp_path, options, expected):
    path = write(tmp_path / "r.csv", pd.DataFrame({"sampled_rank": [1, 5], "n": [500, 600]}))
    status, out, err = run(capsys, path, *options)
    assert status == 2 and out == "" and err.count("\n") == 1
    assert err.startswith("sampled-metrics correct: error: ") and expected in err, err


def test_recboles_protocol_reads_each_rows_distinct_items_hypergeometrically(capsys, tmp_path):
    """RecBole draws N = 100 with replacement and ranks the distinct items: the file's
    column m holds each row's (<= N), and the protocol reads it with the hypergeometric
    law, exact because given d distinct draws the set is uniform over the d-subsets."""
    rng = np.random.default_rng(6)
    n = rng.choice([3000, 3100], 200)
    m = rng.integers(95, 101, 200)
    sampled = 1 + rng.hypergeometric(rng.integers(0, 100, 200), n - 100, m)
    frame = pd.DataFrame({"sampled_rank": sampled, "m": m, "distinct": m, "over": m + 1, "n": n})
    path = write(tmp_path / "r.csv", frame)
    data = sampled_evaluation(sampled, m, n, "hypergeometric")
    expected = estimate_table(data, ["recall@10", "ndcg@10"], ["bv_0.1"])
    for options in (["--protocol", "recbole-uni100"], ["--protocol", "recbole-uni100",
                                                        "--m-column", "distinct"]):  # fmt: skip
        got = records(capsys, path, *options, "--estimators", "bv_0.1", "--no-range")
        assert [r["estimate"] for r in got] == pytest.approx(
            expected["estimate"].tolist(), rel=1e-12
        )
    status, _, err = run(capsys, path, "--protocol", "recbole-uni100", "--m-column", "over")
    assert status == 2
    assert "column 'over' has m = 101, more than the 100 items protocol recbole-uni100" in err
    # the binomial law in the draws (m = N) would count an item drawn twice twice
    status, _, err = run(capsys, path, "--protocol", "recbole-uni100", "--law", "binomial")
    assert status == 2 and "contradicts --protocol recbole-uni100" in err


def test_a_protocol_says_when_it_replaces_the_files_column_m(capsys, tmp_path):
    path = write(tmp_path / "r.csv", pd.DataFrame({"sampled_rank": [1, 5, 9], "m": [99, 98, 99]}))
    status, out, err = run(
        capsys, path, "--protocol", "ncf", "--n", "3706", "--estimators", "sampled"
    )
    assert status == 0 and "m = 99 (protocol ncf)" in out
    assert err.strip() == (
        f"sampled-metrics correct: note: {path}: column m differs from m = 99 (protocol ncf) "
        "on 1 rows and is not used (--m-column m uses it)"
    )


def test_every_framework_is_documented_with_the_code_it_was_read_from():
    text = DOC.read_text()
    for framework in FRAMEWORKS:
        assert framework.repository in text, framework.repository
        for path in re.findall(r"[\w/]+\.(?:py|yaml)", framework.source):
            assert path in text, (framework.name, path)
        assert f"commit {framework.commit}" in text, (framework.name, framework.commit)
        for protocol in framework.protocols:
            assert f"`{protocol.sized or protocol.name}`" in text, protocol.name


# --------------------------------------------------------------------------
# Bad input: one line naming the file and the row or the column, exit status 2
# --------------------------------------------------------------------------

GOOD = "user,sampled_rank,m,n\n1,1,100,3706\n2,5,100,3706\n3,40,100,3706\n"

BAD = {
    # name: (file name, content or None for no file, extra options, expected in the line)
    "missing rank column": (
        "r.csv",
        "user,rank,n\n1,1,3706\n",
        ["--m", "100"],
        "r.csv: no column 'sampled_rank' (give --rank-column); the file has: user, rank, n",
    ),
    "missing named column": (
        "r.csv",
        GOOD,
        ["--rank-column", "model_x"],
        "r.csv: no column 'model_x' (--rank-column); the file has: user, sampled_rank, m, n",
    ),
    "no m at all": (
        "r.csv",
        "sampled_rank,n\n1,3706\n",
        [],
        "r.csv: no column 'm' (give --m or --m-column, or --protocol); the file has:",
    ),
    "rank above m + 1": (
        "r.csv",
        GOOD.replace("3,40,", "3,102,"),
        [],
        "r.csv: line 4: column sampled_rank: sampled rank is 102, outside 1..m + 1 = 101",
    ),
    "rank 0": (
        "r.csv",
        GOOD.replace("2,5,", "2,0,"),
        [],
        "r.csv: line 3: column sampled_rank: sampled rank is 0, outside 1..m + 1 = 101",
    ),
    "zero-based above m": (
        "r.csv",
        GOOD.replace("3,40,", "3,101,"),
        ["--zero-based"],
        "r.csv: line 4: column sampled_rank: 101 sampled items above, outside 0..m = 100",
    ),
    "not an integer": (
        "r.csv",
        GOOD.replace("2,5,", "2,2.5,"),
        [],
        "r.csv: line 3: column sampled_rank: '2.5' is not an integer",
    ),
    "not a number": (
        "r.tsv",
        GOOD.replace(",", "\t").replace("\t3706\n3", "\tmany\n3"),
        [],
        "r.tsv: line 3: column n: 'many' is not an integer",
    ),
    "empty value": (
        "r.csv",
        GOOD.replace("3,40,100", "3,40,"),
        [],
        "r.csv: line 4: column m: is empty",
    ),
    "n below 2": (
        "r.csv",
        "sampled_rank,m,n\n1,1,5\n1,1,1\n",
        [],
        "r.csv: line 3: column n: n is 1, below 2",
    ),
    "m above n - 1 without replacement": (
        "r.csv",
        "sampled_rank,m,n\n1,99,3706\n3,99,50\n",
        ["--law", "hypergeometric"],
        "r.csv: line 3: column m: m is 99 > n - 1 = 49: impossible without replacement",
    ),
    "m above n - 1 with --m": (
        "r.csv",
        "sampled_rank,n\n1,3706\n3,50\n",
        ["--protocol", "ncf"],
        "r.csv: line 3: m = 99 (protocol ncf): m is 99 > n - 1 = 49: impossible without "
        "replacement",
    ),
    "ragged line": (
        "r.csv",
        GOOD + "4,1,100,3706,7\n",
        [],
        "r.csv: line 5: 5 fields, the header has 4",
    ),
    "empty file": ("r.csv", "", [], "r.csv: empty file (no header, no rows)"),
    "header only": ("r.csv", "sampled_rank,m,n\n", [], "r.csv: no rows (only a header)"),
    "no such file": ("absent.csv", None, [], "absent.csv: no such file"),
    "unknown extension": ("r.dat", GOOD, [], "r.dat: cannot tell the format from the extension"),
    "damaged gzip": ("r.csv.gz", "not gzip at all", [], "r.csv.gz: cannot read:"),
    "protocol of RecBole without column m": (
        "r.csv",
        "sampled_rank,n\n1,3706\n",
        ["--protocol", "recbole-uni100"],
        "r.csv: no column 'm' (protocol recbole-uni100 reads each row's m from it; name "
        "another with --m-column); the file has: sampled_rank, n",
    ),
    "unknown protocol": (
        "r.csv",
        GOOD,
        ["--protocol", "uni-100"],
        "argument --protocol: unknown protocol 'uni-100'; give full, ncf, elliot, recbole-uni100",
    ),
    "unknown metric": ("r.csv", GOOD, ["--metrics", "ndcg@10", "hit@x"], "argument --metrics"),
    "unknown estimator": ("r.csv", GOOD, ["--estimators", "bv_em"], "argument --estimators"),
    "range is not an estimator": (
        "r.csv",
        GOOD,
        ["--estimators", "range"],
        "range is not an estimator: the range is printed unless --no-range is given",
    ),
    "bad confidence": ("r.csv", GOOD, ["--confidence", "95"], "argument --confidence"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_naming_the_file_and_the_row_or_column(capsys, tmp_path, case):
    name, content, options, expected = BAD[case]
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    assert main(["correct", str(path), *options, "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert expected in err, err
    assert "Traceback" not in err
    if not case.startswith(("unknown", "bad", "range")):
        assert err.startswith(f"sampled-metrics correct: error: {tmp_path}"), err


def test_parquet_needs_pyarrow(capsys, tmp_path):
    path = tmp_path / "r.parquet"
    if importlib.util.find_spec("pyarrow") is not None:
        pd.DataFrame({"sampled_rank": [1, 2], "m": 9, "n": 50}).to_parquet(path)
        assert run(capsys, path, "--estimators", "sampled")[0] == 0
        return
    path.write_bytes(b"PAR1")
    status, _, err = run(capsys, path)
    assert status == 2
    assert err.strip() == (
        f"sampled-metrics correct: error: {path}: reading parquet needs pyarrow, which is not "
        "installed: pip install pyarrow (or convert the file to csv)"
    )


def test_options_errors_stop_before_the_file_is_read(capsys, tmp_path):
    status = main(["correct", str(tmp_path / "absent.csv"), "--protocol", "bert4rec", "--quiet"])
    assert status == 2
    assert capsys.readouterr().err.strip() == (
        "sampled-metrics correct: error: --protocol bert4rec: bert4rec draws by popularity: "
        "neither law holds (docs/popularity.md); give --law to read the ranks as uniform draws"
    )


REMOVED = {
    # sub-command, option and its values: what the one error line names
    ("correct", "--preset", "recbole-uni"): "--preset is gone: give the protocol with --protocol",
    ("correct", "--negatives", "100"): "--negatives is gone: the number is in the protocol's name",
    ("correct", "--methods", "range", "em"): "--methods is gone: give the estimators with "
    "--estimators",
    ("correct", "--bootstrap", "20"): "--bootstrap is gone: the estimators print no interval",
    ("correct", "--seed", "1"): "--seed is gone: correct draws nothing any more",
    ("recbole", "--modes", "uni100", "full"): "--modes is gone: give each protocol with --protocol",
}


@pytest.mark.parametrize("argv", sorted(REMOVED))
def test_a_removed_option_is_one_error_naming_its_replacement(capsys, tmp_path, argv):
    command, *options = argv
    status = main([command, str(tmp_path / "absent.csv"), *options])
    out, err = capsys.readouterr()
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"sampled-metrics {command}: error: {REMOVED[argv]}"), err


# --------------------------------------------------------------------------
# The installed command
# --------------------------------------------------------------------------


def test_the_installed_console_script(tmp_path):
    assert SCRIPT, "sampled-metrics is not installed: pip install -c constraints.txt -e ."
    path = tmp_path / "r.csv"
    path.write_text(GOOD)
    done = subprocess.run(
        [SCRIPT, "correct", str(path), "--estimators", "sampled", "--no-range", "--json"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=120,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    estimates = [r for r in json.loads(done.stdout) if r["kind"] == "estimate"]
    assert [r["estimator"] for r in estimates] == ["sampled", "sampled"]
    path.write_text(GOOD.replace("2,5,", "2,x,"))
    done = subprocess.run([SCRIPT, "correct", str(path)], capture_output=True, text=True, env=ENV)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"sampled-metrics correct: error: {path}: line 3: column sampled_rank: 'x' is not an "
        "integer\n"
    )


# --------------------------------------------------------------------------
# docs/cli.md shows exactly what the commands print
# --------------------------------------------------------------------------


def example_script():
    spec = importlib.util.spec_from_file_location("make_cli_examples", EXAMPLES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def shell(command: str, cwd: Path) -> str:
    """What the console script prints for one ``sampled-metrics ...`` line of the doc."""
    argv = shlex.split(command)
    both = argv[-1] == "2>&1"
    argv = argv[:-1] if both else argv
    assert argv[0] == "sampled-metrics", command
    done = subprocess.run(
        [SCRIPT, *argv[1:]],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if both else subprocess.PIPE,
        text=True,
        env=ENV,
        timeout=600,
    )
    assert both or done.returncode == 0, (command, done.stderr)
    return done.stdout


# A decimal number as the tool prints it (tables: fixed digits; --json: Python's repr).
NUMBER = re.compile(r"-?\d+\.\d+(?:[eE][-+]?\d+)?")


def same_output(got: str, shown: str, rel: float = 1e-12) -> bool:
    """The same text, numbers equal to within ``rel``: a float printed to 17 digits may
    differ in its last digit between CPUs (BLAS kernels sum in other orders), which is no
    change of the tool's output; any other difference is."""
    got_numbers, shown_numbers = NUMBER.findall(got), NUMBER.findall(shown)
    return (
        NUMBER.split(got) == NUMBER.split(shown)
        and len(got_numbers) == len(shown_numbers)
        and all(
            abs(float(a) - float(b)) <= rel * max(abs(float(a)), abs(float(b)))
            for a, b in zip(got_numbers, shown_numbers)
        )
    )


def test_same_output_allows_only_the_last_digits_of_a_float():
    assert same_output('{"se": 0.0019517080254023878}', '{"se": 0.001951708025402388}')
    assert not same_output('{"estimate": 0.0612}', '{"estimate": 0.0611}')
    assert not same_output("cls 0.0630", "bv 0.0630")
    assert not same_output("0.0630 0.1", "0.0630")


def test_the_doc_shows_what_every_example_prints(tmp_path):
    script = example_script()
    shown = script.commands(DOC.read_text())
    assert len(shown) >= 6 and shown[0][0] == "python docs/examples/make_cli_examples.py examples"
    assert script.run(shown[0][0], tmp_path) == shown[0][1]
    for protocol in ("ncf", "elliot-100", "daisyrec", "full"):
        assert any(f"--protocol {protocol}" in command for command, _ in shown), protocol
    # the RecBole file is read by its sidecar alone
    assert any(c.startswith("sampled-metrics correct examples/recbole_uni100.tsv --est")
               for c, _ in shown)  # fmt: skip
    with ThreadPoolExecutor(max_workers=2) as pool:
        printed = list(pool.map(lambda item: shell(item[0], tmp_path), shown[1:]))
    for (command, output), got in zip(shown[1:], printed):
        assert same_output(got, output), f"docs/cli.md is stale for: {command}"


def test_the_readme_links_the_doc():
    assert "docs/cli.md" in (REPO / "README.md").read_text()
