# Each engine runs a tiny TPC-C (standard mix; nvmvcc-mcsi the MCSI paper's NewOrder:Payment
# 45:55), then recovers its image: both print JSON with tpmC, commits of every transaction type
# of the mix, and consistency conditions 1-4 without a violation.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

for cc in "${PAIRS[@]}"; do
  case "$cc" in
    mmdb-no_wait|zen-no_wait|mmdb-silo|zen-silo|wbl-no_wait|wbl-silo) mix=standard types="neworder payment order_status delivery stock_level" ;;
    nvmvcc-mcsi) mix=neworder:45,payment:55 types="neworder payment" ;;
    *) continue ;;
  esac
  bin="$(rundb_of "$cc")"
  out="$TMP/$cc.tpcc.json"
  "$bin" --workload tpcc --warehouses 2 --tpcc-new-orders 20000 --tpcc-mix "$mix" --warmup 0.2 --duration 0.5 \
      --nvm-path "$TMP/$cc.tpcc.img" >"$out" 2>"$TMP/$cc.tpcc.err" ||
    { cat "$TMP/$cc.tpcc.err" >&2; fail "$cc tiny TPC-C run exited non-zero"; }
  r="d['results']"
  check "$out" "d['config']['warehouses'] == 2 and d['config']['tpcc_mix'] == '$mix'" "$cc TPC-C config echoed"
  check "$out" "$r['tpmC'] > 0 and all($r['committed_by_type'][k] > 0 for k in '$types'.split())" "$cc every TPC-C type of the mix commits"
  check "$out" "d['consistency']['violations'] == 0" "$cc TPC-C consistency after the run"
  "$bin" --workload tpcc --warehouses 2 --tpcc-new-orders 20000 --recover \
      --nvm-path "$TMP/$cc.tpcc.img" >"$out" 2>"$TMP/$cc.tpcc.err" ||
    { cat "$TMP/$cc.tpcc.err" >&2; fail "$cc TPC-C recovery exited non-zero"; }
  check "$out" "d['consistency']['violations'] == 0 and d['invariants']['violations'] == 0" "$cc TPC-C consistency after recovery"
  rm -f "$TMP/$cc.tpcc.img"
  say "$cc: TPC-C $(json "$out" "d['consistency']['orders']") orders recovered consistent"
done
