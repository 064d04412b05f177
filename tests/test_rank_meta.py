"""Rank files that describe themselves (sampled_metrics.frameworks.rank_meta): a sidecar
written is read back as written; ``sampled-metrics correct FILE`` reads a file with a
sidecar with no option, as the options the sidecar stands for would read it; an option
that contradicts it, and a damaged sidecar, are one error line naming the sidecar."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from sampled_metrics.cli import main
from sampled_metrics.estimation.metrics import metric_by_name
from sampled_metrics.frameworks.rank_files import rank_files, write_rank_files
from sampled_metrics.frameworks.rank_meta import (
    RankMetaError,
    rank_meta,
    read_rank_meta,
    sidecar_path,
    write_rank_file,
    write_rank_meta,
)
from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS


def correct(capsys, *argv) -> tuple[int, str, str]:
    status = main(["correct", *map(str, argv), "--quiet"])
    out, err = capsys.readouterr()
    return status, out, err


def recbole_like(folder, users=400, draws=20, seed=0):
    """A file as RecBole's adapter writes it for uniN: each user's ``draws`` uniform
    draws with replacement from the n - 1 other items, an item drawn twice ranked once
    (m = the distinct items drawn), the sampled rank 1 + the distinct drawn items above
    the held-out item; and its sidecar. Returns the path and the exact ranks."""
    rng = np.random.default_rng(seed)
    n = rng.integers(150, 300, users)
    exact = 1 + np.floor(rng.beta(0.7, 4.0, users) * (n - 1)).astype(np.int64)
    m, sampled = np.empty(users, np.int64), np.empty(users, np.int64)
    for u in range(users):
        items = np.unique(rng.integers(0, n[u] - 1, draws))  # positions among the others
        m[u], sampled[u] = items.size, 1 + np.sum(items < exact[u] - 1)
    frame = pd.DataFrame({"user": np.arange(users), "BPR": sampled, "m": m, "n": n})
    path = folder / f"BPR-recbole-uni{draws}.csv"
    meta = rank_meta(f"recbole-uni{draws}", rank_columns=["BPR"], distinct_m=True,
                     ties="framework", ties_detail="torch.topk", writer="test")  # fmt: skip
    write_rank_file(frame, path, meta)
    return path, exact


def test_a_sidecar_round_trips(tmp_path):
    path = tmp_path / "ranks.csv"
    meta = rank_meta("ncf", rank_columns={"rank": "iALS"}, m_column=None, ties="random",
                     tie_seed=7, writer="test", framework="none")  # fmt: skip
    write_rank_meta(path, meta)
    assert sidecar_path(path).name == "ranks.csv.meta.json"
    assert json.loads(sidecar_path(path).read_text()) == meta
    read = read_rank_meta(path, header=["user", "rank", "n"])
    assert (read.protocol, read.law, read.m, read.m_column, read.n_column) == (
        "ncf", "hypergeometric", 99, None, "n",
    )  # fmt: skip
    assert read.rank_columns == {"rank": "iALS"} and not read.full
    assert meta["ties"] == {"order": "random", "seed": 7}


@pytest.mark.parametrize(
    "protocol, distinct, law",
    [
        ("ncf", False, "hypergeometric"),  # distinct draws
        ("daisyrec-499", False, "binomial"),  # independent draws, each ranked
        ("recbole-uni50", True, "hypergeometric"),  # distinct of independent draws
        ("recbole-uni50", False, None),  # counted as draws: neither law is exact
        ("recbole-pop50", True, None),  # popularity draws: neither law
    ],
)
def test_the_sidecars_law_is_the_one_that_reads_the_protocol_exactly(protocol, distinct, law):
    meta = rank_meta(protocol, rank_columns=["A"], distinct_m=distinct, writer="test")
    assert meta["law"] == law


def test_correct_reads_an_adapters_file_with_no_option(capsys, tmp_path):
    """The sidecar stands for --protocol recbole-uni20 (m column, hypergeometric): the
    same numbers, and a range that holds the exact metric of the simulated users."""
    path, exact = recbole_like(tmp_path)
    status, out, err = correct(capsys, path, "--json", "--estimators", "sampled", "bv_0.1")
    assert status == 0 and err == "", err
    explicit = correct(capsys, path.rename(tmp_path / "plain.csv"), "--json", "--estimators",
                       "sampled", "bv_0.1", "--rank-column", "BPR", "--m-column", "m",
                       "--law", "hypergeometric")  # fmt: skip
    assert explicit[0] == 0 and json.loads(out) == json.loads(explicit[1])
    n = pd.read_csv(tmp_path / "plain.csv")["n"].to_numpy()
    for record in json.loads(out):
        if record["kind"] == "range":
            truth = metric_by_name(record["metric"])(exact, n).mean()
            assert record["low"] <= truth <= record["high"], record


def test_the_heading_names_the_protocol_and_the_sidecar(capsys, tmp_path):
    path, _ = recbole_like(tmp_path)
    status, out, _ = correct(capsys, path, "--estimators", "sampled", "--no-range")
    assert status == 0
    assert out.splitlines()[0].startswith(
        f"{path}: 400 rows, 400 users; protocol recbole-uni20 (BPR-recbole-uni20.csv.meta.json), "
        "m = "
    )
    assert out.splitlines()[0].endswith(" (column n), hypergeometric law")


@pytest.mark.parametrize(
    "options, says",
    [
        (["--protocol", "recbole-uni100"], "--protocol recbole-uni100 contradicts {s}, which "
         "says protocol recbole-uni20"),
        (["--law", "binomial"], "--law binomial contradicts {s}, which says law hypergeometric"),
        (["--m", "20"], "--m 20 contradicts {s}, which says m_column m"),
        (["--n-column", "m"], "--n-column m contradicts {s}, which says n_column n"),
        (["--rank-column", "m"], "--rank-column m contradicts {s}, which says rank_columns BPR"),
    ],
)  # fmt: skip
def test_an_option_that_contradicts_the_sidecar_names_both(capsys, tmp_path, options, says):
    path, _ = recbole_like(tmp_path)
    status, out, err = correct(capsys, path, *options)
    assert status == 2 and out == ""
    assert err == f"sampled-metrics correct: error: {says.format(s=sidecar_path(path))}\n"


def test_an_option_that_repeats_the_sidecar_is_no_error(capsys, tmp_path):
    path, _ = recbole_like(tmp_path)
    argv = [path, "--estimators", "sampled", "--no-range", "--json"]
    plain = correct(capsys, *argv)
    again = correct(capsys, *argv, "--protocol", "recbole-uni20", "--law", "hypergeometric",
                    "--m-column", "m", "--rank-column", "BPR")  # fmt: skip
    assert plain[0] == again[0] == 0 and plain[1] == again[1]


DAMAGED = {
    "bad JSON": (lambda meta: "{not json", "not a JSON sidecar"),
    "not a sidecar": (lambda meta: "[1, 2]", "not a rank file's sidecar"),
    "unknown protocol": (
        lambda meta: json.dumps({**meta, "protocol": "uni20"}),
        "unknown protocol 'uni20'; give full, ncf",
    ),
    "unknown law": (lambda meta: json.dumps({**meta, "law": "poisson"}), "law 'poisson' is not"),
    "missing key": (
        lambda meta: json.dumps({k: v for k, v in meta.items() if k != "n_column"}),
        "missing key 'n_column'",
    ),
    "column not in the file": (
        lambda meta: json.dumps({**meta, "rank_columns": {"SASRec": "SASRec"}}),
        "names column 'SASRec' (rank_columns), which the file does not have; it has: user, "
        "BPR, m, n",
    ),
}


@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_damaged_sidecar_is_one_error_naming_it(capsys, tmp_path, case):
    path, _ = recbole_like(tmp_path)
    sidecar = sidecar_path(path)
    damage, expected = DAMAGED[case]
    sidecar.write_text(damage(json.loads(sidecar.read_text())))
    status, out, err = correct(capsys, path)
    assert status == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"sampled-metrics correct: error: {sidecar}: "), err
    assert expected in err, err
    with pytest.raises(RankMetaError, match=str(sidecar)):
        read_rank_meta(path, header=["user", "BPR", "m", "n"])


def test_the_generic_writers_files_are_read_with_no_option(capsys, tmp_path):
    """write_rank_files: the exact file reads as a full ranking (the metrics of its
    ranks), the sampled file as its protocol (NCF: m 99, hypergeometric, pessimistic)."""
    rng = np.random.default_rng(1)
    train = sp.random(80, 400, density=0.05, format="csr", random_state=2)
    train.data[:] = 1
    test = np.array([rng.choice(np.flatnonzero(row == 0)) for row in train.toarray()])
    scores = rng.normal(size=(80, 400))
    exact, sampled = rank_files({"A": scores, "B": -scores}, train, test, "ncf", seed=3)
    paths = write_rank_files(exact, sampled, "ncf", tmp_path / "full.csv", tmp_path / "ncf.csv")
    status, out, err = correct(capsys, paths[0], "--json", "--metrics", "auc", "recall@10")
    assert status == 0, err
    records = json.loads(out)
    for record in (r for r in records if r["kind"] == "exact"):
        model, name = record["model"], record["metric"]
        truth = metric_by_name(name)(exact[model].to_numpy(), exact["n"].to_numpy()).mean()
        assert record["value"] == pytest.approx(truth, rel=1e-12)
    (difference,) = [r for r in records if r["kind"] == "exact_difference" and
                     r["metric"] == "auc"]  # fmt: skip
    assert difference["difference"] == pytest.approx(
        next(r["value"] for r in records if r["model"] == "A" and r["metric"] == "auc")
        - next(r["value"] for r in records if r["model"] == "B" and r["metric"] == "auc")
    )
    status, out, err = correct(capsys, paths[1], "--estimators", "sampled", "--no-range")
    assert status == 0, err
    assert "protocol ncf (ncf.csv.meta.json), m = 99 (column m)" in out.splitlines()[0]
    assert json.loads(sidecar_path(paths[1]).read_text())["ties"] == {"order": "pessimistic"}
    status, _, err = correct(capsys, paths[0], "--estimators", "em")
    assert status == 2 and "a full ranking's metrics are exact: nothing to estimate" in err


# The registered protocols and a sized variant of each that has one.
PROTOCOLS = [*FRAMEWORK_PROTOCOLS, "elliot-50", "recbole-uni20", "recbole-pop20",
             "recbole-seq-uni20", "daisyrec-499"]  # fmt: skip


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("m_column, distinct", [(None, False), ("m", False), ("m", True)])
def test_every_protocols_own_sidecar_reads_as_written(tmp_path, protocol, m_column, distinct):
    """What rank_meta writes for a protocol (the adapters' and write_rank_files' sidecars
    are rank_meta's) agrees with the protocol: it reads back with the m the name says
    (elliot-50: 50; a registered name: the framework's) and the law it was written with."""
    meta = rank_meta(protocol, rank_columns=["A"], m_column=m_column, distinct_m=distinct,
                     writer="test")  # fmt: skip
    write_rank_meta(tmp_path / "r.csv", meta)
    read = read_rank_meta(tmp_path / "r.csv", header=["user", "A", "m", "n"])
    number = protocol.rsplit("-", 1)[-1].removeprefix("uni").removeprefix("pop")
    m = int(number) if number.isdigit() else FRAMEWORK_PROTOCOLS[protocol].m
    assert (read.protocol, read.law, read.m_column, read.largest_m) == (
        protocol, meta["law"], m_column, m,
    )  # fmt: skip
    assert read.m == (m if m_column is None else None)


def test_write_rank_files_sidecars_read_for_every_registered_protocol(capsys, tmp_path):
    """Each registered protocol's files, as write_rank_files writes them, are read by
    correct with no option."""
    rng = np.random.default_rng(5)
    train = sp.random(60, 1200, density=0.02, format="csr", random_state=6)
    train.data[:] = 1
    test = np.array([rng.choice(np.flatnonzero(row == 0)) for row in train.toarray()])
    scores = rng.normal(size=(60, 1200))
    for protocol in FRAMEWORK_PROTOCOLS:
        frames = rank_files({"A": scores}, train, test, protocol, seed=1)
        paths = write_rank_files(*frames, protocol, tmp_path / f"full-{protocol}.csv",
                                 tmp_path / f"{protocol}.csv")  # fmt: skip
        status, _, err = correct(capsys, paths[0])
        assert status == 0, (protocol, err)
        # a protocol no law reads in its draws (popularity, collapsed draws) needs --law
        no_law = FRAMEWORK_PROTOCOLS[protocol].file_law(distinct_m=False)[0] is None
        status, _, err = correct(capsys, paths[1], *(["--law", "binomial"] if no_law else []),
                                 "--estimators", "sampled", "--no-range")  # fmt: skip
        assert status == 0, (protocol, err)


def ranks_with_sidecar(folder, protocol: str, m_column, edit: dict):
    """A small rank file of ``protocol`` and its sidecar, ``edit`` applied to the sidecar."""
    frame = pd.DataFrame({"user": [1, 2, 3], "A": [1, 5, 2], "m": [20, 20, 20], "n": [900] * 3})
    if protocol == "full":
        frame = frame.drop(columns="m")
    path = folder / "ranks.csv"
    meta = rank_meta(protocol, rank_columns=["A"], m_column=m_column, distinct_m=True,
                     writer="test")  # fmt: skip
    frame.to_csv(path, index=False)
    write_rank_meta(path, {**meta, **edit})
    return path


CONTRADICTIONS = {
    "elliot-100 with m 200": (
        "elliot-100", None, {"m": 200},
        "m 200 contradicts protocol elliot-100, which draws m = 100 items per held-out item "
        "(elliot-200 draws 200); correct the sidecar's m or protocol",
    ),
    "ncf with m 100": (
        "ncf", None, {"m": 100},
        "m 100 contradicts protocol ncf, which draws m = 99 items per held-out item; correct "
        "the sidecar's m or protocol",
    ),
    "with replacement, hypergeometric": (
        "daisyrec", "m", {"law": "hypergeometric"},
        "law hypergeometric contradicts protocol daisyrec, which the binomial law reads (999 "
        "draws with replacement, each ranked); correct the sidecar's law or protocol",
    ),
    "distinct draws, binomial": (
        "elliot-20", "m", {"law": "binomial"},
        "law binomial contradicts protocol elliot-20, which the hypergeometric law reads (20 "
        "distinct items drawn); correct the sidecar's law or protocol",
    ),
    "collapsed draws in m, binomial": (
        "recbole-uni20", "m", {"law": "binomial"},
        "law binomial contradicts protocol recbole-uni20, which the hypergeometric law reads "
        "(draws with replacement, each distinct item ranked once, m a row's distinct items); "
        "correct the sidecar's law or protocol",
    ),
    "collapsed draws, one m, hypergeometric": (
        "recbole-uni20", None, {"law": "hypergeometric"},
        "law hypergeometric contradicts protocol recbole-uni20, which no law reads exactly "
        "(recbole-uni20 ranks an item drawn twice once: the law is hypergeometric in each "
        "row's distinct items drawn, which the file's m does not count); write law null "
        "(correct --law then reads the file as uniform draws)",
    ),
    "popularity, hypergeometric": (
        "recbole-pop20", "m", {"law": "hypergeometric"},
        "law hypergeometric contradicts protocol recbole-pop20, which no law reads exactly "
        "(recbole-pop20 draws by popularity: neither law holds (docs/popularity.md)); write "
        "law null (correct --law then reads the file as uniform draws)",
    ),
    "a law, null": (
        "ncf", "m", {"law": None},
        "law null contradicts protocol ncf, which the hypergeometric law reads (99 distinct "
        "items drawn); correct the sidecar's law or protocol",
    ),
    "full with m": (
        "full", None, {"m": 100},
        "m 100 contradicts protocol full, which ranks every item: a full ranking has no m",
    ),
    "full with a law": (
        "full", None, {"law": "binomial"},
        "law binomial contradicts protocol full, which ranks every item: a full ranking has "
        "no law",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CONTRADICTIONS))
def test_a_sidecar_that_contradicts_its_protocol_is_one_error_naming_both(capsys, tmp_path,
                                                                          case):  # fmt: skip
    protocol, m_column, edit, says = CONTRADICTIONS[case]
    path = ranks_with_sidecar(tmp_path, protocol, m_column, edit)
    sidecar = sidecar_path(path)
    with pytest.raises(RankMetaError) as raised:
        read_rank_meta(path)
    assert str(raised.value) == f"{sidecar}: {says}"
    for command in ("correct", "plan"):
        before = sorted(tmp_path.iterdir())
        argv = [command, str(path)] + (
            ["--out", str(tmp_path / "c.csv")] if command == "plan" else []
        )
        status = main(argv)
        out, err = capsys.readouterr()
        assert (status, out) == (2, "")
        assert err == f"sampled-metrics {command}: error: {sidecar}: {says}\n"
        assert sorted(tmp_path.iterdir()) == before  # nothing written


def test_a_column_of_m_beyond_the_sidecars_protocol_is_one_error(capsys, tmp_path):
    """elliot-100 draws 100 items: a row of m = 200 is another protocol's file."""
    path = ranks_with_sidecar(tmp_path, "elliot-100", "m", {})
    frame = pd.read_csv(path).assign(m=200)
    frame.to_csv(path, index=False)
    status, out, err = correct(capsys, path)
    assert (status, out) == (2, "")
    assert err == (
        f"sampled-metrics correct: error: {path}: column 'm' has m = 200, more than the 100 "
        "items protocol elliot-100 draws per held-out item\n"
    )
