# End-to-end tests of the FOEDUS engine (in `make e2e`, after test_build.sh built every pair;
# `make foedus` runs them too): the pair refusals, every workload it runs at tiny sizes with its
# engine numbers (TPC-C standard and NP with conditions 1-4 after the run and after recovery,
# YCSB D and E on its ordered tree), bad input, and the restart after kill -9 with acknowledged
# commits checked (twice). Kept small: a few seconds of runs.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin="$(rundb_of foedus-foedus)"
[[ -x "$bin" ]] || fail "build it first: make ENGINE=foedus CC_ALG=foedus"

# FOEDUS's OCC runs on FOEDUS only, and FOEDUS runs nothing else: both fail to compile by name.
for pair in "mmdb foedus" "foedus silo"; do
  set -- $pair
  out="$(make -s ENGINE=$1 CC_ALG=$2 BUILD=$TMP/refused-$1-$2 2>&1)" && fail "ENGINE=$1 CC_ALG=$2 compiled"
  grep -q "unsupported engine-CC pair: ENGINE=$1 CC_ALG=$2" <<<"$out" || fail "ENGINE=$1 CC_ALG=$2: no clear message: $out"
done
say "mmdb-foedus and foedus-silo refused at compile time"

# Bad input: exit 2 naming the flag.
expect_2() {
  local what="$1"; shift
  local rc=0
  "$bin" --nvm-path "$TMP/bad.img" "$@" >/dev/null 2>"$TMP/bad.err" || rc=$?
  [[ $rc -eq 2 ]] || fail "$what: expected exit 2, got $rc"
  grep -q -- "$what" "$TMP/bad.err" || fail "$what: message does not name it: $(cat "$TMP/bad.err")"
}
expect_2 --page-size --page-size 3000
expect_2 --page-size --page-size 512            # a 1 KB YCSB record does not fit
expect_2 --gleaner-interval-ms --gleaner-interval-ms 0
expect_2 --epoch-ms --epoch-ms 0
expect_2 --snapshot-cache --snapshot-cache maybe
say "bad page sizes and intervals refused"

# Every workload it runs, tiny, with the engine's numbers.
run() {
  local name="$1"; shift
  "$bin" --nvm-path "$TMP/run.img" --warmup 0.2 --duration 0.5 --epoch-ms 5 --gleaner-interval-ms 100 \
      --out "$TMP/$name.json" "$@" >/dev/null 2>"$TMP/$name.err" || { cat "$TMP/$name.err" >&2; fail "$name exited $?"; }
  check "$TMP/$name.json" "d['results']['committed'] > 0" "$name: nothing committed"
  check "$TMP/$name.json" "d['config']['engine'] == 'foedus' and d['config']['cc'] == 'foedus'" "$name: config"
  check "$TMP/$name.json" "all(k in d['results']['engine'] for k in ('snapshot_cache', 'volatile_pages', 'snapshot_pages', 'gleaner', 'log_writer'))" "$name: results.engine"
  check "$TMP/$name.json" "'durable_latency_us' in d['results']" "$name: durable latency"
}
run ycsb --rows 20000
run ycsb-a --rows 20000 --workload ycsb-a
run ycsb-b --rows 20000 --workload ycsb-b --theta 0.9
run ycsb-c --rows 20000 --workload ycsb-c --snapshot-cache off
run ycsb-hot --rows 20000 --hot-requests 4 --update-bytes 100 --requests-min 4
run ycsb-pages --rows 20000 --page-size 16384 --gleaner-mappers 2 --gleaner-reducers 2
run smallbank --workload smallbank
check "$TMP/smallbank.json" "d['conservation']['violations'] == 0" "smallbank: money not conserved"
check "$TMP/ycsb-c.json" "d['results']['engine']['snapshot_cache']['hits'] == 0 and d['results']['engine']['snapshot_cache']['misses'] > 0" "ycsb-c with the cache off still hit it"
check "$TMP/ycsb-a.json" "d['results']['engine']['gleaner']['runs'] > 0" "ycsb-a: the gleaner never ran"
say "ycsb (A, B, C, hot rows, 16 KB pages), smallbank ran; gleaner $(json "$TMP/ycsb-a.json" "d['results']['engine']['gleaner']['runs']") runs in ycsb-a"

