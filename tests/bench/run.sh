#!/usr/bin/env bash
# The benchmarks' own tools, without running a benchmark:
# - bench/pingpong/footprint_count.c on made-up lackey traces whose lines
#   per iteration are known (and its errors);
# - bench/pingpong/run and compare refusing two placements at once;
# - bench/pingpong/ladder's and placements' option errors;
# - a wrong result of a timed two-process run ending the script.
#
#   tests/bench/run.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "tests/bench: $*" >&2; exit 1; }

cc -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -o "$tmp/count" \
  "$root/bench/pingpong/footprint_count.c"

# trace N: a start of 5 accesses, then N iterations of 6 accesses that
# touch 3 lines of code (one fetch crosses from line 0x41 into 0x42) and
# 3 of data (a store crosses from 0x200 into 0x201), and valgrind's own
# lines, which are not accesses
trace() {
  {
    echo "==123== Lackey, an example Valgrind tool"
    for a in 4000 4010 4020 4030; do echo "I  0000$a,4"; done
    echo " L 00009000,8"
    for _ in $(seq "$1"); do
      echo "I  00001000,4"
      echo "I  00001040,4"
      echo "I  0000107e,4"
      echo " L 00008000,8"
      echo " S 0000803c,8"
      echo " M 00009400,4"
    done
    echo "==123== "
  } > "$2"
}
trace 40 "$tmp/t40"
trace 80 "$tmp/t80"
got=$("$tmp/count" "$tmp/t40" "$tmp/t80" 40)
[ "$got" = "accesses 6 code_lines 3 data_lines 3" ] || fail "footprint_count: got '$got'"

# its errors: a usage, a missing trace, a longer run that made no more accesses
set +e
"$tmp/count" "$tmp/t40" > /dev/null 2>&1
[ $? = 2 ] || fail "footprint_count without its arguments did not exit 2"
out=$("$tmp/count" "$tmp/none" "$tmp/t80" 40 2>&1)
[ $? = 1 ] && [[ $out == *"$tmp/none: No such file"* ]] || fail "footprint_count, missing trace: '$out'"
out=$("$tmp/count" "$tmp/t80" "$tmp/t40" 40 2>&1)
[ $? = 1 ] && [[ $out == *"made no more accesses"* ]] || fail "footprint_count, shorter 2N run: '$out'"

# two placements at once (the build directory and the builds do not
# exist: were the options taken, the scripts would fail at once anyway)
for s in run compare ladder; do
  args=(--one-core --split "$tmp/no-build")
  [ $s = compare ] && args=("$tmp/count" "$tmp/count" --split --one-core)
  [ $s = ladder ] && args=("$tmp/count" --split --one-core)
  out=$("$root/bench/pingpong/$s" "${args[@]}" 2>&1)
  [ $? = 2 ] && [[ $out == *"choose different placements"* ]] || fail "bench/pingpong/$s: '$out'"
done
out=$("$root/bench/pingpong/ladder" "$tmp/count" --runs 0 2>&1)
[ $? = 2 ] && [[ $out == *"need positive numbers"* ]] || fail "bench/pingpong/ladder --runs 0: '$out'"
"$root/bench/pingpong/ladder" > /dev/null 2>&1
[ $? = 2 ] || fail "bench/pingpong/ladder without a zgc did not exit 2"

# a two-process run whose result is wrong ends the script that timed it
# (bench/pingpong/placement.sh: pp_run's check, inside $(...)), with A
# and B stand-ins that answer at once
mkdir -p "$tmp/wrong"
printf '#!/bin/sh\necho "{\\"0\\": 7}"\n' > "$tmp/wrong/pingpong.A"
printf '#!/bin/sh\nexit 0\n' > "$tmp/wrong/pingpong.B"
chmod +x "$tmp/wrong/pingpong.A" "$tmp/wrong/pingpong.B"
cat > "$tmp/timed.sh" << EOF
set -euo pipefail
. "$root/bench/pingpong/placement.sh"
tmp=$tmp
v=()
v+=("\$(pp_per_iter timed.sh "$tmp/wrong" 10)")
echo "went on with \${v[*]}"
EOF
out=$(bash "$tmp/timed.sh" 2>&1)
[ $? != 0 ] && [[ $out == *"timed.sh: $tmp/wrong/pingpong.A returned '{\"0\": 7}'"* ]] &&
  [[ $out != *"went on"* ]] || fail "pp_per_iter with a wrong result: '$out'"

# placements: its option errors (no build directory, --runs 0, an unknown
# option: exit 2 before anything runs)
out=$("$root/bench/pingpong/placements" "$tmp/no-build" 2>&1)
[ $? = 2 ] && [[ $out == *"no $tmp/no-build/zgc"* ]] || fail "bench/pingpong/placements, no build: '$out'"
out=$("$root/bench/pingpong/placements" "$tmp" --runs 0 2>&1)
[ $? = 2 ] && [[ $out == *"--runs needs a positive number"* ]] || fail "bench/pingpong/placements --runs 0: '$out'"
out=$("$root/bench/pingpong/placements" --fast 2>&1)
[ $? = 2 ] && [[ $out == *"unknown option --fast"* ]] || fail "bench/pingpong/placements --fast: '$out'"

# the floor's rungs: a receive timeout and a second thread change no
# result, and bad values are refused
cc -O2 -o "$tmp/floor" "$root/bench/pingpong/floor_socketpair.c" -lcrypto
out=$("$tmp/floor" --tag --rcvtimeo 50 --thread 2000)
[ $? = 0 ] && [[ $out =~ ^[0-9]+\.[0-9]$ ]] || fail "floor --tag --rcvtimeo 50 --thread: '$out'"
out=$("$tmp/floor" --rcvtimeo 0 2000 2>&1)
[ $? = 2 ] && [[ $out == *"positive number of ms"* ]] || fail "floor --rcvtimeo 0: '$out'"
# the tag's stand-ins: a busy wait and padding run (with the tag too:
# the reader then checks the tag before the padding), bad values refused
out=$("$tmp/floor" --busy 100 --pad 16 2000)
[ $? = 0 ] && [[ $out =~ ^[0-9]+\.[0-9]$ ]] || fail "floor --busy 100 --pad 16: '$out'"
out=$("$tmp/floor" --tag --pad 8 2000)
[ $? = 0 ] && [[ $out =~ ^[0-9]+\.[0-9]$ ]] || fail "floor --tag --pad 8: '$out'"
out=$("$tmp/floor" --pad 33 2000 2>&1)
[ $? = 2 ] && [[ $out == *"1 to 32 bytes"* ]] || fail "floor --pad 33: '$out'"
out=$("$tmp/floor" --busy 0 2000 2>&1)
[ $? = 2 ] && [[ $out == *"positive number of ns"* ]] || fail "floor --busy 0: '$out'"
set -e
echo "tests/bench: passed"
