"""The worked example of docs/cornac.md, run by tests/test_cornac_adapter.py in cornac's
environment (``.ci/envs/cornac.sh`` builds it at .envs/cornac).

``python tests/cornac_case.py WORK`` makes a small synthetic leave-one-out data set
(:func:`interactions`), evaluates cornac's BPR and MostPop on it with cornac's own
``Experiment`` (Recall, NDCG at several k, HitRatio, Precision, AUC, MAP) and
``ranking_eval`` (MRR), then writes with the adapter
(``sampled_metrics.frameworks.adapters.cornac``):

- WORK/exact.csv: every held-out item's rank in cornac's order for the Experiment's
  metric list (max_k 50), its rank with ties above, n;
- WORK/exact_full.csv: the same for a full sort (max_k -1: what cornac's MRR alone reads);
- WORK/sampled.csv: NCF's protocol (1 + 99) drawn from cornac's order, the file for
  ``sampled-metrics correct WORK/sampled.csv --protocol ncf``;
- WORK/cornac.json: cornac's own numbers (full precision) and the table it printed;
- WORK/train.tsv, WORK/test.tsv: the data in cornac's UIR format, for
  ``sampled-metrics cornac WORK/train.tsv --test WORK/test.tsv ...``;
- WORK/ratio/: the same data split by ``RatioSplit`` (several held-out items per user):
  the exact file of MostPop and BPR and, per protocol (NCF's, BERT4Rec's drawn by
  popularity), the sampled file written at once (``memory_mb`` 256) and a block of 32
  held-out items at a time (``memory_mb`` 0.001, a user's items cut across blocks).

Run it in an empty folder: cornac's Experiment writes a CornacExp-*.log where it runs.
cornac is imported inside ``main``: this module imports without it (pytest collects its
doctests in the project's environment).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import numpy as np

USERS, ITEMS, SEED = 100, 500, 2020
CUTOFFS = (1, 5, 10, 50)


def interactions(seed: int = SEED) -> tuple[list, list]:
    """Leave-one-out (user, item, rating) triplets: every user picks 11 to 30 distinct
    items by taste (a rank-4 score plus item popularity plus Gumbel noise) and holds one
    of them out at random. Two quirks of cornac's evaluation are in the data: every
    fifth user rates one training item 0.5 (below cornac's rating_threshold of 1.0: it
    stays a candidate), and a last user holds out an item nobody trained on (cornac's
    exclude_unknowns drops that user from the evaluation).

    Examples
    --------
    >>> train, test = interactions()
    >>> len(test), len({u for u, _, _ in test}), test[0]
    (101, 101, ('u0', 'i79', 1.0))
    >>> sorted({r for _, _, r in train})
    [0.5, 1.0]
    """
    rng = np.random.default_rng(seed)
    taste = rng.normal(size=(USERS, 4)) @ rng.normal(size=(4, ITEMS))
    popularity = 1.5 * np.log(rng.pareto(1.5, ITEMS) + 1.0)
    train, test = [], []
    for user in range(USERS):
        size = int(rng.integers(11, 31))
        noisy = taste[user] + popularity + rng.gumbel(size=ITEMS)
        items = np.argsort(-noisy)[:size]
        held_out = int(rng.integers(size))
        for j, item in enumerate(items):
            triplet = (f"u{user}", f"i{item}", 1.0)
            (test if j == held_out else train).append(triplet)
        if user % 5 == 0:  # a training item rated below the threshold
            u, i, _ = train[-1]
            train[-1] = (u, i, 0.5)
    train += [("u_late", f"i{item}", 1.0) for item in range(12)]
    test.append(("u_late", "i_new", 1.0))  # an item unknown to the training set
    return train, test


def main(work: Path) -> dict:
    import cornac
    from cornac.eval_methods import BaseMethod, ranking_eval
    from cornac.metrics import AUC, MAP, MRR, NDCG, HitRatio, Precision, Recall
    from cornac.models import BPR, MostPop

    from sampled_metrics.frameworks.adapters.cornac import evaluation_split, exact_ranks, rank_files

    work.mkdir(parents=True, exist_ok=True)
    train, test = interactions()
    for name, triplets in (("train", train), ("test", test)):
        lines = "".join(f"{u}\t{i}\t{r}\n" for u, i, r in triplets)
        (work / f"{name}.tsv").write_text(lines)
    method = BaseMethod.from_splits(train, test, exclude_unknowns=True, seed=SEED)
    models = [
        BPR(k=8, max_iter=200, learning_rate=0.05, lambda_reg=0.001, seed=SEED),
        MostPop(),
    ]
    metrics = [Recall(k=k) for k in CUTOFFS] + [NDCG(k=k) for k in CUTOFFS]
    metrics += [HitRatio(k=10), Precision(k=10), AUC(), MAP()]
    experiment = cornac.Experiment(method, models, metrics, user_based=True, verbose=False)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        experiment.run()  # fits the models, evaluates, prints the table

    # The adapter: cornac's order for the Experiment's metric list, and NCF's 1 + 99.
    exact, sampled = rank_files(models, method, "ncf", k=metrics, seed=0)
    exact.to_csv(work / "exact.csv", index=False)
    sampled.to_csv(work / "sampled.csv", index=False)
    split = evaluation_split(method)
    bpr, pop = (exact_ranks(model, **split, k=-1) for model in models)
    full = bpr.drop(columns="n").merge(pop, on=["user", "item"])
    full.to_csv(work / "exact_full.csv", index=False)

    # cornac's own numbers: the Experiment's means and each user's values, and MRR by
    # ranking_eval (the function the Experiment calls), alone and beside a k > 0.
    raw_user = {index: raw for raw, index in method.test_set.uid_map.items()}
    out = {"cornac": cornac.__version__, "printed": printed.getvalue(), "models": {}}
    for model, result in zip(models, experiment.result):
        means = {m: v for m, v in result.metric_avg_results.items() if "(s)" not in m}
        per_user = {
            metric: {raw_user[u]: v for u, v in values.items()}
            for metric, values in result.metric_user_results.items()
        }
        for label, metric_list in (
            ("MRR", [MRR()]),
            ("MRR beside Recall@10", [MRR(), Recall(k=10)]),
        ):
            averages, users = ranking_eval(model, metric_list, **split)
            means[label] = averages[0]
            per_user[label] = {raw_user[u]: v for u, v in users[0].items()}
        out["models"][model.name] = {"means": means, "per_user": per_user}
    (work / "cornac.json").write_text(json.dumps(out, indent=1))
    ratio_split(work / "ratio", train + test)
    return out


def ratio_split(work: Path, triplets: list) -> None:
    """WORK/ratio/exact.csv and WORK/ratio/<protocol>-<memory_mb>.csv (module docstring)."""
    from cornac.eval_methods import RatioSplit
    from cornac.models import BPR, MostPop

    from sampled_metrics.frameworks.adapters.cornac import rank_files

    work.mkdir(parents=True, exist_ok=True)
    method = RatioSplit(triplets, test_size=0.3, exclude_unknowns=True, seed=SEED, verbose=False)
    models = [MostPop(), BPR(k=8, max_iter=20, seed=SEED)]
    for model in models:
        model.fit(method.train_set)
    for protocol in ("ncf", "bert4rec"):
        for memory_mb in (256, 0.001):
            exact, sampled = rank_files(models, method, protocol, k=10, memory_mb=memory_mb)
            sampled.to_csv(work / f"{protocol}-{memory_mb:g}.csv", index=False)
    exact.to_csv(work / "exact.csv", index=False)


if __name__ == "__main__":
    result = main(Path(sys.argv[1]))
    print(result["printed"])
