# Recommenders: fit on the training split and store the fitted model (factors or
# similarities), never its users x items scores.

# Threads a fit of the type can use (implicit's ALS); item-kNN's sparse products use one.
FIT_THREADS = {"ials": 2}


def fit_threads(wildcards):
    kind = config["recommenders"][wildcards.recommender]["type"]
    return FIT_THREADS[kind] if kind in FIT_THREADS else 1


rule fit:
    input:
        "data/processed/{dataset}/split.npz",
    output:
        "results/{dataset}/models/{recommender}.pkl",
    log:
        "logs/{dataset}/fit_{recommender}.log",
    benchmark:
        "results/{dataset}/benchmarks/fit_{recommender}.tsv"
    threads: fit_threads
    resources:
        runtime=30,
        mem_mb=4000,
    params:
        library=LIBRARY,
        spec=lambda wildcards: config["recommenders"][wildcards.recommender],
        seed=config["seed"],
    script:
        "../scripts/fit.py"
