#!/usr/bin/env bash
# Rejected programs: each tests/fail/*.zg starts with annotations
#   // expect error: LINE:COL: MESSAGE
# and `zgc check` must exit 1 and print exactly these errors, in order
# (notes and source excerpts are not compared).
set -u
zgc=$(realpath "${1:?usage: run_fail.sh ZGC}")
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/fail"
pass=0 fail=0
for src in *.zg; do
  [ -e "$src" ] || continue
  want=$(sed -n 's|^// expect error: \(.*\)$|\1|p' "$src")
  if [ -z "$want" ]; then
    echo "FAIL $src: no '// expect error:' annotation"
    fail=$((fail + 1))
    continue
  fi
  out=$("$zgc" check "$src" 2>&1 >/dev/null)
  status=$?
  got=$(printf '%s\n' "$out" | sed -n "s|^$src:\([0-9]*:[0-9]*\): error: \(.*\)$|\1: \2|p")
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
