"""Bring your own file: the documented `my-data` example runs as written.

The example exists twice: the YAML block of docs/datasets.md ("Adding a data
set") and the commented `my-data` entry of config.yaml, which shows every key.
Both are parsed here, must agree, and are run through the workflow on a small
file at the documented path; a local file elsewhere (absolute, outside
data/raw/, outside the work directory) is read the same way, never claimed by
the `download` rule, and a missing one stops with one message naming it.
"""

from __future__ import annotations

import gzip
import re
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import CONFIG_FILE, REPO, snakemake_command, tiny_config
from snakemake.utils import validate

from sampled_metrics.data import load_events, load_split
from sampled_metrics.pipeline.config import SCHEMA_FILE

DATASETS_DOC = REPO / "docs" / "datasets.md"
NAME = "my-data"


def docs_example() -> tuple[dict, list[str]]:
    """The `my-data` entry of the YAML block under "## Adding a data set" of
    docs/datasets.md, and the --config options of the run command that follows it."""
    text = DATASETS_DOC.read_text()
    section = text.split("\n## Adding a data set\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```yaml\n(.*?)```", section, re.DOTALL)
    assert block, "no yaml block in docs/datasets.md, 'Adding a data set'"
    command = re.search(r"`snakemake --cores \d+ (--config dataset=[\w-]+)`", section)
    assert command, "no run command after the example in docs/datasets.md"
    return yaml.safe_load(block.group(1))["datasets"][NAME], command.group(1).split()


def config_example() -> dict:
    """The commented `my-data` entry of config.yaml, uncommented (the commented-out
    alternatives inside it, `# url: ...`, stay out)."""
    lines = CONFIG_FILE.read_text().splitlines()
    start = lines.index(f"  # {NAME}:")
    block = []
    for line in lines[start:]:
        if not line.startswith("  #"):
            break
        text = line[len("  # ") :] if line.startswith("  # ") else ""
        if not text.lstrip().startswith("#"):
            block.append(text)
    return yaml.safe_load("\n".join(block))[NAME]


EXAMPLES = {"docs/datasets.md": docs_example()[0], "config.yaml": config_example()}


def write_events(path: Path, entry: dict, n_users: int, n_items: int, per_user: int) -> None:
    """``per_user`` distinct items per user in the entry's columns (names of a
    header), clustered tastes as the tiny data set; ratings 1-5. ``.gz``: gzipped."""
    rng = np.random.default_rng(7)
    columns = entry["columns"]
    rows = []
    for user in range(1, n_users + 1):
        weights = np.where(np.arange(n_items) % 3 == user % 3, 6.0, 1.0)
        items = rng.choice(n_items, size=per_user, replace=False, p=weights / weights.sum())
        for position, item in enumerate(items):
            rows.append(
                {
                    columns["user"]: user,
                    columns["item"]: 1000 + int(item),
                    columns["time"]: 978300000 + 60 * position,
                    columns.get("rating", "rating"): int(rng.integers(1, 6)),
                }
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    text = pd.DataFrame(rows).to_csv(index=False, sep=entry["sep"])
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)


def small_config(datasets: dict, **overrides) -> dict:
    """The tiny test settings (small models, m = 10, few repetitions) with these data
    sets; merged over the repository's config.yaml, whose entries stay."""
    config = {key: value for key, value in tiny_config().items() if key != "dataset"}
    return {**config, "datasets": datasets, **overrides}


def snakemake(workdir: Path, config: dict, targets, *options: str) -> subprocess.CompletedProcess:
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    return subprocess.run(
        snakemake_command(workdir, "--cores", "2", *options, targets=targets),
        capture_output=True,
        text=True,
        timeout=600,
    )


# --------------------------------------------------------------------------
# The two copies of the example
# --------------------------------------------------------------------------


def test_docs_example_is_the_config_comment_entry():
    """docs/datasets.md shows a subset of the commented entry, with the same values."""
    docs, config = EXAMPLES["docs/datasets.md"], EXAMPLES["config.yaml"]
    assert docs == {key: config[key] for key in docs}
    assert docs["path"] == "data/raw/my-data.csv"
    assert docs_example()[1] == ["--config", f"dataset={NAME}"]


