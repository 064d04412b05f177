"""From ranks to the numbers of Tables 3 and 4 and Figure 6 (section 6).

Exact metrics average M(r_u) over users, with AUC's n the user's ranked-set
size (eq 7). Sampled metrics average a vector M^ over r~ = 1..m+1 (the
uncorrected metric or a correction) at the observed sampled ranks. Expected
sampled metrics average E[M^(r~) | r_u, n_u] over users with the law of
section 4.3, the user's own n_u and the pool the items were drawn from.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .corrections import corrected_metric
from .laws import WITHOUT_REPLACEMENT, sampled_rank_pmf
from .metrics import metric_by_name


def exact_metric(metric: str, ranks, n_candidates) -> float:
    """Mean over users of M(r_u), AUC with n = the user's ranked-set size."""
    return float(np.mean(metric_by_name(metric)(ranks, n_candidates)))


def correction_vectors(
    metrics,
    methods,
    n: int,
    m: int,
    law: str = WITHOUT_REPLACEMENT,
    prior=None,
    interpolation: str = "floor",
) -> dict:
    """{(metric, method): M^ over r~ = 1..m+1} for every pair (one law for all)."""
    return {
        (metric, method): corrected_metric(metric, method, n, m, law, prior, interpolation)
        for metric in metrics
        for method in methods
    }


def sampled_metric_table(sampled_ranks, vectors, n_per_user=None) -> pd.DataFrame:
    """Per repetition, the mean over users of M^[r~ - 1], for each (metric, method).

    ``sampled_ranks`` has shape (repetitions, n_users) with integer ranks.
    ``vectors`` is {(metric, method): M^}, one for all users; or, with
    ``n_per_user``, a function n -> such a dict, called once per distinct n
    so that each user's correction is built with their own n.
    Returns a tidy frame with columns metric, method, rep, value (a fraction).
    """
    ranks = np.asarray(sampled_ranks)
    if np.any(ranks != np.round(ranks)):
        raise ValueError("corrections need integer sampled ranks (not the 'average' tie policy)")
    index = ranks.astype(np.int64) - 1
    if n_per_user is None:
        groups = [(np.arange(index.shape[1]), vectors)]
    else:
        n_per_user = np.asarray(n_per_user)
        groups = [(np.flatnonzero(n_per_user == n), vectors(int(n))) for n in np.unique(n_per_user)]
    sums: dict = {}
    for users, group_vectors in groups:
        for key, vector in group_vectors.items():
            vector = np.asarray(vector)
            if index.max() >= vector.size:
                raise ValueError(f"a sampled rank exceeds m + 1 = {vector.size}")
            sums[key] = sums.get(key, 0.0) + vector[index[:, users]].sum(axis=1)
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "metric": metric,
                    "method": method,
                    "rep": np.arange(index.shape[0]),
                    "value": total / index.shape[1],
                }
            )
            for (metric, method), total in sums.items()
        ],
        ignore_index=True,
    )


def expected_sampled_value(vector, ranks, n_candidates, law: str = WITHOUT_REPLACEMENT) -> float:
    """Mean over users of E[M^(r~) | r_u] (eq 16), with each user's own law:
    n = n_u (their ranked-set size) and m = len(vector) - 1."""
    vector = np.asarray(vector, dtype=float)
    P = sampled_rank_pmf(ranks, n_candidates, vector.size - 1, law)
    return float(np.mean(P @ vector))


# --------------------------------------------------------------------------
# Tables 3 and 4
# --------------------------------------------------------------------------


def summary_table(exact: pd.DataFrame, sampling: pd.DataFrame) -> pd.DataFrame:
    """Table 3: exact value, then mean and std (over repetitions, ddof = 1) of
    every method. ``exact`` has columns recommender, metric, value; ``sampling``
    recommender, metric, method, rep, value. Same units in, same units out."""
    stats = (
        sampling.groupby(["recommender", "metric", "method"], sort=False)["value"]
        .agg(mean="mean", std="std")
        .reset_index()
    )
    exact_rows = exact.rename(columns={"value": "mean"}).assign(method="exact", std=np.nan)
    table = pd.concat([exact_rows[["recommender", "metric", "method", "mean", "std"]], stats])
    order = {name: i for i, name in enumerate(dict.fromkeys(table["method"]))}
    return (
        table.assign(_o=table["method"].map(order))
        .sort_values(["metric", "recommender", "_o"], kind="stable", key=_metric_order)
        .drop(columns="_o")
        .reset_index(drop=True)
    )


