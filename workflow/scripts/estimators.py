"""Rule estimators: every estimator of sampling.csv (the paper's corrections and the
learned ones of sampled_metrics.estimation.estimators) against the exact metric over the
repetitions: bias, std, RMSE, and how often each orders each pair of recommenders
right: Tables 3 and 4 extended to the later estimators."""

from itertools import combinations

from sampled_metrics.io.atomic import write_csv, write_text
from sampled_metrics.outputs.tables import markdown_table
from sampled_metrics.pipeline.intermediates import (
    EXACT_COLUMNS,
    SAMPLING_COLUMNS,
    exact_keys,
    read_table,
)
from sampled_metrics.pipeline.runs import start_job
from sampled_metrics.reproduction.tables import estimator_errors, pair_agreement

log = start_job(snakemake)
dataset = snakemake.wildcards.dataset
cells = snakemake.params.cells
exact = read_table(snakemake.input.exact, EXACT_COLUMNS, exact_keys(cells))
sampling = read_table(snakemake.input.sampling, SAMPLING_COLUMNS, {"dataset": [dataset], **cells})
errors = estimator_errors(exact, sampling)
write_csv(errors, snakemake.output.csv)
pairs = pair_agreement(exact, sampling, list(combinations(cells["recommender"], 2)))
write_csv(pairs, snakemake.output.pairs)

# One row per metric and estimator: each recommender's bias and RMSE, then the pairs.
wide = errors.pivot(index=["metric", "method"], columns="recommender", values=["bias", "rmse"])
wide.columns = [f"{recommender} {stat}" for stat, recommender in wide.columns]
wide = wide[[f"{r} {stat}" for r in cells["recommender"] for stat in ("bias", "rmse")]]
order = {key: i for i, key in enumerate(dict.fromkeys(zip(errors["metric"], errors["method"])))}
wide = wide.loc[sorted(wide.index, key=order.__getitem__)].reset_index()
right = pairs.pivot(index=["metric", "method"], columns="pair", values="correct")
right = right.loc[sorted(right.index, key=order.__getitem__)].reset_index()
repetitions = len(cells["rep"])
write_text(
    "\n".join(
        [
            f"# Every estimator on {dataset}: error against the exact metric",
            "",
            f"Percent points, over {repetitions} repetitions of the sampling (sampling.m and",
            "the law of config.yaml). bias = mean - exact; rmse = sqrt(mean((value - exact)^2)).",
            "sampled: no correction; rank_estimate, cls, bv_<gamma>: the paper's corrections",
            "(uniform prior); em, maxent: the rank distribution learned from each repetition",
            "(Jin et al. 2021); bv_em_<gamma>, bv_maxent_<gamma>: BV with it as prior; mn_em,",
            "mn_maxent: the MN estimator (Li et al. 2023). docs/estimators.md defines them.",
            "",
            markdown_table(wide, digits=3),
            "",
            f"## Pairs ordered as the exact metric orders them (of {repetitions})",
            "",
            markdown_table(right, digits=0),
        ]
    )
    + "\n",
    snakemake.output.md,
)
log.info("\n%s", errors.to_string(index=False))
