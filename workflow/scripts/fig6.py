"""Rule fig6: draw Figure 6 from its curves; the note names the sample sizes left out
(fig6_left_out.csv) and why."""

import pandas as pd

from sampled_metrics.data import split_users
from sampled_metrics.estimation.laws import sampling_law
from sampled_metrics.outputs.figures import sample_size_figure, save_figure
from sampled_metrics.pipeline.runs import start_job

start_job(snakemake)
p = snakemake.params
f, e, s = p.fig6, p.estimation, p.sampling
curves = pd.read_csv(snakemake.input.curves)
exact = pd.read_csv(snakemake.input.exact).query("metric == @f['metric']")
exact = dict(zip(exact["recommender"], exact["value"] / 100))
smallest_n = int(split_users(snakemake.input.split).n_candidates.min())
notes = []
if f["law"] != s["law"]:
    drawn = "with" if sampling_law(s["law"]).replacement else "without"
    notes.append(
        f"Table 3 samples m = {s['m']} {drawn} replacement "
        f"({s['repetitions']} repetitions), so its values differ slightly from these curves; "
        f"the {f['law']} law is kept here because sampling without replacement is undefined "
        f"beyond m = $n_u-1$ = {smallest_n - 1:,} for the users with the fewest candidates."
    )
per_user = e["n"] == "per_user"
notes.append(
    f"Corrections built with the {e['law']} law and "
    + (
        f"each user's own n (exactly at {f['per_user_nodes']} values of n, linear in n between)."
        if per_user
        else "n = the number of items."
    )
)
left_out = pd.read_csv(snakemake.input.left_out)
if len(left_out):
    notes.append(
        f"Left out of {left_out['key'].iloc[0]}: m = {', '.join(map(str, left_out['m']))}, "
        f"{left_out['reason'].iloc[0]}."
    )
figure = sample_size_figure(
    curves,
    exact,
    f["metric"],
    pd.read_csv(snakemake.input.thresholds),
    dataset=snakemake.wildcards.dataset,
    law=f["law"],
    marked_m=s["m"],
    note="\n".join(notes),
)
save_figure(figure, snakemake.output.pdf, snakemake.output.png)
