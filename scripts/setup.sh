#!/usr/bin/env bash
# Installs what nvtestbed needs on a fresh Debian 12 machine. Idempotent: it touches apt or pip
# only for what is missing, so running it again is quick and offline-safe. Python packages go
# into the repository's virtual environment .venv (ignored by git), never into the system
# interpreter; every script runs Python as .venv/bin/python (scripts/python.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential g++ make libpmem-dev libnuma-dev libjemalloc-dev libgtest-dev
              googletest nlohmann-json3-dev libcli11-dev python3-venv
              chromium)  # headless Chromium renders results/report.html in the tests
# Import names of the packages in requirements.txt, in the same order.
PY_MODULES=(pandas matplotlib yaml tqdm distributed dask_jobqueue asyncssh pytest xdist)

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "setup: system packages present"
fi

PYTHON=${PYTHON:-python3}  # the interpreter the virtual environment is made from
VENV=.venv
if ! "$VENV/bin/python" -c 'import sys' 2>/dev/null; then
  echo "setup: creating the virtual environment $VENV"
  rm -rf "$VENV"  # a broken one (its interpreter moved or removed) is made again
  "$PYTHON" -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import $(IFS=,; echo "${PY_MODULES[*]}")" 2>/dev/null; then
  echo "setup: installing Python packages from requirements.txt into $VENV"
  "$VENV/bin/python" -m pip install -q -r requirements.txt
else
  echo "setup: Python packages present in $VENV"
fi
