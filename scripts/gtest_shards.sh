#!/usr/bin/env bash
# Runs a GoogleTest binary as several shards (GTEST_TOTAL_SHARDS), as many side by side as the
# machine has cores, so a 2-core CI machine keeps both cores busy: most unit tests use one
# thread, and one process left a core idle. There are four shards per core, taken in turn as
# slots free up: with one shard per core, the shard that drew the slow tests (TPC-C runs under
# ASan) ran 70 s after the other had ended. Every test still runs once. Each shard's output is
# printed whole when it ends (one test's lines never interleave with another's). A shard still
# running after LIMIT seconds is stopped and named, as a hang, with its last `[ RUN ]` line.
#   scripts/gtest_shards.sh LIMIT BINARY [GTEST ARGS...]
# GTEST_SLOTS (default: the cores) and GTEST_SHARDS (default: four per slot) override.
set -uo pipefail
limit=$1
shift
slots=${GTEST_SLOTS:-$(nproc)}
shards=${GTEST_SHARDS:-$((4 * slots))}
out=$(mktemp -d /tmp/nvt-shards.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$out"' EXIT

status=0
printed=()
report() {  # print the shards that have ended and not been printed yet
  for ((j = 0; j < shards; j++)); do
    [[ -e "$out/$j.rc" && -z "${printed[j]:-}" ]] || continue
    printed[j]=1
    echo "== shard $j of $shards (GTEST_SHARD_INDEX=$j)"
    cat "$out/$j.log"
    local rc
    rc=$(cat "$out/$j.rc")
    [[ $rc -eq 0 ]] && continue
    status=$rc
    if [[ $rc -eq 124 ]]; then
      echo "unit tests: shard $j still running after $limit s, stopped (a hang: see its last [ RUN ] line)" >&2
    else
      echo "unit tests: shard $j of $shards failed (exit $rc)" >&2
    fi
  done
}
running=0
for ((i = 0; i < shards; i++)); do
  if ((running >= slots)); then
    wait -n
    running=$((running - 1))
    report
  fi
  (GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout "$limit" "$@" >"$out/$i.log" 2>&1
   echo $? >"$out/$i.rc.tmp" && mv "$out/$i.rc.tmp" "$out/$i.rc") &
  running=$((running + 1))
done
wait
report
exit "$status"
