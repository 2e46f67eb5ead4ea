# NVCaracal's test settings (sourced by tests/e2e/test_nvcaracal.sh and tests/crash/nvcaracal.sh,
# after $TMP, $PYTHON and fail are set): the binary, YCSB flags of 1000 transactions per epoch
# with hot rows that make versions wait, and the reference databases after 1-4 epochs.
R=build/nvcaracal-caracal/rundb
[[ -x $R ]] || { echo "build it first: make ENGINE=nvcaracal CC_ALG=caracal" >&2; exit 1; }
IMG=$TMP/nvc.img
json() { "$PYTHON" -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$@"; }
BASE0=(--rows 20000 --requests 10 --read-ratio 0.2 --update-bytes 100 --hot-requests 4
       --warmup 0 --dram-size 200M --nvm-path "$IMG")
BASE=("${BASE0[@]}" --epoch-txns 1000)
B2=("${BASE[@]}" --threads 2)
# STATE[k]: the database digest after k epochs (2 threads x 500 k transactions); each run must
# have run exactly k epochs.
declare -A STATE
reference_states() {
  local k
  for k in 1 2 3 4; do
    $R "${B2[@]}" --txns $((k * 500)) --out "$TMP/ref$k.json" >/dev/null 2>"$TMP/err" || { cat "$TMP/err"; fail "run of $k epochs"; }
    [[ $(json "$TMP/ref$k.json" "d['results']['engine']['last_epoch']") == "$k" ]] || fail "a run of --txns $((k * 500)) ran other than $k epochs"
    STATE[$k]=$(json "$TMP/ref$k.json" "d['results']['engine']['state_checksum']")
  done
}
