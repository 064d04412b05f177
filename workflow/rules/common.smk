# Helpers shared by the rules: which data sets run, and config look-ups.
from sampled_metrics.config import check_config, datasets_to_run
from sampled_metrics.runs import library_fingerprint

check_config(config)
DATASETS = datasets_to_run(config)
RECOMMENDERS = list(config["recommenders"])
LIBRARY = library_fingerprint()  # a param of every rule that computes: library edits rerun them
PAPER = os.path.join(
    workflow.basedir, "workflow", "resources", "paper"
)  # the paper's published numbers


wildcard_constraints:
    dataset="[A-Za-z0-9_.-]+",
    recommender="[A-Za-z0-9_]+",


def dataset_config(wildcards):
    return config["datasets"][wildcards.dataset]


def raw_input(wildcards):
    """The file the loader reads: a local `path`, or the downloaded `archive`."""
    entry = dataset_config(wildcards)
    return entry["path"] if "path" in entry else entry["archive"]


TOY_OUTPUTS = [
    f"results/toy/{table}.{ext}" for table in ("table1", "table2") for ext in ("csv", "md", "tex")
] + [f"figures/fig{i}.{ext}" for i in range(1, 5) for ext in ("pdf", "png")]


def dataset_outputs(dataset):
    """Every table, figure and report of one data set."""
    tables = [
        f"results/{dataset}/{name}.{ext}"
        for name in ("table3", "table4")
        for ext in ("csv", "md", "tex")
    ]
    return tables + [
        f"results/{dataset}/exact_metrics.csv",
        f"results/{dataset}/exact_metrics.md",
        f"results/{dataset}/claims.md",
        f"results/{dataset}/provenance/versions.txt",
        f"results/{dataset}/provenance/config.yaml",
        *[f"figures/{dataset}/fig{i}.{ext}" for i in (5, 6) for ext in ("pdf", "png")],
    ]


def all_outputs():
    return TOY_OUTPUTS + [path for dataset in DATASETS for path in dataset_outputs(dataset)]


def archive_to_download(wildcards):
    """Map data/raw/... back to the data set whose `archive` it is."""
    for name, entry in config["datasets"].items():
        if entry.get("archive") == wildcards.archive_path:
            return name, entry
    raise ValueError(f"no data set in config.yaml has archive: {wildcards.archive_path}")
