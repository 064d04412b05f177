"""The offline copy of binarized MovieLens 1M, split leave-last-out by the
library itself (the same loader and split as the workflow's rule `split`)."""

from pathlib import Path

from sampled_metrics.data import check_facts, leave_last_out_split, load_events

DEFAULT_DATA = (
    Path(__file__).resolve().parents[2] / "shared/datasets/ml-1m-binarized/interactions.csv.gz"
)
OFFLINE_ENTRY = {
    "format": "delimited",
    "sep": ",",
    "header": True,
    "columns": {"user": "user_id", "item": "item_id", "time": "position"},
}
SPLIT_FACTS = {"n_users": 6040, "n_items": 3706, "n_train": 994169, "n_test": 6040}


def load_leave_last_out(path=DEFAULT_DATA):
    """(train, test_items) of the offline copy: a binary CSR matrix 6040 x 3706
    and each user's held-out item index."""
    split = leave_last_out_split(load_events(path, OFFLINE_ENTRY))
    check_facts(split, SPLIT_FACTS, str(path))
    return split.train, split.test_items
