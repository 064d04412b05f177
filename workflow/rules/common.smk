# Helpers shared by the rules: which data sets and recommenders run, config
# look-ups, and the targets of `all`, taken from the rules' own outputs.
import os
import re

from sampled_metrics.pipeline.config import (
    datasets_to_run,
    fig6_m_values,
    sampling_seed,
    source_file,
)
from sampled_metrics.pipeline.data_checks import check_data_sizes, check_fit_memory
from sampled_metrics.data import split_users
from sampled_metrics.studies.protocols.beaten_files import study_layers
from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS
from sampled_metrics.studies.protocols.files import ranks_bytes_per_user
from sampled_metrics.reproduction.paper import PUBLISHED_FILE
from sampled_metrics.pipeline.runs import library_fingerprint

DATASETS = datasets_to_run(config)
RECOMMENDERS = list(config["recommenders"])
TOY_FIGURES = [f"fig{i}" for i in range(1, 5)]  # Figures 1-4: the toy example
LIBRARY = library_fingerprint()  # a param of every computing job, so library edits rerun them
PAPER = str(PUBLISHED_FILE)  # the paper's published numbers, for comparison only
SPLIT = "data/processed/{dataset}/split.npz"  # rule split's output, every later stage's input
# What the ranking pass stores for the protocol study: the score layers its protocols read.
STUDY_LAYERS = study_layers([FRAMEWORK_PROTOCOLS[name] for name in config["protocols"]["run"]])
# The cells of the sampled evaluation: sampling.csv holds one value for each.
SAMPLED_ESTIMATORS = ["sampled", *config["estimation"]["estimators"]]
SAMPLING_KEYS = {
    "recommender": RECOMMENDERS,
    "metric": config["metrics"],
    "method": SAMPLED_ESTIMATORS,
    "rep": list(range(config["sampling"]["repetitions"])),
}

# The rules whose outputs, for every data set, are the targets of `all`.
DATASET_TARGET_RULES = (
    "exact_metrics",
    "fig5",
    "table3",
    "table4",
    "protocol_sensitivity",
    "estimators",
    "protocols",
    "protocols_figure",
    "decisions",
    "decisions_figure",
    "claims",
    "fig6",
    "provenance",
)


def dataset_config(wildcards):
    return config["datasets"][wildcards.dataset]


def dataset_fig6_m_values(wildcards):
    """Figure 6's sample sizes for the data set (its entry's, else fig6.m_values)."""
    return fig6_m_values(config, wildcards.dataset)[1]


def dataset_fig6_m_key(wildcards):
    """The key Figure 6's sample sizes come from (named beside those left out)."""
    return fig6_m_values(config, wildcards.dataset)[0]


def raw_input(wildcards):
    """The file the loader reads: a local `path`, or the downloaded `archive`; none
    for a `format: synthetic` entry, whose events `split` generates."""
    source = source_file(dataset_config(wildcards))
    return [] if source is None else source


# What `download` makes is the `archive` of each entry with a `url`, and nothing else. A
# local `path` (under data/raw/ or anywhere) is only ever an input, so a missing one is a
# missing input naming the file, never a download.
DOWNLOADS = {entry["archive"]: entry for entry in config["datasets"].values() if "url" in entry}
# The wildcard constraint of `download`: exactly those archives ("(?!)" matches nothing).
DOWNLOADABLE = "|".join(re.escape(archive) for archive in sorted(DOWNLOADS)) or "(?!)"


def download_entry(wildcards):
    """The data set entry (url, md5) whose `archive` is the file to download."""
    return DOWNLOADS[wildcards.archive_path]


def all_targets():
    """Every figure and table: the toy example's, then each data set's."""
    toy = [*rules.toy_tables.output, *expand(rules.toy_figure.output, figure=TOY_FIGURES)]
    per_dataset = [
        path
        for name in DATASET_TARGET_RULES
        for path in expand(getattr(rules, name).output, dataset=DATASETS)
    ]
    return toy + per_dataset


# Threads a fit of the type can use (implicit's ALS); item-kNN's sparse products use one.
# A local fit takes at most half of the cores: a job that needs every core waits until
# all are free at once, which never happens while one-thread fits and ranking passes keep
# starting (on 2 cores iALS's fit would wait for BPR's one-thread fit to end). implicit's
# ALS gives the same factors on any number of threads (checked on MovieLens 1M).
FIT_THREADS = {"ials": 2}


