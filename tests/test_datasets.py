"""Tests for sampled_metrics.data: loaders, binarize, split, facts, download."""

from __future__ import annotations

import gzip
import hashlib
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import CONFIG_FILE
from hypothesis import given
from hypothesis import strategies as st
from snakemake.utils import validate

from sampled_metrics.data import (
    DataError,
    binarize,
    check_facts,
    download,
    leave_last_out_split,
    load_delimited,
    load_events,
    load_movielens_dat,
    load_split,
    md5sum,
    read_events,
    save_split,
)
from sampled_metrics.pipeline.config import SCHEMA_FILE
from sampled_metrics.pipeline.validation import load_config

RATINGS = "1::1193::5::978300760\n1::661::3::978302109\n2::1357::4.5::978298709\n"


def frame(rows, columns=("user", "item", "time")):
    return pd.DataFrame(rows, columns=list(columns))


# --------------------------------------------------------------------------
# ratings.dat
# --------------------------------------------------------------------------


def test_movielens_dat_plain(tmp_path):
    path = tmp_path / "ratings.dat"
    path.write_text(RATINGS)
    df = load_movielens_dat(path)
    assert list(df.columns) == ["user", "item", "time", "rating"]
    assert df["user"].tolist() == [1, 1, 2]
    assert df["item"].tolist() == [1193, 661, 1357]
    assert df["time"].tolist() == [978300760, 978302109, 978298709]
    assert df["rating"].tolist() == [5.0, 3.0, 4.5]
    assert df["user"].dtype == np.int64 and df["time"].dtype == np.int64


def test_movielens_dat_zip_default_and_named_member(tmp_path):
    path = tmp_path / "ml-1m.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("ml-1m/ratings.dat", RATINGS)
        zf.writestr("ml-1m/movies.dat", "1::Toy Story (1995)::Animation\n")
    default = load_movielens_dat(path)
    named = load_movielens_dat(path, member="ml-1m/ratings.dat")
    assert len(default) == 3
    pd.testing.assert_frame_equal(default, named)
    with pytest.raises(DataError, match="no member 'ml-1m/nope.dat'"):
        load_movielens_dat(path, member="ml-1m/nope.dat")


@pytest.mark.parametrize(
    "bad, problem",
    [
        ("3::10::4", "expected 4 '::'-separated fields, found 3"),
        ("3::10::4::5::6", "found 5"),
        ("3::abc::4::978300760", "item 'abc' is not an integer"),
        ("u7::10::4::978300760", "user 'u7' is not an integer"),
        ("3::10::four::978300760", "rating 'four' is not a number"),
    ],
)
def test_movielens_dat_malformed_line_names_file_and_line(tmp_path, bad, problem):
    path = tmp_path / "ratings.dat"
    path.write_text(RATINGS + bad + "\n1::1::1::1\n")
    with pytest.raises(DataError) as err:
        load_movielens_dat(path)
    message = str(err.value)
    assert f"{path}, line 4" in message
    assert problem in message
    assert repr(bad) in message


def test_movielens_dat_empty_and_missing(tmp_path):
    empty = tmp_path / "ratings.dat"
    empty.write_text("\n")
    with pytest.raises(DataError, match="empty"):
        load_movielens_dat(empty)
    with pytest.raises(DataError, match="file not found"):
        load_movielens_dat(tmp_path / "absent.dat")


