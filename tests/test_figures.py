"""The figures as a reader sees them, built from small synthetic frames through the
figure functions (no pipeline run): labels, legends, subtitles, marks, the
saved resolution, and no change to global matplotlib settings."""

from __future__ import annotations

import itertools

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from conftest import CONFIG_FILE
from PIL import Image

from sampled_metrics.outputs import figures
from sampled_metrics.outputs.figures.rank_distribution import EMPTY_BUCKET
from sampled_metrics.pipeline.validation import load_config
from sampled_metrics.reproduction import toy_example
from sampled_metrics.reproduction.curves import order_thresholds, sample_size_curves
from sampled_metrics.reproduction.toy_ranks import TOY_RANKS

RNG = np.random.default_rng(0)
N_ITEMS = 400


def synthetic_ranks() -> dict[str, pd.DataFrame]:
    """Ranks of 300 users among 150..400 candidates, heavy-tailed."""
    n = RNG.integers(150, N_ITEMS + 1, size=300)
    frames = {}
    for i, name in enumerate("XYZ"):
        rank = np.minimum(np.ceil(RNG.pareto(0.6 + 0.4 * i, size=n.size) * 60), n).astype(int)
        frames[name] = pd.DataFrame({"rank": rank, "n_candidates": n})
    return frames


RANKS = synthetic_ranks()
# Pessimistic ties: Z puts every user with more than 300 candidates at their last rank.
PESSIMISTIC = {name: frame.copy() for name, frame in RANKS.items()}
_LONG = PESSIMISTIC["Z"]["n_candidates"] > 300
PESSIMISTIC["Z"].loc[_LONG, "rank"] = PESSIMISTIC["Z"].loc[_LONG, "n_candidates"]


def fig6_inputs():
    ranks = {
        name: (frame["rank"].to_numpy(), frame["n_candidates"].to_numpy())
        for name, frame in RANKS.items()
    }
    curves = sample_size_curves(
        ranks, "recall@10", ["sampled", "bv_0.1"], [1, 3, 10, 30, 100, 149], None, "binomial"
    )
    exact = {name: float(np.mean(r <= 10)) for name, (r, _) in ranks.items()}
    return curves, exact, order_thresholds(curves, exact, "X", "Y")


def figure_6():
    curves, exact, orders = fig6_inputs()
    return figures.sample_size_figure(
        curves,
        exact,
        "recall@10",
        orders,
        dataset="synthetic",
        law="binomial",
        marked_m=100,
        note="Table 3 samples without replacement.",
    )


def figure_5():
    return figures.rank_distribution_figure(RANKS, pessimistic=PESSIMISTIC, dataset="synthetic")


def figure_1():
    return figures.metric_curves_figure(toy_example.metric_curves(500))


def figure_2():
    data = toy_example.expected_vs_sample_size(
        TOY_RANKS, 10_000, [1, 3, 10, 30, 99, 300, 1000, 9999], "binomial"
    )
    return figures.expected_vs_sample_size_figure(data, 10_000, "binomial", marked_m=99)


def figure_3():
    data = toy_example.expected_vs_true_rank(1000, [10, 100], 200, "binomial")
    return figures.expected_vs_true_rank_figure(data, 1000, "binomial")


def figure_4():
    methods = ["sampled", "rank_estimate", "ls", "cls", "bv_0.1"]
    on_sample, expected = toy_example.corrected_ap_curves(1000, 20, methods, "binomial", 1000)
    return figures.corrected_ap_figure(
        on_sample, expected, 1000, 20, "binomial", "monotone_in_range"
    )


BUILDERS = {
    "fig1": figure_1,
    "fig2": figure_2,
    "fig3": figure_3,
    "fig4": figure_4,
    "fig5": figure_5,
    "fig6": figure_6,
}


@pytest.fixture
def build():
    """``build(name)``: the figure, drawn (tick labels and layout final), closed afterwards."""
    made = []

    def make(name):
        fig = BUILDERS[name]()
        fig.canvas.draw()
        made.append(fig)
        return fig

    yield make
    for fig in made:
        plt.close(fig)


def legend_texts(fig) -> list[str]:
    return [t.get_text() for legend in fig.legends for t in legend.get_texts()]


def texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def visible_ticklabels(ax) -> list[str]:
    low, high = sorted(ax.get_ylim())
    return [
        t.get_text()
        for t, v in zip(ax.get_yticklabels(), ax.get_yticks())
        if low <= v <= high and t.get_text()
    ]