def fit_threads(wildcards):
    kind = config["recommenders"][wildcards.recommender]["type"]
    wanted = FIT_THREADS[kind] if kind in FIT_THREADS else 1
    if not workflow.local_exec:  # a cluster job gets the cores it asks for
        return wanted
    return max(1, min(wanted, workflow.cores // 2))


def beside_the_fits(wildcards):
    """Threads of a job built from the split alone (the corrections), meant to run beside
    the fits: 2, locally at most half of the cores (as fit_threads), so that it starts
    while a one-thread fit holds a core. Its outputs do not depend on the number."""
    return 2 if not workflow.local_exec else max(1, min(2, workflow.cores // 2))


# Longest chains first: a model's fit and then its ranking pass, so that the short jobs fill
# the other cores instead of one long pass running alone at the end. At ML-20M size EASE's
# and BPR's fits take longest, then item-kNN's fits and passes, iALS's and Pop's; on
# MovieLens 1M BPR's one-thread fit is the longest job (docs/performance.md). With
# item-kNN's fits last, Y's pass would run alone at the end. draw_plan has
# priority 1, the ranking passes 1 or RANK_PRIORITY. A type not named here: 0 (1 for ranks).
FIT_PRIORITY = {"bpr": 4, "ease": 4, "item_knn": 3, "ials": 2}
RANK_PRIORITY = {"ease": 3, "item_knn": 3}  # the dense items x items scorers


def fit_priority(wildcards):
    kind = config["recommenders"][wildcards.recommender]["type"]
    return FIT_PRIORITY[kind] if kind in FIT_PRIORITY else 0


def rank_priority(wildcards):
    kind = config["recommenders"][wildcards.recommender]["type"]
    return RANK_PRIORITY[kind] if kind in RANK_PRIORITY else 1


def check_known_sizes():
    """Before any job: where a data set's sizes are known (a split made earlier, or a
    synthetic entry's keys), what the configuration asks of them is checked now:
    sampling.m, sampling.law and estimation.law (data_checks.check_data_sizes; a
    synthetic entry's, and a catalogue size given in facts, are checked with the config) and each model's memory (data_checks.check_fit_memory).
    The split rule checks a new split. Protocols of the study and Figure 6 sample sizes
    the data set cannot support stop nothing: their rules leave them out, saying so."""
    for name in DATASETS:
        path, entry = SPLIT.format(dataset=name), config["datasets"][name]
        if os.path.exists(path):
            users = split_users(path)
            check_data_sizes(config, name, users.n_items, users.smallest_pool, path)
            events = int((users.n_items - users.n_candidates).sum())
            check_fit_memory(config, name, len(users.user_ids), users.n_items, events, path)
        elif entry["format"] == "synthetic":
            sizes = (entry["users"], entry["items"], entry["interactions"])
            check_fit_memory(config, name, *sizes, f"datasets.{name}")


def rank_mem_mb(wildcards, input):
    """A ranking pass's memory: a block of users' scores (ranking.memory_mb) and twice
    its inputs (the split, the model, the draw plan)."""
    return config["ranking"]["memory_mb"] + 2 * input.size_mb + 500


def protocol_mem_mb(input, protocols, models):
    """Memory of a simulation of the protocol study: a block of users (ranking.memory_mb),
    the split and the ranks of all users of the protocols for the models
    (studies.protocols.files.ranks_bytes_per_user). Evaluated once the split exists
    (before, the missing file defers it)."""
    split_mb = os.path.getsize(input.split) / 2**20
    users = len(split_users(input.split).user_ids)
    per_user = sum(
        ranks_bytes_per_user(FRAMEWORK_PROTOCOLS[name], config["protocols"]["repetitions"], models)
        for name in protocols
    )
    return int(config["ranking"]["memory_mb"] + 2 * split_mb + per_user * users / 2**20 + 500)


def protocol_ranks_mem_mb(wildcards, input):
    """Rule protocol_ranks' memory: the paired protocols of every model."""
    paired = [name for name in config["protocols"]["run"] if FRAMEWORK_PROTOCOLS[name].paired]
    return protocol_mem_mb(input, paired, len(RECOMMENDERS))


def protocol_model_mem_mb(wildcards, input):
    """Rule protocol_model's memory: the unpaired protocols of one model."""
    unpaired = [name for name in config["protocols"]["run"] if not FRAMEWORK_PROTOCOLS[name].paired]
    return protocol_mem_mb(input, unpaired, 1)
