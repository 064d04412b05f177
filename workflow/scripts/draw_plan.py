"""Rule draw_plan: draw every repetition's sampled items once for all users and
record where each block of users finds its draws (draw_plan.DrawPlan)."""

from sampled_metrics.data import load_split
from sampled_metrics.estimation.laws import sampling_law
from sampled_metrics.passes.block_pass import SCORE_CHUNK
from sampled_metrics.passes.draw_plan import draw_plan, save_draw_plan
from sampled_metrics.passes.sampling import excluded_items, pool_sizes
from sampled_metrics.pipeline.runs import start_job

log = start_job(snakemake)
p = snakemake.params
split = load_split(snakemake.input[0])
# sampling.m fits every pool: data_checks.check_data_sizes ran at start-up or after the split.
pool = pool_sizes(excluded_items(split.train, split.test_items))
replacement = sampling_law(p.law).replacement
plan = draw_plan(
    pool, p.m, p.repetitions, p.seed, chunk=SCORE_CHUNK, replacement=replacement, progress=True
)
log.info(
    "%d repetitions x %d users, up to %d redraw rounds",
    *plan.starts.shape[:1],
    plan.n_users,
    plan.starts.shape[1] - 1,
)
save_draw_plan(plan, snakemake.output[0])