# The ordered tree: YCSB D and E insert and scan; TPC-C (standard and NP) keeps conditions 1-4
# after the run and after recovering its image, with splits in the trees TPC-C inserts into.
de=(--rows 5000 --columns 1 --column-size 56 --insert-rows 300000)
run ycsb-d --workload ycsb-d "${de[@]}"
run ycsb-e --workload ycsb-e "${de[@]}" --scan-length 20
check "$TMP/ycsb-d.json" "d['workload']['ycsb_de']['inserts'] > 0 and d['results']['engine']['ordered_trees']['usertable']['splits'] > 0" "ycsb-d: inserts split leaves"
check "$TMP/ycsb-e.json" "d['workload']['ycsb_de']['scanned_rows'] > d['workload']['ycsb_de']['scans'] > 0 and d['workload']['ycsb_de']['scan_order_violations'] == 0" "ycsb-e: scans in key order"
for mix in standard np; do
  out="$TMP/tpcc-$mix.json"
  "$bin" --workload tpcc --warehouses 2 --tpcc-new-orders 20000 --tpcc-mix $mix --warmup 0.2 --duration 0.5 \
      --epoch-ms 5 --gleaner-interval-ms 100 --nvm-path "$TMP/tpcc.img" >"$out" 2>"$TMP/tpcc.err" ||
    { cat "$TMP/tpcc.err" >&2; fail "tpcc $mix exited non-zero"; }
  check "$out" "d['results']['tpmC'] > 0 and d['results']['committed_by_type']['neworder'] > 0 and d['results']['committed_by_type']['payment'] > 0" "tpcc $mix: NewOrder and Payment commit"
  [[ $mix == np ]] || check "$out" "all(d['results']['committed_by_type'][k] > 0 for k in ('order_status', 'delivery', 'stock_level'))" "tpcc $mix: every type commits"
  check "$out" "d['consistency']['violations'] == 0" "tpcc $mix: consistency after the run"
  check "$out" "d['results']['engine']['ordered_trees']['order_line']['splits'] > 0" "tpcc $mix: ORDER-LINE leaves split"
  "$bin" --workload tpcc --warehouses 2 --tpcc-new-orders 20000 --recover --nvm-path "$TMP/tpcc.img" \
      >"$TMP/tpcc-rec.json" 2>"$TMP/tpcc.err" || { cat "$TMP/tpcc.err" >&2; fail "tpcc $mix recovery exited non-zero"; }
  check "$TMP/tpcc-rec.json" "d['consistency']['violations'] == 0 and d['invariants']['violations'] == 0" "tpcc $mix: consistency after recovery"
  check "$TMP/tpcc-rec.json" "d['consistency']['orders'] == $(json "$out" "d['consistency']['orders']")" "tpcc $mix: every committed order recovered"
  say "tpcc $mix: $(json "$out" "round(d['results']['tpmC'])") tpmC, $(json "$TMP/tpcc-rec.json" "d['consistency']['orders']") orders recovered consistent"
  rm -f "$TMP/tpcc.img"
done

# Restart after kill -9: every acknowledged commit present, none partial; twice the same.
for delay in 1.5 2.5; do
  dir="$TMP/restart-$delay"
  mkdir -p "$dir"
  "$bin" --nvm-path "$dir/nvm.img" --ack-file "$dir/ack" --rows 20000 --read-ratio 0.2 --theta 0.6 \
      --duration 30 --epoch-ms 5 --gleaner-interval-ms 200 >"$dir/run.json" 2>"$dir/run.err" &
  pid=$!
  BG_PIDS+=("$pid")
  sleep "$delay"
  kill -0 "$pid" 2>/dev/null || { cat "$dir/run.err" >&2; fail "foedus exited before the kill at ${delay}s"; }
  kill -9 "$pid"
  { wait "$pid"; } 2>/dev/null || true
  for round in 1 2; do
    recover_round foedus "$bin" "$dir/nvm.img" "$dir" "$round" "$delay"
    f="$dir/rec$round.json"
    check "$f" "d['invariants']['violations'] == 0" "recovery $round: invariants"
    check "$f" "set(d['recovery']['steps_s']) == {'read_metadata', 'read_snapshot_tree', 'truncate_logs', 'glean_map_logs', 'glean_reduce_leaves', 'glean_write_interiors', 'write_snapshot', 'install_roots'}" "recovery $round: steps"
  done
  rc=0
  "$bin" --recover --nvm-path "$dir/nvm.img" --rows 20000 --page-size 8192 >/dev/null 2>"$dir/ps.err" || rc=$?
  # The image's header records its page size: the contradicting flag is a usage error (exit 2).
  [[ $rc -eq 2 ]] && grep -q "holds --page-size 4096, not the 8192 given" "$dir/ps.err" || fail "an image of another page size not refused: $(cat "$dir/ps.err")"
  a="$(json "$dir/rec1.json" "d['verification']")"
  b="$(json "$dir/rec2.json" "d['verification']")"
  [[ "$a" == "$b" ]] || fail "second recovery differs: $a vs $b"
  say "killed at ${delay}s: $(json "$dir/rec1.json" "d['verification']['acked_txns']") acked txns," \
      "$(json "$dir/rec1.json" "d['recovery']['replayed']") log records gleaned at restart, 0 violations (twice)"
  rm -rf "$dir"
done
# YCSB-D's inserts at the tree's right edge: a transaction that aborted with two inserts in a leaf
# being split once waited for the split's latch while the split waited for its lock (the run
# hung; kill -9 was the only way out). Two seeds, each within a generous limit.
for seed in 2 3; do
  rc=0
  timeout -s KILL 120 "$bin" --workload ycsb-d --rows 100000 --warmup 1 --duration 1 --seed "$seed" \
    --nvm-path "$TMP/ycsbd.img" >"$TMP/ycsbd.json" 2>"$TMP/ycsbd.err" || rc=$?
  [[ $rc -eq 0 ]] || fail "ycsb-d seed $seed: exit $rc (137: still running after 120 s, a hang): $(tail -3 "$TMP/ycsbd.err")"
  rm -f "$TMP/ycsbd.img"
done
say "ycsb-d at 100 000 rows ran to its end with seeds 2 and 3"
echo "foedus e2e: ok" >&2