def test_movielens_dat_truncated_zip(tmp_path):
    good = tmp_path / "good.zip"
    with zipfile.ZipFile(good, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("ml-1m/ratings.dat", RATINGS * 200)
    data = good.read_bytes()
    for cut in (len(data) // 2, 40):
        bad = tmp_path / f"cut{cut}.zip"
        bad.write_bytes(data[:cut])
        with pytest.raises(DataError, match=str(bad)):
            load_movielens_dat(bad)


def test_movielens_dat_corrupt_member_crc(tmp_path):
    path = tmp_path / "crc.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("ratings.dat", RATINGS)
    data = bytearray(path.read_bytes())
    offset = data.index(b"1193")
    data[offset] = ord("7")  # flip a byte of the stored member
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match="corrupt or truncated"):
        load_movielens_dat(path)


# --------------------------------------------------------------------------
# delimited files
# --------------------------------------------------------------------------

CSV = "uid,mid,stars,ts\n10,a,4,100\n11,b,2,90\n10,c,5,80\n"
COLS = {"user": "uid", "item": "mid", "time": "ts", "rating": "stars"}


def test_delimited_csv_with_header_and_mapping(tmp_path):
    path = tmp_path / "events.csv"
    path.write_text(CSV)
    df = load_delimited(path, columns=COLS)
    assert list(df.columns) == ["user", "item", "time", "rating"]
    assert df["user"].tolist() == [10, 11, 10]
    assert df["item"].tolist() == ["a", "b", "c"]
    assert df["time"].tolist() == [100, 90, 80]
    assert df["rating"].tolist() == [4, 2, 5]


def test_delimited_tsv_without_header_by_index(tmp_path):
    path = tmp_path / "events.tsv"
    path.write_text("100\t10\ta\n90\t11\tb\n")
    df = load_delimited(path, sep="\t", header=False, columns={"user": 1, "item": 2, "time": 0})
    assert list(df.columns) == ["user", "item", "time"]
    assert df.to_dict("list") == {"user": [10, 11], "item": ["a", "b"], "time": [100, 90]}


def test_delimited_gzip_and_zip_member(tmp_path):
    gz = tmp_path / "events.csv.gz"
    gz.write_bytes(gzip.compress(CSV.encode()))
    zp = tmp_path / "events.zip"
    with zipfile.ZipFile(zp, "w") as zf:
        zf.writestr("data/events.csv", CSV)
    plain = tmp_path / "events.csv"
    plain.write_text(CSV)
    expected = load_delimited(plain, columns=COLS)
    pd.testing.assert_frame_equal(load_delimited(gz, columns=COLS), expected)
    pd.testing.assert_frame_equal(
        load_delimited(zp, columns=COLS, member="data/events.csv"), expected
    )
    pd.testing.assert_frame_equal(load_delimited(zp, columns=COLS), expected)


def test_delimited_truncated_gzip(tmp_path):
    data = gzip.compress((CSV * 500).encode())
    path = tmp_path / "events.csv.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match=str(path)):
        load_delimited(path, columns=COLS)


def test_delimited_missing_column(tmp_path):
    path = tmp_path / "events.csv"
    path.write_text(CSV)
    with pytest.raises(DataError, match=r"events\.csv: column\(s\) time='timestamp'"):
        load_delimited(path, columns={**COLS, "time": "timestamp"})
    with pytest.raises(DataError, match=r"item=7 not in the file"):
        load_delimited(path, header=False, columns={"user": 0, "item": 7, "time": 3})


@pytest.mark.parametrize(
    "body, line, what",
    [
        ("uid,mid,stars,ts\n10,a,4,100\n11,b,2,yesterday\n", 3, "time 'yesterday' is not a number"),
        ("uid,mid,stars,ts\n10,a,4,100\n,b,2,90\n", 3, "missing value in column(s) ['user']"),
        ("uid,mid,stars,ts\n10,a,4,100\n\n11,b,2,90\n", 3, "missing value"),
        ("uid,mid,stars,ts\n10,a,4,100\n11,b,2,90\n12,c,1,\n", 4, "['time']"),
    ],
)
def test_delimited_bad_values_name_file_and_line(tmp_path, body, line, what):
    path = tmp_path / "events.csv"
    path.write_text(body)
    with pytest.raises(DataError) as err:
        load_delimited(path, columns=COLS)
    assert f"{path}, line {line}: " in str(err.value)
    assert what in str(err.value)


def test_delimited_empty_file(tmp_path):
    path = tmp_path / "events.csv"
    path.write_text("")
    with pytest.raises(DataError, match="empty file"):
        load_delimited(path, columns=COLS)
    path.write_text("uid,mid,stars,ts\n")
    with pytest.raises(DataError, match="no data rows"):
        load_delimited(path, columns=COLS)


# --------------------------------------------------------------------------
# binarize
# --------------------------------------------------------------------------


def test_binarize_without_threshold_keeps_earliest_duplicate():
    df = frame(
        [(1, "a", 5, 3.0), (1, "b", 2, 1.0), (1, "a", 1, 5.0), (2, "a", 7, 4.0)],
        ("user", "item", "time", "rating"),
    )
    out = binarize(df)
    assert list(out.columns) == ["user", "item", "time"]
    # (1, a) appears at times 5 and 1: the earliest (time 1) is kept, in row order
    assert out.values.tolist() == [[1, "b", 2], [1, "a", 1], [2, "a", 7]]


def test_binarize_duplicate_with_equal_times_keeps_first_row():
    df = frame([(1, "a", 5, 1.0), (1, "a", 5, 2.0)], ("user", "item", "time", "rating"))
    out = binarize(df)
    assert len(out) == 1 and out["time"].tolist() == [5]
    # the kept row is the first one: filtering on its rating proves which
    assert len(binarize(df, threshold=2.0)) == 1


def test_binarize_with_threshold():
    df = frame(
        [(1, "a", 1, 5.0), (1, "b", 2, 3.0), (2, "a", 3, 4.0), (2, "c", 4, 3.5)],
        ("user", "item", "time", "rating"),
    )
    out = binarize(df, threshold=4)
    assert out.values.tolist() == [[1, "a", 1], [2, "a", 3]]
    with pytest.raises(DataError, match="rating"):
        binarize(df.drop(columns="rating"), threshold=4)


# --------------------------------------------------------------------------
# leave-last-out split
# --------------------------------------------------------------------------


def test_split_test_item_is_last_and_indices_are_sorted_ids():
    df = frame([(20, "z", 3), (10, "y", 1), (20, "x", 9), (10, "z", 4), (20, "y", 5)])
    split = leave_last_out_split(df)
    assert split.user_ids.tolist() == [10, 20]
    assert split.item_ids.tolist() == ["x", "y", "z"]
    assert split.item_ids[split.test_items].tolist() == ["z", "x"]
    assert split.train.toarray().tolist() == [[0, 1, 0], [0, 1, 1]]
    assert split.train.dtype == np.float32 and split.train.has_sorted_indices
    assert split.test_items.dtype == np.int64
    assert (split.n_users, split.n_items, split.n_skipped_users) == (2, 3, 0)


def test_split_ties_broken_by_row_order():
    rows = [(1, "a", 5), (1, "b", 5), (1, "c", 2)]
    split = leave_last_out_split(frame(rows))
    assert split.item_ids[split.test_items].tolist() == ["b"]
    swapped = leave_last_out_split(frame([rows[1], rows[0], rows[2]]))
    assert swapped.item_ids[swapped.test_items].tolist() == ["a"]


def test_split_ties_broken_by_row_order_many_rows():
    # large enough that an unstable sort would reorder equal times
    rng = np.random.default_rng(0)
    users = rng.integers(0, 5, size=600)
    times = rng.integers(0, 3, size=600)
    df = frame(list(zip(users, range(600), times)))
    split = leave_last_out_split(df)
    for row, user in enumerate(split.user_ids):
        mine = df[df["user"] == user]
        expected = mine[mine["time"] == mine["time"].max()]["item"].iloc[-1]
        assert split.item_ids[split.test_items[row]] == expected


def test_split_short_users_skip_and_error():
    df = frame([(1, "a", 1), (1, "b", 2), (1, "c", 3), (2, "a", 1), (3, "d", 1), (3, "a", 2)])
    split = leave_last_out_split(df, min_events=3)
    assert split.user_ids.tolist() == [1]
    assert split.n_skipped_users == 2
    assert split.item_ids.tolist() == ["a", "b", "c"]  # d belonged to a skipped user
    with pytest.raises(DataError, match=r"2 user\(s\) have fewer than 3 events, e.g. user 2"):
        leave_last_out_split(df, min_events=3, on_short_users="error")
    assert leave_last_out_split(df).n_skipped_users == 1  # default min_events=2


def test_split_rejects_duplicate_pairs():
    with pytest.raises(DataError, match="1 repeated"):
        leave_last_out_split(frame([(1, "a", 1), (1, "a", 2), (1, "b", 3)]))


def test_candidate_counts_and_unseen_test_items():
    df = frame(
        [(1, "a", 1), (1, "b", 2), (1, "c", 3), (2, "a", 1), (2, "d", 2), (3, "b", 1), (3, "a", 2)]
    )
    split = leave_last_out_split(df)
    # items a, b, c, d; train: user1 {a, b}, user2 {a}, user3 {b}; tests c, d, a
    assert split.candidate_counts().tolist() == [2, 3, 3]
    assert split.candidate_counts().dtype == np.int64
    assert split.unseen_test_items() == 2  # c and d, never trained on


# --------------------------------------------------------------------------
# facts
# --------------------------------------------------------------------------


def test_check_facts_frame_and_split():
    df = frame([(1, "a", 1), (1, "b", 2), (1, "c", 3), (2, "a", 1), (2, "b", 2)])
    facts = {
        "n_users": 2,
        "n_items": 3,
        "n_events": 5,
        "min_events_per_user": 2,
        "max_events_per_user": 3,
    }
    assert check_facts(df, facts, "toy") == facts
    split = leave_last_out_split(df)
    assert check_facts(split, {**facts, "n_train": 3, "n_test": 2}, "toy split")["n_train"] == 3


def test_check_facts_mismatch_and_unknown():
    df = frame([(1, "a", 1), (1, "b", 2), (2, "a", 1)])
    with pytest.raises(DataError) as err:
        check_facts(df, {"n_users": 2, "n_items": 3}, "toy data")
    assert str(err.value) == "toy data: facts do not hold: n_items: expected 3, got 2"
    with pytest.raises(DataError, match=r"toy data: unknown fact\(s\) \['n_train'\]"):
        check_facts(df, {"n_train": 1}, "toy data")
    with pytest.raises(DataError, match=r"unknown fact\(s\) \['n_userz'\]"):
        check_facts(leave_last_out_split(df), {"n_userz": 2}, "toy split")


def test_facts_hold_on_the_file_as_read_so_repeated_pairs_can_fail(tmp_path):
    """The facts are checked before binarization: a file with a repeated pair
    fails ``n_duplicate_pairs: 0`` (after binarize() it could never fail)."""
    (tmp_path / "e.csv").write_text("u,i,t\n1,a,1\n1,a,2\n1,b,3\n2,a,1\n2,b,2\n")
    entry = {
        "format": "delimited",
        "sep": ",",
        "header": True,
        "columns": {"user": "u", "item": "i", "time": "t"},
        "member": None,
        "binarize_threshold": None,
    }
    events = read_events(tmp_path / "e.csv", entry)
    assert len(events) == 5
    with pytest.raises(DataError, match="n_duplicate_pairs: expected 0, got 1"):
        check_facts(events, {"n_duplicate_pairs": 0}, "e.csv")
    assert len(load_events(tmp_path / "e.csv", entry)) == 4  # binarized


def test_zip_members_are_read_never_extracted_so_dotdot_names_write_nothing(tmp_path):
    """A member named ``../x/ratings.dat`` or ``/abs/ratings.dat`` is read in memory
    like any other: the loaders extract nothing, so nothing lands outside."""
    inner = tmp_path / "inner"
    inner.mkdir()
    archive = inner / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("../escaped/ratings.dat", RATINGS)
        zf.writestr("/abs/ratings.csv", "u,i,t\n1,2,3\n")
    before = sorted(tmp_path.rglob("*"))
    assert len(load_movielens_dat(archive, member="../escaped/ratings.dat")) == 3
    events = load_delimited(
        archive, member="/abs/ratings.csv", columns={"user": "u", "item": "i", "time": "t"}
    )
    assert events.values.tolist() == [[1, 2, 3]]
    assert sorted(tmp_path.rglob("*")) == before  # no file written anywhere


def test_nothing_left_to_split_is_one_error_not_an_empty_split():
    ratings = frame([(1, "a", 1, 2.0), (1, "b", 2, 3.0)], ("user", "item", "time", "rating"))
    with pytest.raises(DataError, match=r"threshold=4\): no rating reaches the threshold"):
        binarize(ratings, 4)
    with pytest.raises(DataError, match="no user has 2 or more events \\(2 skipped\\)"):
        leave_last_out_split(frame([(1, "a", 1), (2, "b", 1)]))
    with pytest.raises(DataError, match="no events"):
        leave_last_out_split(frame([]))


# --------------------------------------------------------------------------
# ids: the same id exactly when the same text
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ids, groups",
    [
        (["7", "007", "7"], [0, 1, 0]),
        (["1000", "1e3", "1000.0"], [0, 1, 2]),
        (["7", "+7", "-7", "-0", "0"], [0, 1, 2, 3, 4]),
        (["12", "3", "12"], [0, 1, 0]),
        (["99999999999999999999", "99999999999999999999", "1"], [0, 0, 1]),  # beyond int64
    ],
)
def test_ids_are_equal_exactly_when_their_text_is(tmp_path, ids, groups):
    rows = "".join(f"{u},i{k},{k}\n" for k, u in enumerate(ids))
    (tmp_path / "e.csv").write_text("u,i,t\n" + rows)
    users = load_delimited(tmp_path / "e.csv", columns={"user": "u", "item": "i", "time": "t"})
    assert pd.factorize(users["user"])[0].tolist() == groups
    dat = "".join(f"{u}::{k + 1}::5::{k}\n" for k, u in enumerate(ids) if "e" not in u)
    if "." not in dat:  # a .dat id is an integer, in any writing
        (tmp_path / "r.dat").write_text(dat)
        users = load_movielens_dat(tmp_path / "r.dat")["user"]
        kept = [g for u, g in zip(ids, groups) if "e" not in u]
        assert pd.factorize(users)[0].tolist() == pd.factorize(pd.Series(kept))[0].tolist()


