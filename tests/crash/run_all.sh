#!/usr/bin/env bash
# Crash tests: a short torture run per engine-CC pair (no violation allowed), then each
# injected persistence bug must be caught within a few rounds.
set -euo pipefail
cd "$(dirname "$0")/../.."
pairs=("mmdb no_wait" "mmdb silo" "zen no_wait" "zen silo")
for p in "${pairs[@]}"; do
  set -- $p
  echo "== torture $1+$2"
  python3 scripts/torture.py --engine "$1" --cc "$2" --rounds "${ROUNDS:-12}" --duration 0.8 \
    > /tmp/nvt-torture-$$.json || { cat /tmp/nvt-torture-$$.json; exit 1; }
  python3 -c "import json; s=json.load(open('/tmp/nvt-torture-$$.json')); print(f\"  {s['rounds']} rounds, {s['distinct_crash_points']} crash points, {s['violations']} violations\")"
done
for fault in drop-flush drop-fence; do
  echo "== fault $fault must be caught"
  if python3 scripts/torture.py --engine mmdb --cc no_wait --rounds 10 --duration 0.8 \
       --fault "$fault" --stop-on-violation > /tmp/nvt-torture-$$.json 2>/dev/null; then
    echo "  NOT caught in 10 rounds"; cat /tmp/nvt-torture-$$.json; exit 1
  fi
  python3 -c "import json; s=json.load(open('/tmp/nvt-torture-$$.json')); assert s['errors']==0, s; print(f\"  caught at round {s['first_violation_round']}\")"
done
rm -f /tmp/nvt-torture-$$.json
echo "crash tests: 4 passed, 0 failed"
