#!/usr/bin/env bash
# Recovery per step at 1 and 2 (THREADS) recovery threads for every engine on the same
# database: YCSB, ROWS rows of 1 KB (WORKLOAD=tpcc: TPC-C of WAREHOUSES warehouses), P = 4,
# optane-100, TXNS transactions per thread on 2 worker threads, then a fresh `rundb --recover` of a copy of the image (recovery may write to
# it) per thread count, REPS times interleaved. Prints each step's median seconds and the
# speedup over one thread. Not a test: it prints numbers, it does not judge them. Issue 28 sets
# the goal every step >= 1.8x at 2 threads on a 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python.sh
ROWS=${ROWS:-1000000}
WORKLOAD=${WORKLOAD:-ycsb}
WAREHOUSES=${WAREHOUSES:-4}
TXNS=${TXNS:-20000}
REPS=${REPS:-3}
THREADS=${THREADS:-"1 2"}
PAIRS=${PAIRS:-"zen-silo mmdb-silo wbl-cicada nvmvcc-mcsi foedus-foedus nvcaracal-caracal"}
DIR=$(mktemp -d /dev/shm/nvtestbed-bench-recovery.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
for p in $PAIRS; do make -s -j"$(nproc)" ENGINE="${p%%-*}" CC_ALG="${p#*-}"; done
for p in $PAIRS; do
  bin=build/$p/rundb
  if [ "$WORKLOAD" = tpcc ]; then size=(--workload tpcc --warehouses "$WAREHOUSES"); else size=(--workload ycsb --rows "$ROWS"); fi
  "$bin" "${size[@]}" --threads 2 --txns "$TXNS" --warmup 0 --p-ratio 4 \
    --profile optane-100 --requests 16 --read-ratio 0.5 --theta 0.6 --seed 1 \
    --nvm-path "$DIR/image" >/dev/null 2>"$DIR/load.err" || { cat "$DIR/load.err" >&2; exit 1; }
  for rep in $(seq "$REPS"); do
    for t in $THREADS; do
      cp "$DIR/image" "$DIR/copy"
      "$bin" --recover --nvm-path "$DIR/copy" --recovery-threads "$t" >"$DIR/$p.$t.$rep.json" 2>/dev/null
    done
  done
  rm -f "$DIR/image" "$DIR/copy"
done
"$PYTHON" - "$DIR" "$PAIRS" "$THREADS" <<'EOF'
import json, statistics, sys
from pathlib import Path
d, pairs, threads = Path(sys.argv[1]), sys.argv[2].split(), [int(t) for t in sys.argv[3].split()]
for p in pairs:
    runs = {t: [json.loads(f.read_text())["recovery"] for f in sorted(d.glob(f"{p}.{t}.*.json"))] for t in threads}
    steps = list(runs[threads[0]][0]["steps_s"]) + ["total_s"]
    rows = runs[threads[0]][0]["rows"]
    print(f"{p}: {rows} rows, median of {len(runs[threads[0]])} (seconds; speedup over {threads[0]} thread)")
    for s in steps:
        med = {t: statistics.median(r["total_s"] if s == "total_s" else r["steps_s"][s] for r in runs[t]) for t in threads}
        cells = "  ".join(f"{t}: {med[t]:8.4f}" + (f" ({med[threads[0]] / med[t]:4.2f}x)" if t != threads[0] and med[t] > 0 else "")
                          for t in threads)
        print(f"  {s:38s} {cells}")
EOF