def test_commented_bring_your_own_entry_is_valid_and_loads(tmp_path):
    """The commented `my-data` example of config.yaml, uncommented, validates and loads."""
    entry = EXAMPLES["config.yaml"]
    assert {
        "path",
        "format",
        "member",
        "sep",
        "header",
        "columns",
        "binarize_threshold",
        "facts",
        "split_facts",
    } <= set(entry)
    assert set(entry["columns"]) == {"user", "item", "time", "rating"}
    config = yaml.safe_load(CONFIG_FILE.read_text())
    validate({**config, "dataset": NAME, "datasets": {NAME: entry}}, str(SCHEMA_FILE))
    path = tmp_path / "my-data.csv"
    path.write_text("user_id,item_id,timestamp,rating\n1,a,10,5\n1,b,20,3\n2,a,15,4\n")
    events = load_events(path, {**entry, "binarize_threshold": 4})
    assert list(events.itertuples(index=False, name=None)) == [(1, "a", 10), (2, "a", 15)]


# --------------------------------------------------------------------------
# Through the workflow
# --------------------------------------------------------------------------


def assert_clean(result: subprocess.CompletedProcess, ok: bool = True) -> str:
    output = result.stdout + result.stderr
    assert (result.returncode == 0) == ok, output[-4000:]
    assert "Traceback" not in output and "InputFunctionException" not in output, output[-4000:]
    assert "rule download" not in output, output[-4000:]  # nothing is downloaded
    return output


@pytest.mark.slow
@pytest.mark.parametrize("source", list(EXAMPLES))
def test_documented_example_runs_as_written(tmp_path, source):
    """The example entry as written, a file with its columns at its path (1000 users of
    50 events: the commented entry's facts), the documented command, to the exact metrics."""
    entry = EXAMPLES[source]
    write_events(tmp_path / entry["path"], entry, n_users=1000, n_items=120, per_user=50)
    options = docs_example()[1]
    target = f"results/{NAME}/exact_metrics.csv"
    result = snakemake(tmp_path, small_config({NAME: entry}), [target], *options)
    assert_clean(result)
    metrics = pd.read_csv(tmp_path / target)
    assert set(metrics["recommender"]) == {"X", "Y", "Z"}
    assert metrics["value"].between(0, 100).all() and len(metrics) == 12
    split = load_split(tmp_path / f"data/processed/{NAME}/split.npz")
    assert split.n_users == 1000 and len(split.test_items) == 1000
    assert sorted(p.name for p in (tmp_path / "data/raw").iterdir()) == ["my-data.csv"]


@pytest.mark.slow
def test_local_file_anywhere_is_an_input_never_a_download(tmp_path):
    """The same entry with its `path` absolute, relative outside data/raw/, relative
    outside the work directory, and gzipped in a sub-directory of data/raw/: each is
    read by `split` in one run beside the shipped entries that download."""
    workdir, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    workdir.mkdir()
    paths = {
        "absolute": str(elsewhere / "absolute.csv"),
        "outside-raw": "local/events.csv",
        "outside-workdir": "../elsewhere/relative.csv",
        "raw-gz": "data/raw/sub/events.csv.gz",
    }
    entry = EXAMPLES["docs/datasets.md"]
    for path in paths.values():
        write_events(workdir / path, entry, n_users=40, n_items=40, per_user=8)
    datasets = {name: {**entry, "path": path} for name, path in paths.items()}
    targets = [f"data/processed/{name}/split.npz" for name in paths]
    result = snakemake(workdir, small_config(datasets, dataset=list(paths)), targets)
    assert_clean(result)
    for name in paths:
        assert load_split(workdir / f"data/processed/{name}/split.npz").n_users == 40
        assert "40 users" in (workdir / f"logs/{name}/split.log").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("where", ["documented", "absolute"])
def test_missing_local_file_stops_with_one_message_naming_it(tmp_path, where):
    entry = EXAMPLES["docs/datasets.md"]
    path = entry["path"] if where == "documented" else str(tmp_path / "nowhere" / "my-data.csv")
    config = small_config({NAME: {**entry, "path": path}})
    result = snakemake(tmp_path, config, [f"results/{NAME}/exact_metrics.csv"], *docs_example()[1])
    output = assert_clean(result, ok=False)
    assert "MissingInputException in rule split" in output, output[-4000:]
    assert "Missing input files for rule split:" in output
    named = [line.strip() for line in output.splitlines() if path in line]
    assert named == [path], output[-4000:]  # said once, on a line of its own
    assert not (tmp_path / "data/processed").exists() and not (tmp_path / "results").exists()
