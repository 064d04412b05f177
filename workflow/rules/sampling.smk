# Sampled evaluation: every estimator applied to every repetition of the sampled ranks
# (rule merge_ranks). The paper's corrections depend on the split alone: they are built
# beside the fits; each recommender's repetitions are estimated as soon as it is ranked;
# the join only lays the shares side by side.


rule sampling_corrections:
    input:
        split=SPLIT,
    output:
        vectors=temp("results/{dataset}/sampling_corrections.npz"),
    log:
        "logs/{dataset}/sampling_corrections.log",
    benchmark:
        "results/{dataset}/benchmarks/sampling_corrections.tsv"
    priority: 2  # before the models' shares: the last model's shares wait for it
    threads: beside_the_fits  # the distinct n in parallel
    resources:
        runtime=15,
        mem_mb=2000,
    params:
        library=LIBRARY,
        metrics=config["metrics"],
        estimators=SAMPLED_ESTIMATORS,
        estimation=config["estimation"],
        m=config["sampling"]["m"],
    script:
        "../scripts/sampling_corrections.py"


rule sampling_recommender:
    input:
        vectors=rules.sampling_corrections.output.vectors,
        sampled="results/{dataset}/sampled_ranks/{recommender}.npy",
        ranks="results/{dataset}/ranks/{recommender}.csv",
        split=SPLIT,
    output:
        share=temp("results/{dataset}/sampling/{recommender}.npz"),
    log:
        "logs/{dataset}/sampling_of_{recommender}.log",
    benchmark:
        "results/{dataset}/benchmarks/sampling_of_{recommender}.tsv"
    priority: 1  # the last model's share, right after its ranks: the tables wait for it
    resources:
        runtime=15,
        mem_mb=2000,
    params:
        library=LIBRARY,
        metrics=config["metrics"],
        estimators=SAMPLED_ESTIMATORS,
        estimation=config["estimation"],
        m=config["sampling"]["m"],
        repetitions=config["sampling"]["repetitions"],
        law=config["sampling"]["law"],
    script:
        "../scripts/sampling_recommender.py"


rule sampling_table:
    input:
        shares=expand("results/{{dataset}}/sampling/{recommender}.npz", recommender=RECOMMENDERS),
    output:
        table="results/{dataset}/sampling.csv",
        crosscheck="results/{dataset}/crosscheck.csv",
    log:
        "logs/{dataset}/sampling_table.log",
    benchmark:
        "results/{dataset}/benchmarks/sampling_table.tsv"
    priority: 1  # Tables 3, 4 and the claims wait for it
    resources:
        runtime=5,
        mem_mb=2000,
    params:
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        metrics=config["metrics"],
        estimators=SAMPLED_ESTIMATORS,
    script:
        "../scripts/sampling_table.py"