def test_canonical_integer_ids_become_int64_and_keep_their_values(tmp_path):
    (tmp_path / "e.csv").write_text("u,i,t\n7,10,1\n-3,0,2\n")
    events = load_delimited(tmp_path / "e.csv", columns={"user": "u", "item": "i", "time": "t"})
    assert events["user"].dtype == np.int64 and events["user"].tolist() == [7, -3]
    assert events["item"].tolist() == [10, 0]


@given(
    ids=st.lists(
        st.from_regex(r"[+-]?[0-9]{1,3}(\.[0-9])?|[0-9]e[0-9]|u[0-9]", fullmatch=True),
        min_size=1,
        max_size=12,
    ),
    others=st.lists(st.sampled_from(["5", "05", "abc", "5e0"]), max_size=4),
)
def test_which_rows_share_an_id_depends_on_their_text_only(ids, others):
    """Whatever the rest of the column holds, rows share an id exactly when their
    texts are equal (the property behind '007' and '7', '1e3' and '1000')."""
    column = ids + others
    body = "u,i,t\n" + "".join(f"{u},x,{k}\n" for k, u in enumerate(column))
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "e.csv").write_text(body)
        events = load_delimited(
            Path(folder) / "e.csv", columns={"user": "u", "item": "i", "time": "t"}
        )
    got = pd.factorize(events["user"].iloc[: len(ids)])[0].tolist()
    assert got == pd.factorize(pd.Series(ids))[0].tolist()