def assert_labels_inside_without_overlap(fig):
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        frame = ax.get_window_extent(renderer)
        boxes = [t.get_window_extent(renderer) for t in ax.texts]
        for box in boxes:
            assert frame.x0 <= box.x0 and box.x1 <= frame.x1, ax.get_title()
            assert frame.y0 <= box.y0 and box.y1 <= frame.y1, ax.get_title()
        for a, b in itertools.combinations(boxes, 2):
            assert not a.overlaps(b), ax.get_title()


# --------------------------------------------------------------------------
# every figure
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_building_a_figure_changes_no_global_matplotlib_setting(name):
    before = dict(mpl.rcParams)
    fig = BUILDERS[name]()
    fig.canvas.draw()
    plt.close(fig)
    changed = [key for key in before if mpl.rcParams[key] != before[key]]
    assert changed == []


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_every_figure_has_a_subtitle_labelled_axes_and_a_legend(build, name):
    fig = build(name)
    assert fig.get_suptitle()
    assert legend_texts(fig) and len(set(legend_texts(fig))) == len(legend_texts(fig))
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_title()
    assert fig.axes[0].get_ylabel()
    assert_labels_inside_without_overlap(fig)


def test_save_figure_writes_pngs_at_300_dpi(tmp_path, build):
    before = dict(mpl.rcParams)
    fig = build("fig6")
    figures.save_figure(fig, tmp_path / "fig.png", tmp_path / "fig.pdf")
    assert figures.DPI == 300
    with Image.open(tmp_path / "fig.png") as image:
        assert [round(d) for d in image.info["dpi"]] == [300, 300]
        assert image.width > 10 * 250  # a 10-inch figure at 300 dpi
    assert (tmp_path / "fig.pdf").read_bytes().startswith(b"%PDF")
    assert [k for k in before if mpl.rcParams[k] != before[k]] == []


# --------------------------------------------------------------------------
# Figure 6
# --------------------------------------------------------------------------


def test_figure_6_titles_explain_the_methods_and_the_subtitle_the_setting(build):
    fig = build("fig6")
    uncorrected, corrected = fig.axes
    assert uncorrected.get_title().startswith("Uncorrected")
    assert "BV, γ = 0.1" in corrected.get_title()
    assert "Bias² + 0.1·Variance" in corrected.get_title()
    assert uncorrected.get_xlabel() == "number of sampled items m"
    assert uncorrected.get_ylabel() == "expected Recall@10 (%)"
    subtitle = fig.get_suptitle()
    assert "synthetic" in subtitle and "binomial law" in subtitle
    assert "without replacement" in subtitle


def test_figure_6_y_ticks_carry_values(build):
    fig = build("fig6")
    for ax in fig.axes:
        labels = visible_ticklabels(ax)
        assert len(labels) >= 3, labels
        assert all(label.replace(".", "").replace("−", "").isdigit() for label in labels), labels
    log_panel = fig.axes[0]
    assert log_panel.get_yscale() == "log"
    assert {"10", "20", "50"} <= set(visible_ticklabels(log_panel))


def test_figure_6_marks_m_100_with_the_values_there(build):
    fig = build("fig6")
    curves, _, _ = fig6_inputs()
    for ax, method in zip(fig.axes, ["sampled", "bv_0.1"]):
        verticals = [
            line
            for line in ax.get_lines()
            if len(line.get_xdata()) == 2 and np.all(np.asarray(line.get_xdata()) == 100)
        ]
        assert verticals, ax.get_title()
        label = next(t for t in texts(ax) if t.startswith("m = 100"))
        row = (curves["m"] == 100) & (curves["method"] == method) & (curves["recommender"] == "X")
        assert f"X {100 * curves.loc[row, 'expected'].iloc[0]:.1f} %" in label


def test_figure_6_legend_shows_the_exact_lines_as_drawn(build):
    fig = build("fig6")
    (legend,) = fig.legends
    entries = dict(zip(legend_texts(fig), legend.legend_handles))
    for name in "XYZ":
        exact = next(h for t, h in entries.items() if t.startswith(f"{name}: exact"))
        expected = entries[f"{name}: expected"]
        assert exact.get_linestyle() == "--" and expected.get_linestyle() == "-"
        assert exact.get_color() == expected.get_color()
    drawn = [line for line in fig.axes[0].get_lines() if line.get_linestyle() == "--"]
    assert len(drawn) == 3


# --------------------------------------------------------------------------
# Figure 5
# --------------------------------------------------------------------------


