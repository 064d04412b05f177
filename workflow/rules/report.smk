# Tables and figures, rendered from results only.


rule exact_metrics:
    input:
        ranks=expand("results/{{dataset}}/ranks/{recommender}.csv", recommender=RECOMMENDERS),
        split=SPLIT,
        paper=PAPER,
    output:
        csv=report(
            "results/{dataset}/exact_metrics.csv",
            caption="../report/exact_metrics.rst",
            category="Data set {dataset}",
            subcategory="Tables",
        ),
        md="results/{dataset}/exact_metrics.md",
    log:
        "logs/{dataset}/exact_metrics.log",
    resources:
        runtime=5,
        mem_mb=1000,
    params:
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        metrics=config["metrics"],
    script:
        "../scripts/exact_metrics.py"


rule fig5:
    input:
        ranks=expand("results/{{dataset}}/ranks/{recommender}.csv", recommender=RECOMMENDERS),
        # the pessimistic ranks (all tied items above the held-out one) of the second row
        pessimistic=expand(
            "results/{{dataset}}/pessimistic_ranks/{recommender}.csv", recommender=RECOMMENDERS
        ),
        split=SPLIT,
    output:
        pdf="figures/{dataset}/fig5.pdf",
        png=report(
            "figures/{dataset}/fig5.png",
            caption="../report/fig5.rst",
            category="Data set {dataset}",
            subcategory="Figures",
        ),
        facts="results/{dataset}/fig5_rank_distribution.csv",
    log:
        "logs/{dataset}/fig5.log",
    resources:
        runtime=5,
        mem_mb=1000,
    params:
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        tie_policy=config["ranking"]["tie_policy"],
    script:
        "../scripts/fig5.py"


rule table3:
    input:
        exact="results/{dataset}/exact_metrics.csv",
        sampling="results/{dataset}/sampling.csv",
        paper=PAPER,
    output:
        csv=report(
            "results/{dataset}/table3.csv",
            caption="../report/table3.rst",
            category="Data set {dataset}",
            subcategory="Tables",
        ),
        md="results/{dataset}/table3.md",
        tex="results/{dataset}/table3.tex",
        versus="results/{dataset}/table3_vs_paper.md",
    log:
        "logs/{dataset}/table3.log",
    resources:
        runtime=5,
        mem_mb=1000,
    params:
        library=LIBRARY,
        m=config["sampling"]["m"],
        cells=SAMPLING_KEYS,
    script:
        "../scripts/table3.py"


rule table4:
    input:
        exact="results/{dataset}/exact_metrics.csv",
        sampling="results/{dataset}/sampling.csv",
        paper=PAPER,
    output:
        csv=report(
            "results/{dataset}/table4.csv",
            caption="../report/table4.rst",
            category="Data set {dataset}",
            subcategory="Tables",
        ),
        md="results/{dataset}/table4.md",
        tex="results/{dataset}/table4.tex",
        versus="results/{dataset}/table4_vs_paper.md",
    log:
        "logs/{dataset}/table4.log",
    resources:
        runtime=5,
        mem_mb=1000,
    params:
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        cells=SAMPLING_KEYS,
    script:
        "../scripts/table4.py"


rule claims:
    input:
        table3="results/{dataset}/table3.csv",
        table4="results/{dataset}/table4.csv",
        thresholds="results/{dataset}/fig6_thresholds.csv",
        crosscheck="results/{dataset}/crosscheck.csv",
        rank_distribution="results/{dataset}/fig5_rank_distribution.csv",
        paper=PAPER,
    output:
        report(
            "results/{dataset}/claims.md",
            caption="../report/claims.rst",
            category="Data set {dataset}",
            subcategory="Claims",
        ),
    log:
        "logs/{dataset}/claims.log",
    resources:
        runtime=5,
        mem_mb=1000,
    params:
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        fig6_metric=config["fig6"]["metric"],
        fig6_pair=config["fig6"]["pair"],
    script:
        "../scripts/claims.py"


