"""Rule protocol_ranks: the sampled ranks every protocol of protocols.run gives every
recommender, simulated on their real scores (sampled_metrics.frameworks.simulate)."""

from sampled_metrics.data import load_split
from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
from sampled_metrics.frameworks.simulate import save_protocol_ranks, simulate_protocols
from sampled_metrics.pipeline.intermediates import read_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.recommenders import load_model

log = start_job(snakemake)
p = snakemake.params
split = load_split(snakemake.input.split)
users = split.users()
models = [load_model(path) for path in snakemake.input.models]
exact = [read_ranks(path, users)["rank"].to_numpy() for path in snakemake.input.ranks]
protocols = [FRAMEWORK_PROTOCOLS[name] for name in p.protocols]
simulated = simulate_protocols(
    models,
    split.train,
    split.test_items,
    protocols,
    repetitions=p.repetitions,
    seed=p.seed,
    tie_policy=p.tie_policy,
    tie_seed=p.tie_seed,
    memory_mb=p.memory_mb,
    exact_ranks=exact,
    progress=True,
)
for protocol, path in zip(protocols, snakemake.output):
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
