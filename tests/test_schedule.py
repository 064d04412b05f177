"""The shape of the schedule: the corrections are built from the split alone, beside the
fits, and each recommender's share of the sampled evaluation and of Figure 6 waits for that
recommender's model only, so that a slow fit holds back nothing but its own share."""

import re
import subprocess

import pytest
from conftest import snakemake_command

TARGETS = [
    "results/tiny/sampling.csv",
    "results/tiny/fig6.csv",
    "results/tiny/protocol_sensitivity.csv",
]


@pytest.fixture(scope="module")
def dag(tiny_workdir) -> tuple:
    """({job id: label}, {job id: ids of the jobs it needs}) of Snakemake's plan."""
    workdir = tiny_workdir("schedule")
    result = subprocess.run(
        snakemake_command(workdir, "--dag", "dot", targets=TARGETS),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    labels = {
        int(job): label.split("\\n")[0] + "".join(f" {w}" for w in label.split("\\n")[1:])
        for job, label in re.findall(r'^\s*(\d+)\[label = "([^"]*)"', result.stdout, re.M)
    }
    needs: dict = {job: set() for job in labels}
    for before, after in re.findall(r"^\s*(\d+) -> (\d+)", result.stdout, re.M):
        needs[int(after)].add(int(before))
    return labels, needs


def ancestors(needs: dict, job: int) -> set:
    """Every job ``job`` waits for, directly or through others."""
    found, todo = set(), [job]
    while todo:
        for before in needs[todo.pop()] - found:
            found.add(before)
            todo.append(before)
    return found


def jobs_of(labels: dict, rule: str) -> list:
    return [job for job, label in labels.items() if label.split()[0] == rule]


@pytest.mark.parametrize(
    "rule", ["sampling_corrections", "fig6_corrections", "protocol_sensitivity_corrections"]
)
def test_the_corrections_need_the_split_alone(dag, rule):
    labels, needs = dag
    (job,) = jobs_of(labels, rule)
    assert {labels[a].split()[0] for a in ancestors(needs, job)} == {"split"}


@pytest.mark.parametrize("rule", ["sampling_recommender", "fig6_recommender"])
def test_a_recommenders_share_waits_for_its_own_fit_only(dag, rule):
    labels, needs = dag
    fits = jobs_of(labels, "fit")
    shares = jobs_of(labels, rule)
    assert len(shares) == len(fits) == 3  # X, Y, Z of the tiny config
    fitted = [{a for a in ancestors(needs, job) if a in fits} for job in shares]
    assert all(len(found) == 1 for found in fitted)
    assert set().union(*fitted) == set(fits)  # each share its own model


@pytest.mark.parametrize("rule", ["sampling_table", "fig6_curves"])
def test_the_join_reads_every_share(dag, rule):
    labels, needs = dag
    (join,) = jobs_of(labels, rule)
    share = {"sampling_table": "sampling_recommender", "fig6_curves": "fig6_recommender"}[rule]
    assert needs[join] == set(jobs_of(labels, share))