def test_figure_5_has_a_pessimistic_row(build):
    fig = build("fig5")
    titles = [ax.get_title() for ax in fig.axes]
    assert len(titles) == 4
    assert titles[0].startswith("Random ties") and titles[2].startswith("Pessimistic ties")
    assert legend_texts(fig) == ["X", "Y", "Z"]
    assert "synthetic" in fig.get_suptitle()
    last = texts(fig.axes[2])
    assert any(t.startswith("Z: ") and "last" in t for t in last), last


def test_figure_5_loses_no_bucket_on_the_log_axis(build):
    fig = build("fig5")
    for ax, ranks in ((fig.axes[0], RANKS), (fig.axes[2], PESSIMISTIC)):
        assert ax.get_yscale() == "log"
        low, high = ax.get_ylim()
        edges = figures.rank_buckets(N_ITEMS, 100)
        markers = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
        for name, frame in ranks.items():
            y = np.asarray(markers[f"counts {name}"].get_ydata())
            counts = np.histogram(frame["rank"], edges)[0]
            assert len(y) == len(counts)  # one mark per bucket, empty ones too
            assert np.all((y > low) & (y < high))
            np.testing.assert_array_equal(y[counts > 0], counts[counts > 0])
            assert np.all(y[counts == 0] == EMPTY_BUCKET)
        assert "0" in visible_ticklabels(ax)
    # the three recommenders' marks are apart within each bucket
    xs = [np.asarray(line.get_xdata()) for line in fig.axes[0].get_lines() if line.get_gid()]
    assert all(np.min(np.abs(a - b)) > 10 for a, b in itertools.combinations(xs, 2))


def test_figure_5_facts_name_the_pessimistic_columns():
    facts = figures.rank_distribution_facts(RANKS, pessimistic=PESSIMISTIC)
    assert list(facts.columns) == [
        "recommender",
        "users",
        "top_10",
        "top_100",
        "bottom_half",
        "last_bucket",
        "last_rank",
        "pessimistic_top_10",
        "pessimistic_top_100",
        "pessimistic_bottom_half",
        "pessimistic_last_bucket",
        "pessimistic_last_rank",
    ]
    z = facts.set_index("recommender").loc["Z"]
    assert z["pessimistic_last_bucket"] == _LONG.sum()
    assert z["pessimistic_last_rank"] >= z["last_rank"]


# --------------------------------------------------------------------------
# Figures 1-4
# --------------------------------------------------------------------------


def test_toy_figures_name_n_and_m(build):
    assert "n = 500 items" in build("fig1").get_suptitle()
    fig2 = build("fig2")
    assert "n = 10,000 items" in fig2.get_suptitle() and "m = 1 to 9,999" in fig2.get_suptitle()
    assert any(t.startswith("m = 99") for t in texts(fig2.axes[0]))
    assert "n = 1,000 items, m = 10, 100" in build("fig3").get_suptitle()
    assert "n = 1,000 items, m = 20" in build("fig4").get_suptitle()


def test_figure_3_says_that_the_auc_curves_lie_on_the_exact_line(build):
    fig = build("fig3")
    auc = next(ax for ax in fig.axes if ax.get_title() == "AUC")
    assert any("equals the exact" in t for t in texts(auc))
    assert [t for ax in fig.axes if ax is not auc for t in texts(ax)] == []
    assert legend_texts(fig) == ["m = 10", "m = 100", "exact (m = n)"]


def test_figure_4_labels_and_the_ls_correction(build):
    fig = build("fig4")
    left, right = fig.axes
    assert r"$\tilde{r}$" in left.get_xlabel()
    assert "AP" in left.get_ylabel() and "exact AP" in right.get_ylabel()
    assert legend_texts(fig) == ["Uncorrected", "Rank Estimate", "LS", "CLS", "BV 0.1", "Exact"]
    assert "LS" in {line.get_label() for line in right.get_lines()}
    # LS oscillates by orders of magnitude on the sample: stated, not drawn over the panel
    assert "LS" not in {line.get_label() for line in left.get_lines()}
    (note,) = texts(left)
    assert note.startswith("LS not drawn: it oscillates between")
    low, high = left.get_ylim()
    assert -1 < low and high < 2


def test_the_shipped_config_draws_ls_in_figure_4_and_a_dense_figure_2_grid():
    toy = load_config(CONFIG_FILE)["toy"]
    assert "ls" in toy["fig4_estimators"]
    grid = np.asarray(toy["fig2_m_values"])
    assert len(grid) >= 50 and np.all(np.diff(grid) > 0)
    assert grid[-1] == toy["n"] - 1
    above_10 = grid[grid >= 10]
    assert np.max(above_10[1:] / above_10[:-1]) <= 1.2  # no jump wider than 20 % from m = 10
