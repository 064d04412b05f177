# Recommenders: fit on the training split, score every (user, item) pair.


rule scores:
    input:
        "data/processed/{dataset}/split.npz",
    output:
        "results/{dataset}/scores/{recommender}.npy",
    params:
        library=LIBRARY,
        spec=lambda wildcards: config["recommenders"][wildcards.recommender],
        seed=config["seed"],
    threads: 2
    log:
        "logs/{dataset}/scores_{recommender}.log",
    benchmark:
        "results/{dataset}/benchmarks/scores_{recommender}.tsv"
    resources:
        runtime=30,
        mem_mb=4000,
    script:
        "../scripts/scores.py"
