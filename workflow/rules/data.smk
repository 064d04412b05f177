# Data: download an archive (when configured), then load, binarize and split.


# Downloads run on the submitting machine: cluster compute nodes often have no internet.
localrules:
    download,


rule download:
    output:
        "{archive_path}",
    log:
        "logs/download/{archive_path}.log",
    wildcard_constraints:
        archive_path="data/raw/.+",
    resources:
        runtime=30,
        mem_mb=500,
    params:
        entry=lambda wildcards: archive_to_download(wildcards)[1],
    script:
        "../scripts/download.py"


rule split:
    input:
        raw_input,
    output:
        "data/processed/{dataset}/split.npz",
    log:
        "logs/{dataset}/split.log",
    resources:
        runtime=10,
        mem_mb=4000,
    params:
        library=LIBRARY,
        entry=dataset_config,
        short_users=config["short_users"],
    script:
        "../scripts/split.py"
