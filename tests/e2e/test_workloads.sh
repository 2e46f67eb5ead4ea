# Every pair of MMDB, Zen, NVMVCC and WBL runs tiny SmallBank (conservation after the run and
# after recovery; FOEDUS and NVCaracal run it in their own tests); the restart test's pairs run
# the YCSB forms: the named mixes, NVCaracal's hot rows with small-row read-modify-writes,
# MCSI's request range, a long-running transaction thread beside a normal one; YCSB D and E on
# two pairs.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

run() {  # run NAME PAIR ARGS...: one tiny run whose JSON lands in $TMP/NAME.json
  local name="$1" cc="$2"
  shift 2
  "$(rundb_of "$cc")" --warmup 0.1 --duration 0.4 --nvm-path "$TMP/$cc.img" "$@" \
      >"$TMP/$name.json" 2>"$TMP/$name.err" ||
    { cat "$TMP/$name.err" >&2; fail "$name ($cc $*) exited non-zero"; }
  check "$TMP/$name.json" "d['results']['committed'] > 0" "$name committed > 0"
}

# SmallBank at high contention: money conserved after the run and after recovery, user aborts
# (insufficient funds), every type committed. (tests/unit/test_smallbank.cpp runs the same under
# ASan+UBSan on a pair per CC method.)
t0=$SECONDS
read -ra SB_PAIRS <<<"$(make --no-print-directory -s pairs)"
n=0
for cc in "${SB_PAIRS[@]}"; do
  [[ "$cc" == foedus-* || "$cc" == nvcaracal-* ]] && continue
  run "$cc-sb" "$cc" --workload smallbank --accounts 2000 --hotspot-accounts 10 --send-payment
  f="$TMP/$cc-sb.json"
  check "$f" "d['conservation']['violations'] == 0 and d['conservation']['total'] == d['conservation']['expected']" "$cc smallbank conserves money"
  check "$f" "d['results']['aborts_by_cause']['user'] > 0" "$cc smallbank user aborts"
  check "$f" "all(v['committed'] > 0 for v in d['workload']['smallbank'].values())" "$cc smallbank commits every type"
  "$(rundb_of "$cc")" --workload smallbank --accounts 2000 --hotspot-accounts 10 --send-payment --recover \
      --nvm-path "$TMP/$cc.img" >"$TMP/$cc-sbr.json" 2>"$TMP/$cc-sbr.err" ||
    { cat "$TMP/$cc-sbr.err" >&2; fail "$cc smallbank recovery exited non-zero"; }
  check "$TMP/$cc-sbr.json" "d['conservation']['violations'] == 0 and d['invariants']['violations'] == 0" "$cc smallbank recovery conserves money"
  rm -f "$TMP/$cc.img"
  n=$((n + 1))
done
[[ $n -ge 32 ]] || fail "smallbank ran on $n pairs, expected every pair of mmdb, zen, nvmvcc and wbl (32)"
say "smallbank: $n pairs conserve money after the run and after recovery"
took smallbank-of-every-pair "$t0"

for cc in "${PAIRS[@]}"; do
  f="$TMP/$cc-sb.json"
  run "$cc-yb" "$cc" --workload ycsb-b --rows 20000
  check "$TMP/$cc-yb.json" "d['config']['read_ratio'] == 0.95" "$cc ycsb-b reads 95%"
  run "$cc-hot" "$cc" --rows 20000 --requests 10 --read-ratio 0 --hot-requests 7 --hot-rows 256 \
      --columns 1 --column-size 56 --update-bytes 40 --dram-size 64M
  run "$cc-mcsi" "$cc" --rows 20000 --requests-min 1 --requests 5 --theta 0
  run "$cc-lrt" "$cc" --rows 20000 --long-txn update --long-txn-rows 500,1000 --long-txn-gap 10 --long-txn-disjoint
  check "$TMP/$cc-lrt.json" "d['workload']['long_txns_committed'] > 0" "$cc long transactions commit"
  rm -f "$TMP/$cc.img"
  say "$cc: smallbank $(json "$f" "round(d['results']['throughput_tps'])") txn/s, long txns $(json "$TMP/$cc-lrt.json" "d['workload']['long_txns_committed']")"
done

