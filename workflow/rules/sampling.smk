# Sampled evaluation: 100 repetitions of m sampled items per user, then every
# correction applied to every repetition.


rule sampled_ranks:
    input:
        split="data/processed/{dataset}/split.npz",
        scores="results/{dataset}/scores/{recommender}.npy",
    output:
        "results/{dataset}/sampled_ranks/{recommender}.npy",
    log:
        "logs/{dataset}/sampled_ranks_{recommender}.log",
    benchmark:
        "results/{dataset}/benchmarks/sampled_ranks_{recommender}.tsv"
    resources:
        runtime=15,
        mem_mb=3000,
    params:
        library=LIBRARY,
        m=config["sampling"]["m"],
        repetitions=config["sampling"]["repetitions"],
        replacement=config["sampling"]["replacement"],
        tie_policy=config["ranking"]["tie_policy"],
        seed=sampling_seed(config),
        tie_seed=config["seed"],  # the random tie order of the exact ranks (rule exact_ranks)
    script:
        "../scripts/sampled_ranks.py"


rule sampling_table:
    input:
        sampled=expand(
            "results/{{dataset}}/sampled_ranks/{recommender}.npy", recommender=RECOMMENDERS
        ),
        ranks=expand("results/{{dataset}}/ranks/{recommender}.csv", recommender=RECOMMENDERS),
        split="data/processed/{dataset}/split.npz",
    output:
        table="results/{dataset}/sampling.csv",
        crosscheck="results/{dataset}/crosscheck.csv",
    log:
        "logs/{dataset}/sampling_table.log",
    benchmark:
        "results/{dataset}/benchmarks/sampling_table.tsv"
    resources:
        runtime=15,
        mem_mb=3000,
    params:
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        metrics=config["metrics"],
        corrections=config["corrections"],
        m=config["sampling"]["m"],
        replacement=config["sampling"]["replacement"],
    script:
        "../scripts/sampling_table.py"
