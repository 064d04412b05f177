"""The summary table of docs/popularity.md ("What it shows on MovieLens 1M") and the
figures the README quotes, computed from a run's protocol study outputs, so that the
docs are pasted from a run, never typed.

    python benchmarks/docs/protocol_doc_table.py results/ml-1m-offline

Recall@10 and AUC RMSE against the exact metric (target "rank"), in percent points,
mean over the recommenders; pairs: the share of all pairs x repetitions ordered as the
exact metric orders them; each "± its standard error over the repetitions" from
protocols_summary.csv. Then the figures of the README's paragraph: uniform
protocols' Recall@10 RMSE (sampled, CLS) and pairs right (CLS, sampled); popularity
protocols' gap of the R^pi metric to the exact one (Recall@10, AUC), their pairs right
range, and Hansen-Hurwitz's AUC RMSE and pairs right under RecBole's pop100.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

RECALL, AUC = "recall@10", "auc"
METHODS = ("sampled", "cls", "bv_0.1", "em", "hansen_hurwitz")
UNIFORM = ("ncf", "elliot", "recbole-uni100")  # the README's figures (DaisyRec: m = 999)
POPULARITY = ("recbole-pop100", "bert4rec")


def fmt(x: float, se: float = float("nan")) -> str:
    """x to 3 significant digits, and ± se to as many decimals when given."""
    if pd.isna(x):
        return "-"
    text = f"{x:#.3g}".rstrip(".")
    if pd.isna(se):
        return text
    decimals = len(text.split(".")[1]) if "." in text else 0
    return f"{text} ± {se:.{decimals}f}"


def main(folder: Path) -> None:
    errors = pd.read_csv(folder / "protocols.csv")
    pairs = pd.read_csv(folder / "protocols_pairs.csv")
    rank = errors[errors["target"] == "rank"]
    rmse = rank.groupby(["protocol", "metric", "method"])["rmse"].mean()
    right = pairs.groupby(["protocol", "metric", "method"])[["correct", "repetitions"]].sum()
    share = 100 * right["correct"] / right["repetitions"]
    summary = pd.read_csv(folder / "protocols_summary.csv")
    summary = summary[summary["target"] == "rank"].set_index(["protocol", "metric", "method"])
    rmse_se, share_se = summary["rmse_se"], summary["share_se"]
    print(
        "| protocol | Recall@10 RMSE: sampled / CLS / BV 0.1 / EM / Hansen-Hurwitz "
        "| AUC RMSE: sampled / CLS | pairs right on Recall@10: sampled / CLS / BV 0.1 |"
    )
    print("|---|---|---|---|")
    for protocol in errors["protocol"].drop_duplicates():
        recall = " / ".join(
            fmt(rmse.get((protocol, RECALL, m)), rmse_se.get((protocol, RECALL, m)))
            for m in METHODS
        )
        auc = " / ".join(
            fmt(rmse.get((protocol, AUC, m)), rmse_se.get((protocol, AUC, m)))
            for m in ("sampled", "cls")
        )
        right_ = " / ".join(
            fmt(share.get((protocol, RECALL, m)), share_se.get((protocol, RECALL, m)))
            for m in METHODS[:3]
        )
        print(f"| {protocol} | {recall} | {auc} | {right_} % |")
    uniform = [p for p in UNIFORM if p in set(errors["protocol"])]
    print(
        "\nuniform protocols, Recall@10 RMSE sampled / cls (mean over protocols):",
        fmt(rmse.loc[uniform, RECALL, "sampled"].mean()),
        "/",
        fmt(rmse.loc[uniform, RECALL, "cls"].mean()),
    )
    for method in ("cls", "sampled"):
        values = share.loc[uniform, RECALL, method]
        print(
            f"uniform pairs right on Recall@10, {method}: {fmt(values.min())}-{fmt(values.max())} %"
        )
    popularity = [p for p in POPULARITY if p in set(errors["protocol"])]
    weighted = errors[errors["target"] == "weighted_rank"]
    if popularity and not weighted.empty:
        gap = weighted[weighted["method"] == "sampled"].drop_duplicates(
            ["protocol", "recommender", "metric"]
        ).merge(
            rank[rank["method"] == "sampled"][["protocol", "recommender", "metric", "exact"]],
            on=["protocol", "recommender", "metric"], suffixes=("_pi", ""),
        )  # fmt: skip
        gap = (gap["exact_pi"] - gap["exact"]).groupby(gap["metric"]).mean()
        print(
            f"popularity: metric of R^pi minus exact, Recall@10 {fmt(gap.get(RECALL))}, "
            f"AUC {fmt(gap.get(AUC))} points (mean over protocols and recommenders)"
        )
        values = share.loc[popularity, RECALL]
        values = values[values.index.get_level_values("method").isin(METHODS[:4])]
        print(
            f"popularity pairs right on Recall@10 (sampled, cls, bv_0.1, em): "
            f"{fmt(values.min())}-{fmt(values.max())} %"
        )
        if "recbole-pop100" in popularity:
            print(
                "recbole-pop100 hansen_hurwitz: AUC RMSE",
                fmt(rmse.get(("recbole-pop100", AUC, "hansen_hurwitz"))),
                "pairs right AUC",
                fmt(share.get(("recbole-pop100", AUC, "hansen_hurwitz"))),
                "%",
            )


if __name__ == "__main__":
    main(Path(sys.argv[1]))
