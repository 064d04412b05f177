"""Property-based tests: random files either load into a valid frame or raise a
DataError naming the file; every correction of random problems is finite and
keeps its invariants.

The examples are random locally and fixed under CI (hypothesis profiles of
conftest.py); docs/reliability.md reports what they measure.
"""

import gzip
import io
import zipfile

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sampled_metrics.data import DataError, load_delimited, load_movielens_dat
from sampled_metrics.estimation import corrections as C
from sampled_metrics.estimation import metrics as M
from sampled_metrics.estimation.laws import LAWS, sampled_rank_law

# --------------------------------------------------------------------------
# Loaders
# --------------------------------------------------------------------------

FIELD = st.one_of(
    st.integers(-5, 10**6).map(str),
    st.sampled_from(["", "x", "1.5", "nan", "1e3", " 7", '"3"', "::"]),
    st.text(alphabet="ab9:,\t\"'; \\", max_size=4),
)


def check_frame(frame, rating):
    assert isinstance(frame, pd.DataFrame) and len(frame) > 0
    assert {"user", "item", "time"} <= set(frame.columns) and (
        rating or "rating" not in frame.columns
    )
    assert not frame.isna().to_numpy().any()
    assert pd.api.types.is_numeric_dtype(frame["time"])


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(st.lists(FIELD, min_size=1, max_size=5), max_size=6),
    header=st.booleans(),
    sep=st.sampled_from([",", "\t", ";"]),
    rating=st.booleans(),
    gz=st.booleans(),
)
def test_delimited_loader_returns_a_frame_or_raises_data_error(
    tmp_path, rows, header, sep, rating, gz
):
    names = ["u", "i", "t", "r"]
    text = (sep.join(names) + "\n" if header else "") + "".join(sep.join(r) + "\n" for r in rows)
    path = tmp_path / ("events.csv.gz" if gz else "events.csv")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    columns = dict(
        zip(["user", "item", "time", "rating"][: 3 + rating], names if header else [0, 1, 2, 3])
    )
    try:
        frame = load_delimited(path, sep=sep, header=header, columns=columns)
    except DataError as error:
        assert str(path) in str(error) and "\n" not in str(error).strip()
        return
    check_frame(frame, rating)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=st.lists(st.lists(FIELD, min_size=1, max_size=5), max_size=6),
    cut=st.integers(0, 400),
    zipped=st.booleans(),
)
def test_movielens_loader_returns_a_frame_or_raises_data_error(tmp_path, rows, cut, zipped):
    text = "".join("::".join(r) + "\n" for r in rows).encode("latin-1", "replace")
    path = tmp_path / ("ml.zip" if zipped else "ratings.dat")
    if zipped:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as zf:
            zf.writestr("ml/ratings.dat", text)
        data = buffer.getvalue()
        path.write_bytes(data[:cut] if cut < len(data) else data)  # sometimes truncated
    else:
        path.write_bytes(text)
    try:
        frame = load_movielens_dat(path)
    except DataError as error:
        assert str(path) in str(error)
        return
    check_frame(frame, True)
    assert all(pd.api.types.is_integer_dtype(frame[c]) for c in ("user", "item", "time"))


# --------------------------------------------------------------------------
# Corrections
# --------------------------------------------------------------------------

METHODS = ["sampled", "rank_estimate", "ls", "cls", "bv_0", "bv_0.001", "bv_0.5", "bv_1"]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 120),
    m=st.integers(1, 119),
    law=st.sampled_from(LAWS),
    method=st.sampled_from(METHODS),
    name=st.sampled_from(["recall@5", "ndcg@10", "ap", "auc", "ndcg"]),
    seed=st.integers(0, 2**16),
    uniform=st.booleans(),
)
def test_every_correction_is_finite_with_its_invariants(n, m, law, method, name, seed, uniform):
    m = min(m, n - 1)
    prior = None if uniform else np.random.default_rng(seed).dirichlet(np.full(n, 0.5)) + 1e-12
    exact = M.metric_vector(name, n)
    kind, gamma = C.parse_method(method)
    P = sampled_rank_law(n, m, law)
    if kind in ("sampled", "rank_estimate"):
        vector = C.corrected_metric(name, method, n, m, law)
    elif kind == "ls":
        vector = C.least_squares_correction(exact, P, prior)
    elif kind == "cls":
        vector = C.constrained_least_squares_correction(exact, P, prior)
    else:
        vector = C.bias_variance_correction(exact, P, gamma, prior)
    assert vector.shape == (m + 1,) and np.isfinite(vector).all()
    if kind == "rank_estimate":  # the metric at an estimated rank
        assert np.isin(vector, exact).all()
    if kind == "bv" and gamma == 1:  # eq 26: a posterior mean lies within the metric's range
        assert exact.min() - 1e-9 <= vector.min() and vector.max() <= exact.max() + 1e-9
    if kind == "cls":
        assert np.all(np.diff(vector) <= 1e-9)
    sampled = np.random.default_rng(seed).integers(1, m + 2, size=20)
    assert np.isfinite(C.apply_correction(vector, sampled)).all()


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(2, 60),
    gamma=st.floats(0, 1),
    name=st.sampled_from(["recall@5", "ndcg", "ap", "auc"]),
)
def test_a_full_sample_needs_no_correction(n, gamma, name):
    """m = n - 1 without replacement: the sampled rank is the true rank, and
    every least-squares correction returns the exact metric."""
    P = sampled_rank_law(n, n - 1, "hypergeometric")
    np.testing.assert_allclose(P, np.eye(n), atol=1e-12)
    exact = M.metric_vector(name, n)
    for vector in (
        C.least_squares_correction(exact, P),
        C.constrained_least_squares_correction(exact, P),
    ):
        np.testing.assert_allclose(vector, exact, atol=1e-6)
    if gamma > 0:
        np.testing.assert_allclose(C.bias_variance_correction(exact, P, gamma), exact, atol=1e-9)
