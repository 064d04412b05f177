"""Damaged intermediate files are bad input: every stage checks what it reads.

Two guards, each tested on its own: the checksum recorded when a file is written
(sampled_metrics.io.atomic; checked on every input of every job by runs.start_job),
and the readers of sampled_metrics.pipeline.intermediates, which check the content against
the split and the configuration whatever wrote it. Through snakemake: a cut ranks
file, a cut sampling.csv and a cut array of sampled ranks stop the rerun with one
line naming the file, and no table is rebuilt from them.
"""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest
from conftest import CONFIG_FILE, TARGETS, run

from sampled_metrics.data import SplitUsers
from sampled_metrics.io.atomic import checksum_path, verify_checksum, write_csv, write_npy
from sampled_metrics.pipeline.intermediates import (
    read_pessimistic_ranks,
    read_ranks,
    read_sampled_ranks,
    read_table,
)
from sampled_metrics.pipeline.validation import load_config

USERS = SplitUsers(np.array([7, 3, 11]), np.array([40, 35, 38]), 45)


def ranks_frame():
    return pd.DataFrame({"user": [7, 3, 11], "rank": [1, 35, 12], "n_candidates": [40, 35, 38]})


# --------------------------------------------------------------------------
# The checksum record
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    [
        lambda b: b[: len(b) // 2],  # cut
        lambda b: b[:-1],  # one byte short
        lambda b: b.replace(b"35", b"36", 1),  # one digit changed
        lambda b: b + b"\n",  # one byte more
    ],
)
def test_any_change_after_the_write_fails_the_checksum(tmp_path, damage):
    path = tmp_path / "X.csv"
    write_csv(ranks_frame(), path)
    assert verify_checksum(path)
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(ValueError, match=r"X.csv: changed or damaged since it was written"):
        verify_checksum(path)


def test_a_rewrite_records_the_new_checksum_and_a_foreign_file_has_none(tmp_path):
    path = tmp_path / "X.npy"
    write_npy(np.arange(6).reshape(2, 3), path)
    first = checksum_path(path).read_text()
    write_npy(np.arange(6).reshape(3, 2), path)
    assert checksum_path(path).read_text() != first and verify_checksum(path)
    assert checksum_path(path) == tmp_path / ".checksums" / "X.npy.sha256"
    (tmp_path / "raw.csv").write_text("a\n1\n")
    assert verify_checksum(tmp_path / "raw.csv") is False  # not written by the pipeline


# --------------------------------------------------------------------------
# The readers: what the content must be
# --------------------------------------------------------------------------


def test_read_ranks_accepts_the_split_users_in_order(tmp_path):
    ranks_frame().to_csv(tmp_path / "X.csv", index=False)
    frame = read_ranks(tmp_path / "X.csv", USERS)
    assert frame["rank"].tolist() == [1, 35, 12]
    text_users = SplitUsers(np.array(["007", "7", "1e3"]), USERS.n_candidates, 45)
    ranks_frame().assign(user=["007", "7", "1e3"]).to_csv(tmp_path / "T.csv", index=False)
    assert read_ranks(tmp_path / "T.csv", text_users)["user"].tolist() == ["007", "7", "1e3"]


@pytest.mark.parametrize(
    "edit, problem",
    [
        (lambda f: f.iloc[:2], "2 rows, expected one per user of the split (3)"),
        (lambda f: pd.concat([f, f.iloc[:1]]), "4 rows, expected one per user"),
        (lambda f: f.iloc[[1, 0, 2]], "row 2: user '3', expected '7'"),
        (lambda f: f.assign(rank=[1, 36, 12]), "row 3: rank 36 outside 1..35"),
        (lambda f: f.assign(rank=[0, 3, 12]), "row 2: rank 0 outside 1..40"),
        (lambda f: f.assign(rank=[1.5, 3, 12]), "ranks of type float64, expected integers"),
        (lambda f: f.assign(n_candidates=[40, 35, 39]), "row 4: n_candidates differs"),
        (lambda f: f.drop(columns="n_candidates"), "columns ['user', 'rank'], expected"),
        (lambda f: f.assign(rank=[1, None, 12]), "ranks of type float64"),
    ],
)
def test_read_ranks_refuses_what_cannot_be_the_ranks_of_the_split(tmp_path, edit, problem):
    edit(ranks_frame()).to_csv(tmp_path / "X.csv", index=False)
    with pytest.raises(ValueError) as error:
        read_ranks(tmp_path / "X.csv", USERS)
    message = str(error.value)
    assert message.startswith(f"{tmp_path / 'X.csv'}: ") and problem in message, message
    assert message.endswith("delete it and rerun") and "\n" not in message


def test_read_ranks_refuses_an_empty_or_binary_file(tmp_path):
    (tmp_path / "X.csv").write_text("")
    with pytest.raises(ValueError, match="X.csv: not a readable csv"):
        read_ranks(tmp_path / "X.csv", USERS)
    (tmp_path / "X.csv").write_bytes(b"\x89PNG\x00\xff\xfe")
    with pytest.raises(ValueError, match="X.csv: "):
        read_ranks(tmp_path / "X.csv", USERS)


def test_read_pessimistic_ranks_checks_users_and_range(tmp_path):
    frame = ranks_frame().drop(columns="n_candidates")
    frame.to_csv(tmp_path / "P.csv", index=False)
    assert read_pessimistic_ranks(tmp_path / "P.csv", USERS)["rank"].tolist() == [1, 35, 12]
    frame.iloc[:1].to_csv(tmp_path / "P.csv", index=False)
    with pytest.raises(ValueError, match="1 rows, expected one per user of the split"):
        read_pessimistic_ranks(tmp_path / "P.csv", USERS)


