# Recommenders: fit on the training split and store the fitted model (factors or
# similarities), never its users x items scores. Only the ranking pass reads it: it is
# temporary (removed once ranked) unless ranking.keep_models.

MODEL = "results/{dataset}/models/{recommender}.pkl"


rule fit:
    input:
        SPLIT,
    output:
        MODEL if config["ranking"]["keep_models"] else temp(MODEL),
    log:
        "logs/{dataset}/fit_{recommender}.log",
    benchmark:
        "results/{dataset}/benchmarks/fit_{recommender}.tsv"
    priority: fit_priority
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
