"""The wheel is self-contained: built from the sources and installed alone into a fresh
virtual environment with only its declared dependencies (numpy, scipy, pandas, tqdm,
threadpoolctl, at constraints.txt's versions), it imports, answers ``--help`` and
corrects a rank file from a folder outside the repository, finds its package data
(the config schema, the paper's numbers) inside site-packages, names the extra when a
workflow package is missing, and brings none of the workflow's packages."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import IN_CI, REPO

pytestmark = pytest.mark.slow

# What the wheel is built from: pyproject.toml names the README and finds the package.
SOURCES = ("pyproject.toml", "README.md", "workflow/sampled_metrics")
# The files the package reads (the first two) and the marker of its types (PEP 561).
PACKAGE_DATA = ("pipeline/config.schema.yaml", "reproduction/published.csv", "py.typed")
# The extra "workflow"'s packages (pyproject.toml): none may come with the wheel alone.
WORKFLOW_ONLY = ("implicit", "matplotlib", "snakemake", "pyyaml", "jsonschema")
WORKFLOW_MODULES = ("implicit", "matplotlib", "snakemake", "yaml", "jsonschema")
EXTRA = 'pip install "sampled-metrics[workflow]"'


@dataclass(frozen=True)
class Installed:
    wheel: Path
    python: Path
    scripts: Path
    outside: Path  # a folder outside the repository, the commands' working directory


def run(command, installed: Installed, check: bool = True) -> subprocess.CompletedProcess:
    """``command`` in ``installed.outside``, with the environment of a user who has only
    the venv: no PYTHONPATH (the tests' own points into the repository), no user site."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env |= {"PYTHONNOUSERSITE": "1", "PATH": f"{installed.scripts}{os.pathsep}{env['PATH']}"}
    result = subprocess.run(
        [str(c) for c in command],
        cwd=installed.outside,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check:
        assert result.returncode == 0, f"{command}: {result.stderr[-3000:]}"
    return result


def python(code: str, installed: Installed, check: bool = True) -> subprocess.CompletedProcess:
    return run([installed.python, "-c", code], installed, check)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Installed:
    """The wheel built from a copy of the sources (setuptools leaves build/ where it
    builds) and installed with only its declared dependencies into a fresh venv."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(
                REPO / name,
                source / name,
                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
            )
        else:
            source.mkdir(exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", root / "dist", source],
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = (root / "dist").glob("sampled_metrics-*.whl")
    environment = root / "venv"
    try:
        venv.create(environment)
    except OSError as error:
        if IN_CI:
            pytest.fail(f"cannot create a venv: {error}")
        pytest.skip(f"cannot create a venv: {error}")
    scripts = environment / ("Scripts" if os.name == "nt" else "bin")
    outside = root / "elsewhere"
    outside.mkdir()
    result = Installed(wheel, scripts / "python", scripts, outside)
    # This pip installs into the venv (which so holds nothing but the wheel and its
    # dependencies); --no-compile: byte-compiling scipy and pandas would be most of the
    # install's time, and an import compiles what it uses.
    install = [*pip(result), "install", "-q", "--no-compile", "-c", REPO / "constraints.txt"]
    run([*install, wheel], result)
    return result


def pip(installed: Installed) -> list:
    """The tests' own pip, acting on the venv's interpreter."""
    return [sys.executable, "-m", "pip", "--python", installed.python]


def correct(rank_file: Path, installed: Installed) -> dict[str, tuple[float, float]]:
    """``sampled-metrics correct`` on a file of columns user, sampled_rank, m, n, as a
    user of the installed command runs it; returns each metric's range (low, high).
    The one place this file calls the command."""
    result = run(
        [
            "sampled-metrics",
            "correct",
            rank_file,
            "--rank-column",
            "sampled_rank",
            "--m-column",
            "m",
            "--n-column",
            "n",
            "--law",
            "binomial",
            "--json",
        ],
        installed,
    )
    records = json.loads(result.stdout)
    return {r["metric"]: (r["low"], r["high"]) for r in records if r["kind"] == "range"}


def test_the_wheel_holds_the_package_data(installed):
    names = zipfile.ZipFile(installed.wheel).namelist()
    assert [f for f in PACKAGE_DATA if f"sampled_metrics/{f}" not in names] == []


def test_the_installed_package_reads_its_data_from_site_packages(installed):
    """importlib.resources finds the schema and published.csv in the installed package,
    the same bytes as the repository's; nothing points back into the repository."""
    code = (
        "import json, sampled_metrics;"
        "from sampled_metrics.pipeline.config import SCHEMA_FILE;"
        "from sampled_metrics.reproduction.paper import PUBLISHED_FILE, published;"
        "print(json.dumps([sampled_metrics.__file__, str(SCHEMA_FILE), str(PUBLISHED_FILE),"
        " len(published('table3'))]))"
    )
    package, schema, paper, rows = json.loads(python(code, installed).stdout)
    package = Path(package).parent
    assert "site-packages" in package.parts and REPO not in package.parents
    source = REPO / "workflow" / "sampled_metrics"
    for installed_file, name in ((schema, PACKAGE_DATA[0]), (paper, PACKAGE_DATA[1])):
        assert Path(installed_file) == package / name
        assert Path(installed_file).read_bytes() == (source / name).read_bytes()
    assert rows > 0


def test_the_public_api_and_the_command_load_without_the_workflows_packages(installed):
    code = (
        "import sys, sampled_metrics, sampled_metrics.cli;"
        "[getattr(sampled_metrics, name) for name in sampled_metrics.__all__];"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({WORKFLOW_MODULES!r})))"
    )
    assert python(code, installed).stdout.strip() == "[]"
    assert "correct" in run(["sampled-metrics", "--help"], installed).stdout


