"""Rule fit: fit one recommender on the training split and store the fitted model."""

from sampled_metrics.data import load_split
from sampled_metrics.pipeline.runs import pin_threads, start_job
from sampled_metrics.recommenders import fit_recommender, save_model

log = start_job(snakemake)
pin_threads(snakemake.threads)
log.info("threads: %d", snakemake.threads)
split = load_split(snakemake.input[0])
spec = snakemake.params.spec
log.info("fitting %s: %s", snakemake.wildcards.recommender, spec)
model = fit_recommender(spec, split.train, seed=snakemake.params.seed)
save_model(model, snakemake.output[0])
