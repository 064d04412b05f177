# Sampled evaluation: every correction applied to every repetition of the
# sampled ranks (rule merge_ranks).


rule sampling_table:
    input:
        sampled=expand(
            "results/{{dataset}}/sampled_ranks/{recommender}.npy", recommender=RECOMMENDERS
        ),
        ranks=expand("results/{{dataset}}/ranks/{recommender}.csv", recommender=RECOMMENDERS),
        split=SPLIT,
    output:
        table="results/{dataset}/sampling.csv",
        crosscheck="results/{dataset}/crosscheck.csv",
    log:
        "logs/{dataset}/sampling_table.log",
    benchmark:
        "results/{dataset}/benchmarks/sampling_table.tsv"
    threads: 2  # the corrections of the distinct n, then the learned estimators, in parallel
    resources:
        runtime=15,
        mem_mb=3000,
    params:
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        metrics=config["metrics"],
        estimators=SAMPLED_ESTIMATORS,
        estimation=config["estimation"],
        m=config["sampling"]["m"],
        repetitions=config["sampling"]["repetitions"],
        law=config["sampling"]["law"],
    script:
        "../scripts/sampling_table.py"
