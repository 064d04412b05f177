"""Metrics of section 3: hand-computed cases, Table 1, and properties."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sampled_metrics.estimation import metrics as M
from sampled_metrics.estimation import set_metrics as S
from sampled_metrics.reproduction.paper import published
from sampled_metrics.reproduction.toy_ranks import TOY_RANKS


def test_single_item_metrics_by_hand():
    r = np.array([1, 2, 10, 11])
    assert M.auc(r, 11).tolist() == [1.0, 0.9, 0.1, 0.0]
    assert M.recall_at_k(r, k=10).tolist() == [1, 1, 1, 0]
    assert M.precision_at_k(r, k=10).tolist() == [0.1, 0.1, 0.1, 0.0]
    assert M.average_precision_at_k(r).tolist() == [1, 0.5, 0.1, 1 / 11]
    assert M.average_precision_at_k(r, k=10).tolist() == [1, 0.5, 0.1, 0.0]
    np.testing.assert_allclose(M.ndcg_at_k(r, k=10), [1, 1 / np.log2(3), 1 / np.log2(11), 0])
    np.testing.assert_allclose(M.ndcg_at_k([3]), [0.5])


def test_aliases_named_in_the_paper():
    r = np.arange(1, 30)
    assert np.array_equal(M.hit_ratio_at_k(r, k=5), M.recall_at_k(r, k=5))
    assert np.array_equal(M.reciprocal_rank(r), 1 / r)
    assert np.array_equal(M.accuracy(r), M.recall_at_k(r, k=1))
    assert np.array_equal(M.accuracy(r), M.precision_at_k(r, k=1))
    assert np.array_equal(M.metric_by_name("mrr")(r), M.metric_by_name("ap")(r))
    assert np.array_equal(M.metric_by_name("HR@10")(r), M.recall_at_k(r, k=10))


def test_the_frameworks_metric_names_with_one_held_out_item():
    """RecBole's hit@k and mrr@k, Elliot's nDCG / HR, cornac's HitRatio, LensKit's
    recip_rank: by hand from their definitions with one relevant item at rank r."""
    r = np.arange(1, 30)
    hit = (r <= 10).astype(float)  # the held-out item is in the top 10
    assert np.array_equal(M.metric_by_name("hit@10")(r), hit)
    assert np.array_equal(M.metric_by_name("HitRatio@10")(r), hit)
    assert np.array_equal(M.metric_by_name("mrr@10")(r), np.where(r <= 10, 1 / r, 0.0))
    assert np.array_equal(M.metric_by_name("map@10")(r), np.where(r <= 10, 1 / r, 0.0))
    assert np.array_equal(M.metric_by_name("recip_rank")(r), 1 / r)
    assert np.array_equal(M.metric_by_name("MAP")(r), 1 / r)
    ndcg = np.where(r <= 10, 1 / np.log2(r + 1), 0.0)
    np.testing.assert_allclose(M.metric_by_name("nDCG@10")(r), ndcg, rtol=1e-15)


def test_auc_accepts_per_user_n():
    np.testing.assert_allclose(M.auc([1, 5, 3], [3, 5, 5]), [1.0, 0.0, 0.5])


@pytest.mark.parametrize("name", ["recall@0", "ndcg@x", "foo", "auc@3"])
def test_unknown_metric_names_raise(name):
    with pytest.raises(ValueError, match="unknown metric"):
        M.metric_by_name(name)


def test_invalid_ranks_raise():
    with pytest.raises(ValueError):
        M.recall_at_k([0], k=1)
    with pytest.raises(ValueError):
        M.auc([5], 4)


def test_table1_of_the_paper():
    """Table 1: the toy recommenders' metrics from their predicted ranks, n = 10,000."""
    paper = published("table1").set_index(["recommender", "metric"])["value"]
    for recommender, ranks in TOY_RANKS.items():
        ranks = np.array(ranks, dtype=float)
        got = {
            "auc": M.auc(ranks, 10_000).mean(),
            "ap": M.average_precision_at_k(ranks).mean(),
            "ndcg": M.ndcg_at_k(ranks).mean(),
            "recall@10": M.recall_at_k(ranks, k=10).mean(),
        }
        for name, value in got.items():
            expected = paper[(recommender, name)]
            assert round(value, 3) == pytest.approx(expected, abs=1e-9), (recommender, name)