# --------------------------------------------------------------------------
# save / load
# --------------------------------------------------------------------------


def test_save_load_roundtrip(tmp_path):
    df = frame([("u1", 7, 1), ("u1", 3, 2), ("u2", 7, 1), ("u2", 5, 2), ("u3", 9, 1)])
    split = leave_last_out_split(df)
    path = tmp_path / "split.npz"
    save_split(split, path)
    assert [p.name for p in tmp_path.iterdir() if p.is_file()] == ["split.npz"]  # no temporary
    loaded = load_split(path)
    assert (loaded.train != split.train).nnz == 0
    assert loaded.train.dtype == np.float32 and loaded.train.has_sorted_indices
    np.testing.assert_array_equal(loaded.test_items, split.test_items)
    assert loaded.user_ids.tolist() == ["u1", "u2"]
    assert loaded.item_ids.tolist() == [3, 5, 7]
    assert loaded.n_skipped_users == 1


def test_load_split_corrupt_missing_keys_and_absent(tmp_path):
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"PK\x03\x04 this is not a zip")
    with pytest.raises(DataError, match=f"{corrupt}: corrupt split file"):
        load_split(corrupt)
    partial = tmp_path / "partial.npz"
    np.savez(partial, test_items=np.arange(3))
    with pytest.raises(DataError, match=r"partial\.npz: not a saved split, missing key"):
        load_split(partial)
    with pytest.raises(DataError, match="file not found"):
        load_split(tmp_path / "absent.npz")


