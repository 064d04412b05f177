"""Shards and blocks: cutting the users into any number of ranking jobs, and
ranking them in blocks of any memory budget, gives byte-identical results
(docs/cluster.md). The SLURM run of tests/test_slurm.py uses shards as well."""

import shutil

import pytest
import yaml
from conftest import TARGETS, assert_same_files, finished, tiny_config

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(("shards", "memory_mb"), [(3, 0.01), (5, 1024)])
def test_shards_and_block_budget_do_not_change_a_byte(
    reference, tmp_path_factory, shards, memory_mb
):
    # The reference run's split, models and draws, without anything the ranking makes
    # or that is computed from it: the shards and blocks change the ranking only.
    workdir = tmp_path_factory.mktemp(f"shards{shards}") / "run"
    shutil.copytree(reference, workdir)
    for kind in ("ranks", "pessimistic_ranks", "sampled_ranks"):
        shutil.rmtree(workdir / "results/tiny" / kind)
    tables = [*TARGETS[:4], "results/tiny/crosscheck.csv"]
    for table in tables:
        (workdir / table).unlink()
    config = tiny_config()
    config["ranking"] = {"shards": shards, "memory_mb": memory_mb}
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    finished(workdir, "--cores", "2", *TARGETS)
    log = (workdir / f"logs/tiny/rank_X_0-of-{shards}.log").read_text()
    assert f"shard 1 of {shards}: users 0..31" in log  # 90 users, chunks of 32
    per_recommender = [
        f"results/tiny/{kind}/{r}.{ext}"
        for kind, ext in (("ranks", "csv"), ("pessimistic_ranks", "csv"), ("sampled_ranks", "npy"))
        for r in "XYZ"
    ]
    csvs = [p for p in per_recommender if p.endswith(".csv")]
    assert_same_files(workdir, reference, "*.csv", [*tables, *csvs])
    assert_same_files(
        workdir, reference, "*.npy", [p for p in per_recommender if p.endswith(".npy")]
    )
