# Commands one per core at a time, each with its output in files of its own (the crash
# tortures: each keeps about one core busy). `lane F cmd...` starts cmd once a core is free,
# writing F.out, F.err and F.rc ("exit-status seconds"); `wait` for them all, then report each
# in order from its files.
lane() {
  local f=$1
  shift
  while (($(jobs -rp | wc -l) >= $(nproc))); do wait -n || true; done
  (t0=$SECONDS rc=0; "$@" >"$f.out" 2>"$f.err" || rc=$?; echo "$rc $((SECONDS - t0))" >"$f.rc") &
}
