#!/usr/bin/env bash
# NVCaracal's crash tests (run by tests/crash/run_all.sh and `make nvcaracal`). Determinism makes
# the check exact: a run of k epochs from the same seed gives one database
# (results.engine.state_checksum), so after a power failure at a named point of epoch k and
# --recover, the database must be exactly the k-epoch one (the crashed epoch replayed from its
# logged inputs) or, when the crash came before the epoch's inputs were durable, the (k-1)-epoch
# one. Then each injected fault must be caught within a few rounds, and the torture.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/python.sh
TMP=$(mktemp -d /dev/shm/nvt-nvc.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
source tests/e2e/nvcaracal_env.sh

echo "== nvcaracal: reference states"
reference_states
echo "== nvcaracal: crash at named points, recover, compare"
crash_recover() {  # point, expected epoch(s) ...
  local point=$1; shift
  set +e; $R "${B2[@]}" --txns 2000 --power-fail --evict-prob 0.3 --crash-at "point:$point" >/dev/null 2>"$TMP/err"; local rc=$?; set -e
  [[ $rc == 86 ]] || { cat "$TMP/err"; fail "no crash at $point (rc $rc)"; }
  $R "${B2[@]}" --txns 2000 --recover --out "$TMP/rec.json" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "recovery after $point"; }
  local got; got=$(json "$TMP/rec.json" "d['recovery']['state_checksum']")
  for k in "$@"; do [[ $got == "${STATE[$k]}" ]] && { echo "  $point: recovered the $k-epoch database ($(json "$TMP/rec.json" "d['recovery']['steps_s']"))"; return; }; done
  fail "after a crash at $point the database is none of epochs $*: $(json "$TMP/rec.json" "d['recovery']")"
}
for p in nvcaracal.logged:3 nvcaracal.execute:3 nvcaracal.before_epoch_commit:3 nvcaracal.epoch_commit:3 nvcaracal.epoch_commit:4; do
  crash_recover "$p" "${p##*:}"
done
# A power failure during recovery's replay, then recovery again.
set +e; $R "${B2[@]}" --txns 2000 --power-fail --crash-at point:nvcaracal.execute:4 >/dev/null 2>&1
$R "${B2[@]}" --txns 2000 --recover --power-fail --evict-prob 0.3 --crash-at point:nvcaracal.replay >/dev/null 2>&1; rc=$?; set -e
[[ $rc == 86 ]] || fail "no crash during the replay (rc $rc)"
$R "${B2[@]}" --txns 2000 --recover --out "$TMP/rec.json" >/dev/null 2>&1 || fail "recovery after a crash in the replay"
[[ $(json "$TMP/rec.json" "d['recovery']['state_checksum']") == "${STATE[4]}" ]] || fail "crash in the replay: not the 4-epoch database"
echo "  nvcaracal.replay (crash in recovery, recovered again): the 4-epoch database"
# Power failures at fences in the epochs (the load ends with one fence; about ten per epoch): the
# database is always one of the epochs' databases.
for seed in 1 3 5; do
  set +e; $R "${B2[@]}" --txns 2000 --seed 1 --power-fail --evict-prob 0.3 --crash-at "fence:$((seed * 6 + 2))" >/dev/null 2>&1; rc=$?; set -e
  [[ $rc == 86 || $rc == 0 ]] || fail "fence crash rc $rc"
  $R "${B2[@]}" --txns 2000 --recover --out "$TMP/rec.json" >/dev/null 2>&1 || fail "recovery after fence $((seed * 6 + 2))"
  got=$(json "$TMP/rec.json" "d['recovery']['state_checksum']"); ok=0
  for k in 1 2 3 4; do [[ $got == "${STATE[$k]}" ]] && ok=1; done
  [[ $ok == 1 ]] || fail "crash at fence $((seed * 6 + 2)): the database is no epoch's ($(json "$TMP/rec.json" "d['recovery']"))"
done
echo "  3 crashes at fences: each recovered an epoch's database"

echo "== nvcaracal: SmallBank (user aborts), crash and recovery conserve money"
SB=(--workload smallbank --accounts 2000 --hotspot-accounts 20 --send-payment --epoch-txns 2000 --threads 2 --warmup 0
    --dram-size 64M --nvm-path "$IMG" --txns 3000)