def test_load_split_inconsistent_arrays(tmp_path):
    split = leave_last_out_split(frame([(1, "a", 1), (1, "b", 2), (2, "a", 1), (2, "b", 2)]))
    path = tmp_path / "split.npz"
    save_split(split, path)
    with np.load(path) as npz:
        arrays = dict(npz)
    arrays["test_items"] = np.array([0, 5])  # column 5 does not exist
    np.savez(path, **arrays)
    with pytest.raises(DataError, match=f"{path}: inconsistent split"):
        load_split(path)


# --------------------------------------------------------------------------
# download from a local server
# --------------------------------------------------------------------------


BODY = b"1::1193::5::978300760\n" * 5000
BODY_MD5 = hashlib.md5(BODY).hexdigest()


def fetch(url, dest, md5=None, retries=0):
    return download(url, dest, md5, timeout=5, retries=retries, progress=False, backoff=0)


def test_download_success_with_md5(http_server, tmp_path):
    url = http_server.serve("/ml.zip", BODY)
    dest = tmp_path / "sub" / "ml.zip"
    assert fetch(url, dest, BODY_MD5) == dest
    assert dest.read_bytes() == BODY and md5sum(dest) == BODY_MD5
    assert sorted(p.name for p in dest.parent.iterdir() if p.is_file()) == ["ml.zip"]


