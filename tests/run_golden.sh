#!/usr/bin/env bash
# Golden tests: `zgc project` and `zgc guards` of every example and of every
# tests/golden/*.zg, `zgc guards --plan` of those with a CPL guard, and
# `zgc project --global` with and without --unexpanded of those that import
# files or declare fragments, must equal the stored outputs in tests/golden/
# (<name>.project, <name>.guards, <name>.plan, <name>.global,
# <name>.written).
#   run_golden.sh ZGC            compare
#   run_golden.sh ZGC --update   rewrite the stored outputs
set -u
zgc=$(realpath "${1:?usage: run_golden.sh ZGC [--update]}")
update=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"
pass=0 fail=0
for src in examples/*.zg tests/golden/*.zg; do
  [ -e "$src" ] || continue
  name=$(basename "$src" .zg)
  [ "${src%%/*}" = examples ] && name="example-$name"
  whats="project guards"
  # the monitor plan of the programs that have one
  "$zgc" guards "$src" 2>/dev/null | grep -q '^  kind: cpl$' && whats="$whats plan"
  # the expanded and the written workflow of the programs with fragments
  grep -qE '^(import|fragment) ' "$src" && whats="$whats global written"
  if [ "${whats/ plan/}" = "$whats" ] && [ -f "tests/golden/$name.plan" ]; then
    if [ "$update" = "--update" ]; then
      rm -f "tests/golden/$name.plan"
    else
      echo "FAIL $src (plan): stored tests/golden/$name.plan but no CPL guard"
      fail=$((fail + 1))
    fi
  fi
  for what in $whats; do
    want="tests/golden/$name.$what"
    case $what in
    plan) got=$("$zgc" guards --plan "$src" 2>&1; echo "exit $?") ;;
    global) got=$("$zgc" project --global "$src" 2>&1; echo "exit $?") ;;
    written) got=$("$zgc" project --global --unexpanded "$src" 2>&1; echo "exit $?") ;;
    *) got=$("$zgc" "$what" "$src" 2>&1; echo "exit $?") ;;
    esac
    if [ "$update" = "--update" ]; then
      printf '%s\n' "$got" > "$want"
      continue
    fi
    if [ ! -f "$want" ]; then
      echo "FAIL $src ($what): no stored output $want (run with --update)"
      fail=$((fail + 1))
    elif diff -u "$want" <(printf '%s\n' "$got") > /tmp/zgc-golden.$$; then
      pass=$((pass + 1))
    else
      echo "FAIL $src ($what):"
      cat /tmp/zgc-golden.$$
      fail=$((fail + 1))
    fi
  done
done
rm -f /tmp/zgc-golden.$$
[ "$update" = "--update" ] && { echo "golden outputs updated"; exit 0; }
echo "golden: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
