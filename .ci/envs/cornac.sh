#!/usr/bin/env bash
# A separate venv for cornac (docs/cornac.md): .envs/cornac with cornac at a pinned
# version, the numpy, scipy, pandas of constraints.txt (cornac 3.0.1 asks numpy > 2.0
# and any scipy) and this project without its own dependencies (--no-deps): enough
# for sampled_metrics.frameworks.adapters.cornac and the `sampled-metrics` command.
# tests/test_cornac_adapter.py runs tests/cornac_case.py there.
# Idempotent: a second run checks the stamp and does nothing. Needs only PyPI.
# Never a CUDA build of anything: cornac's models used here need no torch.
set -euo pipefail
cd "$(dirname "$0")/../.."
ENV=.envs/cornac
# numpy, scipy, pandas, tqdm, matplotlib, threadpoolctl (which the package imports) as
# in constraints.txt; powerlaw (cornac's dependency, which brings matplotlib) and mpmath
# at the versions this was tested with.
PINS=(
    cornac==3.0.1
    numpy==2.4.6
    scipy==1.17.1
    pandas==3.1.1
    tqdm==4.70.1
    powerlaw==2.0.0
    matplotlib==3.11.2
    mpmath==1.4.1
    threadpoolctl==3.8.0
)
STAMP="$ENV/.stamp"
WANT="$(printf '%s\n' "${PINS[@]}")"
if [[ -x "$ENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]] \
    && "$ENV/bin/python" -c "import cornac, sampled_metrics.frameworks.rank_files" 2>/dev/null; then
    echo "$ENV is up to date"
    exit 0
fi
rm -rf "$ENV"
python3 -m venv "$ENV"
"$ENV/bin/python" -m pip install --quiet -c constraints.txt "${PINS[@]}"
"$ENV/bin/python" -m pip install --quiet -c constraints.txt --no-deps -e .
"$ENV/bin/python" -c "import cornac, sampled_metrics.frameworks.rank_files; print('cornac', cornac.__version__)"
printf '%s\n' "$WANT" > "$STAMP"
