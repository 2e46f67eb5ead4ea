# End-to-end tests of the staged FOEDUS engine (`make foedus` runs them after building
# build/foedus-foedus/rundb): the pair refusals, every workload it runs at tiny sizes with its
# engine numbers, bad input, and the restart after kill -9 with acknowledged commits checked
# (twice). Kept small: a few seconds of runs.
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
rc=0
"$bin" --nvm-path "$TMP/bad.img" --workload tpcc >/dev/null 2>"$TMP/bad.err" || rc=$?
[[ $rc -eq 1 ]] && grep -q "engine foedus does not offer" "$TMP/bad.err" || fail "tpcc not refused by name: $(cat "$TMP/bad.err")"
say "bad page sizes, intervals and workloads refused"

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
    rc=0
    "$bin" --recover --nvm-path "$dir/nvm.img" --rows 20000 --verify-ack "$dir/ack" \
        >"$dir/rec$round.json" 2>"$dir/rec$round.err" || rc=$?
    [[ $rc -eq 0 ]] || { cat "$dir/rec$round.err" >&2; fail "foedus recovery $round after kill at ${delay}s exited $rc"; }
    f="$dir/rec$round.json"
    check "$f" "d['verification']['violations'] == 0" "recovery $round: acknowledged commits lost or partial (${delay}s)"
    check "$f" "d['verification']['acked_txns'] > 0" "recovery $round: nothing acknowledged (${delay}s)"
    check "$f" "d['invariants']['violations'] == 0" "recovery $round: invariants"
    check "$f" "set(d['recovery']['steps_s']) == {'read_metadata', 'read_snapshot_tree', 'truncate_logs', 'glean_logs', 'install_roots'}" "recovery $round: steps"
  done
  rc=0
  "$bin" --recover --nvm-path "$dir/nvm.img" --rows 20000 --page-size 8192 >/dev/null 2>"$dir/ps.err" || rc=$?
  [[ $rc -eq 1 ]] && grep -q "made with --page-size 4096" "$dir/ps.err" || fail "an image of another page size not refused: $(cat "$dir/ps.err")"
  a="$(json "$dir/rec1.json" "d['verification']")"
  b="$(json "$dir/rec2.json" "d['verification']")"
  [[ "$a" == "$b" ]] || fail "second recovery differs: $a vs $b"
  say "killed at ${delay}s: $(json "$dir/rec1.json" "d['verification']['acked_txns']") acked txns," \
      "$(json "$dir/rec1.json" "d['recovery']['replayed']") log records gleaned at restart, 0 violations (twice)"
  rm -rf "$dir"
done
echo "foedus e2e: ok" >&2
