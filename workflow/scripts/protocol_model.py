"""Rule protocol_model: one recommender's share of the protocol study
(studies.protocols.parts): the exact metrics of its ranks and, for every protocol of
protocols.run that draws for each model apart (unpaired), its sampled ranks simulated
from the items its ranking pass stored as beaten (studies.protocols.stored, with the
draws the recommender has among all of the study's) and every estimator on them. It
needs no other model: each recommender's share is made once its own ranks are."""

from sampled_metrics.data import load_split
from sampled_metrics.estimation.nodes import interpolation_nodes
from sampled_metrics.estimation.registry import paper_methods
from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
from sampled_metrics.passes.block_pass import shard_bounds
from sampled_metrics.pipeline.intermediates import read_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.studies.protocols.beaten_files import StoredBeaten
from sampled_metrics.studies.protocols.files import left_out_reason, read_corrections
from sampled_metrics.studies.protocols.parts import exact_metrics, save_part, study_part
from sampled_metrics.studies.protocols.stored import simulate_stored_protocols

log = start_job(snakemake)
p = snakemake.params
recommender = snakemake.wildcards.recommender
split = load_split(snakemake.input.split)
users = split.users()
n = users.n_candidates
exact = read_ranks(snakemake.input.ranks, users)["rank"].to_numpy()
part = {"exact": exact_metrics(exact, n, p.metrics)}
protocols = [FRAMEWORK_PROTOCOLS[name] for name in p.protocols]
run = [protocol for protocol in protocols if left_out_reason(protocol, users.smallest_pool) is None]
if run:
    beaten = StoredBeaten(
        snakemake.input.beaten, shard_bounds(split.n_users, p.shards), p.layers,
        split.train.shape[1], name=recommender,
    )  # fmt: skip
    simulated = simulate_stored_protocols(
        [beaten], split.train, split.test_items, run, repetitions=p.repetitions, seed=p.seed,
        tie_policy=p.tie_policy, tie_seed=p.tie_seed, memory_mb=p.memory_mb,
        exact_ranks=[exact], workers=snakemake.threads,
        first_recommender=p.recommenders.index(recommender),
    )  # fmt: skip
    nodes = interpolation_nodes(n, p.nodes)
    laws = [(protocol.m, protocol.law) for protocol in run]
    fixed = paper_methods(p.estimators)
    corrections = read_corrections(snakemake.input.corrections, laws, p.metrics, fixed, nodes)
    for protocol in run:
        ranks = simulated[protocol.name]
        part |= study_part(
            ranks, protocol, n, p.metrics, p.estimators, nodes=p.nodes,
            corrections=corrections[protocol.m, protocol.law],
        )  # fmt: skip
        log.info(
            "%s %s: mean sampled rank %.2f, mean weighted rank %.1f (exact %.1f)",
            protocol.name, recommender, ranks.sampled.mean(), ranks.weighted_rank.mean(),
            exact.mean(),
        )  # fmt: skip
save_part(part, snakemake.output[0])
