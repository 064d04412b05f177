# Recommenders: fit on the training split, score every (user, item) pair.


rule scores:
    input:
        "data/processed/{dataset}/split.npz",
    output:
        "results/{dataset}/scores/{recommender}.npy",
    log:
        "logs/{dataset}/scores_{recommender}.log",
    benchmark:
        "results/{dataset}/benchmarks/scores_{recommender}.tsv"
    threads: 2
    resources:
        runtime=30,
        mem_mb=4000,
    params:
        library=LIBRARY,
        spec=lambda wildcards: config["recommenders"][wildcards.recommender],
        seed=config["seed"],
    script:
        "../scripts/scores.py"
