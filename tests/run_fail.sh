#!/usr/bin/env bash
# Rejected programs: each tests/fail/*.zg starts with annotations
#   // expect error: LINE:COL: MESSAGE
# and `zgc check` must exit 1 and print exactly these errors, in order
# (source excerpts are not compared).  An error in another file (one the
# program imports, from tests/fail/lib/) is announced as
#   // expect error: PATH:LINE:COL: MESSAGE
# Notes are compared too in a file that announces any, in order with the
# errors:
#   // expect note: [PATH:]LINE:COL: MESSAGE
set -u
zgc=$(realpath "${1:?usage: run_fail.sh ZGC}")
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/fail"
pass=0 fail=0
for src in *.zg; do
  [ -e "$src" ] || continue
  want=$(sed -n 's|^// expect error: \(.*\)$|\1|p' "$src")
  notes=$(grep -c '^// expect note: ' "$src")
  if [ -z "$want" ]; then
    echo "FAIL $src: no '// expect error:' annotation"
    fail=$((fail + 1))
    continue
  fi
  out=$("$zgc" check "$src" 2>&1 >/dev/null)
  status=$?
  # errors in $src as LINE:COL: MESSAGE, in other files as PATH:LINE:COL: MESSAGE
  got=$(printf '%s\n' "$out" | sed -n -e "s|^$src:\([0-9]*:[0-9]*\): error: \(.*\)$|\1: \2|p" \
    -e "s|^\([^ :]*\.zg:[0-9]*:[0-9]*\): error: \(.*\)$|\1: \2|p")
  if [ "$notes" -gt 0 ]; then
    want=$(sed -n 's|^// expect \(error\|note\): \(.*\)$|\1: \2|p' "$src")
    got=$(printf '%s\n' "$out" |
      sed -n -e "s|^$src:\([0-9]*:[0-9]*\): \(error\|note\): \(.*\)$|\2: \1: \3|p" \
        -e "s|^\([^ :]*\.zg:[0-9]*:[0-9]*\): \(error\|note\): \(.*\)$|\2: \1: \3|p")
  fi
  if [ "$status" -ne 1 ]; then
    echo "FAIL $src: exit status $status, expected 1"
    printf '%s\n' "$out" | head -20
    fail=$((fail + 1))
  elif [ "$got" != "$want" ]; then
    echo "FAIL $src:"
    diff -u <(printf '%s\n' "$want") <(printf '%s\n' "$got") | tail -n +3
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
done
echo "fail: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
