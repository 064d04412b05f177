"""The running example of sections 3.2 and 4.2: recommenders A, B, C ranked on
five instances among n = 10,000 items (Tables 1 and 2, Figures 1-4).

Everything here is computed from the predicted ranks with the library's own
metrics, laws and corrections; the paper's values are only read for comparison.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..estimation.expected import expected_sampled_metric, metric_on_sample
from ..estimation.laws import sampled_rank_pmf
from ..estimation.metrics import metric_by_name, metric_vector
from ..passes.sampling import draw_positions
from .tables import STD_DDOF

TOY_METRICS = ["auc", "ap", "ndcg", "recall@10"]


def exact_table(ranks: dict, n: int, metrics: Iterable[str] = TOY_METRICS) -> pd.DataFrame:
    """Table 1: each recommender's mean metric over its instances (eqs 7-13)."""
    rows = [
        {
            "recommender": name,
            "ranks": " ".join(map(str, r)),
            **{
                metric: float(np.mean(metric_by_name(metric)(np.array(r), n))) for metric in metrics
            },
        }
        for name, r in ranks.items()
    ]
    return pd.DataFrame(rows)


def simulate_sampled_ranks(
    true_ranks: ArrayLike, n: int, m: int, repetitions: int, seed: int, replacement: bool = False
) -> np.ndarray:
    """Real sampling: for each repetition and instance, draw m of the n - 1
    other items and count those ranked above the relevant one (positions
    0..r-2 of the others are above it). Returns (repetitions, instances)."""
    r = np.asarray(true_ranks, dtype=np.int64)
    rng = np.random.default_rng(seed)
    pool = np.full(repetitions * r.size, n - 1)
    positions = draw_positions(pool, m, rng, replacement).reshape(repetitions, r.size, m)
    return 1 + np.sum(positions < (r - 1)[None, :, None], axis=2)


def sampled_table(
    ranks: dict, n: int, m: int, repetitions: int, seed: int, metrics: Iterable[str] = TOY_METRICS
) -> pd.DataFrame:
    """Table 2: sampled metrics, mean and std (``STD_DDOF``) over repetitions of the mean
    over instances."""
    rows = []
    for name, true_ranks in ranks.items():
        sampled = simulate_sampled_ranks(true_ranks, n, m, repetitions, seed)
        for metric in metrics:
            per_rep = metric_by_name(metric)(sampled, m + 1).mean(axis=1)
            rows.append(
                {
                    "recommender": name,
                    "metric": metric,
                    "mean": float(per_rep.mean()),
                    "std": float(per_rep.std(ddof=STD_DDOF)),
                }
            )
    return pd.DataFrame(rows)


def metric_curves(n: int, metrics: Iterable[str] = TOY_METRICS) -> pd.DataFrame:
    """Figure 1: every metric at every rank 1..n."""
    return pd.DataFrame(
        {"rank": np.arange(1, n + 1), **{metric: metric_vector(metric, n) for metric in metrics}}
    )


def expected_vs_sample_size(
    ranks: dict, n: int, m_values: Iterable[int], law: str, metrics: Iterable[str] = TOY_METRICS
) -> pd.DataFrame:
    """Figure 2: E[mean over instances of M(r~)] for each recommender and m (eq 16)."""
    rows = []
    for m in m_values:
        for metric in metrics:
            values = metric_on_sample(metric, int(m))
            for name, r in ranks.items():
                rows.append(
                    {
                        "m": int(m),
                        "metric": metric,
                        "recommender": name,
                        "expected": float(expected_sampled_metric(values, r, n, law).mean()),
                    }
                )
    return pd.DataFrame(rows)


def expected_vs_true_rank(
    n: int, m_values: Iterable[int], max_rank: int, law: str, metrics: Iterable[str] = TOY_METRICS
) -> pd.DataFrame:
    """Figure 3: E[M(r~) | r] for r = 1..max_rank and each m; m = n - 1 with the
    hypergeometric law is the exact metric."""
    ranks = np.arange(1, max_rank + 1)
    frames = []
    for m in m_values:
        P = sampled_rank_pmf(ranks, n, int(m), law)
        for metric in metrics:
            frames.append(
                pd.DataFrame(
                    {
                        "m": int(m),
                        "metric": metric,
                        "rank": ranks,
                        "expected": P @ metric_on_sample(metric, int(m)),
                    }
                )
            )
    exact = [
        pd.DataFrame(
            {
                "m": n,
                "metric": metric,
                "rank": ranks,
                "expected": metric_vector(metric, n)[:max_rank],
            }
        )
        for metric in metrics
    ]
    return pd.concat(frames + exact, ignore_index=True)


def corrected_ap_curves(
    n: int,
    m: int,
    methods: Iterable[str],
    law: str,
    max_rank: int,
    cls_constraint: str = "monotone_in_range",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Figure 4: the corrected AP vectors over r~ (left) and their expectation
    E[M^(r~) | r] over true ranks 1..max_rank (right), with the exact AP; CLS
    under ``cls_constraint``."""
    # Here, not at the top: only Figure 4 corrects, and the corrections' solvers import
    # scipy.optimize, which Tables 1-2 and Figures 1-3 would otherwise load for nothing.
    from ..estimation.corrections import corrected_metric

    ranks = np.arange(1, max_rank + 1)
    P = sampled_rank_pmf(ranks, n, m, law)
    on_sample, expected = [], []
    for method in methods:
        vector = corrected_metric("ap", method, n, m, law, cls_constraint=cls_constraint)
        on_sample.append(
            pd.DataFrame({"method": method, "sampled_rank": np.arange(1, m + 2), "value": vector})
        )
        expected.append(pd.DataFrame({"method": method, "rank": ranks, "value": P @ vector}))
    expected.append(
        pd.DataFrame({"method": "exact", "rank": ranks, "value": metric_vector("ap", n)[:max_rank]})
    )
    return pd.concat(on_sample, ignore_index=True), pd.concat(expected, ignore_index=True)
