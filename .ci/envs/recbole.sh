#!/usr/bin/env bash
# A separate virtual environment with RecBole 1.2.1, at .envs/recbole (repo-relative), for
# the RecBole adapter (workflow/sampled_metrics/frameworks/adapters/recbole.py, docs/recbole.md)
# and its test (tests/test_recbole_adapter.py). RecBole 1.2.1 needs numpy < 2 and pandas < 3
# (this project pins numpy 2 and pandas 3) and pkg_resources (setuptools < 81), so it cannot
# live in .venv. Offline except PyPI; idempotent: a second run with the same script does nothing.
#
#   .ci/envs/recbole.sh            # build (or keep) .envs/recbole
#   .ci/envs/recbole.sh --force    # rebuild from scratch
set -euo pipefail
cd "$(dirname "$0")/../.."
ENV=.envs/recbole
PYTHON=${PYTHON:-python3}
STAMP="$ENV/.built-by"
want="$(sha256sum .ci/envs/recbole.sh | cut -d' ' -f1)"

if [[ ${1:-} != --force && -x $ENV/bin/python && -f $STAMP && "$(cat "$STAMP")" == "$want" ]]; then
    echo "$ENV is up to date (rebuild: $0 --force)"
    exit 0
fi

rm -rf "$ENV"
"$PYTHON" -m venv "$ENV"
pip() { "$ENV/bin/python" -m pip "$@"; }
# RecBole's pins, for every step (torch 2.13 asks for setuptools, which would otherwise
# come as >= 81, without pkg_resources).
cat >"$ENV/constraints.txt" <<'PINS'
setuptools<81
numpy<2
pandas<3
PINS

# torch first, alone: 2.13.0 is a CPU wheel on this machine's disk (/opt/wheels). A CUDA
# build would pull gigabytes of nvidia-* wheels: look at pip's plan first (a dry run reads
# metadata only) and stop unless it is a CPU build without nvidia-* packages.
pip install --quiet --dry-run --ignore-installed --report "$ENV/torch-plan.json" \
    -c "$ENV/constraints.txt" torch==2.13.0
"$ENV/bin/python" - "$ENV/torch-plan.json" <<'PY'
import json
import sys

plan = [item["metadata"] for item in json.load(open(sys.argv[1]))["install"]]
torch = [item["version"] for item in plan if item["name"] == "torch"]
cuda = [item["name"] for item in plan if item["name"].startswith(("nvidia-", "cuda-"))]
if cuda or not torch or not torch[0].endswith("+cpu"):
    sys.exit(f"pip would install torch {torch} with {cuda}: not a CPU build; stopping")
PY
pip install --quiet -c "$ENV/constraints.txt" torch==2.13.0

# Then RecBole, torch held at the installed build so that nothing upgrades it.
TORCH_VERSION="$("$ENV/bin/python" -c 'import torch; print(torch.__version__)')"
echo "torch==$TORCH_VERSION" >>"$ENV/constraints.txt"
pip install --quiet -c "$ENV/constraints.txt" recbole==1.2.1

# This project without its dependencies (numpy 2, pandas 3 stay out): the adapter imports
# only sampled_metrics.frameworks.adapters.recbole, which needs numpy and pandas.
pip install --quiet --no-deps -c "$ENV/constraints.txt" -e .

"$ENV/bin/python" -c 'import recbole, torch, numpy, pandas
import sampled_metrics.frameworks.adapters.recbole
print("recbole", recbole.__version__, "torch", torch.__version__,
      "numpy", numpy.__version__, "pandas", pandas.__version__)'
pip freeze --exclude-editable >"$ENV/freeze.txt"
echo "$want" >"$STAMP"