@pytest.mark.parametrize(
    "array, problem",
    [
        (np.ones((4, 3), dtype=np.int8), "shape (4, 3), expected (5, 3)"),
        (np.ones((5, 2), dtype=np.int8), "shape (5, 2), expected (5, 3)"),
        (np.ones(15, dtype=np.int8), "shape (15,), expected (5, 3)"),
        (np.ones((5, 3)), "ranks of type float64, expected integers"),
        (np.full((5, 3), 12, dtype=np.int16), "ranks from 12 to 12, outside 1..m + 1 = 11"),
        (np.zeros((5, 3), dtype=np.int8), "ranks from 0 to 0"),
    ],
)
def test_read_sampled_ranks_checks_shape_type_and_range(tmp_path, array, problem):
    np.save(tmp_path / "X.npy", array)
    with pytest.raises(ValueError) as error:
        read_sampled_ranks(tmp_path / "X.npy", n_users=3, repetitions=5, m=10)
    assert problem in str(error.value), str(error.value)
    np.save(tmp_path / "ok.npy", np.full((5, 3), 11, dtype=np.int8))
    assert read_sampled_ranks(tmp_path / "ok.npy", 3, 5, 10).shape == (5, 3)


def test_read_sampled_ranks_refuses_a_cut_or_pickled_file(tmp_path):
    np.save(tmp_path / "X.npy", np.ones((5, 3), dtype=np.int8))
    data = (tmp_path / "X.npy").read_bytes()
    (tmp_path / "X.npy").write_bytes(data[: len(data) - 4])
    with pytest.raises(ValueError, match="X.npy: not an array of sampled ranks"):
        read_sampled_ranks(tmp_path / "X.npy", 3, 5, 10)
    np.save(tmp_path / "P.npy", np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="P.npy: not an array of sampled ranks"):
        read_sampled_ranks(tmp_path / "P.npy", 3, 5, 10)


def test_read_table_wants_every_cell_once(tmp_path):
    keys = {"recommender": ["X", "Y"], "rep": [0, 1, 2]}
    full = pd.DataFrame(
        [(r, k, float(k)) for r in keys["recommender"] for k in keys["rep"]],
        columns=["recommender", "rep", "value"],
    )
    full.to_csv(tmp_path / "t.csv", index=False)
    frame = read_table(tmp_path / "t.csv", ["recommender", "rep", "value"], keys)
    assert frame["rep"].tolist() == [0, 1, 2, 0, 1, 2]  # the keys' own types back
    for bad, problem in [
        (full.iloc[:5], "5 rows, expected 6 (recommender x rep), e.g. ('Y', '2') is missing"),
        (full[full["recommender"] == "X"], "e.g. ('Y', '0') is missing"),
        (pd.concat([full, full.iloc[:1]]), "7 rows, expected 6"),
        (full.assign(rep=[0, 1, 2, 0, 1, 1]), "('Y', '2') is missing"),
        (full.assign(recommender=["X"] * 3 + ["W"] * 3), "('Y', '0') is missing"),
    ]:
        bad.to_csv(tmp_path / "t.csv", index=False)
        with pytest.raises(ValueError) as error:
            read_table(tmp_path / "t.csv", ["recommender", "rep", "value"], keys)
        assert problem in str(error.value), str(error.value)


# --------------------------------------------------------------------------
# Through snakemake: a damaged file stops the rerun, naming it
# --------------------------------------------------------------------------


def cut_half(path):
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[: len(lines) // 2]))


def cut_sampled(path):
    np.save(path, np.load(path)[:3])


# tiny: 3 recommenders x 4 metrics x (sampled + the configured estimators) x 6 repetitions
METHODS = load_config(CONFIG_FILE)["estimation"]["estimators"]
# file -> (damage, the message of the content check, without the checksum record)
DAMAGES = {
    "results/tiny/ranks/X.csv": (cut_half, "rows, expected one per user of the split (90)"),
    "results/tiny/sampling.csv": (
        cut_half,
        f"rows, expected {3 * 4 * (1 + len(METHODS)) * 6} (dataset x recommender",
    ),
    "results/tiny/sampled_ranks/Y.npy": (cut_sampled, "shape (3, 90), expected (6, 90)"),
}


@pytest.mark.slow
@pytest.mark.parametrize("with_record", [True, False], ids=["checksum", "content"])
@pytest.mark.parametrize("damaged", list(DAMAGES))
def test_a_damaged_intermediate_stops_the_rerun_with_one_line(
    damaged, with_record, reference, tmp_path
):
    """The damaged file is newer than what was built from it, so snakemake reruns the
    stages that read it: the first stops on it, naming it, and writes nothing. With
    the checksum record kept the checksum names it; without it, the content check."""
    workdir = tmp_path / "run"
    shutil.copytree(reference, workdir)
    path = workdir / damaged
    damage, problem = DAMAGES[damaged]
    damage(path)
    if not with_record:
        checksum_path(path).unlink()
    tables = [workdir / "results/tiny" / name for name in ("table3.csv", "table4.csv")]
    before = [table.stat().st_mtime_ns for table in tables]
    result = run(workdir, "--cores", "2", "--keep-going", *TARGETS)
    assert result.returncode != 0
    said = {
        line
        for log in (workdir / "logs/tiny").glob("*.log")
        for line in log.read_text().splitlines()
        if line.startswith("ValueError: ")
    }
    assert said, result.stderr[-2000:]
    expected = "changed or damaged since it was written" if with_record else problem
    assert all(line.startswith(f"ValueError: {damaged}: ") for line in said), said
    assert all(expected in line for line in said), said
    for table, mtime in zip(tables, before):  # not rebuilt from it (snakemake may remove it)
        assert not table.exists() or table.stat().st_mtime_ns == mtime
