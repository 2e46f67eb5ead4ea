# Hostile flags: every bad value is refused with exit status 2 and a message naming the flag;
# recovery from a missing image or from another layout's image is refused with a clear message.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

bin="$(rundb_of mmdb-no_wait)"
img="$TMP/flags.img"
bad() {  # bad FLAG ARGS...: rundb ARGS must exit 2 naming FLAG
  local flag="$1"
  shift
  expect_error 2 "$flag" "$bin" --nvm-path "$img" "$@"
  [[ ! -e "$img" ]] || fail "a refused run ($*) created the NVM image"
}
bad --threads --threads 0
bad --threads --threads -3
bad --threads --threads abc
bad --theta --theta 1.5
bad --theta --theta -0.1
bad --read-ratio --read-ratio 2
bad --rows --rows 0
bad --nvm-size --nvm-size 12X
bad --profile --profile optane-900
bad --requests --requests 50 --rows 10
bad --duration --duration 0
bad --verify-ack --verify-ack "$TMP/ack"
bad --checkpoint-fill --checkpoint-fill 0
bad --checkpoint-fill --checkpoint-fill 1.5
bad --group-commit-us --group-commit-us 0
bad --group-commit-us --group-commit-us -100
bad --group-commit-us --group-commit-us 5000000
bad --group-commit-us --group-commit-us 1.5
say "bad flags refused with exit 2"

missing="$TMP/no-such-dir/missing.img"
expect_error nonzero "$missing" "$bin" --recover --rows 20000 --nvm-path "$missing"
say "--recover on a missing image names the path"

"$bin" --rows 20000 --warmup 0 --duration 0.1 --nvm-path "$img" >"$TMP/layout.json" 2>"$TMP/layout.err" ||
  { cat "$TMP/layout.err" >&2; fail "run to make an image failed"; }
expect_error 2 "--rows: the image $img holds --rows 20000, not the 30000 given" "$bin" --recover --rows 30000 --nvm-path "$img"
"$bin" --recover --nvm-path "$img" >"$TMP/rec.json" 2>"$TMP/rec.err" ||
  { cat "$TMP/rec.err" >&2; fail "the image was damaged by the refused recovery"; }
check "$TMP/rec.json" "d['recovery']['rows'] == 20000" "recovery of the matching layout restores every row"
say "a flag that contradicts the image is refused by name; --recover reads --rows from the image"

# An MMDB or Zen image given to a WBL recovery is refused, naming the engine that wrote it.
for other in mmdb-no_wait zen-no_wait; do
  "$(rundb_of "$other")" --rows 20000 --warmup 0 --duration 0.1 --nvm-path "$TMP/other.img" >/dev/null 2>"$TMP/other.err" ||
    { cat "$TMP/other.err" >&2; fail "run to make a $other image failed"; }
  expect_error 1 "engine=${other%%-*}" "$(rundb_of wbl-no_wait)" --recover --rows 20000 --nvm-path "$TMP/other.img"
  grep -q "engine=wbl" "$TMP/stderr" || fail "the refusal does not name wbl: $(cat "$TMP/stderr")"
  rm -f "$TMP/other.img"
done
say "mmdb and zen images refused by a wbl recovery, by name"

# A file that is not an image, and a truncated image.
head -c 1048576 /dev/zero >"$TMP/zeros.img"
expect_error nonzero "not an nvtestbed NVM image" "$bin" --recover --rows 20000 --nvm-path "$TMP/zeros.img"
truncate -s 4M "$img"
expect_error nonzero "truncated" "$bin" --recover --rows 20000 --nvm-path "$img"
say "foreign and truncated images refused"

# A full file system: an image larger than the file system can hold is refused before it is
# made, naming its size and the free space, leaves no partial file behind, and the valid image
# at that path stays recoverable.
"$bin" --rows 20000 --warmup 0 --duration 0.1 --nvm-path "$img" >/dev/null 2>"$TMP/full.err" ||
  { cat "$TMP/full.err" >&2; fail "run to make an image failed"; }
expect_error 1 "of 100.0 TiB: its file system ($(dirname "$img")) has " "$bin" --rows 20000 --nvm-size 100T --nvm-path "$img"
grep -q " free$" "$TMP/stderr" || fail "the refusal does not name the free space: $(cat "$TMP/stderr")"
[[ ! -e "$img.new" ]] || fail "a refused image creation left $img.new behind"
"$bin" --recover --rows 20000 --nvm-path "$img" >"$TMP/rec.json" 2>"$TMP/rec.err" ||
  { cat "$TMP/rec.err" >&2; fail "the valid image was lost to a run on a full file system"; }
check "$TMP/rec.json" "d['recovery']['rows'] == 20000" "recovery after a full file system restores every row"
say "a full file system is a clear error and the old image stays recoverable"
