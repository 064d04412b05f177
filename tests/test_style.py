"""The code stays as the tooling keeps it: ruff (lint and format), snakefmt,
snakemake --lint, and a constraint on every wildcard of every rule."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SNAKEFILES = ["Snakefile", "workflow/rules"]
# The one lint left: there is no conda channel or container registry here, so
# rules name no environment; the pinned pip install (constraints.txt) is the environment.
ACCEPTED_LINTS = {"Specify a conda environment or container for each rule."}


def tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=300
    )


def test_ruff_finds_nothing():
    result = tool("ruff", "check", ".")
    assert result.returncode == 0, result.stdout[-4000:]


def test_ruff_format_leaves_every_file_unchanged():
    result = tool("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout[-4000:]


def test_snakefmt_leaves_every_snakefile_unchanged():
    result = tool("snakefmt", "--check", *SNAKEFILES)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]


@pytest.mark.slow
def test_snakemake_lint_gives_only_the_conda_hint():
    result = tool("snakemake", "--lint")
    output = result.stdout + result.stderr
    assert "Lints for" in output, output[-4000:]  # the linter ran and read the rules
    titles = set(re.findall(r"^\s*\* (.+?):$", output, re.MULTILINE))
    assert titles and titles <= ACCEPTED_LINTS, titles - ACCEPTED_LINTS


def wildcards_without_constraint() -> dict:
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, ResourceSettings, StorageSettings

    missing = {}
    with SnakemakeApi() as api:
        workflow = api.workflow(
            resource_settings=ResourceSettings(),
            config_settings=ConfigSettings(),
            storage_settings=StorageSettings(),
            snakefile=REPO / "Snakefile",
            workdir=REPO,
        )._workflow
        for rule in workflow.rules:
            names = {name for path in rule.output for name in re.findall(r"{(\w+)", str(path))}
            constrained = set(workflow.wildcard_constraints) | set(rule.wildcard_constraints)
            if names - constrained:
                missing[rule.name] = sorted(names - constrained)
    return missing


@pytest.mark.slow
def test_every_wildcard_has_a_constraint():
    assert wildcards_without_constraint() == {}
