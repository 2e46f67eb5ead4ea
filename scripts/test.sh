#!/usr/bin/env bash
# Every test: installs what a fresh machine lacks, then unit (GoogleTest), end-to-end (rundb
# pairs, restart after kill -9, hostile flags), crash torture and fault injection, Python
# (planner, executors, plots, hostile flags), then the unit tests under ASan+UBSan and TSan.
# Each stage's time is printed as it ends and again at the close (CI has 90 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
times=()
stage() {
  local t0=$SECONDS
  "$@"
  times+=("$(printf '%-28s %5d s' "$*" $((SECONDS - t0)))")
  echo "== stage '$*' took $((SECONDS - t0)) s"
}
stage bash scripts/setup.sh
stage make -j"$(nproc)" unit
stage make e2e
stage make crash
stage make pytest
stage make -j"$(nproc)" asan
stage make -j"$(nproc)" tsan
echo "== stage times (total $SECONDS s):"
printf '   %s\n' "${times[@]}"