# ---- set forms, eqs 2-6 ---------------------------------------------------


def test_set_metrics_by_hand():
    R, n = [3, 5], 10
    # eq 2: pairs (relevant, irrelevant) correctly ordered:
    # 3 beats 6 of 8 (not 1, 2), 5 beats 5 of 8
    assert S.set_auc(R, n) == pytest.approx(11 / 16)
    assert S.set_precision_at_k(R, 5) == pytest.approx(2 / 5)
    assert S.set_recall_at_k(R, 4) == pytest.approx(1 / 2)
    assert S.set_average_precision_at_k(R, 10) == pytest.approx((1 / 3 + 2 / 5) / 2)
    assert S.set_average_precision_at_k(R, 4) == pytest.approx((1 / 3) / 2)
    ideal = 1 + 1 / np.log2(3)
    assert S.set_ndcg_at_k(R, 10) == pytest.approx((1 / np.log2(4) + 1 / np.log2(6)) / ideal)


def test_chapter_example_map_and_ndcg():
    """The background chapter's example: relevant at positions 2, 3, 5 of 5."""
    assert S.set_average_precision_at_k([2, 3, 5], 5) == pytest.approx((1 / 2 + 2 / 3 + 3 / 5) / 3)
    dcg = 1 / np.log2(3) + 1 / np.log2(4) + 1 / np.log2(6)  # the chapter's 0.63 + 0.5 + 0.39
    idcg = 1 + 1 / np.log2(3) + 1 / np.log2(4)  # its 2.13
    assert S.set_ndcg_at_k([2, 3, 5], 5) == pytest.approx(dcg / idcg)
    assert round(S.set_ndcg_at_k([2, 3, 5], 5), 2) == 0.71  # the chapter's rounded value
    assert S.graded_ndcg_at_k([0, 1, 1, 0, 1], 5) == pytest.approx(S.set_ndcg_at_k([2, 3, 5], 5))


def test_graded_ndcg_by_hand():
    # gains 3, 2 at positions 2, 1 -> DCG = 2 + 3/log2(3); ideal = 3 + 2/log2(3)
    expected = (2 + 3 / np.log2(3)) / (3 + 2 / np.log2(3))
    assert S.graded_ndcg_at_k([2, 3, 0], 3) == pytest.approx(expected)
    exp_expected = (3 + 7 / np.log2(3)) / (7 + 3 / np.log2(3))
    assert S.graded_ndcg_at_k([2, 3, 0], 3, exponential=True) == pytest.approx(exp_expected)
    assert S.graded_ndcg_at_k([0, 0], 2) == 0.0


@given(st.integers(1, 500), st.integers(2, 500))
def test_set_forms_reduce_to_single_item_forms(r, n):
    r = min(r, n)
    assert S.set_auc([r], n) == pytest.approx(M.auc(r, n))
    for k in (1, 5, 10):
        assert S.set_recall_at_k([r], k) == M.recall_at_k(r, k=k)
        assert S.set_precision_at_k([r], k) == M.precision_at_k(r, k=k)
        assert S.set_average_precision_at_k([r], k) == pytest.approx(
            M.average_precision_at_k(r, k=k)
        )
        assert S.set_ndcg_at_k([r], k) == pytest.approx(M.ndcg_at_k(r, k=k))


@given(st.lists(st.integers(1, 60), min_size=1, max_size=20, unique=True), st.integers(60, 100))
def test_set_auc_equals_pair_counting(R, n):
    """Eq 2, first line (pair counting) against its closed form (second line)."""
    irrelevant = np.setdiff1d(np.arange(1, n + 1), R)
    pairs = np.mean(np.asarray(R)[:, None] < irrelevant[None, :])
    assert S.set_auc(R, n) == pytest.approx(pairs)


@given(
    st.sampled_from(["auc", "recall@10", "precision@3", "ap", "ap@10", "ndcg", "ndcg@10"]),
    st.integers(2, 2000),
)
def test_every_metric_lies_in_unit_interval_and_is_non_increasing(name, n):
    values = M.metric_vector(name, n)
    assert values.shape == (n,)
    assert np.all((values >= 0) & (values <= 1))
    assert np.all(np.diff(values) <= 0)
    assert values[0] == pytest.approx(1.0 if not name.startswith("precision") else 1 / 3)
