# Every pair (ALL_PAIRS) builds side by side into its own folder; an unknown pair is refused with
# a message naming it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

for cc in "${ALL_PAIRS[@]}"; do
  make --no-print-directory -j2 ENGINE="${cc%%-*}" CC_ALG="${cc#*-}" >"$TMP/build-$cc.log" 2>&1 ||
    { tail -30 "$TMP/build-$cc.log" >&2; fail "make for $cc failed"; }
done
for cc in "${ALL_PAIRS[@]}"; do
  [[ -x "$(rundb_of "$cc")" ]] || fail "$(rundb_of "$cc") missing after building both pairs"
done
cmp -s "$(rundb_of no_wait)" "$(rundb_of silo)" && fail "the two pairs built the same binary"
say "built: $(for cc in "${ALL_PAIRS[@]}"; do printf '%s ' "build/$cc/rundb"; done)"

expect_error nonzero "ENGINE=nope" make --no-print-directory ENGINE=nope
expect_error nonzero "CC_ALG=nope" make --no-print-directory ENGINE=mmdb CC_ALG=nope
[[ ! -e build/nope-no_wait && ! -e build/mmdb-nope ]] || fail "an unknown pair left a build folder"
say "unknown pairs refused"