def _metric_order(column: pd.Series) -> pd.Series:
    if column.name != "metric":
        return column
    first = {name: i for i, name in enumerate(dict.fromkeys(column))}
    return column.map(first)


def pair_agreement(exact: pd.DataFrame, sampling: pd.DataFrame, pairs) -> pd.DataFrame:
    """Table 4: for each pair (a, b), metric and method, in how many repetitions
    the sign of value(a) - value(b) equals its sign on the exact metric (a tie
    counts as wrong)."""
    exact_value = exact.set_index(["recommender", "metric"])["value"]
    values = sampling.set_index(["recommender", "metric", "method", "rep"])["value"]
    rows = []
    for a, b in pairs:
        for (metric, method), _ in sampling.groupby(["metric", "method"], sort=False):
            truth = np.sign(exact_value[(a, metric)] - exact_value[(b, metric)])
            diff = values.xs((a, metric, method), level=[0, 1, 2]) - values.xs(
                (b, metric, method), level=[0, 1, 2]
            )
            rows.append(
                {
                    "pair": f"{a}<{b}",
                    "metric": metric,
                    "method": method,
                    "correct": int(np.sum(np.sign(diff.to_numpy()) == truth)),
                    "repetitions": int(diff.size),
                }
            )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------
# Cross-check of real sampling against the law, and Figure 6
# --------------------------------------------------------------------------


def sampling_crosscheck(sampling: pd.DataFrame, expected: dict) -> pd.DataFrame:
    """Mean of the repetitions against the analytic expectation, in standard
    errors: ``expected[(recommender, metric, method)]`` is the law's value."""
    stats = (
        sampling.groupby(["recommender", "metric", "method"], sort=False)["value"]
        .agg(mean="mean", std="std", repetitions="size")
        .reset_index()
    )
    stats["expected"] = [
        expected[key] for key in zip(stats["recommender"], stats["metric"], stats["method"])
    ]
    stats["standard_error"] = stats["std"] / np.sqrt(stats["repetitions"])
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (stats["mean"] - stats["expected"]) / stats["standard_error"]
    stats["z"] = np.where(
        stats["standard_error"] > 0,
        z,
        np.where(np.isclose(stats["mean"], stats["expected"], rtol=1e-9, atol=1e-12), 0.0, np.inf),
    )
    return stats


def sample_size_curves(
    ranks: dict, metric: str, methods, m_values, n: int, law: str, progress: bool = False
) -> pd.DataFrame:
    """Figure 6: for each m, each method's corrected vector (built with the
    catalogue size n and ``law``) and its expected mean over users,
    E[M^(r~) | r_u, n_u], for each recommender. ``ranks[name]`` is a pair
    (ranks, n_candidates)."""
    rows = []
    grid = list(m_values)
    if progress:
        from tqdm.auto import tqdm

        grid = tqdm(grid, desc="Figure 6 sample sizes", unit="m")
    for m in grid:
        vectors = {method: corrected_metric(metric, method, n, int(m), law) for method in methods}
        for name, (r, n_candidates) in ranks.items():
            P = sampled_rank_pmf(r, n_candidates, int(m), law)  # one law for every method
            rows += [
                {
                    "m": int(m),
                    "method": method,
                    "recommender": name,
                    "expected": float(np.mean(P @ vector)),
                }
                for method, vector in vectors.items()
            ]
    return pd.DataFrame(rows)


def order_thresholds(curves: pd.DataFrame, exact: dict, a: str, b: str) -> pd.DataFrame:
    """Per method, the smallest m of the grid at which the expected values of
    a and b are in the exact order, and the smallest m from which they stay so."""
    truth = np.sign(exact[a] - exact[b])
    rows = []
    for method, group in curves.groupby("method", sort=False):
        wide = group.pivot(index="m", columns="recommender", values="expected").sort_index()
        right = (np.sign(wide[a] - wide[b]) == truth).to_numpy()
        ms = wide.index.to_numpy()
        first = ms[right][0] if right.any() else np.nan
        wrong_after = np.flatnonzero(~right)
        stays = (
            ms[wrong_after[-1] + 1]
            if wrong_after.size and wrong_after[-1] + 1 < ms.size
            else (np.nan if wrong_after.size else ms[0])
        )
        rows.append(
            {
                "method": method,
                "pair": f"{a}<{b}",
                "first_right_m": first,
                "stays_right_from_m": stays,
            }
        )
    return pd.DataFrame(rows)
