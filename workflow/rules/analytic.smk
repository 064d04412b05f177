# Results computed from the laws alone: the toy example and Figure 6's curves.


rule toy_tables:
    input:
        paper=PAPER,
    output:
        **{
            f"{name}_{ext}": (
                report(
                    f"results/toy/{name}.{ext}",
                    caption=f"../report/{name}.rst",
                    category="Toy example",
                    subcategory="Tables",
                )
                if ext == "csv"
                else f"results/toy/{name}.{ext}"
            )
            for name in ("table1", "table2")
            for ext in ("csv", "md", "tex")
        },
    log:
        "logs/toy/tables.log",
    resources:
        runtime=5,
        mem_mb=1000,
    params:
        library=LIBRARY,
        toy=config["toy"],
        seed=config["seed"],
    script:
        "../scripts/toy_tables.py"


rule fig6_corrections:
    input:
        split=SPLIT,
    output:
        vectors=temp("results/{dataset}/fig6_corrections.npz"),
        # the sample sizes above the data set's n - 1, left out with why (none: a header)
        left_out="results/{dataset}/fig6_left_out.csv",
    log:
        "logs/{dataset}/fig6_corrections.log",
    benchmark:
        "results/{dataset}/benchmarks/fig6_corrections.tsv"
    priority: 2  # before the models' shares: the last model's shares wait for it
    threads: beside_the_fits  # the sample sizes in parallel
    resources:
        runtime=15,
        mem_mb=3000,
    params:
        library=LIBRARY,
        fig6=config["fig6"],
        m_values=dataset_fig6_m_values,
        m_key=dataset_fig6_m_key,
        estimation=config["estimation"],
    script:
        "../scripts/fig6_corrections.py"


rule fig6_recommender:
    input:
        vectors=rules.fig6_corrections.output.vectors,
        ranks="results/{dataset}/ranks/{recommender}.csv",
        split=SPLIT,
    output:
        share=temp("results/{dataset}/fig6/{recommender}.npz"),
    log:
        "logs/{dataset}/fig6_of_{recommender}.log",
    benchmark:
        "results/{dataset}/benchmarks/fig6_of_{recommender}.tsv"
    priority: 1  # the last model's share, right after its ranks: the figure waits for it
    resources:
        runtime=15,
        mem_mb=2000,
    params:
        library=LIBRARY,
        fig6=config["fig6"],
    script:
        "../scripts/fig6_recommender.py"


rule fig6_curves:
    input:
        shares=expand("results/{{dataset}}/fig6/{recommender}.npz", recommender=RECOMMENDERS),
    output:
        curves="results/{dataset}/fig6.csv",
        thresholds="results/{dataset}/fig6_thresholds.csv",
    log:
        "logs/{dataset}/fig6_curves.log",
    benchmark:
        "results/{dataset}/benchmarks/fig6_curves.tsv"
    resources:
        runtime=5,
        mem_mb=1000,
    params:
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        fig6=config["fig6"],
        m_values=dataset_fig6_m_values,
    script:
        "../scripts/fig6_curves.py"
