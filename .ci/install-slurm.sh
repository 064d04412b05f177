#!/usr/bin/env bash
# CI: install SLURM (slurmctld, slurmd, client commands) and munge from Debian,
# for tests/test_slurm.py, which starts its own one-node cluster on localhost
# from a temp dir. Nothing is configured or started here: the packages' services
# are not needed (and without systemd, not started). Needs root; the versions
# it was tested with are Debian 12's slurm-wlm 22.05.8 and munge 0.5.15.
set -euo pipefail

packages=(slurm-wlm munge)   # slurm-wlm pulls in slurmctld, slurmd and slurm-client

if command -v slurmctld >/dev/null && command -v slurmd >/dev/null \
        && command -v munged >/dev/null && command -v sbatch >/dev/null; then
    echo "SLURM and munge already installed"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
else
    SUDO=
fi
$SUDO apt-get update
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${packages[@]}"
slurmctld -V
munged --version
