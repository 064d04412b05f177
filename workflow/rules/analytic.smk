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


rule fig6_curves:
    input:
        ranks=expand("results/{{dataset}}/ranks/{recommender}.csv", recommender=RECOMMENDERS),
        split=SPLIT,
    output:
        curves="results/{dataset}/fig6.csv",
        thresholds="results/{dataset}/fig6_thresholds.csv",
        # the sample sizes above the data set's n - 1, left out with why (none: a header)
        left_out="results/{dataset}/fig6_left_out.csv",
    log:
        "logs/{dataset}/fig6_curves.log",
    benchmark:
        "results/{dataset}/benchmarks/fig6_curves.tsv"
    threads: 2  # the sample sizes in parallel
    resources:
        runtime=15,
        mem_mb=3000,
    params:
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        fig6=config["fig6"],
        m_values=dataset_fig6_m_values,
        m_key=dataset_fig6_m_key,
        estimation=config["estimation"],
    script:
        "../scripts/fig6_curves.py"
