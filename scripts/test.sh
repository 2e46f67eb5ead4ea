#!/usr/bin/env bash
# Every test: installs what a fresh machine lacks, then unit (GoogleTest), end-to-end (rundb
# pairs, restart after kill -9, hostile flags) and Python (planner, executors, plots) tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
make -j"$(nproc)" unit
make e2e
make pytest
