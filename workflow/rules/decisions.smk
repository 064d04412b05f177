# The design study (docs/decisions_study.md): deciding between every pair of recommenders,
# simulated from their exact ranks decisions.seeds times; full ranking, uniform subsets,
# the two-phase design at decisions.budgets and in waves (sequential), the identification
# range, Li et al.'s adaptive sampling with EM: coverage, width, pairs decided right and
# wrong, some wrong verdict among every pair judged together, cost.
# Each model's own share (its phase 1, proxies, identification intervals, adaptive-em)
# is a job of its own that needs that model's ranks alone, so it runs beside the other
# models' fits; rule decisions joins them and runs what needs pairs.


rule decisions_model:
    input:
        split=SPLIT,
        ranks="results/{dataset}/ranks/{recommender}.csv",
    output:
        draws=temp("results/{dataset}/decisions/{recommender}.npz"),
    log:
        "logs/{dataset}/decisions_model_{recommender}.log",
    benchmark:
        "results/{dataset}/benchmarks/decisions_model_{recommender}.tsv"
    resources:
        runtime=30,
        mem_mb=2000,
    params:
        **config["decisions"],
        library=LIBRARY,
        m=config["sampling"]["m"],
        law=config["sampling"]["law"],
        seed=sampling_seed(config),
    script:
        "../scripts/decisions_model.py"


rule decisions:
    input:
        split=SPLIT,
        ranks=expand("results/{{dataset}}/ranks/{recommender}.csv", recommender=RECOMMENDERS),
        draws=expand("results/{{dataset}}/decisions/{recommender}.npz", recommender=RECOMMENDERS),
    output:
        csv="results/{dataset}/decisions.csv",
        md=report(
            "results/{dataset}/decisions.md",
            caption="../report/decisions.rst",
            category="Data set {dataset}",
            subcategory="Tables",
        ),
    log:
        "logs/{dataset}/decisions.log",
    benchmark:
        "results/{dataset}/benchmarks/decisions.tsv"
    threads: 2  # seeds in parallel
    resources:
        runtime=60,
        mem_mb=3000,
    params:
        **config["decisions"],
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        m=config["sampling"]["m"],
        law=config["sampling"]["law"],
        seed=sampling_seed(config),
    script:
        "../scripts/decisions.py"


rule decisions_figure:
    input:
        csv="results/{dataset}/decisions.csv",
    output:
        pdf="figures/{dataset}/decisions.pdf",
        png=report(
            "figures/{dataset}/decisions.png",
            caption="../report/decisions_figure.rst",
            category="Data set {dataset}",
            subcategory="Figures",
        ),
    log:
        "logs/{dataset}/decisions_figure.log",
    resources:
        runtime=5,
        mem_mb=1000,
    params:
        library=LIBRARY,
        run=config["decisions"]["run"],
        budgets=config["decisions"]["budgets"],
        uniform_budgets=config["decisions"]["uniform_budgets"],
        goals=config["decisions"]["goals"],
    script:
        "../scripts/decisions_figure.py"
