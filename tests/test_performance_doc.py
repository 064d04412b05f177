"""docs/performance.md is what benchmarks/docs/write_performance.py renders from
docs/performance.json, without running a timer: the page cannot drift from its data."""

import copy
import importlib.util
import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "benchmarks" / "docs" / "write_performance.py"
DATA = REPO / "docs" / "performance.json"
PAGE = REPO / "docs" / "performance.md"
FIELDS = {"section", "what", "command", "commit", "machine", "seconds", "cpu_seconds", "peak_mb"}


def writer():
    spec = importlib.util.spec_from_file_location("write_performance", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_is_the_rendering_of_its_json():
    rendered = writer().render(json.loads(DATA.read_text()))
    assert PAGE.read_text() == rendered, f"docs/performance.md is stale: run {SCRIPT.name}"


def test_the_page_says_what_writes_it_and_one_line_names_machine_and_commits():
    lines = PAGE.read_text().splitlines()
    assert "benchmarks/docs/write_performance.py" in "\n".join(lines[:3])
    hashes = [line for line in lines if re.search(r"\b(?=[0-9]*[a-f])[0-9a-f]{7,40}\b", line)]
    assert len(hashes) == 1 and "cores" in hashes[0] and "GiB" in hashes[0]


def test_every_record_is_complete_and_names_a_commit_and_a_section():
    module = writer()
    for record in json.loads(DATA.read_text())["records"]:
        assert FIELDS <= set(record), record
        assert record["section"] in module.SECTIONS, record
        assert re.fullmatch(r"[0-9a-f]{7,40}( with changes)?", record["commit"]), record
        assert record["command"].startswith(("python benchmarks/", "bash .ci/")), record


def test_a_changed_measurement_changes_the_page():
    module = writer()
    data = json.loads(DATA.read_text())
    changed = copy.deepcopy(data)
    changed["records"][0]["seconds"] = 12345.0
    assert "12345 (205.8 min)" in module.render(changed)
    assert module.render(changed) != module.render(data)
