"""Every command of the README runs as written: each `snakemake` line (and those of
docs/datasets.md) as a dry run (the targets exist and the configuration validates), each
`sampled-metrics` line through the command's own parser (no renamed or removed option),
and the three commands that decide between two models end to end on the worked example
of docs/deciding.md.

Where the other commands of docs/ run: docs/cli.md's and docs/deciding.md's console
blocks in tests/test_cli.py and tests/test_cli_decide.py (each output compared with the
page); the adapters' (`sampled-metrics recbole`, `cornac`, docs/recbole.md,
docs/cornac.md) in tests/test_recbole_adapter.py and tests/test_cornac_adapter.py, in
the frameworks' own environments; docs/cluster.md's in tests/test_slurm.py; `pip install`
lines in tests/test_install_commands.py.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import sys

import pytest
from conftest import REPO

from sampled_metrics.cli.commands import main, parser

README = REPO / "README.md"
DATASETS = REPO / "docs" / "datasets.md"
BASH = re.compile(r"^```bash\n(.*?)^```\n", re.DOTALL | re.MULTILINE)


def commands_of(path) -> list[str]:
    """The commands of a page's bash blocks: a line's comment dropped, a line ending in
    a backslash joined with the next, `a && b` split."""
    commands = []
    for block in BASH.findall(path.read_text()):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line and not line.startswith("#"):
                commands += [part.strip() for part in line.split("&&")]
    return commands


def programs(name: str, *pages) -> list[list[str]]:
    """The commands of one program on the pages (default: the README), as argument lists
    (the program's path dropped)."""
    found = [shlex.split(command) for page in pages or (README,) for command in commands_of(page)]
    return [words[1:] for words in found if words and words[0].split("/")[-1] == name]


def test_the_readme_has_the_commands_these_tests_run():
    assert len(programs("snakemake")) >= 4 and len(programs("snakemake", DATASETS)) >= 5
    assert len(programs("sampled-metrics")) >= 6
    names = {words[0] for words in programs("sampled-metrics")}
    assert names == {"recbole", "cornac", "correct", "plan"}


@pytest.mark.parametrize("words", programs("sampled-metrics"), ids=" ".join)
def test_every_sampled_metrics_command_parses(words):
    """The command's own parser takes the README's line: a renamed option fails here."""
    with contextlib.redirect_stderr(io.StringIO()) as err:
        try:
            parser().parse_args(words)
        except SystemExit as stop:
            pytest.fail(f"sampled-metrics {' '.join(words)}: exit {stop.code}: {err.getvalue()}")


@pytest.mark.slow
@pytest.mark.parametrize("words", programs("snakemake", README, DATASETS), ids=" ".join)
def test_every_snakemake_command_is_a_valid_run(words):
    """A dry run of the README's line: its targets are rules' outputs and the
    configuration it names validates."""
    run = subprocess.run(
        [sys.executable, "-m", "snakemake", *words, "--dry-run", "--quiet", "rules"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]


@pytest.mark.slow
def test_the_three_commands_that_decide_run_on_the_worked_example(tmp_path, monkeypatch):
    """plan, then the chosen users ranked exactly, then correct --exact --design: the
    README's lines on docs/deciding.md's example files, in their folder."""
    sys.path.insert(0, str(REPO / "docs" / "examples"))
    try:
        import make_decide_examples as example
    finally:
        sys.path.pop(0)
    monkeypatch.chdir(tmp_path)
    example.main(["sampled", str(tmp_path)])
    plan, correct = [w for w in programs("sampled-metrics") if w[0] in ("plan", "correct")][-2:]
    assert plan[0] == "plan" and correct[0] == "correct" and "--design" in correct
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(plan) == 0
    example.main(["exact", "chosen.csv", "exact.csv"])
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*correct, "--quiet"]) == 0
    pair = re.compile(r"^A\s+B\s+recall@10\s.*\s(A better|B better|undecided)$", re.M)
    verdicts = pair.findall(out.getvalue())
    assert verdicts == ["A better"], out.getvalue()