rule estimators:
    input:
        exact="results/{dataset}/exact_metrics.csv",
        sampling="results/{dataset}/sampling.csv",
    output:
        csv="results/{dataset}/estimators.csv",
        pairs="results/{dataset}/estimators_pairs.csv",
        md=report(
            "results/{dataset}/estimators.md",
            caption="../report/estimators.rst",
            category="Data set {dataset}",
            subcategory="Tables",
        ),
    log:
        "logs/{dataset}/estimators.log",
    resources:
        runtime=5,
        mem_mb=1000,
    params:
        library=LIBRARY,
        cells=SAMPLING_KEYS,
    script:
        "../scripts/estimators.py"


rule fig6:
    input:
        curves="results/{dataset}/fig6.csv",
        thresholds="results/{dataset}/fig6_thresholds.csv",
        left_out="results/{dataset}/fig6_left_out.csv",  # named in the note
        exact="results/{dataset}/exact_metrics.csv",
        split=SPLIT,  # the users' n (smallest ranked set), for the subtitle
    output:
        pdf="figures/{dataset}/fig6.pdf",
        png=report(
            "figures/{dataset}/fig6.png",
            caption="../report/fig6.rst",
            category="Data set {dataset}",
            subcategory="Figures",
        ),
    log:
        "logs/{dataset}/fig6.log",
    resources:
        runtime=5,
        mem_mb=1000,
    params:
        library=LIBRARY,
        metric=config["fig6"]["metric"],
        fig6=config["fig6"],
        estimation=config["estimation"],
        sampling=config["sampling"],
    script:
        "../scripts/fig6.py"


rule toy_figure:
    output:
        data="results/toy/{figure}.csv",
        pdf="figures/{figure}.pdf",
        png=report(
            "figures/{figure}.png",
            caption="../report/toy_figure.rst",
            category="Toy example",
            subcategory="Figures",
        ),
    log:
        "logs/toy/{figure}.log",
    wildcard_constraints:
        figure="|".join(TOY_FIGURES),
    resources:
        runtime=5,
        mem_mb=2000,
    params:
        library=LIBRARY,
        toy=config["toy"],
        law=config["estimation"]["law"],
        cls_constraint=config["estimation"]["cls_constraint"],
    script:
        "../scripts/toy_figure.py"


rule protocol_sensitivity_corrections:
    input:
        split=SPLIT,
    output:
        vectors=temp("results/{dataset}/protocol_sensitivity_corrections.npz"),
    log:
        "logs/{dataset}/protocol_sensitivity_corrections.log",
    benchmark:
        "results/{dataset}/benchmarks/protocol_sensitivity_corrections.tsv"
    priority: 2  # beside the fits, before the models' shares: protocol_sensitivity waits for it
    threads: beside_the_fits  # the nodes of n and laws in parallel
    resources:
        runtime=15,
        mem_mb=2000,
    params:
        library=LIBRARY,
        metrics=config["metrics"],
        estimation=config["estimation"],
        m=config["sampling"]["m"],
        nodes=config["protocol_sensitivity"]["per_user_nodes"],
    script:
        "../scripts/protocol_sensitivity_corrections.py"


rule protocol_sensitivity:
    input:
        vectors=rules.protocol_sensitivity_corrections.output.vectors,
        ranks=expand("results/{{dataset}}/ranks/{recommender}.csv", recommender=RECOMMENDERS),
        split=SPLIT,
        paper=PAPER,
    output:
        csv="results/{dataset}/protocol_sensitivity.csv",
        md=report(
            "results/{dataset}/protocol_sensitivity.md",
            caption="../report/protocol_sensitivity.rst",
            category="Data set {dataset}",
            subcategory="Tables",
        ),
    log:
        "logs/{dataset}/protocol_sensitivity.log",
    benchmark:
        "results/{dataset}/benchmarks/protocol_sensitivity.tsv"
    resources:
        runtime=5,
        mem_mb=2000,
    params:
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        metrics=config["metrics"],
        estimation=config["estimation"],
        m=config["sampling"]["m"],
        law=config["sampling"]["law"],
        nodes=config["protocol_sensitivity"]["per_user_nodes"],
    script:
        "../scripts/protocol_sensitivity.py"
