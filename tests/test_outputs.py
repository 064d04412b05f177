"""No command writes over one of its inputs, nor over another run's output unless asked:
``plan --out`` that names a rank file or its sidecar is an error, an existing design is
replaced only with ``--force``; a rank file is replaced only by ranks of the same source
and users (``rank_meta.check_overwrite``: two checkpoints of one class written under
one name stop with one line); two files of one model name are one error naming both
files and the fix. Each refusal is one line, exit status 2, and nothing is written."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from sampled_metrics.cli import main
from sampled_metrics.frameworks.rank_files import rank_files, write_rank_files
from sampled_metrics.frameworks.rank_meta import (
    check_overwrite,
    rank_meta,
    sidecar_path,
    write_rank_file,
)

USERS = 400


def cli(capsys, *argv) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def contents(folder) -> dict:
    """Every file under ``folder`` and its bytes."""
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def ranks(tmp_path):
    """A rank file of two models (elliot-100) and its sidecar."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"user": np.arange(USERS), "A": rng.integers(1, 30, USERS),
                          "B": rng.integers(1, 60, USERS), "m": 100, "n": 3000})  # fmt: skip
    path = tmp_path / "ranks.csv"
    write_rank_file(frame, path, rank_meta("elliot-100", rank_columns=["A", "B"], writer="test"))
    return path


def refused(capsys, folder, command: str, *argv) -> str:
    """Run ``command``: exit status 2, one line on stderr, nothing printed or written."""
    before = contents(folder)
    status, out, err = cli(capsys, command, *argv)
    assert (status, out) == (2, "") and err.count("\n") == 1, err
    assert "Traceback" not in err and contents(folder) == before
    return err.removeprefix(f"sampled-metrics {command}: error: ").removesuffix("\n")


@pytest.mark.parametrize("target", ["file", "sidecar", "file by another path"])
def test_plan_never_writes_its_design_over_an_input(capsys, tmp_path, ranks, target):
    out = {
        "file": ranks,
        "sidecar": sidecar_path(ranks),
        "file by another path": tmp_path / "." / ".." / tmp_path.name / "ranks.csv",
    }[target]
    what = f"the sidecar of {ranks}" if target == "sidecar" else f"the rank file {ranks}"
    said = refused(capsys, tmp_path, "plan", ranks, "--out", out, "--seed", 1, "--force")
    assert said == (
        f"--out {out} is {what}: writing there would destroy an input; give another file"
    )


def test_plan_replaces_an_existing_design_only_with_force(capsys, tmp_path, ranks):
    chosen = tmp_path / "chosen.csv"
    status, _, err = cli(capsys, "plan", ranks, "--out", chosen, "--seed", 1)
    assert status == 0, err
    said = refused(capsys, tmp_path, "plan", ranks, "--out", chosen, "--seed", 2)
    assert said == f"--out {chosen}: {chosen} exists already; give --force to replace it, or " \
        "another file"  # fmt: skip
    record = chosen.with_name("chosen.csv.design.json")
    chosen.unlink()  # the design's record alone is another run's output too
    said = refused(capsys, tmp_path, "plan", ranks, "--out", chosen, "--seed", 2)
    assert said.startswith(f"--out {chosen}: {record} exists already; give --force")
    status, _, err = cli(capsys, "plan", ranks, "--out", chosen, "--seed", 2, "--force")
    assert status == 0, err
    assert json.loads(record.read_text())["seed"] == 2


def frames(seed: int = 0):
    rng = np.random.default_rng(seed)
    train = sp.random(50, 300, density=0.05, format="csr", random_state=seed)
    train.data[:] = 1
    test = np.array([rng.choice(np.flatnonzero(row == 0)) for row in train.toarray()])
    return rank_files({"A": rng.normal(size=(50, 300))}, train, test, "ncf", seed=1)


def test_write_rank_files_writes_neither_file_over_a_file_it_did_not_write(tmp_path):
    exact, sampled = tmp_path / "exact.csv", tmp_path / "ncf.csv"
    sampled.write_text("user,A\n1,1\n")  # someone's file, no sidecar
    with pytest.raises(FileExistsError, match="ncf.csv: exists, and no sidecar says what "
                       "wrote it; pass force=True to replace it"):  # fmt: skip
        write_rank_files(*frames(), "ncf", exact, sampled)
    assert not exact.exists() and sampled.read_text() == "user,A\n1,1\n"
    write_rank_files(*frames(), "ncf", exact, sampled, force=True)
    write_rank_files(*frames(1), "ncf", exact, sampled)  # its own files: rewritten
    assert pd.read_csv(exact)["A"].tolist() == frames(1)[0]["A"].tolist()