$R "${SB[@]}" --out "$TMP/sb.json" >/dev/null 2>&1 || fail "SmallBank run"
set +e; $R "${SB[@]}" --power-fail --evict-prob 0.3 --crash-at point:nvcaracal.execute:3 >/dev/null 2>&1; rc=$?; set -e
[[ $rc == 86 ]] || fail "SmallBank: no crash (rc $rc)"
$R "${SB[@]}" --recover --out "$TMP/rec.json" >/dev/null 2>&1 || fail "SmallBank recovery"
json "$TMP/rec.json" "d['conservation']['violations'] == 0 and d['recovery']['replayed_epoch'] == 3" | grep -qx True || fail "SmallBank after recovery: $(json "$TMP/rec.json" "d['conservation']")"
[[ $(json "$TMP/rec.json" "d['recovery']['state_checksum']") == $(json "$TMP/sb.json" "d['results']['engine']['state_checksum']") ]] \
  || fail "SmallBank: the recovered database is not the 3-epoch one"
echo "  3 epochs with user aborts, a crash in the third and its replay: money conserved, the same database"

echo "== nvcaracal: TPC-C (deterministic mix), a crash and its replay"
TP=(--workload tpcc --tpcc-mix deterministic --warehouses 1 --tpcc-new-orders 20000 --epoch-txns 1000
    --warmup 0 --nvm-path "$IMG")
$R "${TP[@]}" --threads 2 --txns 1500 --out "$TMP/tp3.json" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "TPC-C run"; }
for p in nvcaracal.execute:3 nvcaracal.before_epoch_commit:3; do
  set +e; $R "${TP[@]}" --threads 2 --txns 1500 --power-fail --evict-prob 0.3 --crash-at "point:$p" >/dev/null 2>&1; rc=$?; set -e
  [[ $rc == 86 ]] || fail "TPC-C: no crash at $p (rc $rc)"
  $R "${TP[@]}" --threads 2 --txns 1500 --recover --out "$TMP/rec.json" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "TPC-C recovery after $p"; }
  json "$TMP/rec.json" "d['consistency']['violations'] == 0 and d['recovery']['replayed_epoch'] == 3 and d['recovery']['reverted_rows'] > 0" \
    | grep -qx True || fail "TPC-C after recovery from $p: $(json "$TMP/rec.json" "d['consistency'], d['recovery']")"
  [[ $(json "$TMP/rec.json" "d['recovery']['state_checksum']") == $(json "$TMP/tp3.json" "d['results']['engine']['state_checksum']") ]] \
    || fail "TPC-C: recovery from $p is not the 3-epoch database"
done
echo "  crashes in epoch 3: reverted, replayed, the 3-epoch database, conditions 1-4 hold"

echo "== nvcaracal: injected faults are caught"
caught() {  # fault, point (crashed in epochs 1-4 in turn: the coin tosses of the crash are seeded)
  for round in 1 2 3 4 5 6 7 8; do
    local k=$(((round - 1) % 4 + 1))
    set +e; $R "${B2[@]}" --txns 2000 --fault "$1" --power-fail --evict-prob 0.3 --crash-at "point:$2:$k" >/dev/null 2>&1
    $R "${B2[@]}" --txns 2000 --recover --out "$TMP/rec.json" >/dev/null 2>&1; rc=$?; set -e
    if [[ $rc != 0 || $(json "$TMP/rec.json" "d['recovery']['state_checksum']") != "${STATE[$k]}" ]]; then
      echo "  $1: caught in round $round"; return
    fi
  done
  fail "fault $1 not caught in 8 rounds"
}
caught skip-epoch-fence nvcaracal.epoch_commit
caught wrong-parity nvcaracal.execute
echo "== nvcaracal: crash torture (scripts/torture.py)"
out="$TMP/torture.json"
"$PYTHON" scripts/torture.py --engine nvcaracal --cc caracal --rounds "${ROUNDS:-4}" --duration 0.8 >"$out" \
  || { cat "$out"; fail "torture nvcaracal"; }
"$PYTHON" -c "import json; s=json.load(open('$out')); print('  {rounds} rounds ({crashed_rounds} crashed after the load), {distinct_crash_points} crash points, {acked_txns_checked} acked txns checked, {violations} violations'.format(**s))"
set +e; "$PYTHON" scripts/torture.py --engine nvcaracal --cc caracal --rounds 12 --duration 0.8 --fault wrong-parity \
  --stop-on-violation >"$out" 2>/dev/null; rc=$?; set -e
[[ $rc == 1 ]] || { cat "$out"; fail "torture did not catch wrong-parity in 12 rounds"; }
echo "  wrong-parity: caught by the torture in round $("$PYTHON" -c "import json; print(json.load(open('$out'))['first_violation_round'])")"
echo "nvcaracal crash tests: all passed"
