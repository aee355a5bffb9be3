#!/usr/bin/env bash
# Property: a random workflow (tests/gen/zggen, without parallel regions,
# which planners do not allow) handed to a planner as its model's answer
# runs as it does compiled ahead of time: the same result, both traces
# accepted by `zgc trace check` (the planner's with its nested run).
# The workflow's lifelines become the planner's workers; its `return v @
# L` becomes `L(v) -> Host(r); return r @ Host;` (the planner's end).
#   property.sh ZGC ZGGEN [--cases N] [--seed S]
set -u
zgc=$(realpath "${1:?usage: property.sh ZGC ZGGEN [--cases N] [--seed S]}")
zggen=$(realpath "${2:?usage: property.sh ZGC ZGGEN [--cases N] [--seed S]}")
shift 2
cases=6 seed=1
while [ $# -gt 0 ]; do
  case $1 in
  --cases) cases=$2; shift 2 ;;
  --seed) seed=$2; shift 2 ;;
  *) echo "property.sh: unknown option $1"; exit 2 ;;
  esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for ((k = 0; k < cases; k++)); do
  s=$((seed + k))
  g=$tmp/gen$s.zg
  "$zggen" --seed "$s" --lifelines 3 --statements 14 --no-parallel --plain > "$g"
  ret=$(grep -E '^    return [A-Za-z0-9_]+ @ [A-Za-z0-9_]+;$' "$g")
  if [ -z "$ret" ] || ! grep -q '^workflow gen() -> int {$' "$g"; then
    echo "FAIL seed $s: not the shape this test rewrites"; fail=$((fail + 1)); continue
  fi
  v=$(echo "$ret" | sed -E 's/^    return ([A-Za-z0-9_]+) @ .*/\1/')
  owner=$(echo "$ret" | sed -E 's/.* @ ([A-Za-z0-9_]+);$/\1/')
  workers=$(sed -n 's/^lifeline \(.*\);$/\1/p' "$g")
  # the answer: the variables and the workflow, ending at Host
  {
    grep '^var ' "$g"
    echo 'var r: int;'
    echo
    sed -n '/^workflow gen() -> int {$/,$p' "$g" |
      sed -E "s/^workflow gen\(\) -> int \{$/workflow plan() -> int {/;
              s/^    return ([A-Za-z0-9_]+) @ ([A-Za-z0-9_]+);$/    \2(\1) -> Host(r);\n    return r @ Host;/"
  } > "$tmp/plan$s.zg"
  # the answer script: the answer as one JSON string (no quotes or
  # backslashes in it)
  printf '{"Host.run_plan": {"plan": "%s"}}\n' "$(awk '{ printf "%s\\n", $0 }' "$tmp/plan$s.zg")" \
    > "$tmp/answer$s.json"
  # the host: the generated program's pure actions, one planner
  {
    echo 'lifeline Host;'
    echo 'var r: int;'
    grep '^pure ' "$g"
    echo 'planner run_plan() -> (r: int) {'
    echo '    description = "Run the workflow.";'
    echo "    workers = ($workers);"
    echo '    actions = inc;'
    echo '    allow = ("if", "while");'
    echo '    retries = 0;'
    echo '    max_statements = 10000;'
    echo '}'
    echo 'workflow main() -> int {'
    echo '    Host: r = run_plan();'
    echo '    return r @ Host;'
    echo '}'
  } > "$tmp/host$s.zg"
  want=$("$zgc" run "$g" --trace "$tmp/gen$s.trace" 2>"$tmp/gen$s.err")
  st1=$?
  got=$("$zgc" run "$tmp/host$s.zg" --llm "scripted:$tmp/answer$s.json" \
    --trace "$tmp/host$s.trace" 2>"$tmp/host$s.err")
  st2=$?
  if [ $st1 -ne 0 ] || [ $st2 -ne 0 ] || [ -z "$want" ] || [ "$want" != "$got" ]; then
    echo "FAIL seed $s: ahead of time exit $st1 '$want', planned exit $st2 '$got'"
    head -20 "$tmp/gen$s.err" "$tmp/host$s.err"
    fail=$((fail + 1))
    continue
  fi
  if ! "$zgc" trace check "$g" "$tmp/gen$s.trace" > "$tmp/c1" 2>&1 ||
    ! "$zgc" trace check "$tmp/host$s.zg" "$tmp/host$s.trace" > "$tmp/c2" 2>&1; then
    echo "FAIL seed $s: trace check"; cat "$tmp/c1" "$tmp/c2"; fail=$((fail + 1)); continue
  fi
  grep -q '"subrun"' "$tmp/host$s.trace" || { echo "FAIL seed $s: no nested run"; fail=$((fail + 1)); continue; }
  pass=$((pass + 1))
done
echo "planner property: $pass passed, $fail failed ($cases cases from seed $seed)"
[ "$fail" -eq 0 ]
