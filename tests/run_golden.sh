#!/usr/bin/env bash
# Golden tests: `zgc project` and `zgc guards` of every example and of every
# tests/golden/*.zg must equal the stored outputs in tests/golden/
# (<name>.project, <name>.guards).
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
  for what in project guards; do
    want="tests/golden/$name.$what"
    got=$("$zgc" "$what" "$src" 2>&1; echo "exit $?")
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
