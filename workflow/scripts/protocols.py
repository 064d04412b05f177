"""Rule protocols: every estimator on every framework protocol's simulated ranks, against
the exact metric (and, for popularity sampling, the metric of the popularity-weighted
rank R^pi the corrections estimate): bias, RMSE, and the pairs ordered right. A protocol
rule protocol_ranks left out (the data set cannot support it) is named, with why, in
protocols.md, protocols_left_out.csv and the log, and nowhere given numbers."""

from itertools import combinations

import pandas as pd

from sampled_metrics.data import split_users
from sampled_metrics.estimation.population import exact_metric
from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS, HANSEN_HURWITZ
from sampled_metrics.io.atomic import write_csv, write_text
from sampled_metrics.io.forked import forked_map
from sampled_metrics.pipeline.intermediates import read_protocol_ranks, read_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.reproduction.tables import estimator_errors, pair_agreement
from sampled_metrics.studies.protocols.estimates import protocol_estimates, protocol_table
from sampled_metrics.studies.protocols.precision import error_precision, mean_rmse, pair_share
from sampled_metrics.studies.protocols.report import LEFT_OUT_COLUMNS, protocols_markdown

log = start_job(snakemake)
p = snakemake.params
dataset = snakemake.wildcards.dataset
users = split_users(snakemake.input.split)
n = users.n_candidates
ranks = {
    rec: read_ranks(path, users)["rank"].to_numpy()
    for rec, path in zip(p.recommenders, snakemake.input.ranks)
}


def exact_frame(ranks_of) -> pd.DataFrame:
    """recommender, metric, value (percent) of every recommender's given ranks."""
    return pd.DataFrame(
        [
            {"recommender": rec, "metric": metric, "value": 100 * exact_metric(metric, r, n)}
            for rec, r in ranks_of.items()
            for metric in p.metrics
        ]
    )


# The columns of protocols.csv and protocols_pairs.csv before protocol_table adds dataset.
ERROR_COLUMNS = ["protocol", "target", "recommender", "metric", "method", "exact", "mean",
                 "bias", "std", "rmse", "bias_se", "rmse_se"]  # fmt: skip
PAIR_COLUMNS = ["protocol", "pair", "metric", "method", "correct", "repetitions"]
# protocols.md's means over the recommenders with their standard errors
SUMMARY_COLUMNS = ["protocol", "target", "metric", "method", "rmse", "rmse_se", "share",
                   "share_se"]  # fmt: skip


def study_table(frames, columns) -> pd.DataFrame:
    """The frames as one table of the study; with every protocol left out, its columns."""
    frame = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    return protocol_table(frame, dataset)


def errors_with_precision(truth, values, **keys) -> pd.DataFrame:
    """estimator_errors of the values against the truth, with their standard errors."""
    errors = estimator_errors(truth, values).merge(
        error_precision(truth, values), on=["recommender", "metric", "method"], sort=False
    )
    return errors.assign(**keys)


def protocol_study(name, path):
    """(error frames, pair agreement, summary frames, left-out row, log line) of one
    protocol."""
    protocol = FRAMEWORK_PROTOCOLS[name]
    simulated = read_protocol_ranks(
        path, protocol, n.size, p.repetitions, len(p.recommenders), users.smallest_pool
    )
    if isinstance(simulated, str):  # left out by rule protocol_ranks: the reason
        row = [name, protocol.m, protocol.replacement, users.smallest_pool, simulated]
        return [], None, [], row, f"{name} left out: it {simulated}"
    values = protocol_estimates(
        simulated, protocol, n, p.recommenders, p.metrics, p.estimators, nodes=p.nodes
    )
    values["value"] *= 100
    found = [errors_with_precision(exact, values, protocol=name, target="rank")]
    summary = [
        mean_rmse(exact, values)
        .merge(pair_share(exact, values, pairs), on=["metric", "method"], sort=False)
        .assign(protocol=name, target="rank")
    ]
    if protocol.alpha:  # what the corrections estimate there (Hansen-Hurwitz: the rank)
        weighted = exact_frame(dict(zip(p.recommenders, simulated.weighted_rank)))
        corrections = values[values["method"] != HANSEN_HURWITZ]
        found.append(
            errors_with_precision(weighted, corrections, protocol=name, target="weighted_rank")
        )
        summary.append(
            mean_rmse(weighted, corrections).assign(protocol=name, target="weighted_rank")
        )
    agreement = pair_agreement(exact, values, pairs).assign(protocol=name)
    return found, agreement, summary, None, f"{name}: {len(values)} estimates"


exact = exact_frame(ranks)
pairs = list(combinations(p.recommenders, 2))
# The protocols are independent: one forked process each (they share what is read
# above; BLAS on one thread), snakemake.threads at a time, the most draws first (their
# estimators take longest: DaisyRec's 999 half the rule on MovieLens 1M; started last, it
# ran alone).
jobs = sorted(
    zip(p.protocols, snakemake.input.protocols), key=lambda job: -FRAMEWORK_PROTOCOLS[job[0]].m
)
done = forked_map(lambda _, job: protocol_study(*job), None, jobs, snakemake.threads)
by_name = dict(zip([name for name, _ in jobs], done))
studies = [by_name[name] for name in p.protocols]
errors, agreement, summary, left_out = [], [], [], []
for found, pairs_right, means, row, line in studies:
    errors += found
    summary += means
    agreement += [] if pairs_right is None else [pairs_right]
    left_out += [] if row is None else [row]
    (log.warning if row else log.info)(line)

errors = study_table(errors, ERROR_COLUMNS)
agreement = study_table(agreement, PAIR_COLUMNS)
summary = study_table(summary, SUMMARY_COLUMNS)
left_out = protocol_table(pd.DataFrame(left_out, columns=LEFT_OUT_COLUMNS), dataset)
write_csv(errors, snakemake.output.csv)
write_csv(agreement, snakemake.output.pairs)
write_csv(left_out, snakemake.output.left_out)
write_csv(summary, snakemake.output.summary)
write_text(
    protocols_markdown(errors, summary, dataset, p.repetitions, left_out=left_out),
    snakemake.output.md,
)
if errors.empty:
    log.warning("every protocol of protocols.run left out on %s: no study to report", dataset)
else:
    log.info("\n%s", errors.to_string(index=False))
