#!/usr/bin/env bash
# Every test: installs what a fresh machine lacks, then unit (GoogleTest), end-to-end (rundb
# pairs, restart after kill -9, hostile flags), crash torture and fault injection, Python
# (planner, executors, plots, hostile flags), then the unit tests under ASan+UBSan and TSan.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
make -j"$(nproc)" unit
make e2e
make crash
make pytest
make -j"$(nproc)" asan
make -j"$(nproc)" tsan
