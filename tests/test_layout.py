"""The architecture's promises: the library never imports Snakemake nor changes
global matplotlib settings, a job's set-up imports no heavy package nor its script a
solver package, its fingerprint
covers every module, every config key is described and every default lives in the
schema."""

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from conftest import CONFIG_FILE

from sampled_metrics.pipeline.config import SCHEMA_FILE
from sampled_metrics.pipeline.runs import library_fingerprint
from sampled_metrics.pipeline.validation import load_config

REPO = Path(__file__).resolve().parents[1]
LIBRARY = REPO / "workflow" / "sampled_metrics"


def test_the_library_never_imports_snakemake():
    offenders = [
        str(path.relative_to(REPO))
        for path in LIBRARY.rglob("*.py")
        if "import snakemake" in path.read_text() or "from snakemake" in path.read_text()
    ]
    assert offenders == []


def test_importing_the_figures_changes_no_global_matplotlib_setting():
    modules = sorted(path.stem for path in (LIBRARY / "outputs" / "figures").glob("[!_]*.py"))
    assert "style" in modules
    code = (
        "import matplotlib as mpl; before = dict(mpl.rcParams); backend = mpl.get_backend();"
        "import sampled_metrics.outputs.figures;"
        + "".join(f"import sampled_metrics.outputs.figures.{name};" for name in modules)
        + "changed = [k for k in before if mpl.rcParams[k] != before[k]];"
        "assert not changed and mpl.get_backend() == backend, changed"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]


# What every job imports before any work (its set-up and its writes), and what those
# imports must not pull in: a job that needs none of them pays none of their import time.
JOB_SET_UP = ("sampled_metrics.pipeline.runs", "sampled_metrics.io.atomic")
HEAVY = ("pandas", "scipy", "matplotlib")


def test_a_job_s_set_up_imports_no_heavy_package():
    code = (
        "import sys;"
        + "".join(f"import {name};" for name in JOB_SET_UP)
        + f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == []


# Packages slow to import that only some functions call: imported inside them, so that a
# job's script, whose imports run before any work, does not pay for them.
SOLVERS = ("scipy.optimize", "scipy.stats")


def test_no_job_s_script_imports_a_solver_package():
    imports = []
    for script in sorted((REPO / "workflow" / "scripts").glob("*.py")):
        source = script.read_text()
        imports += [ast.get_source_segment(source, node) for node in ast.parse(source).body
                    if isinstance(node, (ast.Import, ast.ImportFrom))]  # fmt: skip
    check = f"import sys; print(*[m for m in {SOLVERS!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", "\n".join([*imports, check])],
                            capture_output=True, text=True)  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == []


def test_the_fingerprint_changes_with_a_module_of_a_sub_package(tmp_path):
    copy = tmp_path / "sampled_metrics"
    shutil.copytree(LIBRARY, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert library_fingerprint(copy) == library_fingerprint()
    target = copy / "recommenders" / "item_knn.py"
    target.write_text(target.read_text() + "\n# an edit\n")
    assert library_fingerprint(copy) != library_fingerprint()


def schema_keys(schema: dict, where: str = ""):
    """(dotted key, its schema) for every named key of the schema."""
    for key, sub in schema.get("properties", {}).items():
        yield f"{where}{key}", sub
        yield from schema_keys(sub, f"{where}{key}.")
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        yield from schema_keys(extra, f"{where}<name>.")


def test_every_config_key_is_described():
    schema = yaml.safe_load(SCHEMA_FILE.read_text())
    keys = dict(schema_keys(schema))
    assert len(keys) > 40
    assert [key for key, sub in keys.items() if not sub.get("description")] == []


def test_config_yaml_repeats_no_default_of_the_schema():
    """A key with a schema default is either left out of config.yaml or set to
    another value there: its default has one home."""
    schema = yaml.safe_load(SCHEMA_FILE.read_text())
    config = yaml.safe_load(CONFIG_FILE.read_text())

    def repeats(value, sub, where):
        if not isinstance(value, dict):
            return
        for key, child in sub.get("properties", {}).items():
            if key in value and "default" in child and value[key] == child["default"]:
                yield f"{where}{key}"
            if key in value:
                yield from repeats(value[key], child, f"{where}{key}.")
        extra = sub.get("additionalProperties")
        if isinstance(extra, dict):
            for key, child_value in value.items():
                if key not in sub.get("properties", {}):
                    yield from repeats(child_value, extra, f"{where}{key}.")

    assert list(repeats(config, schema, "")) == []


def test_defaults_are_filled_in_from_the_schema():
    config = load_config(CONFIG_FILE)
    assert config["sampling"]["seed"] is None
    assert config["datasets"]["ml-1m-offline"]["member"] is None
    assert config["recommenders"]["X"]["factors"] == 16  # the paper's d, IALS_DEFAULTS
    assert config["recommenders"]["Z"]["k_prime"] == 10  # set in config.yaml, kept


def test_rules_and_scripts_take_no_default_from_a_get():
    sources = [REPO / "Snakefile", *(REPO / "workflow" / "rules").glob("*.smk")]
    sources += (REPO / "workflow" / "scripts").glob("*.py")
    offenders = [
        f"{path.name}: {line.strip()}"
        for path in sources
        for line in path.read_text().splitlines()
        if "config" in line and ".get(" in line
    ]
    assert offenders == []
