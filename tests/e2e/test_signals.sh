# Ctrl-C and SIGTERM through real signals (issue 18 item 3). rundb is started with SIGINT at its
# default disposition (a job started with & from a script inherits SIGINT ignored, so a plain
# `rundb &` would prove nothing): the first signal in the measured phase ends it and prints the
# results so far marked interrupted, acknowledged commits recover; a signal during load exits at
# once; a second signal exits at once.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# start_rundb OUT ERR ARGS...: rundb of $cc in the background with SIGINT at SIG_DFL; sets PID.
start_rundb() {
  local out="$1" err="$2"
  shift 2
  "$PYTHON" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$(rundb_of "$cc")" "$@" >"$out" 2>"$err" &
  PID=$!
  BG_PIDS+=("$PID")
}
# wait_for COND WHAT: poll the shell condition COND for up to 30 s while $PID lives.
wait_for() {
  local i
  for i in $(seq 600); do
    eval "$1" && return 0
    kill -0 "$PID" 2>/dev/null || { cat "$TMP/err" >&2; fail "$cc exited before $2"; }
    sleep 0.05
  done
  fail "$cc: $2 did not happen within 30 s"
}
# The disposition rundb runs with: SIGINT (bit 2) not ignored, and caught by its handler.
sigint_caught() {
  local ign cgt
  ign=$(awk '/^SigIgn/ {print $2}' "/proc/$PID/status")
  cgt=$(awk '/^SigCgt/ {print $2}' "/proc/$PID/status")
  (( (0x$ign & 2) == 0 && (0x$cgt & 2) != 0 ))
}
finish() {  # finish RC_WANT WHAT: wait for $PID, which must exit RC_WANT
  local rc=0
  { wait "$PID"; } 2>/dev/null || rc=$?
  [[ $rc -eq $1 ]] || { cat "$TMP/err" >&2; fail "$cc $2: exited $rc, expected $1"; }
}
recover_checks() {  # every acknowledged commit of the interrupted run recovers
  local rc=0
  "$(rundb_of "$cc")" --recover --nvm-path "$img" --rows 20000 --verify-ack "$TMP/ack" \
      >"$TMP/rec.json" 2>"$TMP/rec.err" || rc=$?
  [[ $rc -eq 0 ]] || { cat "$TMP/rec.err" >&2; fail "$cc recovery after $1 exited $rc"; }
  check "$TMP/rec.json" "d['verification']['violations'] == 0" "$cc after $1: acknowledged commits lost"
  check "$TMP/rec.json" "d['verification']['acked_txns'] > 0" "$cc after $1: nothing acknowledged"
}

for cc in zen-silo mmdb-no_wait; do
  img="$TMP/$cc.img"
  # 1. SIGINT, then SIGTERM, in the measured phase: results so far, interrupted, 130 / 143.
  for sig in INT TERM; do
    rm -f "$TMP"/ack.*
    start_rundb "$TMP/out.json" "$TMP/err" --nvm-path "$img" --rows 20000 --warmup 0 --duration 60 \
        --ack-file "$TMP/ack"
    wait_for '[[ -s "$TMP/ack.0" ]]' "acknowledging a commit"
    sleep 0.3
    sigint_caught || fail "$cc: SIGINT is ignored or not caught by rundb (/proc/$PID/status)"
    kill -"$sig" "$PID"
    want=$([[ $sig == INT ]] && echo 130 || echo 143)
    finish "$want" "after SIG$sig"
    check "$TMP/out.json" "d['interrupted'] is True" "$cc SIG$sig: JSON not marked interrupted"
    check "$TMP/out.json" "d['results']['committed'] > 0 and d['results']['measured_s'] < 30" \
      "$cc SIG$sig: the results so far (committed, measured_s)"
    grep -q "INTERRUPTED" "$TMP/err" || fail "$cc SIG$sig: the summary does not say it was interrupted"
    recover_checks "SIG$sig"
    say "$cc SIG$sig: exit $want after $(json "$TMP/out.json" "round(d['results']['measured_s'], 2)") s," \
        "$(json "$TMP/rec.json" "d['verification']['acked_txns']") acked txns recovered"
  done
done

cc=mmdb-silo
img="$TMP/$cc.img"
# 2. A signal during the load exits at once, prints no results, and blocks no later run (the
# image being built is $img.new; the lock file the killed process left is stale).
start_rundb "$TMP/out.json" "$TMP/err" --nvm-path "$img" --rows 1000000 --warmup 0 --duration 1 --profile dram
wait_for '[[ -e "$img.new" ]]' "starting the load"
t0=$(date +%s%N)
kill -INT "$PID"
finish 130 "SIGINT during load"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[[ $ms -lt 3000 ]] || fail "$cc: SIGINT during load took $ms ms to exit"
[[ ! -s "$TMP/out.json" ]] || fail "$cc: results printed after SIGINT during load"
grep -q "during setup, load or recovery: exiting at once" "$TMP/err" || fail "$cc: no message for SIGINT during load"
"$(rundb_of "$cc")" --nvm-path "$img" --rows 20000 --txns 100 >/dev/null 2>"$TMP/err" ||
  { cat "$TMP/err" >&2; fail "$cc: a run after the interrupted load failed"; }
say "$cc SIGINT during load: exit 130 in $ms ms, no results; the next run is not blocked"

# 3. A second signal exits at once. stdout is a pipe nobody reads and the JSON (a 1 ms timeline)
# is larger than the pipe holds, so the first signal leaves rundb blocked printing it.
mkfifo "$TMP/pipe"
sleep 120 <"$TMP/pipe" &  # holds the pipe open for reading, reads nothing
reader=$!
BG_PIDS+=("$reader")
start_rundb "$TMP/pipe" "$TMP/err" --nvm-path "$img" --rows 20000 --warmup 0 --duration 60 --timeline-ms 1
sleep 8  # about 150 KB of timeline (18 KB a second)
kill -0 "$PID" 2>/dev/null || { cat "$TMP/err" >&2; fail "$cc exited before the first SIGINT"; }
kill -INT "$PID"
wait_for 'grep -q "ending the run at the next transaction boundary" "$TMP/err"' "taking the first SIGINT"
sleep 0.5
kill -0 "$PID" 2>/dev/null || fail "$cc: exited although its stdout pipe is full (the test would prove nothing)"
kill -INT "$PID"
finish 130 "second SIGINT"
grep -q "SIGINT again: exiting at once" "$TMP/err" || fail "$cc: no message for the second SIGINT"
say "$cc: second SIGINT while printing exits 130 at once"
kill -9 "$reader"
{ wait "$reader"; } 2>/dev/null || true
