"""``python -m sampled_metrics.cli``: the ``sampled-metrics`` command."""

import sys

from .correct import main

sys.exit(main())
