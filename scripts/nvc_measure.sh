#!/usr/bin/env bash
# NVCaracal's small-scale benchmarks of issue 13 (docs/engines/nvcaracal.md, "Small-scale measurements"):
# NVCaracal against Zen-Cicada and Zen-Silo on YCSB at low / medium / high contention (Figure 5)
# and SmallBank (Figure 6), the design variants on YCSB and TPC-C (Figure 7), and the recovery
# breakdown against the epoch size (Figure 11). The systems of one configuration run back to
# back, interleaved, repetition after repetition. Prints one JSON line per run on stdout:
# {label, bin, rep, tps, abort, nvm_write, nvm_read, transient, latency_us, tpmC, violations,
# recovery}. Not a test: it prints numbers, it does not judge them.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/python.sh
for p in nvcaracal-caracal zen-cicada zen-silo; do make -s -j2 ENGINE="${p%%-*}" CC_ALG="${p#*-}"; done
IMG=/dev/shm/nvtestbed-nvcmeasure-$$.img
ERR=$(mktemp)
trap 'rm -f "$IMG" "$ERR"' EXIT
# Repetitions per part (the numbers in docs/engines/nvcaracal.md: 5, 2, 3, 2).
YCSB_REPS=${YCSB_REPS:-5} SB_REPS=${SB_REPS:-2} DESIGN_REPS=${DESIGN_REPS:-3} REC_REPS=${REC_REPS:-2}

summary() {  # label, bin, rep, json
  "$PYTHON" -c '
import json, sys
d = json.loads(sys.argv[4]); r = d.get("results", {}); e = r.get("engine", {}); p = r.get("per_txn", {})
check = d.get("consistency") or d.get("conservation") or {}
print(json.dumps({"label": sys.argv[1], "bin": sys.argv[2], "rep": int(sys.argv[3]),
                  "tps": r.get("throughput_tps"), "abort": r.get("abort_rate"),
                  "nvm_write": p.get("nvm_write_bytes"), "nvm_read": p.get("nvm_read_bytes"),
                  "transient": e.get("transient_update_share"), "latency_us": r.get("latency_us", {}).get("avg"),
                  "tpmC": r.get("tpmC"), "violations": check.get("violations"), "recovery": d.get("recovery")}))' "$@"
}
run() {  # label, rep, bin, flags...
  local label=$1 rep=$2 bin=$3 out
  shift 3
  rm -f "$IMG"
  if out=$(build/"$bin"/rundb "$@" --nvm-path "$IMG" 2>"$ERR"); then
    summary "$label" "$bin" "$rep" "$out"
  else
    echo "{\"label\": \"$label\", \"bin\": \"$bin\", \"rep\": $rep, \"error\": $("$PYTHON" -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$(tail -1 "$ERR")")}"
  fi
}

Y=(--workload ycsb --requests 10 --read-ratio 0 --hot-rows 256 --column-size 100 --columns 10 --update-bytes 100
   --epoch-txns 2000 --threads 2 --dram-size 150M --rows 100000 --warmup 0.3 --duration 1 --seed 1)
S=(--workload smallbank --accounts 18000 --hotspot-share 0.9 --epoch-txns 2000 --threads 2 --dram-size 64M
   --warmup 0.3 --duration 1 --seed 1)
T=(--workload tpcc --tpcc-mix deterministic --tpcc-new-orders 100000 --epoch-txns 2000 --threads 2 --warmup 0.3
   --duration 1 --seed 1)
for rep in $(seq "$YCSB_REPS"); do  # Figure 5
  for h in 0 4 7; do
    for b in nvcaracal-caracal zen-cicada zen-silo; do run "ycsb hot$h" "$rep" $b "${Y[@]}" --hot-requests $h; done
  done
done
for rep in $(seq "$SB_REPS"); do  # Figure 6
  for hs in 1000 10; do
    for b in nvcaracal-caracal zen-cicada zen-silo; do run "smallbank hotspot$hs" "$rep" $b "${S[@]}" --hotspot-accounts $hs; done
  done
done
for rep in $(seq "$DESIGN_REPS"); do  # Figure 7 (and no-logging and all-dram, Figure 10)
  for h in 0 7; do  # the paper's datasets that fit in DRAM: P = 1, as nvc_designs.yaml
    for d in nvcaracal all-nvmm hybrid no-logging; do
      run "design $d ycsb hot$h" "$rep" nvcaracal-caracal "${Y[@]}" --p-ratio 1 --hot-requests $h --caracal-design $d
    done
    run "design all-dram ycsb hot$h" "$rep" nvcaracal-caracal "${Y[@]}" --p-ratio 1 --hot-requests $h --caracal-design all-dram --profile dram
  done
  for w in 4 1; do
    for d in nvcaracal all-nvmm hybrid no-logging; do
      run "design $d tpcc w$w" "$rep" nvcaracal-caracal "${T[@]}" --warehouses $w --caracal-design $d
    done
  done
done
# Figure 11 against the epoch size: a power failure before epoch 3's commit, then --recover.
for rep in $(seq "$REC_REPS"); do
  for e in 1000 2000 5000 10000; do
    RY=(--workload ycsb --requests 10 --read-ratio 0 --hot-rows 256 --column-size 100 --columns 10 --update-bytes 100
        --threads 2 --dram-size 600M --rows 100000 --hot-requests 4 --warmup 0 --seed 1 --epoch-txns $e --txns $((e * 3 / 2)))
    RT=(--workload tpcc --tpcc-mix deterministic --warehouses 1 --tpcc-new-orders 200000 --threads 2 --warmup 0 --seed 1
        --epoch-txns $e --txns $((e * 3 / 2)))
    for w in RY RT; do
      declare -n F=$w
      rm -f "$IMG"
      build/nvcaracal-caracal/rundb "${F[@]}" --nvm-path "$IMG" --power-fail \
        --crash-at point:nvcaracal.before_epoch_commit:3 >/dev/null 2>&1 || true
      out=$(build/nvcaracal-caracal/rundb "${F[@]}" --nvm-path "$IMG" --recover 2>"$ERR") || { cat "$ERR" >&2; continue; }
      summary "recovery ${F[1]} epoch$e" nvcaracal-caracal "$rep" "$out"
      unset -n F
    done
  done
done
