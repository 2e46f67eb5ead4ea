#!/usr/bin/env bash
# NVCaracal end to end (ENGINE=nvcaracal CC_ALG=caracal; its crash tests are
# tests/crash/nvcaracal.sh). Determinism makes the checks exact: a run of k epochs from the
# same seed gives one database (results.engine.state_checksum) on any thread count. Then bad
# input, SmallBank's conservation, and TPC-C's deterministic mix: consistency conditions 1-4
# after a run and after reopening its image.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source tests/e2e/nvcaracal_env.sh

echo "== nvcaracal: smoke and reference states"
reference_states
json "$TMP/ref4.json" "d['results']['committed'] == 4000 and d['results']['throughput_tps'] > 0 and 0 < d['results']['engine']['transient_update_share'] < 1" | grep -qx True \
  || fail "results of a 4-epoch run: $(json "$TMP/ref4.json" "d['results']")"
# transient_update_share only where updates stay transient: hybrid and all-nvmm write every
# update to NVM; all-dram flushes and fences nothing. The same database as nvcaracal's.
for d in hybrid all-nvmm all-dram; do
  $R "${B2[@]}" --txns 2000 --caracal-design $d --out "$TMP/$d.json" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "a run of $d"; }
  [[ $(json "$TMP/$d.json" "d['results']['engine']['state_checksum']") == "${STATE[4]}" ]] || fail "$d: another database than nvcaracal's"
done
json "$TMP/hybrid.json" "d['results']['engine']['transient_update_share'] == 0" | grep -qx True || fail "hybrid reports transient updates"
json "$TMP/all-nvmm.json" "d['results']['engine']['transient_update_share'] == 0" | grep -qx True || fail "all-nvmm reports transient updates"
json "$TMP/all-dram.json" "d['results']['per_txn']['clwb'] == 0 and d['results']['per_txn']['sfence'] == 0 and d['results']['per_txn']['nvm_write_bytes'] == 0" \
  | grep -qx True || fail "all-dram flushes, fences or writes NVM: $(json "$TMP/all-dram.json" "d['results']['per_txn']")"
json "$TMP/ref4.json" "d['results']['per_txn']['dram_bytes'] > 0" | grep -qx True || fail "nvcaracal counts no DRAM traffic"
echo "  hybrid, all-nvmm: no transient share; all-dram: no flush, fence or NVM write; the same database"
# The same inputs on 1 and 3 threads: the same database.
for t in 1 3; do
  $R "${BASE[@]}" --threads $t --txns $((4000 / t + (4000 % t > 0))) --out "$TMP/t$t.json" >/dev/null 2>&1 || fail "run on $t threads"
  # (3 threads: --txns 1334 per thread = 4002 transactions, 5 epochs: compare with a 5-epoch run)
done
[[ $(json "$TMP/t1.json" "d['results']['engine']['state_checksum']") == "${STATE[4]}" ]] || fail "1 thread: another database than 2 threads"
$R "${B2[@]}" --txns 2500 --out "$TMP/ref5.json" >/dev/null 2>&1
[[ $(json "$TMP/t3.json" "d['results']['engine']['state_checksum']") == $(json "$TMP/ref5.json" "d['results']['engine']['state_checksum']") ]] \
  || fail "3 threads: another database than 2 threads"
echo "  4 epochs on 1, 2 and 3 threads: one database"

echo "== nvcaracal: bad input"
expect_error() {  # rc, text, flags...
  local rc=$1 text=$2; shift 2
  set +e; $R "${BASE0[@]}" --threads 2 --txns 10 "$@" >/dev/null 2>"$TMP/err"; local got=$?; set -e
  [[ $got == "$rc" ]] && grep -q -- "$text" "$TMP/err" || { cat "$TMP/err"; fail "$* gave rc $got, wanted $rc naming '$text'"; }
}
expect_error 2 "--epoch-txns" --epoch-txns 0
expect_error 2 "two versions" --persistent-row-bytes 64
expect_error 2 "multiple of 64" --persistent-row-bytes 200
expect_error 1 "--epoch-txns" --epoch-txns 1000000
expect_error 2 "is not standard, np, deterministic" --workload tpcc --tpcc-mix neworder:50,refund:5
echo "  epoch size 0, an epoch over the DRAM budget, rows too small for two versions, a bad mix: clear errors"