def test_download_md5_mismatch_leaves_nothing(http_server, tmp_path):
    url = http_server.serve("/ml.zip", BODY)
    dest = tmp_path / "ml.zip"
    with pytest.raises(DataError) as err:
        fetch(url, dest, "0" * 32, retries=2)
    assert "0" * 32 in str(err.value) and BODY_MD5 in str(err.value)
    assert list(tmp_path.iterdir()) == []
    assert len(http_server.requests) == 1  # an md5 mismatch is not retried


def test_download_404_leaves_nothing_and_is_not_retried(http_server, tmp_path):
    with pytest.raises(DataError, match="HTTP 404"):
        fetch(f"{http_server.url}/missing.zip", tmp_path / "ml.zip", retries=3)
    assert list(tmp_path.iterdir()) == []
    assert http_server.requests == ["/missing.zip"]


def test_download_truncated_body_is_retried_then_fails(http_server, tmp_path):
    url = http_server.serve("/ml.zip", BODY[:1000], length=len(BODY))
    with pytest.raises(DataError, match=f"truncated body: got 1000 of {len(BODY)} bytes"):
        fetch(url, tmp_path / "ml.zip", retries=2)
    assert list(tmp_path.iterdir()) == []
    assert len(http_server.requests) == 3


def test_download_server_error_retried_a_bounded_number_of_times(http_server, tmp_path):
    url = http_server.serve("/ml.zip", b"busy", status=503)
    with pytest.raises(DataError, match=r"after 3 attempt\(s\): HTTP 503"):
        fetch(url, tmp_path / "ml.zip", retries=2)
    assert len(http_server.requests) == 3 and list(tmp_path.iterdir()) == []


def test_download_existing_file_is_used_without_request(http_server, tmp_path):
    url = http_server.serve("/ml.zip", b"something else")
    dest = tmp_path / "ml.zip"
    dest.write_bytes(BODY)
    assert fetch(url, dest, BODY_MD5) == dest
    assert fetch(url, dest) == dest  # md5 None: used as is
    assert http_server.requests == [] and dest.read_bytes() == BODY
    with pytest.raises(DataError, match=f"{dest}: existing file has md5 {BODY_MD5}"):
        fetch(url, dest, "f" * 32)
    assert http_server.requests == [] and dest.read_bytes() == BODY


# --------------------------------------------------------------------------
# the real offline copy of binarized MovieLens 1M
# --------------------------------------------------------------------------


def test_real_movielens_1m_offline_copy(offline_dataset):
    path, entry = offline_dataset.path, offline_dataset.entry
    df = load_delimited(path, sep=entry["sep"], header=entry["header"], columns=entry["columns"])
    facts = entry["facts"]
    check_facts(df, {**facts, "n_duplicate_pairs": 0}, str(path))
    split = leave_last_out_split(binarize(df, entry["binarize_threshold"]))
    check_facts(split, {**facts, **entry["split_facts"], "n_skipped_users": 0}, f"{path} split")
    # independent check: the test item is the row with the highest position
    last = df.loc[df.groupby("user")["time"].idxmax()].sort_values("user")
    np.testing.assert_array_equal(split.user_ids, last["user"].to_numpy())
    np.testing.assert_array_equal(split.item_ids[split.test_items], last["item"].to_numpy())
    assert (
        split.candidate_counts()
        == facts["n_items"] - (df.groupby("user").size().sort_index().to_numpy() - 1)
    ).all()


# --------------------------------------------------------------------------
# the data sets shipped in config.yaml, each in its archive's real layout
# --------------------------------------------------------------------------