# YCSB D (reads of the latest keys, inserts) and E (short scans, inserts), small rows, on Zen
# and on nvmvcc (whose snapshots decide what a scan sees).
de=(--rows 5000 --columns 1 --column-size 56 --dram-size 64M --insert-rows 300000)
for cc in zen-silo nvmvcc-mcsi; do
  run "$cc-yd" "$cc" --workload ycsb-d "${de[@]}"
  run "$cc-ye" "$cc" --workload ycsb-e "${de[@]}" --scan-length 20
  for w in yd ye; do
    f="$TMP/$cc-$w.json"
    check "$f" "d['results']['committed_by_type']['insert'] > 0 and d['workload']['ycsb_de']['inserts'] > 0" "$cc $w commits inserts"
    check "$f" "5000 < d['workload']['ycsb_de']['high_water'] <= 5000 + d['workload']['ycsb_de']['insert_keys_taken']" "$cc $w high-water mark past the loaded rows"
    check "$f" "abs(d['workload']['ycsb_de']['inserts'] / (d['workload']['ycsb_de']['inserts'] + d['workload']['ycsb_de']['reads'] + d['workload']['ycsb_de']['scans']) - 0.05) < 0.02" "$cc $w inserts 5% of operations"
  done
  check "$TMP/$cc-ye.json" "d['workload']['ycsb_de']['scanned_rows'] > d['workload']['ycsb_de']['scans'] > 0 and d['workload']['ycsb_de']['scan_order_violations'] == 0" "$cc ycsb-e scans in key order"
  rm -f "$TMP/$cc.img"
  say "$cc: ycsb-d $(json "$TMP/$cc-yd.json" "round(d['results']['throughput_tps'])") txn/s, ycsb-e $(json "$TMP/$cc-ye.json" "round(d['results']['throughput_tps'])") txn/s"
done

# Flags of these workloads that must be refused (exit 2, naming the flag).
bin="$(rundb_of mmdb-no_wait)"
refuse() {
  local flag="$1"
  shift
  set +e
  "$bin" --nvm-path "$TMP/refuse.img" "$@" >/dev/null 2>"$TMP/refuse.err"
  local rc=$?
  set -e
  [[ $rc -eq 2 ]] || fail "$* exited $rc, not 2"
  grep -q -- "$flag" "$TMP/refuse.err" || fail "$*: error does not name $flag: $(cat "$TMP/refuse.err")"
}
refuse --hotspot-accounts --workload smallbank --accounts 100 --hotspot-accounts 101
refuse --hot-requests --requests 4 --hot-requests 5
refuse --requests-min --requests 4 --requests-min 5
refuse --long-txn-rows --long-txn-rows 10,,20
refuse --long-txn-rows --long-txn scan --rows 1000 --long-txn-rows 2000
refuse --long-txn-threads --long-txn scan --threads 2 --long-txn-threads 2
refuse --read-ratio --workload ycsb-c --read-ratio 0.5
refuse --ack-file --workload smallbank --ack-file "$TMP/ack"
refuse --read-ratio --workload ycsb-e --read-ratio 0.5
refuse --insert-rows --workload ycsb-b --insert-rows 100
refuse --scan-length --workload ycsb-d --scan-length 10
refuse --hot-requests --workload ycsb-d --hot-requests 2
say "bad workload flags refused"

# Zen as zen-vldb21 describes it is the default of engine zen (a read-only transaction's misses
# fill the Met-Cache); Zen+ is asked for by name (--zen-plus on: they are read in NVM), only with
# a multi-version method, and its stage's counters stop with the measured phase.
ro=(--rows 20000 --read-ratio 1 --theta 0.95 --threads 2)
run zen-ro zen-cicada "${ro[@]}"
check "$TMP/zen-ro.json" "d['config']['engine_variant'] == 'zen' and d['config']['zen_plus'] is False" "default zen-cicada runs Zen, not Zen+"
check "$TMP/zen-ro.json" "d['results']['cache_hit_rate'] > 0 and d['results']['engine']['lrt']['direct_nvm_reads'] == 0" "Zen fills the Met-Cache on read-only misses"
run zen-plus-ro zen-cicada "${ro[@]}" --zen-plus on
check "$TMP/zen-plus-ro.json" "d['config']['engine_variant'] == 'zen+' and d['results']['engine']['lrt']['direct_nvm_reads'] > 0" "--zen-plus on runs Zen+"
run zen-plus-lrt zen-cicada --rows 20000 --long-txn update --long-txn-rows 2000 --long-txn-disjoint --long-txn-gap 10 --lrt-alpha 0.05 --zen-plus on
check "$TMP/zen-plus-lrt.json" "d['results']['engine']['lrt']['exclusive_s'] > 0" "Zen+ runs its exclusive stage"
check "$TMP/zen-plus-lrt.json" "d['results']['engine']['lrt']['exclusive_s'] <= d['results']['measured_s'] + 0.01" "Zen+'s exclusive_s within the measured phase"
rm -f "$TMP/zen-cicada.img"
expect_error 2 "--zen-plus" "$(rundb_of zen-silo)" --zen-plus on --nvm-path "$TMP/zp.img"
say "zen-cicada runs Zen by default, Zen+ with --zen-plus on (not with silo)"
