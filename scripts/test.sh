#!/usr/bin/env bash
# Every test: installs what a fresh machine lacks, then the unit tests (GoogleTest) under
# ASan+UBSan, end-to-end (rundb pairs, restart after kill -9, hostile flags), crash torture and
# fault injection, Python (planner, executors, plots, hostile flags), and the multi-threaded unit
# tests under TSan. The plain -O2 unit build (`make unit`, the developers' quick check) is not
# run again here: the same tests run under ASan+UBSan, and the -O2 code runs in e2e and crash;
# it saved 8 of CI's minutes. Each stage's time is printed as it ends and again at the close
# (CI has 90 minutes); the TSan stage's build runs beside the others (below).
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
# The TSan binary builds in the background from here on, at the lowest CPU priority (nice 19):
# it takes only what the stages leave idle (the e2e, crash and Python tests keep about one of
# two cores busy: process starts, loads, sleeps before a kill, Python checks), so the tests
# run as before and the TSan stage mostly finds its binary built. Its output is kept and shown
# if it failed (the TSan stage's make then builds again and stops at the same error).
tsan_log=$(mktemp /tmp/nvt-tsan-build.XXXXXX)
tsan_t0=$SECONDS
# (Its own process group, so that an early exit stops its compilers too; not its own session:
# the kernel's autogroup scheduling weighs sessions equally, and nice would not hold it back.)
set -m
nice -n 19 make -j"$(nproc)" SAN=tsan build/test-tsan/unit_tests >"$tsan_log" 2>&1 &
tsan_pid=$!
set +m
trap 'kill -- -$tsan_pid 2>/dev/null || true; rm -f "$tsan_log"' EXIT  # (gone already: not an error)
stage make -j"$(nproc)" asan
stage make e2e
stage make crash
stage make pytest
tsan_rc=0
wait "$tsan_pid" || tsan_rc=$?
echo "== the TSan build in the background ended after $((SECONDS - tsan_t0)) s (exit $tsan_rc)"
[[ $tsan_rc -eq 0 ]] || tail -40 "$tsan_log"
stage make -j"$(nproc)" tsan
echo "== stage times (total $SECONDS s):"
printf '   %s\n' "${times[@]}"
