"""Rule protocols: every estimator on every framework protocol's simulated ranks, against
the exact metric (and, for popularity sampling, the metric of the popularity-weighted
rank R^pi the corrections estimate): bias, RMSE, and the pairs ordered right. The
protocols that draw for every model apart come estimated from each model's share (rule
protocol_model); the paired ones are estimated here from their ranks (rule
protocol_ranks), with the corrections rule protocol_corrections built. A protocol the
data set cannot support is named, with why, in protocols.md, protocols_left_out.csv
and the log, and nowhere given numbers."""

from itertools import combinations

import pandas as pd

from sampled_metrics.data import split_users
from sampled_metrics.estimation.nodes import interpolation_nodes
from sampled_metrics.estimation.registry import paper_methods
from sampled_metrics.frameworks.registry import FRAMEWORK_PROTOCOLS, HANSEN_HURWITZ
from sampled_metrics.io.atomic import write_csv, write_text
from sampled_metrics.io.forked import forked_map
from sampled_metrics.pipeline.intermediates import read_protocol_ranks
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.reproduction.tables import estimator_errors, pair_agreement
from sampled_metrics.studies.protocols.estimates import protocol_estimates, protocol_table
from sampled_metrics.studies.protocols.files import left_out_reason, read_corrections
from sampled_metrics.studies.protocols.parts import exact_metrics, part_values, read_part
from sampled_metrics.studies.protocols.precision import error_precision, mean_rmse, pair_share
from sampled_metrics.studies.protocols.report import LEFT_OUT_COLUMNS, protocols_markdown

log = start_job(snakemake)
p = snakemake.params
dataset = snakemake.wildcards.dataset
users = split_users(snakemake.input.split)
n = users.n_candidates
protocols = [FRAMEWORK_PROTOCOLS[name] for name in p.protocols]
unpaired = [protocol for protocol in protocols if not protocol.paired]
supported = [
    protocol for protocol in protocols if left_out_reason(protocol, users.smallest_pool) is None
]
parts = [
    read_part(path, [protocol for protocol in unpaired if protocol in supported])
    for path in snakemake.input.parts
]  # each recommender's share, in order
paired_laws = [(protocol.m, protocol.law) for protocol in supported if protocol.paired]
corrections = read_corrections(
    snakemake.input.corrections, paired_laws, p.metrics, paper_methods(p.estimators),
    interpolation_nodes(n, p.nodes),
)  # fmt: skip
# each paired protocol's ranks (rule protocol_ranks), or the record that it was left out
paired_files = dict(zip([protocol.name for protocol in protocols if protocol.paired],
                        snakemake.input.protocols))  # fmt: skip


def metric_frame(fractions) -> pd.DataFrame:
    """recommender, metric, value (percent) from {recommender: (metrics,) fractions}."""
    return pd.DataFrame(
        [
            {"recommender": rec, "metric": metric, "value": 100 * values[j]}
            for rec, values in fractions.items()
            for j, metric in enumerate(p.metrics)
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


def protocol_study(name):
    """(error frames, pair agreement, summary frames, left-out row, log line) of one
    protocol."""
    protocol = FRAMEWORK_PROTOCOLS[name]
    if protocol.paired:
        simulated = read_protocol_ranks(
            paired_files[name], protocol, n.size, p.repetitions, len(p.recommenders),
            users.smallest_pool,
        )  # fmt: skip
    else:
        simulated = left_out_reason(protocol, users.smallest_pool)
    if isinstance(simulated, str):  # left out: the reason
        row = [name, protocol.m, protocol.replacement, users.smallest_pool, simulated]
        return [], None, [], row, f"{name} left out: it {simulated}"
    if protocol.paired:
        values = protocol_estimates(
            simulated, protocol, n, p.recommenders, p.metrics, p.estimators, nodes=p.nodes,
            corrections=corrections[protocol.m, protocol.law],
        )  # fmt: skip
        weighted = {
            rec: exact_metrics(ranks, n, p.metrics)
            for rec, ranks in zip(p.recommenders, simulated.weighted_rank)
        }
    else:
        values = part_values(parts, protocol, p.recommenders, p.metrics, p.estimators)
        weighted = {rec: part.get(f"{name}.weighted") for rec, part in zip(p.recommenders, parts)}
    values["value"] *= 100
    found = [errors_with_precision(exact, values, protocol=name, target="rank")]
    summary = [
        mean_rmse(exact, values)
        .merge(pair_share(exact, values, pairs), on=["metric", "method"], sort=False)
        .assign(protocol=name, target="rank")
    ]
    if protocol.alpha:  # what the corrections estimate there (Hansen-Hurwitz: the rank)
        weighted = metric_frame(weighted)
        corrected = values[values["method"] != HANSEN_HURWITZ]
        found.append(
            errors_with_precision(weighted, corrected, protocol=name, target="weighted_rank")
        )
        summary.append(mean_rmse(weighted, corrected).assign(protocol=name, target="weighted_rank"))
    agreement = pair_agreement(exact, values, pairs).assign(protocol=name)
    return found, agreement, summary, None, f"{name}: {len(values)} estimates"


exact = metric_frame({rec: part["exact"] for rec, part in zip(p.recommenders, parts)})
pairs = list(combinations(p.recommenders, 2))
# The protocols are independent: one forked process each (they share what is read
# above; BLAS on one thread), snakemake.threads at a time, the most draws first (their
# estimators take longest).
jobs = sorted(p.protocols, key=lambda name: -FRAMEWORK_PROTOCOLS[name].m)
done = forked_map(lambda _, name: protocol_study(name), None, jobs, snakemake.threads)
by_name = dict(zip(jobs, done))
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
