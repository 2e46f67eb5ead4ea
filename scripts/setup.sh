#!/usr/bin/env bash
# Installs what nvtestbed needs on a fresh Debian 12 machine. Idempotent: it touches apt or pip
# only for what is missing, so running it again is quick and offline-safe.
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(build-essential g++ make libpmem-dev libnuma-dev libjemalloc-dev libgtest-dev
              googletest nlohmann-json3-dev libcli11-dev python3-pip)
# Import names of the packages in requirements.txt, in the same order.
PY_MODULES=(pandas matplotlib yaml tqdm distributed dask_jobqueue asyncssh pytest)

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

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c "import $(IFS=,; echo "${PY_MODULES[*]}")" 2>/dev/null; then
  echo "setup: installing Python packages from requirements.txt"
  pip_args=(-m pip install -r requirements.txt)
  # Debian's own python3 refuses pip installs outside a venv (PEP 668); pyenv's does not.
  if "$PYTHON" -c 'import sys, sysconfig, os; sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'; then
    pip_args+=(--break-system-packages)
  fi
  "$PYTHON" "${pip_args[@]}"
else
  echo "setup: Python packages present"
fi
