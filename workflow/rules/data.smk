# Data: download an archive (when configured), then load, binarize and split.
# A local `path` is an input of `split` only: `download` makes just the configured archives.
# A `format: synthetic` entry has no input file: `split` generates its events from the entry.


# Downloads run on the submitting machine: cluster compute nodes often have no internet.
localrules:
    download,


rule download:
    output:
        "{archive_path}",
    log:
        "logs/download/{archive_path}.log",
    wildcard_constraints:
        archive_path=DOWNLOADABLE,  # only the archives of entries with a url
    resources:
        runtime=30,
        mem_mb=500,
    params:
        entry=download_entry,
    script:
        "../scripts/download.py"


rule split:
    input:
        raw_input,
    output:
        SPLIT,
    log:
        "logs/{dataset}/split.log",
    benchmark:
        "results/{dataset}/benchmarks/split.tsv"
    priority: 3  # every job of the data set waits for it; the toy example's jobs need not
    resources:
        runtime=10,
        mem_mb=4000,
    params:
        library=LIBRARY,
        entry=dataset_config,
        short_users=config["short_users"],
    script:
        "../scripts/split.py"