echo "== nvcaracal: SmallBank (user aborts) conserves money"
SB=(--workload smallbank --accounts 2000 --hotspot-accounts 20 --send-payment --epoch-txns 2000 --threads 2 --warmup 0
    --dram-size 64M --nvm-path "$IMG" --txns 3000)
$R "${SB[@]}" --out "$TMP/sb.json" >/dev/null 2>&1 || fail "SmallBank run"
json "$TMP/sb.json" "d['conservation']['violations'] == 0 and d['results']['aborted'] > 0" | grep -qx True || fail "SmallBank: $(json "$TMP/sb.json" "d['conservation']")"
echo "  3 epochs with user aborts: money conserved"

echo "== nvcaracal: TPC-C (deterministic mix), consistency after a run and after reopening"
TP=(--workload tpcc --tpcc-mix deterministic --warehouses 1 --tpcc-new-orders 20000 --epoch-txns 1000
    --warmup 0 --nvm-path "$IMG")
$R "${TP[@]}" --threads 2 --txns 1500 --out "$TMP/tp3.json" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "TPC-C run"; }
json "$TMP/tp3.json" "d['consistency']['violations'] == 0 and d['consistency']['conditions'] == '1,2,3,4' and d['results']['tpmC'] > 0 and d['workload']['tpcc']['payment']['by_name'] > 0 and d['results']['committed_by_type']['payment'] > 0" \
  | grep -qx True || fail "TPC-C run: $(json "$TMP/tp3.json" "d['consistency'], d['results'].get('committed_by_type')")"
$R "${TP[@]}" --threads 2 --txns 1500 --recover --out "$TMP/rec.json" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "TPC-C reopened"; }
json "$TMP/rec.json" "d['consistency']['violations'] == 0 and d['recovery']['replayed_epoch'] == 0 and d['recovery']['committed_epoch'] == 3" \
  | grep -qx True || fail "TPC-C reopened: $(json "$TMP/rec.json" "d['consistency'], d['recovery']")"
$R "${TP[@]}" --threads 1 --txns 3000 --out "$TMP/tp3one.json" >/dev/null 2>&1 || fail "TPC-C run on 1 thread"
[[ $(json "$TMP/tp3one.json" "d['results']['engine']['state_checksum']") == $(json "$TMP/tp3.json" "d['results']['engine']['state_checksum']") ]] \
  || fail "TPC-C: 1 thread gave another database than 2"
echo "  3 epochs on 1 and 2 threads: one database; conditions 1-4 hold after the run and reopened"
# The standard mix: NewOrder's 1% rollback too; Delivery deletes NEW-ORDER rows.
$R --workload tpcc --tpcc-mix standard --warehouses 1 --tpcc-new-orders 20000 --epoch-txns 1000 --warmup 0 \
  --nvm-path "$TMP/std.img" --threads 2 --txns 5000 --out "$TMP/std.json" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "TPC-C standard mix"; }
json "$TMP/std.json" "d['consistency']['violations'] == 0 and d['workload']['tpcc']['neworder']['rolled_back'] > 0 and d['consistency']['new_orders'] == 9000 + d['workload']['tpcc']['neworder']['committed'] - d['workload']['tpcc']['delivery']['orders_delivered'] > 9000 and d['results']['committed_by_type']['order_status'] > 0 and d['results']['committed_by_type']['delivery'] > 0 and d['results']['committed_by_type']['stock_level'] > 0" \
  | grep -qx True || fail "TPC-C standard mix: $(json "$TMP/std.json" "d['workload']['tpcc'], d['consistency']")"
echo "  standard mix: every transaction type committed, NewOrders rolled back, delivered orders left NEW-ORDER"
