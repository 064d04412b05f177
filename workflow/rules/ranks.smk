# Ranks: one pass over each block of users' scores gives the exact ranks (each
# held-out item among all items but the user's training items), the pessimistic
# ranks (Figure 5) and the sampled ranks of every repetition. Users are cut into
# `ranking.shards` shards, independent jobs that a cluster spreads over nodes;
# `merge_ranks` joins them, byte-identical for any number of shards. With one shard
# there is no rank_shard job: merge_ranks ranks the users itself and writes the beaten
# items too (one job, one read of the split, no shard file of ranks).

SHARDS = [f"{i}-of-{config['ranking']['shards']}" for i in range(config["ranking"]["shards"])]
ONE_SHARD = config["ranking"]["shards"] == 1
# What a ranking pass reads besides the split, and its settings.
RANK_INPUTS = {
    "model": MODEL,
    "plan": "results/{dataset}/draw_plan.npz",
}
RANK_PARAMS = {
    "tie_policy": config["ranking"]["tie_policy"],
    "memory_mb": config["ranking"]["memory_mb"],
    "seed": config["seed"],  # the random tie order, shared by exact and sampled ranks
    "layers": STUDY_LAYERS,
}
# the protocol study's items above and tied with the held-out one (rule protocol_ranks
# reads them instead of scoring every model again)
BEATEN = "results/{dataset}/shards/{recommender}/{shard}.beaten.npy"


rule draw_plan:
    input:
        SPLIT,
    output:
        "results/{dataset}/draw_plan.npz",
    log:
        "logs/{dataset}/draw_plan.log",
    benchmark:
        "results/{dataset}/benchmarks/draw_plan.tsv"
    priority: 1  # every ranking pass reads it
    resources:
        runtime=15,
        mem_mb=3000,
    params:
        library=LIBRARY,
        m=config["sampling"]["m"],
        repetitions=config["sampling"]["repetitions"],
        law=config["sampling"]["law"],
        seed=sampling_seed(config),
    script:
        "../scripts/draw_plan.py"


if not ONE_SHARD:

    rule rank_shard:
        input:
            **RANK_INPUTS,
            split=SPLIT,
        output:
            ranks=temp("results/{dataset}/shards/{recommender}/{shard}.npz"),
            beaten=temp(BEATEN),
        log:
            "logs/{dataset}/rank_{recommender}_{shard}.log",
        benchmark:
            "results/{dataset}/benchmarks/rank_{recommender}_{shard}.tsv"
        wildcard_constraints:
            shard=r"\d+-of-\d+",
        priority: rank_priority  # before the toy example's jobs: the data set waits for it
        resources:
            runtime=30,
            mem_mb=rank_mem_mb,
        params:
            **RANK_PARAMS,
            library=LIBRARY,
        script:
            "../scripts/rank_shard.py"


rule merge_ranks:
    input:
        **(
            RANK_INPUTS
            if ONE_SHARD
            else {
                "shards": expand(
                    "results/{{dataset}}/shards/{{recommender}}/{shard}.npz", shard=SHARDS
                )
            }
        ),
        split=SPLIT,
    output:
        **({"beaten": temp(BEATEN.replace("{shard}", SHARDS[0]))} if ONE_SHARD else {}),
        ranks="results/{dataset}/ranks/{recommender}.csv",
        # the ranks' sidecar (frameworks.rank_meta): sampled-metrics correct reads the
        # file without options
        ranks_meta="results/{dataset}/ranks/{recommender}.csv.meta.json",
        pessimistic="results/{dataset}/pessimistic_ranks/{recommender}.csv",
        sampled="results/{dataset}/sampled_ranks/{recommender}.npy",
    log:
        "logs/{dataset}/merge_ranks_{recommender}.log",
    benchmark:
        "results/{dataset}/benchmarks/merge_ranks_{recommender}.tsv"
    # before the toy example's jobs: the rest of the data set waits for it
    priority: rank_priority if ONE_SHARD else 1
    resources:
        runtime=30 if ONE_SHARD else 10,
        mem_mb=rank_mem_mb if ONE_SHARD else 2000,
    params:
        **RANK_PARAMS,
        library=LIBRARY,
    script:
        "../scripts/merge_ranks.py"
