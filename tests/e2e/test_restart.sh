# The restart test: kill -9 a running pair at several moments, recover the image in a fresh
# process and check every acknowledged commit survived and no transaction is partly visible;
# then recover the recovered image again and get the same result.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DELAYS=(1.0 1.6 2.4)
for cc in "${PAIRS[@]}"; do
  t0=$SECONDS
  bin="$(rundb_of "$cc")"
  for delay in "${DELAYS[@]}"; do
    dir="$TMP/$cc-$delay"
    mkdir -p "$dir"
    img="$dir/nvm.img"
    "$bin" --nvm-path "$img" --ack-file "$dir/ack" --rows 20000 --read-ratio 0.2 --theta 0.6 \
        --duration 30 --checkpoint after-load >"$dir/run.json" 2>"$dir/run.err" &
    pid=$!
    BG_PIDS+=("$pid")
    sleep "$delay"
    kill -0 "$pid" 2>/dev/null || { cat "$dir/run.err" >&2; fail "$cc exited before the kill at ${delay}s"; }
    kill -9 "$pid"
    rc=0
    { wait "$pid"; } 2>/dev/null || rc=$?  # (quiet: no "Killed" job notice)
    [[ $rc -eq 137 ]] || fail "$cc: expected death by SIGKILL (137), got $rc"
    [[ -s "$dir/ack.0" ]] || fail "$cc: no acknowledgements written before the kill at ${delay}s"

    for round in 1 2; do
      recover_round "$cc" "$bin" "$img" "$dir" "$round" "$delay"
      f="$dir/rec$round.json"
      check "$f" "d['verification']['acked_writes_checked'] > 0" "$cc recovery $round: no write checked"
      check "$f" "d['recovery']['rows'] == 20000" "$cc recovery $round: row count"
      check "$f" "d['config']['engine'] + '-' + d['config']['cc'] == '$cc'" "$cc recovery $round: config names the pair"
      check "$f" "d['config']['engine'] != 'mmdb' or 0 < d['recovery']['counts']['redo_pieces']" "$cc recovery $round: no redo piece resolved"
      check "$f" "set(d['recovery']['steps_cpu_s']) == set(d['recovery']['steps_s']) and min(d['recovery']['steps_cpu_s'].values()) >= 0 and 0 < sum(d['recovery']['steps_cpu_s'].values())" "$cc recovery $round: a CPU time for every step"
    done
    # Recovering the recovered image again reads the same checkpoint and log: same result.
    for key in "d['verification']" "d['recovery']['rows']" "d['recovery']['replayed']"; do
      a="$(json "$dir/rec1.json" "$key")"
      b="$(json "$dir/rec2.json" "$key")"
      [[ "$a" == "$b" ]] || fail "$cc: second recovery differs in $key: $a vs $b"
    done
    say "$cc killed at ${delay}s: $(json "$dir/rec1.json" "d['verification']['acked_txns']") acked txns," \
        "$(json "$dir/rec1.json" "d['recovery']['replayed']") log entries replayed, 0 violations (twice)"
    rm -rf "$dir"
  done
  took "restart-$cc" "$t0"
done
