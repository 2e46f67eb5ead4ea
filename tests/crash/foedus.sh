#!/usr/bin/env bash
# Crash tests of the FOEDUS engine (`make crash` runs them from tests/crash/run_all.sh; `make
# foedus` too): a torture run at its named crash points (log batch before and after its fence, the
# durable-epoch marker before its fence, the gleaner after its first page and before and after
# the snapshot metadata, the restart's gleaning), then the injected faults must be caught within
# 40 rounds: `early-record` (the gleaner's reducers skip their fence, so the snapshot metadata can
# name pages that never reached NVM) and `drop-fence` (a log batch left unfenced: the
# durable-epoch marker may land without it; the restart finds records below the marker's LSN
# that fail their checksums, a torn log; the torture crashes such rounds mostly between the
# marker's flush and its fence). Caught at rounds 6, 9 and 11 with seeds 1-3 (drop-fence).
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/python.sh
out=$(mktemp /tmp/nvt-torture-XXXXXX.json)
trap 'rm -f "$out"' EXIT
failed=0
summary() { "$PYTHON" -c "import json,sys; s=json.load(open('$out')); print(sys.argv[1].format(**s))" "$1"; }

echo "== torture foedus+foedus"
if "$PYTHON" scripts/torture.py --engine foedus --cc foedus --rounds "${ROUNDS:-12}" --duration 0.8 >"$out"; then
  summary "  {rounds} rounds ({crashed_rounds} crashed after the load, {crashed_during_load} during it), {distinct_crash_points} crash points, {acked_txns_checked} acked txns checked, {violations} violations"
else
  cat "$out"; failed=1
fi
# Each injected fault must be caught within 40 rounds.
for fault in early-record drop-fence; do
  echo "== foedus: fault $fault must be caught within 40 rounds"
  if "$PYTHON" scripts/torture.py --engine foedus --cc foedus --rounds 40 --duration 0.8 \
       --fault "$fault" --stop-on-violation --min-crashed-share 0 --min-acked 0 >"$out" 2>/dev/null; then
    echo "  NOT caught in 40 rounds"; cat "$out"; failed=1
  elif "$PYTHON" -c "import json; s=json.load(open('$out')); exit(s['errors'] != 0 or not s['violations'])"; then
    summary "  caught at round {first_violation_round}"
  else
    echo "  torture itself failed"; cat "$out"; failed=1
  fi
done
[ "$failed" -eq 0 ] && echo "foedus crash tests: ok"
exit "$failed"