def test_the_command_corrects_a_rank_file(installed):
    """Ranks simulated with known truth: each user's exact rank r among n items, the
    sampled rank 1 + Binomial(m, (r - 1)/(n - 1)) (m items drawn with replacement from
    the n - 1 others, section 4.3); the range must hold the exact recall@10 and
    NDCG@10 (eq 11: 1/log2(r + 1) for r <= 10) of the simulated ranks."""
    rng = np.random.default_rng(1)
    users, n, m = 400, 500, 250
    exact = np.minimum(rng.geometric(0.04, users), n)
    sampled = 1 + rng.binomial(m, (exact - 1) / (n - 1))
    path = installed.outside / "ranks.csv"
    pd.DataFrame({"user": np.arange(users), "sampled_rank": sampled, "m": m, "n": n}).to_csv(
        path, index=False
    )
    truth = {
        "recall@10": np.mean(exact <= 10),
        "ndcg@10": np.mean(np.where(exact <= 10, 1 / np.log2(exact + 1), 0.0)),
    }
    ranges = correct(path, installed)
    assert set(truth) <= set(ranges)
    for metric, value in truth.items():
        low, high = ranges[metric]
        assert low <= value <= high < 1, (metric, value, low, high)


@pytest.mark.parametrize(
    "code",
    [
        "import sampled_metrics.outputs.figures",
        "from sampled_metrics.pipeline.validation import load_config; load_config('x.yaml')",
        "import scipy.sparse as sp; from sampled_metrics.recommenders import fit_recommender;"
        "fit_recommender({'type': 'ials'}, sp.identity(4, format='csr'))",
    ],
    ids=["figures", "config", "ials"],
)
def test_a_missing_workflow_package_names_the_extra(installed, code):
    result = python(code, installed, check=False)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1].endswith(EXTRA)


def test_the_venv_holds_only_the_declared_dependencies(installed):
    pip_list = run([*pip(installed), "list", "--format=json"], installed)
    listed = json.loads(pip_list.stdout)
    names = {p["name"].lower() for p in listed}
    assert {"sampled-metrics", "numpy", "scipy", "pandas", "tqdm", "threadpoolctl"} <= names
    assert names & set(WORKFLOW_ONLY) == set()
