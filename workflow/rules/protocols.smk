# The protocol study (docs/popularity.md): every framework's sampling protocol of
# `protocols.run` simulated on the real scores of every recommender, then every
# estimator of `protocols.estimators` against the exact metric. The work is cut where
# the models part: the corrections need the split alone (protocol_corrections, beside
# the fits); a protocol that draws for every model apart is each model's
# (protocol_model, once that model is ranked); a paired protocol (one draw shared by
# every model) needs them all (protocol_ranks); rule protocols joins. A protocol the data
# set cannot support (more distinct draws than a user's pool) is left out and named
# (protocols_left_out.csv, protocols.md, the figure's note) with no numbers.

PROTOCOLS = config["protocols"]["run"]
PAIRED = [name for name in PROTOCOLS if FRAMEWORK_PROTOCOLS[name].paired]
UNPAIRED = [name for name in PROTOCOLS if not FRAMEWORK_PROTOCOLS[name].paired]
# the corrections every protocol reads, built once per (m, law) at the split's nodes of n
PROTOCOL_CORRECTIONS = "results/{dataset}/protocols/corrections.npz"


rule protocol_corrections:
    input:
        split=SPLIT,
    output:
        # read by rules protocol_model and protocols alone
        temp(PROTOCOL_CORRECTIONS),
    log:
        "logs/{dataset}/protocol_corrections.log",
    benchmark:
        "results/{dataset}/benchmarks/protocol_corrections.tsv"
    resources:
        runtime=30,
        mem_mb=2000,
    params:
        library=LIBRARY,
        protocols=PROTOCOLS,
        metrics=config["metrics"],
        estimators=config["protocols"]["estimators"],
        nodes=config["protocols"]["per_user_nodes"],
    script:
        "../scripts/protocol_corrections.py"


rule protocol_model:
    input:
        split=SPLIT,
        # the ranking pass's masks of this recommender, its shards in order
        beaten=expand("results/{{dataset}}/shards/{{recommender}}/{shard}.beaten.npy", shard=SHARDS),
        # checked against the beaten items: the same model, split and tie order
        ranks="results/{dataset}/ranks/{recommender}.csv",
        corrections=PROTOCOL_CORRECTIONS,
    output:
        # read by rule protocols alone
        temp("results/{dataset}/protocols/models/{recommender}.npz"),
    log:
        "logs/{dataset}/protocol_model_{recommender}.log",
    benchmark:
        "results/{dataset}/benchmarks/protocol_model_{recommender}.tsv"
    resources:
        runtime=30,
        mem_mb=protocol_model_mem_mb,
    params:
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        shards=config["ranking"]["shards"],
        layers=STUDY_LAYERS,
        protocols=UNPAIRED,
        repetitions=config["protocols"]["repetitions"],
        seed=sampling_seed(config),
        tie_policy=config["ranking"]["tie_policy"],
        tie_seed=config["seed"],
        memory_mb=config["ranking"]["memory_mb"],
        metrics=config["metrics"],
        estimators=config["protocols"]["estimators"],
        nodes=config["protocols"]["per_user_nodes"],
    script:
        "../scripts/protocol_model.py"


rule protocol_ranks:
    input:
        split=SPLIT,
        # the ranking pass's masks, every recommender's shards in order
        beaten=expand(
            "results/{{dataset}}/shards/{recommender}/{shard}.beaten.npy",
            recommender=RECOMMENDERS,
            shard=SHARDS,
        ),
        # checked against the beaten items: the same model, split and tie order
        ranks=expand("results/{{dataset}}/ranks/{recommender}.csv", recommender=RECOMMENDERS),
    output:
        # read by rule protocols alone
        temp(expand("results/{{dataset}}/protocols/{protocol}.npz", protocol=PAIRED)),
    log:
        "logs/{dataset}/protocol_ranks.log",
    benchmark:
        "results/{dataset}/benchmarks/protocol_ranks.tsv"
    threads: 2  # blocks of users in parallel
    resources:
        runtime=60,
        mem_mb=protocol_ranks_mem_mb,
    params:
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        shards=config["ranking"]["shards"],
        layers=STUDY_LAYERS,
        protocols=PAIRED,
        repetitions=config["protocols"]["repetitions"],
        seed=sampling_seed(config),
        tie_policy=config["ranking"]["tie_policy"],
        tie_seed=config["seed"],
        memory_mb=config["ranking"]["memory_mb"],
    script:
        "../scripts/protocol_ranks.py"


rule protocols:
    input:
        protocols=expand("results/{{dataset}}/protocols/{protocol}.npz", protocol=PAIRED),
        parts=expand(
            "results/{{dataset}}/protocols/models/{recommender}.npz", recommender=RECOMMENDERS
        ),
        corrections=PROTOCOL_CORRECTIONS,
        split=SPLIT,
    output:
        csv="results/{dataset}/protocols.csv",
        pairs="results/{dataset}/protocols_pairs.csv",
        left_out="results/{dataset}/protocols_left_out.csv",
        # protocols.md's means over the recommenders, with their standard errors
        summary="results/{dataset}/protocols_summary.csv",
        md=report(
            "results/{dataset}/protocols.md",
            caption="../report/protocols.rst",
            category="Data set {dataset}",
            subcategory="Tables",
        ),
    log:
        "logs/{dataset}/protocols.log",
    benchmark:
        "results/{dataset}/benchmarks/protocols.tsv"
    threads: 2  # the protocols in parallel
    resources:
        runtime=30,
        mem_mb=3000,
    params:
        library=LIBRARY,
        recommenders=RECOMMENDERS,
        protocols=PROTOCOLS,
        repetitions=config["protocols"]["repetitions"],
        metrics=config["metrics"],
        estimators=config["protocols"]["estimators"],
        nodes=config["protocols"]["per_user_nodes"],
    script:
        "../scripts/protocols.py"


rule protocols_figure:
    input:
        csv="results/{dataset}/protocols.csv",
        pairs="results/{dataset}/protocols_pairs.csv",
        left_out="results/{dataset}/protocols_left_out.csv",
    output:
        pdf="figures/{dataset}/protocols.pdf",
        png=report(
            "figures/{dataset}/protocols.png",
            caption="../report/protocols_figure.rst",
            category="Data set {dataset}",
            subcategory="Figures",
        ),
    log:
        "logs/{dataset}/protocols_figure.log",
    resources:
        runtime=5,
        mem_mb=1000,
    params:
        library=LIBRARY,
    script:
        "../scripts/protocols_figure.py"
