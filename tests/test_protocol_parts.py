"""The protocol study cut where the models part (workflow/rules/protocols.smk): a
model's share (studies.protocols.parts) is its slice of the study of all models, and
its job needs no other model."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import make_tiny_workdir, run, tiny_config

from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS, Protocol
from sampled_metrics.frameworks.simulate import ProtocolRanks
from sampled_metrics.frameworks.unpaired import simulate_unpaired
from sampled_metrics.passes.block_pass import SCORE_CHUNK
from sampled_metrics.studies.protocols.estimates import protocol_corrections, protocol_estimates
from sampled_metrics.studies.protocols.files import study_precision
from sampled_metrics.studies.protocols.parts import part_values, study_part

N_ITEMS = 60


def beaten_masks(models=3, users=2 * SCORE_CHUNK, seed=1):
    """Each model's items ranked above the held-out item (item 0, excluded), nested
    differently per user, and the excluded items: a random half of the rest."""
    rng = np.random.default_rng(seed)
    excluded = rng.random((users, N_ITEMS)) < 0.5
    excluded[:, 0] = True
    beaten = [
        (rng.random((users, N_ITEMS)) < rng.random((users, 1))) & ~excluded for _ in range(models)
    ]
    return beaten, excluded


@pytest.mark.parametrize("name", ["recbole-uni100", "recbole-pop100", "daisyrec"])
def test_a_model_simulated_alone_draws_as_among_all(name):
    """An unpaired protocol's draws of recommender k depend on k alone: simulated alone
    with its index, a model gets its slice of the simulation of all of them."""
    beaten, excluded = beaten_masks()
    protocol = FRAMEWORK_PROTOCOLS[name]
    weights = np.arange(1.0, N_ITEMS + 1) ** protocol.alpha
    kwargs = dict(start=0, repetitions=3, seed=7)
    test = np.zeros(excluded.shape[0], dtype=int)
    whole = simulate_unpaired(protocol, beaten, excluded, weights, test, **kwargs)
    for k in range(len(beaten)):
        alone = simulate_unpaired(
            protocol, beaten[k : k + 1], excluded, weights, test, first_recommender=k, **kwargs
        )
        np.testing.assert_array_equal(alone.sampled[:, 0], whole.sampled[:, k])
        np.testing.assert_array_equal(alone.hansen_hurwitz[:, 0], whole.hansen_hurwitz[:, k])
        np.testing.assert_array_equal(alone.weighted_rank[0], whole.weighted_rank[k])
    # the index is what keeps them apart: the first model's draws given the second's
    # index are other draws
    moved = simulate_unpaired(protocol, beaten[:1], excluded, weights, test, first_recommender=1,
                              **kwargs)  # fmt: skip
    assert np.any(moved.sampled[:, 0] != whole.sampled[:, 0])


def simulated_ranks(protocol: Protocol, models=3, users=50, repetitions=4, seed=3):
    """ProtocolRanks of planted sampled ranks: each model's ranks a binomial share of m."""
    rng = np.random.default_rng(seed)
    shares = rng.random((1, models, users))
    sampled = 1 + rng.binomial(protocol.m, shares, size=(repetitions, models, users))
    hh = 1 + rng.random((repetitions if protocol.replacement else 0, models, users)) * 40
    return ProtocolRanks(0, sampled.astype(np.int16), hh, 1 + 40 * shares[0])


@pytest.mark.parametrize("name", ["recbole-pop100", "ncf"])
def test_the_shares_joined_are_the_study_of_all_models(name):
    """Each model's share, joined, is protocol_estimates of every model at once, row for
    row and bit for bit, with the corrections built once per (m, law) or each time."""
    protocol = FRAMEWORK_PROTOCOLS[name]
    ranks = study_precision(simulated_ranks(protocol))
    n = np.random.default_rng(0).integers(300, 400, ranks.sampled.shape[-1])
    metrics, methods, recommenders = ["ndcg@10", "auc"], ["sampled", "cls", "em"], ["A", "B", "C"]
    together = protocol_estimates(ranks, protocol, n, recommenders, metrics, methods, nodes=3)
    built = protocol_corrections(n, [protocol], metrics, methods, nodes=3, workers=2)
    shares = [
        study_part(
            ProtocolRanks(0, *(x[..., [k], :] for x in (ranks.sampled, ranks.hansen_hurwitz)),
                          ranks.weighted_rank[[k]]),
            protocol, n, metrics, methods, nodes=3, corrections=built[protocol.m, protocol.law],
        )
        for k in range(len(recommenders))
    ]  # fmt: skip
    joined = part_values(shares, protocol, recommenders, metrics, methods)
    pd.testing.assert_frame_equal(joined, together, check_exact=True)
    assert ("weighted" in "".join(shares[0])) == bool(protocol.alpha)


def jobs_of(dry_run: str) -> set:
    """{(rule, recommender or None)} of a dry run's jobs."""
    blocks = re.split(r"\n(?=(?:local)?rule \w+:)", dry_run)
    jobs = set()
    for block in blocks:
        rule = re.match(r"(?:local)?rule (\w+):", block.strip())
        if rule:
            model = re.search(r"recommender=(\w+)", block)
            jobs.add((rule.group(1), model.group(1) if model else None))
    return jobs


@pytest.mark.slow
def test_a_models_share_waits_for_no_other_model(tmp_path):
    """In the DAG, X's share of the study needs X's fit and the split, never Y's fit;
    the join needs every model."""
    config = tiny_config()
    config["protocols"]["run"] = ["recbole-uni100", "ncf"]  # one unpaired, one paired
    workdir = make_tiny_workdir(tmp_path, config)
    (workdir / "config.yaml").write_text(yaml.safe_dump(config))
    share = run(workdir, "--cores", "1", "--dry-run", "results/tiny/protocols/models/X.npz")
    assert share.returncode == 0, share.stderr[-3000:]
    jobs = jobs_of(share.stdout)
    assert {("fit", "X"), ("protocol_corrections", None), ("protocol_model", "X")} <= jobs
    assert not {job for job in jobs if job[1] not in ("X", None)}
    assert ("protocol_ranks", None) not in jobs  # the paired protocols are not its
    study = run(workdir, "--cores", "1", "--dry-run", "results/tiny/protocols.csv")
    assert study.returncode == 0, study.stderr[-3000:]
    assert {("fit", "Y"), ("protocol_model", "Y"), ("protocol_ranks", None)} <= jobs_of(
        study.stdout
    )
