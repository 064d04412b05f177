"""The repository's config.yaml (`CONFIG_FILE`), and the offline copy of binarized
MovieLens 1M as it defines it (the `ml-1m-offline` entry: its path, format and facts),
split leave-last-out by the library itself (the same loader and split as the workflow's
rule `split`)."""

from pathlib import Path

from sampled_metrics.data import check_facts, leave_last_out_split, load_events
from sampled_metrics.pipeline.validation import load_config

CONFIG_FILE = Path(__file__).resolve().parents[1] / "config.yaml"
DATASET = "ml-1m-offline"
ENTRY = load_config(CONFIG_FILE)["datasets"][DATASET]
DEFAULT_DATA = (CONFIG_FILE.parent / ENTRY["path"]).resolve()  # paths are relative to the repo


def load_leave_last_out(path=DEFAULT_DATA):
    """(train, test_items) of the offline copy: a binary CSR matrix 6040 x 3706
    and each user's held-out item index, checked against the entry's split facts."""
    split = leave_last_out_split(load_events(path, ENTRY))
    check_facts(split, ENTRY["split_facts"], str(path))
    return split.train, split.test_items
