#!/usr/bin/env bash
# Stores and their race analysis (docs/language.md §11), with zgc:
#   - every topology of examples/topologies checks clean (`zgc check`
#     prints nothing), and `zgc anomalies --static` prints its stored
#     table (golden/<name>.static); its --json form is valid JSON that
#     says the same (stores, levels, racing pairs);
#   - exactly the six topologies of examples/topologies/README.md are
#     susceptible to A1, the ten others immune;
#   - the cases of cases/ (loops, branches, parallel on one lifeline,
#     knowledge that goes stale) give their stored tables;
#   - ops.zg: `zgc project` keeps each atomic block on its lifeline
#     (golden/ops.project), its store is declared below the lowest safe
#     level: `zgc check` warns (exit 0), `zgc check --strict` and
#     `zgc anomalies --static --strict` fail (exit 1), -Wno-store-level
#     silences it; `zgc emit-llvm` compiles its two atomic blocks (their
#     runs: tests/storerun);
#   - fifteen racing pairs: ten notes under the warning, then how many more.
#   run.sh ZGC            compare
#   run.sh ZGC --update   rewrite the stored outputs
set -u
zgc=$(realpath "${1:?usage: run.sh ZGC [--update]}")
update=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ZGC_CACHE="$tmp/cache"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

# compare NAME OUTPUT: the stored golden/NAME against OUTPUT
compare() {
  local want=$here/golden/$1
  if [ "$update" = "--update" ]; then
    printf '%s\n' "$2" > "$want"
  elif [ ! -f "$want" ]; then
    bad "$1: no stored output (run with --update)"
  elif diff -u "$want" <(printf '%s\n' "$2") > "$tmp/diff"; then
    ok
  else
    bad "$1:"; cat "$tmp/diff"
  fi
}

for src in examples/topologies/*.zg; do
  name=$(basename "$src" .zg)
  out=$("$zgc" check "$src" 2>&1) && [ -z "$out" ] && ok || bad "$src: zgc check: $out"
  compare "$name.static" "$("$zgc" anomalies --static "$src" 2>&1; echo "exit $?")"
  "$zgc" anomalies --static --json "$src" > "$tmp/$name.json" || bad "$src: --json failed"
done
# the JSON says what the table says (per store its levels and pairs); the
# topologies with a pair that makes A1 possible
susceptible=$(python3 - "$tmp" "$here/golden" examples/topologies/*.zg <<'PY'
import json, os, sys
tmp, golden = sys.argv[1], sys.argv[2]
found = []
for src in sys.argv[3:]:
    name = os.path.basename(src)[:-3]
    try:
        j = json.load(open(os.path.join(tmp, name + ".json")))
        table = open(os.path.join(golden, name + ".static")).read()
    except (OSError, ValueError) as e:
        print("FAIL %s: %s" % (src, e), file=sys.stderr)
        continue
    for st in j["stores"]:
        head = "store %s: declared %s, lowest safe %s; anomalies possible: %s" % (
            st["name"], st["declared"], st["needed"], " ".join(st["anomalies"]) or "-")
        if head not in table:
            print("FAIL %s: the JSON and the table differ: %s" % (src, head), file=sys.stderr)
    if table.count(" ~ ") != sum(len(s["races"]) for s in j["stores"]):
        print("FAIL %s: the JSON and the table count other pairs" % src, file=sys.stderr)
    if any("A1" in s["anomalies"] for s in j["stores"]):
        found.append(name)
print(" ".join(found))
PY
) 2> "$tmp/py.err"
[ -s "$tmp/py.err" ] && bad "$(cat "$tmp/py.err")" || ok
want="blackboard collaboration competing_consensus hierarchical_teams map_reduce_accumulator swarm"
[ "$susceptible" = "$want" ] && ok || bad "susceptible to A1: $susceptible, expected: $want"

for src in tests/stores/cases/*.zg; do
  name=$(basename "$src" .zg)
  compare "case-$name.static" "$("$zgc" anomalies --static "$src" 2>&1; echo "exit $?")"
done

ops=tests/stores/ops.zg
compare ops.project "$("$zgc" project "$ops" 2>&1; echo "exit $?")"
compare ops.static "$("$zgc" anomalies --static "$ops" 2>&1; echo "exit $?")"
out=$("$zgc" check "$ops" 2>&1) && grep -q 'warning: store `Board` is declared L0, but in workflow `ops` its operations can race: L4 is the lowest safe level \[-Wstore-level\]' <<<"$out" &&
  grep -q 'note: this operation of Writer and the one of Critic at 38:5 are not ordered: A1 A2 (cell `notes`, tool `publish`)' <<<"$out" &&
  ok || bad "check ops.zg: $out"
out=$("$zgc" check -Wno-store-level "$ops" 2>&1) && [ -z "$out" ] && ok || bad "-Wno-store-level: $out"
"$zgc" check --strict "$ops" > /dev/null 2>&1; [ $? -eq 1 ] && ok || bad "check --strict: not exit 1"
"$zgc" anomalies --static --strict "$ops" > /dev/null 2>&1; [ $? -eq 1 ] && ok || bad "anomalies --static --strict: not exit 1"
# compiled (the runs are tests/storerun): every atomic block a retry loop
out=$(cd "$tmp" && "$zgc" emit-llvm "$root/$ops" 2>&1); st=$?
[ $st -eq 0 ] && [ "$(grep -c 'call i32 @zgrt_op_commit' <<<"$out")" = 2 ] &&
  ok || bad "zgc emit-llvm ops.zg: exit $st: $(head -c 2000 <<<"$out")"
# six racing operations, fifteen pairs: ten notes, then how many more
{
  echo 'lifeline A;'
  for i in 1 2 3 4 5 6; do echo "var v$i: int = 0;"; done
  printf 'store S {\n    cell c: int = 0;\n    consistency L0;\n}\nworkflow many() {\n    parallel {\n'
  for i in 1 2 3 4 5 6; do
    printf '        branch {\n            A: atomic S {\n                v%d = read c;\n                write c = v%d;\n            }\n        }\n' $i $i
  done
  printf '    }\n}\n'
} > "$tmp/many.zg"
out=$("$zgc" check "$tmp/many.zg" 2>&1)
[ "$(grep -c 'note: this operation of A and the one of A' <<<"$out")" = 10 ] &&
  grep -q 'note: and 5 more racing pairs (`zgc anomalies --static` lists them all)' <<<"$out" &&
  ok || bad "many.zg: $out"
# bad usage
"$zgc" anomalies --static > /dev/null 2>&1; [ $? -eq 2 ] && ok || bad "no file: not exit 2"
"$zgc" anomalies --static --bogus "$ops" > /dev/null 2>&1; [ $? -eq 2 ] && ok || bad "unknown option: not exit 2"
"$zgc" anomalies --static "$here/nothere.zg" > /dev/null 2>&1; [ $? -eq 1 ] && ok || bad "missing file: not exit 1"

[ "$update" = "--update" ] && { echo "stores: stored outputs updated"; exit 0; }
echo "stores: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
