"""Rule split: load, binarize, check the known facts, split leave-last-out."""

from sampled_metrics.data import (
    check_facts,
    check_md5,
    leave_last_out_split,
    load_events,
    save_split,
)
from sampled_metrics.runs import start_log

log = start_log(snakemake.log[0])
source = snakemake.input[0]
entry = snakemake.params.entry
if "archive" in entry:  # downloaded, or placed by hand: the md5 of config.yaml holds
    check_md5(source, entry["md5"])
events = load_events(source, entry)
log.info("%s: %d interactions", source, len(events))
log.info("facts: %s", check_facts(events, entry["facts"], source))
split = leave_last_out_split(events, on_short_users=snakemake.params.short_users)
log.info(
    "split: %d users, %d items, %d training pairs, %d users skipped, "
    "%d held-out items unseen in training",
    split.n_users,
    split.n_items,
    split.train.nnz,
    split.n_skipped_users,
    split.unseen_test_items(),
)
check_facts(split, entry["split_facts"], source)
save_split(split, snakemake.output[0])
