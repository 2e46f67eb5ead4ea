#!/usr/bin/env bash
# End-to-end tests: build every valid pair, run each tiny, refuse hostile flags, and the
# kill -9 restart test. Run from anywhere: bash tests/e2e/run_all.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TESTS=(test_build.sh test_smoke.sh test_workloads.sh test_tpcc.sh test_foedus.sh test_nvcaracal.sh test_flags.sh test_restart.sh test_image_lock.sh test_signals.sh)  # build first: the rest use it

start=$SECONDS
failed=()
passed=0
for t in "${TESTS[@]}"; do
  t0=$SECONDS
  echo "== $t" >&2
  if bash "$HERE/$t"; then
    echo "ok   $t ($((SECONDS - t0)) s)" >&2
    passed=$((passed + 1))
  else
    echo "FAIL $t ($((SECONDS - t0)) s)" >&2
    failed+=("$t")
    [[ "$t" == test_build.sh ]] && break  # nothing else can run
  fi
done
echo "e2e: $passed of ${#TESTS[@]} passed, ${#failed[@]} failed, $(( ${#TESTS[@]} - passed - ${#failed[@]} )) not run; $((SECONDS - start)) s" >&2
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "e2e failed: ${failed[*]}" >&2
  exit 1
fi
