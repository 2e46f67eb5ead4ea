#!/usr/bin/env bash
# Every test: installs what a fresh machine lacks, then the unit tests (GoogleTest) under
# ASan+UBSan, end-to-end (rundb pairs, restart after kill -9, hostile flags), crash torture and
# fault injection, Python (planner, executors, plots, hostile flags), and the multi-threaded unit
# tests under TSan. The plain -O2 unit build (`make unit`, the developers' quick check) is not
# run again here: the same tests run under ASan+UBSan, and the -O2 code runs in e2e and crash;
# it saved 8 of CI's minutes. Each stage's time is printed as it ends and again at the close
# (CI has 90 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
times=()
# Each stage after setup passes its output through scripts/slowest.py, which prints the stage's
# ten slowest tests at its end (pipefail keeps the stage's own exit status).
stage() {
  local t0=$SECONDS
  if [ -x .venv/bin/python ]; then "$@" 2>&1 | .venv/bin/python scripts/slowest.py "$*"; else "$@"; fi
  times+=("$(printf '%-28s %5d s' "$*" $((SECONDS - t0)))")
  echo "== stage '$*' took $((SECONDS - t0)) s"
}
stage bash scripts/setup.sh
stage make -j"$(nproc)" asan
stage make e2e
stage make crash
stage make pytest
stage make -j"$(nproc)" tsan
echo "== stage times (total $SECONDS s):"
printf '   %s\n' "${times[@]}"
