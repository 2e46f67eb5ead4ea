# Every valid pair (`make pairs`) builds side by side into its own folder, two builds at a time,
# and survives a small crash torture; an unknown pair is refused with a message naming it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
source "$(dirname "${BASH_SOURCE[0]}")/../lanes.sh"

# The Makefile names every valid pair (each engine's supports<CC>); all of them are built here.
VALID=" $(make --no-print-directory -s pairs) "
read -ra EVERY <<<"$VALID"
for cc in "${ALL_PAIRS[@]}"; do
  [[ "$VALID" == *" $cc "* ]] || fail "$cc is not a valid pair per 'make pairs':$VALID"
done
for cc in zen-mcsi mmdb-pgsi nvmvcc-silo; do
  [[ "$VALID" != *" $cc "* ]] || fail "'make pairs' lists the unsupported pair $cc"
done
# Each pair's own build is one single-threaded compile (system/rundb.cpp); the engine-independent
# objects are shared (build/common/, written to a temporary file and renamed, so concurrent
# makes are safe). They are built first with -j$(nproc), then the pairs $(nproc) at a time.
build_pair() {
  make --no-print-directory ENGINE="${1%%-*}" CC_ALG="${1#*-}" >"$TMP/build-$1.log" 2>&1 ||
    { tail -30 "$TMP/build-$1.log" >&2; echo "FAIL: make for $1 failed" >&2; return 255; }
}
export -f build_pair
export TMP
t0=$SECONDS
make --no-print-directory -j"$(nproc)" common >"$TMP/build-common.log" 2>&1 ||
  { tail -30 "$TMP/build-common.log" >&2; fail "make common failed"; }
printf '%s\n' "${EVERY[@]}" | xargs -P "$(nproc)" -I{} bash -c 'build_pair {}' ||
  fail "a pair failed to build"
for cc in "${EVERY[@]}"; do
  [[ -x "$(rundb_of "$cc")" ]] || fail "$(rundb_of "$cc") missing after building every pair"
done
cmp -s "$(rundb_of mmdb-no_wait)" "$(rundb_of mmdb-silo)" && fail "two pairs built the same binary"
say "built ${#EVERY[@]} pairs: ${EVERY[*]}"
took build-of-every-pair "$t0"

# Every pair through a few power-failure rounds (scripts/torture.py; the long runs are
# `make crash`): each must recover every acknowledged transaction, and the rounds must have
# tested something: at least one crashed after the load, and acknowledged transactions checked.
# One per core at a time (each keeps about one core busy), reported in order.
T_ROUNDS=${T_ROUNDS:-3}
t0=$SECONDS
for cc in "${EVERY[@]}"; do
  lane "$TMP/torture-$cc" "$PYTHON" scripts/torture.py --engine "${cc%%-*}" --cc "${cc#*-}" --rounds "$T_ROUNDS" \
    --duration 0.5 --min-crashed-share 0.3 --min-acked 1
done
wait
for cc in "${EVERY[@]}"; do
  read -r rc _ <"$TMP/torture-$cc.rc"
  [[ $rc -eq 0 ]] || { cat "$TMP/torture-$cc.out" "$TMP/torture-$cc.err" >&2; fail "torture of $cc exited $rc"; }
  say "torture $cc: $(json "$TMP/torture-$cc.out" \
    "f\"{d['crashed_rounds']}/{d['rounds']} rounds crashed after the load, {d['acked_txns_checked']} acked txns checked\"")"
done
took "torture-of-every-pair-x$T_ROUNDS" "$t0"

expect_error nonzero "ENGINE=nope" make --no-print-directory ENGINE=nope
expect_error nonzero "CC_ALG=nope" make --no-print-directory ENGINE=mmdb CC_ALG=nope
[[ ! -e build/nope-no_wait && ! -e build/mmdb-nope ]] || fail "an unknown pair left a build folder"
say "unknown pairs refused"
# An engine that does not support a CC method fails to compile, naming the pair (only the
# object that instantiates the pair is built).
out="$(make --no-print-directory ENGINE=zen CC_ALG=mcsi build/zen-mcsi/system/rundb.o 2>&1)" &&
  fail "ENGINE=zen CC_ALG=mcsi compiled"
grep -q "unsupported engine-CC pair: ENGINE=zen CC_ALG=mcsi" <<<"$out" ||
  fail "zen-mcsi refused without naming the pair: $(tail -5 <<<"$out")"
rm -rf build/zen-mcsi
say "unsupported pair zen-mcsi refused at compile time"