def checkpoint(folder, name: str, content: bytes):
    path = folder / "saved" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(content)
    return path


def adapter_file(path, source_path, users=None):
    """A rank file as ``sampled-metrics recbole`` writes it from ``source_path``."""
    from sampled_metrics.frameworks.adapters.recbole import checkpoint_source

    meta = rank_meta("full", rank_columns=["BPR"], source=checkpoint_source(source_path),
                     users=users, writer="sampled-metrics recbole")  # fmt: skip
    write_rank_file(pd.DataFrame({"user": [1, 2], "BPR": [3, 1], "n": [50, 50]}), path, meta)


def test_two_checkpoints_of_one_class_do_not_share_a_file(capsys, tmp_path):
    """BPR after 5 and after 20 epochs: the checkpoints' stems name their files; given one
    name (--name), the second stops before RecBole is even needed (this environment has
    none), and --force or the same checkpoint passes the check."""
    early = checkpoint(tmp_path, "BPR.pth", b"five epochs")
    late = checkpoint(tmp_path, "BPR-20.pth", b"twenty epochs")
    ranks = tmp_path / "ranks"
    adapter_file(ranks / "BPR-full.csv", early)
    said = refused(capsys, tmp_path, "recbole", late, "--name", "BPR", "--out", ranks,
                   "--protocol", "full")  # fmt: skip
    assert said == (
        f"{ranks / 'BPR-full.csv'}: exists, holding the ranks of checkpoint {early}, not of "
        f"checkpoint {late}; give another --name or --out to write beside it, or --force to "
        "replace it"
    )
    for argv in ([late, "--name", "BPR", "--force"], [early], [late]):
        status, _, err = cli(capsys, "recbole", *argv, "--out", ranks, "--protocol", "full")
        assert status == 2 and "needs RecBole and torch (not installed here)" in err, err
    retrained = checkpoint(tmp_path, "BPR.pth", b"five epochs, trained again")
    said = refused(capsys, tmp_path, "recbole", retrained, "--out", ranks, "--protocol", "full")
    assert f"holding the ranks of checkpoint {early} (SHA-256 " in said


def test_the_chosen_users_ranks_do_not_replace_every_users(capsys, tmp_path):
    early = checkpoint(tmp_path, "BPR.pth", b"five epochs")
    adapter_file(tmp_path / "ranks" / "BPR-full.csv", early)
    chosen = tmp_path / "chosen.csv"
    chosen.write_text("user,probability,stratum\n1,0.5,0\n")
    said = refused(capsys, tmp_path, "recbole", early, "--users", chosen, "--out",
                   tmp_path / "ranks")  # fmt: skip
    assert said.startswith(
        f"{tmp_path / 'ranks' / 'BPR-full.csv'}: exists, holding every user's ranks, not the "
        "ranks of the 1 user of chosen.csv; give another --name or --out"
    )


def test_a_file_of_another_writer_without_a_source_is_not_replaced(tmp_path):
    path = tmp_path / "BPR-full.csv"
    write_rank_file(pd.DataFrame({"user": [1], "BPR": [1], "n": [9]}), path,
                    rank_meta("full", rank_columns=["BPR"], writer="me"))  # fmt: skip
    source = {"from": "checkpoint saved/BPR.pth", "sha256": "0" * 64}
    with pytest.raises(FileExistsError) as raised:
        check_overwrite(path, {"source": source}, fix="FIX")
    assert str(raised.value) == (
        f"{path}: exists, holding the ranks of a source not recorded (written by me), not of "
        "checkpoint saved/BPR.pth; FIX"
    )
    check_overwrite(path, {"source": source}, force=True)


def test_two_files_of_one_model_name_are_one_error_naming_both(capsys, tmp_path, ranks):
    """Two checkpoints of one class written with one name in two folders: plan names both
    files and how to tell the models apart."""
    frame = pd.read_csv(ranks)
    files = []
    for folder in ("five", "twenty"):
        files.append(tmp_path / folder / "BPR-elliot-100.csv")
        write_rank_file(frame[["user", "A", "m", "n"]].rename(columns={"A": "BPR"}), files[-1],
                        rank_meta("elliot-100", rank_columns=["BPR"], writer="test"))  # fmt: skip
    said = refused(capsys, tmp_path, "plan", *files, "--out", tmp_path / "c.csv")
    assert said == (
        f"{files[1]}: model BPR is in {files[0]} too; give each file once, and two models of "
        "one class two names where their ranks are written (sampled-metrics recbole --name "
        "NAME; cornac: --model \"CLASS(name='NAME')\")"
    )
