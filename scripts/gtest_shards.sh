#!/usr/bin/env bash
# Runs a GoogleTest binary as two shards side by side (GTEST_TOTAL_SHARDS), so a 2-core CI
# machine keeps both cores busy: most unit tests use one thread, and one process left a core
# idle. Every test still runs once. Shard 0 prints as it runs; shard 1's output follows when it
# ends (one test's lines never interleave with another's). A shard still running after LIMIT
# seconds is stopped and named, as a hang, with its last `[ RUN ]` line.
#   scripts/gtest_shards.sh LIMIT BINARY [GTEST ARGS...]
set -uo pipefail
limit=$1
shift
shards=${GTEST_SHARDS:-2}
out=$(mktemp -d /tmp/nvt-shards.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$out"' EXIT

pids=()
for ((i = 1; i < shards; i++)); do
  (GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout "$limit" "$@" >"$out/$i.log" 2>&1
   echo $? >"$out/$i.rc") &
  pids+=($!)
done
rc0=0
GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=0 timeout "$limit" "$@" || rc0=$?
wait "${pids[@]}"
status=0
report() {  # report SHARD RC
  [[ $2 -eq 0 ]] && return
  status=$2
  if [[ $2 -eq 124 ]]; then
    echo "unit tests: shard $1 still running after $limit s, stopped (a hang: see its last [ RUN ] line)" >&2
  else
    echo "unit tests: shard $1 of $shards failed (exit $2)" >&2
  fi
}
report 0 "$rc0"
for ((i = 1; i < shards; i++)); do
  echo "== shard $i of $shards (GTEST_SHARD_INDEX=$i)"
  cat "$out/$i.log"
  report "$i" "$(cat "$out/$i.rc")"
done
exit "$status"
