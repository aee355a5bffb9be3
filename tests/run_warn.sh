#!/usr/bin/env bash
# Warnings: each tests/warn/*.zg announces its warnings as
#   // expect warning: LINE:COL: MESSAGE [-WNAME]
# and `zgc check` must print exactly these, in order, and exit 0; a file
# without annotations must print nothing.  Then the controls: -Wno-NAME
# turns one off, -Wno-all all of them, -Werror makes them errors (exit 1),
# an unknown -W gets a suggestion, `zgc help warnings` lists them, a
# library file (no workflow) gets no unused-declaration warnings, and the
# examples and the standard library are free of warnings.
set -u
zgc=$(realpath "${1:?usage: run_warn.sh ZGC}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$here/warn"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
for src in *.zg; do
  want=$(sed -n 's|^// expect warning: \(.*\)$|\1|p' "$src")
  out=$("$zgc" check "$src" 2>&1 >/dev/null)
  status=$?
  got=$(printf '%s\n' "$out" | sed -n "s|^$src:\([0-9]*:[0-9]*\): warning: \(.*\)$|\1: \2|p")
  other=$(printf '%s\n' "$out" | grep -E '^[^ ]+:[0-9]+:[0-9]+: (error|warning)' | grep -vc ': warning: ')
  if [ "$status" -ne 0 ]; then
    bad "$src: exit $status"; printf '%s\n' "$out" | head -5
  elif [ "$got" != "$want" ] || [ "$other" -ne 0 ]; then
    bad "$src:"; diff -u <(printf '%s\n' "$want") <(printf '%s\n' "$got") | tail -n +3
  elif [ -z "$want" ] && [ -n "$out" ]; then
    bad "$src printed: $out"
  else
    ok
  fi
done

# -Wno-NAME, -Wno-all, -WNAME after -Wno-all
n=$("$zgc" check -Wno-unused-const unused.zg 2>&1 | grep -c 'warning:')
[ "$n" = 2 ] && ok || bad "-Wno-unused-const left $n warnings"
out=$("$zgc" check -Wno-all unused.zg loops.zg 2>&1)
[ -z "$out" ] && ok || bad "-Wno-all printed: $out"
n=$("$zgc" check -Wno-all -Wendless-loop loops.zg 2>&1 | grep -c 'warning:')
[ "$n" = 2 ] && ok || bad "-Wno-all -Wendless-loop gave $n warnings"
# -Werror: an error with the warning's name, exit 1; the build stops
out=$("$zgc" check -Werror lifeline.zg 2>&1)
[ $? = 1 ] && grep -q "lifeline.zg:4:16: error: lifeline .Observer. takes part in nothing in workflow .w. \[-Werror,-Wunused-lifeline\]" <<< "$out" && ok || bad "-Werror: $out"
out=$("$zgc" build -Werror lifeline.zg -o "$(mktemp -d)/out" 2>&1)
[ $? = 1 ] && ok || bad "zgc build -Werror succeeded: $out"
# an unknown warning
out=$("$zgc" check -Wunused-varible unused.zg 2>&1)
[ $? = 2 ] && grep -q "unknown warning .-Wunused-varible.; did you mean .-Wunused-variable.?" <<< "$out" && ok || bad "unknown -W: $out"
# the list
out=$("$zgc" help warnings)
for w in unused-variable unused-const unused-action unused-lifeline endless-loop constant-guard unseen-lifeline; do
  grep -q -- "-W$w " <<< "$out" && ok || bad "zgc help warnings lacks -W$w"
done
# a library (no workflow of its own) declares for its importers
out=$("$zgc" check "$root/stdlib/llm.zg" 2>&1)
[ -z "$out" ] && ok || bad "a library got warnings: $out"
# the examples and the standard library are clean
for f in "$root"/examples/*.zg "$root"/examples/*/*.zg "$root"/stdlib/*.zg; do
  out=$("$zgc" check "$f" 2>&1)
  [ -z "$out" ] && ok || bad "$f: $out"
done
echo "warn: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
