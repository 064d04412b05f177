# Exact ranks: each held-out item among all items but the user's training items.


rule exact_ranks:
    input:
        split="data/processed/{dataset}/split.npz",
        scores="results/{dataset}/scores/{recommender}.npy",
    output:
        "results/{dataset}/ranks/{recommender}.csv",
    log:
        "logs/{dataset}/exact_ranks_{recommender}.log",
    benchmark:
        "results/{dataset}/benchmarks/exact_ranks_{recommender}.tsv"
    resources:
        runtime=10,
        mem_mb=2000,
    params:
        library=LIBRARY,
        tie_policy=config["ranking"]["tie_policy"],
        block_size=config["ranking"]["block_size"],
        seed=config["seed"],
    script:
        "../scripts/exact_ranks.py"
