#!/usr/bin/env bash
# The main job: install, run the two headline sweeps at small scale, write the report.
# About 12 minutes on a fresh clone on 2 cores; re-running skips every run already done.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
source scripts/python.sh
status=0
for spec in ycsb_read_ratio ycsb_scalability; do
  "$PYTHON" -m experiments run "$spec" --scale small --repeat 1 || status=1
done
"$PYTHON" -m experiments report

echo
# The scorecard: the papers' claims about these figures, checked on the tables just made
# (exit 3 only says some claim was not reproduced at this scale: the demo still succeeded).
rc=0
"$PYTHON" -m experiments check ycsb_read_ratio ycsb_scalability || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || status=1

echo
echo "Figures:"
ls -1 results/*/*.png results/*/*.pdf 2>/dev/null | sed 's/^/  /'
echo "Tables:  results/<spec>/<spec>.csv"
echo "Report:  $(pwd)/results/report.html"
[ "$status" -eq 0 ] || echo "Some runs failed: see results/<spec>/logs/ (they are retried on the next run)."
exit "$status"
