#!/usr/bin/env bash
# Installs the Debian packages PerFlow builds against, only those that are missing.
# Safe to run repeatedly; uses sudo when not root. With --test, also what only the tests
# use: a one-machine Slurm (slurm-wlm, munge) for the job-array sweep test, Chromium
# (headless) for the search report page, pytest for the Python module, and clang-format for
# `make format-check`. Every Python module the project imports must come from a package
# listed here: tests/deps/check_python_imports.py fails otherwise.
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  libboost-graph-dev libfmt-dev nlohmann-json3-dev libcli11-dev
  libcairo2-dev fonts-dejavu-core
  zlib1g-dev libsqlite3-dev libsimdjson-dev libre2-dev libtomlplusplus-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-dev pybind11-dev python3-numpy python3-jsonschema
)
if [ "${1:-}" = "--test" ]; then
  packages+=(slurm-wlm munge chromium python3-pytest python3-pandas clang-format)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "perflow: installing missing packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
