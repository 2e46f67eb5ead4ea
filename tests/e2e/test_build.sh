# Every pair (ALL_PAIRS) builds side by side into its own folder; an unknown pair is refused with
# a message naming it.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The Makefile names every valid pair (each engine's supports<CC>); the pairs built here are some.
VALID=" $(make --no-print-directory -s pairs) "
for cc in "${ALL_PAIRS[@]}"; do
  [[ "$VALID" == *" $cc "* ]] || fail "$cc is not a valid pair per 'make pairs':$VALID"
done
for cc in zen-mcsi mmdb-pgsi nvmvcc-silo; do
  [[ "$VALID" != *" $cc "* ]] || fail "'make pairs' lists the unsupported pair $cc"
done
for cc in "${ALL_PAIRS[@]}"; do
  make --no-print-directory -j2 ENGINE="${cc%%-*}" CC_ALG="${cc#*-}" >"$TMP/build-$cc.log" 2>&1 ||
    { tail -30 "$TMP/build-$cc.log" >&2; fail "make for $cc failed"; }
done
for cc in "${ALL_PAIRS[@]}"; do
  [[ -x "$(rundb_of "$cc")" ]] || fail "$(rundb_of "$cc") missing after building both pairs"
done
cmp -s "$(rundb_of mmdb-no_wait)" "$(rundb_of mmdb-silo)" && fail "two pairs built the same binary"
say "built: $(for cc in "${ALL_PAIRS[@]}"; do printf '%s ' "build/$cc/rundb"; done)"

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
