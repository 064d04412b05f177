"""Rule protocol_ranks: the sampled ranks every paired protocol of protocols.run (one
draw of items shared by every model, as a shared test file) gives every recommender,
simulated on their real scores, read as the items each ranks above the held-out item,
which the ranking pass stored (sampled_metrics.studies.protocols.stored, beaten_files).
The protocols that draw for every model apart are each model's (rule protocol_model).
A protocol the data set cannot support (more distinct draws than a user's pool) is not
simulated: its file records that it was left out and why
(studies.protocols.files.save_left_out)."""

from sampled_metrics.data import load_split
from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
from sampled_metrics.passes.block_pass import shard_bounds
from sampled_metrics.pipeline.intermediates import read_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.studies.protocols.beaten_files import StoredBeaten
from sampled_metrics.studies.protocols.files import (
    left_out_reason,
    save_left_out,
    save_protocol_ranks,
)
from sampled_metrics.studies.protocols.stored import simulate_stored_protocols

log = start_job(snakemake)
p = snakemake.params
split = load_split(snakemake.input.split)
users = split.users()
pool = users.smallest_pool
protocols = [FRAMEWORK_PROTOCOLS[name] for name in p.protocols]
left_out = {protocol.name: left_out_reason(protocol, pool) for protocol in protocols}
for name, reason in left_out.items():
    if reason is not None:
        log.warning(
            "%s left out of the protocol study of %s: it %s (the data set's smallest pool)",
            name,
            snakemake.wildcards.dataset,
            reason,
        )
run = [protocol for protocol in protocols if left_out[protocol.name] is None]
simulated = {}
if run:
    bounds = shard_bounds(split.n_users, p.shards)
    files = snakemake.input.beaten  # every recommender's shards in order
    beaten = [
        StoredBeaten(files[k * p.shards : (k + 1) * p.shards], bounds, p.layers,
                     split.train.shape[1], name=recommender)
        for k, recommender in enumerate(p.recommenders)
    ]  # fmt: skip
    exact = [read_ranks(path, users)["rank"].to_numpy() for path in snakemake.input.ranks]
    simulated = simulate_stored_protocols(
        beaten,
        split.train,
        split.test_items,
        run,
        repetitions=p.repetitions,
        seed=p.seed,
        tie_policy=p.tie_policy,
        tie_seed=p.tie_seed,
        memory_mb=p.memory_mb,
        exact_ranks=exact,
        workers=snakemake.threads,
        progress=True,
    )
for protocol, path in zip(protocols, snakemake.output):
    if protocol.name not in simulated:
        save_left_out(left_out[protocol.name], pool, path)
        continue
    ranks = simulated[protocol.name]
    save_protocol_ranks(ranks, path)
    for k, recommender in enumerate(p.recommenders):
        log.info(
            "%s %s: mean sampled rank %.2f, mean weighted rank %.1f (exact %.1f)",
            protocol.name,
            recommender,
            ranks.sampled[:, k].mean(),
            ranks.weighted_rank[k].mean(),
            exact[k].mean(),
        )
