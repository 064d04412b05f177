"""``python -m sampled_metrics.cli``: the ``sampled-metrics`` command."""

import sys

from .commands import main

sys.exit(main())
