# Each pair runs a tiny YCSB and prints one JSON object with the contract's fields.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# A fixed count of committed transactions per thread (--txns), so the reported figures can be
# checked against counts the output did not produce: the request, and the process's wall time.
TXNS=1500
for cc in "${ALL_PAIRS[@]}"; do
  bin="$(rundb_of "$cc")"
  out="$TMP/$cc.json"
  t0=$(date +%s.%N)
  "$bin" --rows 20000 --warmup 0.2 --txns $TXNS --nvm-path "$TMP/$cc.img" \
      --out "$TMP/$cc.out.json" >"$out" 2>"$TMP/$cc.err" ||
    { cat "$TMP/$cc.err" >&2; fail "$cc tiny run exited non-zero"; }
  wall=$("$PYTHON" -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$(date +%s.%N)")
  "$PYTHON" -c 'import json, sys; json.load(open(sys.argv[1]))' "$out" ||
    fail "$cc stdout is not one JSON object: $(head -c 300 "$out")"
  check "$out" "d['config']['engine'] == '${cc%%-*}' and d['config']['cc'] == '${cc#*-}'" "$cc config names its pair"
  check "$out" "d['config']['rows'] == 20000 and d['config']['profile'] == 'optane-100'" "$cc config echoes the flags"
  check "$out" "'p_ratio' in d['config'] and 'threads' in d['config']" "$cc config has P and threads"
  check "$out" "isinstance(d['host']['nvm']['real'], bool)" "$cc host.nvm.real present"
  check "$out" "d['host']['nvm']['real'] is False" "$cc on /dev/shm is emulated NVM"
  r="d['results']"
  check "$out" "$r['committed'] == $TXNS * d['config']['threads']" "$cc committed = --txns x threads"
  # The measured phase lies inside the process's life: throughput is at least committed / wall.
  check "$out" "0 < $r['measured_s'] < $wall" "$cc measured_s within the run's wall time ($wall s)"
  check "$out" "$r['throughput_tps'] >= $TXNS * d['config']['threads'] / $wall" "$cc throughput_tps >= committed / wall time"
  check "$out" "abs($r['throughput_tps'] - $r['committed'] / $r['measured_s']) < 1e-6 * $r['throughput_tps'] + 1e-9" \
    "$cc throughput_tps = committed / measured seconds"
  check "$out" "0 <= $r['abort_rate'] < 1" "$cc abort_rate in [0, 1)"
  check "$out" "all(k in $r['latency_us'] for k in ('avg', 'p50', 'p99', 'p999'))" "$cc latency_us fields"
  check "$out" "$r['latency_us']['p50'] <= $r['latency_us']['p99'] <= $r['latency_us']['p999']" "$cc latency percentiles ordered"
  check "$out" "all(k in $r['per_txn'] for k in ('clwb', 'sfence', 'nvm_read_bytes', 'nvm_write_bytes'))" "$cc per_txn fields"
  # Half the requests write: nearly every transaction writes, and each one fences once.
  # Zen also fences when it maps a new 2 MB page (a handful per run), hence the 1% slack.
  if [[ "${cc%%-*}" == wbl ]]; then
    # One fence for the versions of each read-write commit, plus one per step at which the CC
    # changed its metadata (persisted in NVM): many more than one per transaction.
    check "$out" "$r['per_txn']['sfence'] > 1.5" "$cc fences for its versions and its CC metadata"
  elif [[ "${cc%%-*}" == nvmvcc ]]; then
    # Single layer, no log: each new version's header and head pointer, the payloads and the
    # status word are each persisted (papers/mcsi.txt 4.4-4.5).
    check "$out" "$r['per_txn']['sfence'] >= 1" "$cc fences at least once per transaction"
  else
    check "$out" "0.9 <= $r['per_txn']['sfence'] <= 1.01" "$cc ~1 sfence per transaction"
  fi
  check "$out" "$r['per_txn']['clwb'] > 0" "$cc flushes"
  check "$out" "0 <= $r['cache_hit_rate'] <= 1" "$cc cache_hit_rate in [0, 1]"
  check "$out" "$r['memory_bytes']['dram'] > 0 and $r['memory_bytes']['nvm'] > 0" "$cc memory_bytes"
  cmp -s "$out" "$TMP/$cc.out.json" || fail "$cc --out differs from stdout"
  grep -q "txn/s committed" "$TMP/$cc.err" || fail "$cc printed no human summary on stderr"
  rm -f "$TMP/$cc.img"
  say "$cc: $(json "$out" "int(d['results']['committed'])") committed, $(json "$out" "round(d['results']['throughput_tps'])") txn/s"
done

# Prefetch is a hint: off, the run still commits and says so in its config.
bin="$(rundb_of "${ALL_PAIRS[0]}")"
"$bin" --rows 20000 --warmup 0 --duration 0.3 --no-prefetch --nvm-path "$TMP/nopf.img" >"$TMP/nopf.json" 2>"$TMP/nopf.err" ||
  { cat "$TMP/nopf.err" >&2; fail "--no-prefetch run exited non-zero"; }
check "$TMP/nopf.json" "d['config']['prefetch'] is False and d['results']['committed'] > 0" "--no-prefetch runs and is recorded"
rm -f "$TMP/nopf.img"
say "--no-prefetch: $(json "$TMP/nopf.json" "int(d['results']['committed'])") committed"
