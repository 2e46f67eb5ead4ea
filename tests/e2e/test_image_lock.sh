# An image in use is locked (issue 18 item 2): a second rundb on the --nvm-path of a running one,
# a run or a --recover, is refused with exit 1 naming the path and the holder, and leaves the
# image untouched (the first run's acknowledged commits still recover); the lock file a killed
# process leaves behind blocks nothing.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

cc=mmdb-silo
bin="$(rundb_of "$cc")"
img="$TMP/nvm.img"
wait_acked() {
  local i
  for i in $(seq 600); do
    [[ -s "$TMP/ack.0" ]] && return 0
    kill -0 "$pid" 2>/dev/null || { cat "$TMP/run.err" >&2; fail "$cc exited before acknowledging"; }
    sleep 0.05
  done
  fail "$cc acknowledged nothing within 30 s"
}

"$bin" --nvm-path "$img" --ack-file "$TMP/ack" --rows 20000 --warmup 0 --duration 60 \
    >"$TMP/run.json" 2>"$TMP/run.err" &
pid=$!
BG_PIDS+=("$pid")
wait_acked
before=$(stat -c '%i %s' "$img")
expect_error 1 "NVM image $img is in use by another process (pid $pid" \
  "$bin" --nvm-path "$img" --rows 20000 --txns 10
expect_error 1 "$img.lock" "$(rundb_of zen-silo)" --nvm-path "$img" --rows 20000 --txns 10
expect_error 1 "is in use by another process (pid $pid" "$bin" --recover --nvm-path "$img" --rows 20000
[[ "$(stat -c '%i %s' "$img")" == "$before" ]] || fail "a refused run replaced or resized the image"
kill -0 "$pid" 2>/dev/null || fail "the first run died while others were refused"
kill -TERM "$pid"
rc=0
{ wait "$pid"; } 2>/dev/null || rc=$?
[[ $rc -eq 143 ]] || { cat "$TMP/run.err" >&2; fail "the first run exited $rc after SIGTERM, expected 143"; }
[[ ! -e "$img.lock" ]] || fail "a run that ended left its lock file"
rc=0
"$bin" --recover --nvm-path "$img" --rows 20000 --verify-ack "$TMP/ack" >"$TMP/rec.json" 2>"$TMP/rec.err" || rc=$?
[[ $rc -eq 0 ]] || { cat "$TMP/rec.err" >&2; fail "recovery of the first run's image exited $rc"; }
check "$TMP/rec.json" "d['verification']['violations'] == 0 and d['verification']['acked_txns'] > 0" \
  "the first run's acknowledged commits after the refused runs"
say "a second run and a --recover on a running image refused (exit 1, pid $pid named); its" \
    "$(json "$TMP/rec.json" "d['verification']['acked_txns']") acked txns recovered"

# kill -9 leaves the lock file with a dead pid in it: the kernel dropped the lock, so it blocks nothing.
rm -f "$TMP"/ack.*
"$bin" --nvm-path "$img" --ack-file "$TMP/ack" --rows 20000 --warmup 0 --duration 60 \
    >"$TMP/run.json" 2>"$TMP/run.err" &
pid=$!
BG_PIDS+=("$pid")
wait_acked
kill -9 "$pid"
{ wait "$pid"; } 2>/dev/null || true
[[ "$(cat "$img.lock")" == "$pid" ]] || fail "the killed run's lock file does not hold its pid"
rc=0
"$bin" --recover --nvm-path "$img" --rows 20000 --verify-ack "$TMP/ack" >"$TMP/rec.json" 2>"$TMP/rec.err" || rc=$?
[[ $rc -eq 0 ]] || { cat "$TMP/rec.err" >&2; fail "--recover after kill -9 exited $rc (stale lock?)"; }
check "$TMP/rec.json" "d['verification']['violations'] == 0" "acknowledged commits after kill -9"
"$bin" --nvm-path "$img" --rows 20000 --txns 10 >/dev/null 2>"$TMP/err" ||
  { cat "$TMP/err" >&2; fail "a new run after kill -9 failed (stale lock?)"; }
say "the lock file of a kill -9'd run blocks neither --recover nor a new run"
