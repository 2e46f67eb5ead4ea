# Shared helpers of the end-to-end tests (sourced). Every test works in its own directory under
# /dev/shm, removed on exit, and kills only the processes it started.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
source scripts/python.sh
PAIRS=(mmdb-no_wait mmdb-silo zen-no_wait zen-silo nvmvcc-mcsi nvmvcc-pgsi wbl-no_wait wbl-silo)  # ENGINE-CC_ALG
# The multi-version methods on the three engines: built and run tiny (not in the restart test).
MV_PAIRS=(mmdb-mvcc zen-mvcc mmdb-hekaton zen-hekaton mmdb-cicada zen-cicada wbl-mvcc wbl-hekaton wbl-cicada)
ALL_PAIRS=("${PAIRS[@]}" "${MV_PAIRS[@]}")

TMP="$(mktemp -d /dev/shm/nvt-e2e.XXXXXX)"
BG_PIDS=()
cleanup() {
  local p
  for p in "${BG_PIDS[@]:-}"; do
    [[ -n "$p" ]] && kill -9 "$p" 2>/dev/null || true
  done
  rm -rf "$TMP"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
say() { echo "  $*" >&2; }
# took NAME T0: `ok   NAME (N s)` for a part of a script that passed, N its seconds since T0
# (bash's SECONDS), so the stage's ten slowest (scripts/slowest.py) name parts, not just scripts.
took() { echo "ok   $1 ($((SECONDS - $2)) s)" >&2; }

rundb_of() { echo "$ROOT/build/$1/rundb"; }

# json FILE EXPR: print the Python expression EXPR evaluated with d = the JSON object in FILE.
json() {
  "$PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

# check FILE COND WHAT: fail unless the Python condition COND (over d) holds for FILE's JSON.
check() {
  local file="$1" cond="$2" what="$3"
  "$PYTHON" -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$file" "$cond" || fail "$what (condition: $cond; file: $file)"
}

# expect_error RC_WANT NEEDLE CMD...: run CMD; its exit status must be RC_WANT ("nonzero" for
# any failure) and its stderr must contain NEEDLE.
expect_error() {
  local want="$1" needle="$2"
  shift 2
  local rc=0
  "$@" >"$TMP/stdout" 2>"$TMP/stderr" || rc=$?
  if [[ "$want" == nonzero ]]; then
    [[ $rc -ne 0 ]] || fail "'$*' succeeded; expected a failure naming '$needle'"
  else
    [[ $rc -eq $want ]] || fail "'$*' exited $rc, expected $want; stderr: $(head -c 600 "$TMP/stderr")"
  fi
  grep -qF -- "$needle" "$TMP/stderr" ||
    fail "'$*' (exit $rc) does not mention '$needle'; stderr: $(head -c 600 "$TMP/stderr")"
}

# Round `round` of recovering a killed run's image in a fresh process: it must exit 0, lose no
# acknowledged commit and have acknowledged some. The result is $dir/rec$round.json, for the
# caller's own checks. Usage: recover_round LABEL BIN IMAGE DIR ROUND DELAY
recover_round() {
  local label=$1 bin=$2 img=$3 dir=$4 round=$5 delay=$6 rc=0
  "$bin" --recover --nvm-path "$img" --rows 20000 --verify-ack "$dir/ack" \
      >"$dir/rec$round.json" 2>"$dir/rec$round.err" || rc=$?
  [[ $rc -eq 0 ]] || { cat "$dir/rec$round.err" >&2; fail "$label recovery $round after kill at ${delay}s exited $rc"; }
  check "$dir/rec$round.json" "d['verification']['violations'] == 0" "$label recovery $round: acknowledged commits lost or partial (${delay}s)"
  check "$dir/rec$round.json" "d['verification']['acked_txns'] > 0" "$label recovery $round: nothing acknowledged (${delay}s)"
}