# (user, item, rating, timestamp) rows; user 7 rated item 50 twice (kept: the earlier)
ROWS = [
    (196, 242, 3, 881250949),
    (186, 302, 3.5, 891717742),
    (196, 50, 5, 881250900),
    (7, 50, 4, 874965758),
    (7, 50, 2, 874965700),
]
EXPECTED = [(196, 242, 881250949), (186, 302, 891717742), (196, 50, 881250900), (7, 50, 874965700)]

# Each data set's archive as GroupLens ships it: the ratings member, plus siblings
# that a loader picking "the single matching member" would trip over.
LAYOUTS = {
    "ml-100k": (
        "ml-100k/u.data",
        "".join(f"{u}\t{i}\t{r}\t{t}\n" for u, i, r, t in ROWS),
        {"ml-100k/u1.base": "1\t1\t5\t874965758\n", "ml-100k/u.item": "1|Toy Story (1995)|\n"},
    ),
    "ml-10m": (
        "ml-10M100K/ratings.dat",
        "".join(f"{u}::{i}::{r}::{t}\n" for u, i, r, t in ROWS),
        {
            "ml-10M100K/movies.dat": "1::Toy Story (1995)::Animation\n",
            "ml-10M100K/tags.dat": "15::4973::excellent!::1215184630\n",
        },
    ),
    "ml-20m": (
        "ml-20m/ratings.csv",
        "userId,movieId,rating,timestamp\n" + "".join(f"{u},{i},{r},{t}\n" for u, i, r, t in ROWS),
        {
            "ml-20m/tags.csv": "userId,movieId,tag,timestamp\n18,4141,Mark Waters,1240597180\n",
            "ml-20m/movies.csv": "movieId,title,genres\n1,Toy Story (1995),Animation\n",
        },
    ),
}


def shipped_config() -> dict:
    """config.yaml as written (load_config gives it validated, defaults filled in)."""
    return yaml.safe_load(CONFIG_FILE.read_text())


@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_shipped_dataset_entry_loads_its_archive_layout(tmp_path, name):
    assert "facts" not in shipped_config()["datasets"][name]  # not verified: left out
    entry = load_config(CONFIG_FILE)["datasets"][name]  # as the workflow reads it
    member, body, siblings = LAYOUTS[name]
    assert entry["member"] == member
    assert entry["archive"] == f"data/raw/{name}.zip"
    assert entry["url"] == f"https://files.grouplens.org/datasets/movielens/{name}.zip"
    assert entry["facts"] == {} and entry["binarize_threshold"] is None
    archive = tmp_path / Path(entry["archive"]).name
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(member.split("/")[0] + "/", "")
        zf.writestr(member, body)
        for sibling, text in siblings.items():
            zf.writestr(sibling, text)
    events = load_events(archive, entry)
    assert list(events.columns) == ["user", "item", "time"]
    assert list(events.itertuples(index=False, name=None)) == EXPECTED
    assert events["user"].dtype == np.int64 and events["time"].dtype == np.int64
    split = leave_last_out_split(events)
    assert split.user_ids.tolist() == [196] and split.n_skipped_users == 2  # 7 and 186: one item
    assert split.item_ids[split.test_items].tolist() == [242]  # 196's latest


def test_shipped_datasets_validate_and_keep_ml_1m_first():
    config = shipped_config()
    assert list(config["datasets"])[:2] == ["ml-1m", "ml-1m-offline"]
    assert {"ml-100k", "ml-10m", "ml-20m"} <= set(config["datasets"])
    for name in config["datasets"]:
        validate({**config, "dataset": name}, str(SCHEMA_FILE))


# The commented `my-data` entry of config.yaml: tests/test_own_file.py.


@pytest.mark.parametrize(
    "line, problem",
    [
        ("0::0::::0", "rating '' is not a number"),
        ("1::2::nan::3", "rating 'nan' is not a finite number"),
        ("1::2::-inf::3", "rating '-inf' is not a finite number"),
    ],
)
def test_movielens_dat_rejects_a_rating_that_is_not_a_finite_number(tmp_path, line, problem):
    """An empty or non-finite rating is bad input (found by tests/test_fuzz.py), not a NaN."""
    path = tmp_path / "ratings.dat"
    path.write_text(f"1::1::5::1\n{line}\n")
    with pytest.raises(DataError, match=f"line 2: {problem}"):
        load_movielens_dat(path)
