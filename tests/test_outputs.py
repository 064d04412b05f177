"""No command writes over one of its inputs, nor over another run's output unless asked:
``plan --out`` that names a rank file or its sidecar is an error, an existing design is
replaced only with ``--force``. Each refusal is one line, exit status 2, and nothing is
written."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from sampled_metrics.cli import main
from sampled_metrics.frameworks.rank_meta import (
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
