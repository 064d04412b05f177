"""Figures of the paper, drawn from result tables (no metric is computed here
other than through the library's own functions).

Every figure is drawn and saved inside :data:`STYLE` (a ``matplotlib``
``rc_context``): importing this package or drawing a figure changes no global
setting. Every figure says where its numbers come from in a subtitle (the
figure's ``suptitle``: data set or toy catalogue, n, m, the sampling law), and
:func:`save_figure` writes it at :data:`DPI` dots per inch.

One module per figure family: :mod:`.toy` (Figures 1-4), :mod:`.rank_distribution`
(Figure 5), :mod:`.sample_size` (Figure 6), :mod:`.protocols` (the protocol study),
:mod:`.decisions` (the design study); :mod:`.style` holds what they share and
:mod:`.placement` places their labels.
"""

from ...io.optional import optional_import

# Before the figure modules, each of which imports matplotlib: one error naming the extra.
optional_import("matplotlib", "the figures (sampled_metrics.outputs.figures)")

from .decisions import decisions_figure  # noqa: E402
from .protocols import protocols_figure  # noqa: E402
from .rank_distribution import (  # noqa: E402
    rank_buckets,
    rank_distribution_facts,
    rank_distribution_figure,
)
from .sample_size import sample_size_figure  # noqa: E402
from .style import DPI, STYLE, law_description, method_title, save_figure, styled  # noqa: E402
from .toy import (  # noqa: E402
    corrected_ap_figure,
    expected_vs_sample_size_figure,
    expected_vs_true_rank_figure,
    metric_curves_figure,
)

__all__ = [
    "DPI",
    "STYLE",
    "corrected_ap_figure",
    "decisions_figure",
    "expected_vs_sample_size_figure",
    "expected_vs_true_rank_figure",
    "law_description",
    "method_title",
    "metric_curves_figure",
    "protocols_figure",
    "rank_buckets",
    "rank_distribution_facts",
    "rank_distribution_figure",
    "sample_size_figure",
    "save_figure",
    "styled",
]
