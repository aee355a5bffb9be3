#!/usr/bin/env bash
# The plan that runs is the plan that is printed.  For every example, every
# tests/golden and tests/run program that runs to its end, and zggen
# workflows with 2, 4, 8, 16 and 32 lifelines (--rich: CPL guards nesting
# every operator), a run with ZGRT_MONITOR_STATS=FILE makes the runtime
# record what it really does (runtime/core.c): the bytes each lifeline's
# monitor allocated, and the least and most metadata bytes of the messages
# each lifeline sent to each other.  They must equal what `zgc guards`
# prints: the lifeline's state line and the edge's line (sender ->
# receiver), the plan's sizes in a run without a trace and the traced
# sizes in a run with --trace, in one process and as one process per
# lifeline (--processes).  A run without a trace must also print the
# program's expected result (tests/run `// expect:` lines,
# tests/run/examples.txt), so the plan's compact clocks give the answers
# the traced runs give.
#   run_plan_sizes.sh ZGC ZGGEN [EVERY]
# EVERY (default 1): check every EVERY-th example, run and golden program
# (the sanitizer builds take every fifth); the generated workflows always.
set -u
zgc=$(realpath "${1:?usage: run_plan_sizes.sh ZGC ZGGEN [EVERY]}")
zggen=$(realpath "${2:?usage: run_plan_sizes.sh ZGC ZGGEN [EVERY]}")
every=${3:-1}
case $every in '' | *[!0-9]* | 0) echo "run_plan_sizes.sh: EVERY must be a positive number" >&2; exit 2 ;; esac
nth=0
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 checked_states=0 checked_edges=0

# expected FILE.zg > "state L PLAN TRACED" and "meta FROM TO PLAN TRACED" lines
expected() {
  "$zgc" guards "$1" | awk '
    /^lifeline [^ ]+: no monitor/ {
      name = $2; sub(/:$/, "", name)
      t = $0; sub(/.*= /, "", t); sub(/ B\)$/, "", t)
      print "state", name, 0, t; next }
    /^lifeline [^ ]+: monitor$/ { name = $2; sub(/:$/, "", name); next }
    /^  state: / {
      p = $0; sub(/ B; traced:.*/, "", p); sub(/.*= /, "", p)
      t = $0; sub(/.*, /, "", t); sub(/ B$/, "", t)
      print "state", name, p, t; next }
    /^  [^ ]+ -> [^ ]+: / {
      from = $1; to = $3; sub(/:$/, "", to)
      if ($4 == "none;") p = 0
      else { p = $0; sub(/ B; traced:.*/, "", p); sub(/.*= /, "", p) }
      t = $0; sub(/.*, /, "", t); sub(/ B$/, "", t)
      print "meta", from, to, p, t }'
}

# compare LABEL STATS EXPECTED: every lifeline's state and every message's
# metadata as printed
compare() {
  local label=$1 stats=$2 want=$3 bad=""
  bad=$(awk -v label="$label" '
    FNR == NR {
      if ($1 == "state") { plan["s " $2] = $3; traced["s " $2] = $4; lifes[$2] = 1 }
      else { plan["m " $2 " " $3] = $4; traced["m " $2 " " $3] = $5 }
      next }
    $1 == "state" {
      k = "s " $2; want = ($4 == "traced") ? traced[k] : plan[k]
      if (!(k in plan)) { print label ": lifeline " $2 " is not in zgc guards"; next }
      if ($3 != want) print label ": lifeline " $2 " (" $4 "): allocates " $3 " B, zgc guards prints " want " B"
      seen[$2] = 1; ns++; next }
    $1 == "meta" {
      k = "m " $2 " " $3
      if (!(k in plan)) { print label ": " $2 " -> " $3 " sends, but zgc guards has no such edge"; next }
      want = ($7 == "traced") ? traced[k] : plan[k]
      if ($4 != want || $5 != want)
        print label ": " $2 " -> " $3 " (" $7 "): " $6 " messages of " $4 " to " $5 " B, zgc guards prints " want " B"
      ne++; next }
    END {
      for (l in lifes) if (!(l in seen)) print label ": no state recorded for lifeline " l
      printf "checked %d %d\n", ns, ne }' "$want" "$stats")
  local counts
  counts=$(grep '^checked ' <<< "$bad")
  bad=$(grep -v '^checked ' <<< "$bad")
  checked_states=$((checked_states + $(awk '{ print $2 }' <<< "$counts")))
  checked_edges=$((checked_edges + $(awk '{ print $3 }' <<< "$counts")))
  if [ -n "$bad" ]; then
    echo "FAIL $bad" | head -5
    return 1
  fi
  return 0
}

# one SRC "OPTIONS" EXPECT: runs SRC untraced and traced, in one process and
# as processes (PROCESSES=0: in one process only)
one() {
  local src=$1 opts=$2 want_out=$3 procs=${4:-1}
  local want=$tmp/want ok=1 mode extra out
  expected "$src" > "$want" || { echo "FAIL $src: zgc guards failed"; fail=$((fail + 1)); return; }
  for mode in inprocess processes; do
    [ "$mode" = processes ] && [ "$procs" = 0 ] && continue
    extra=()
    [ "$mode" = processes ] && extra=(--processes)
    for traced in 0 1; do
      local stats=$tmp/stats topts=()
      rm -f "$stats" "$tmp/trace"
      [ "$traced" = 1 ] && topts=(--trace "$tmp/trace")
      # shellcheck disable=SC2086
      out=$(ZGRT_MONITOR_STATS=$stats timeout 120 "$zgc" run "$src" "${extra[@]}" $opts \
        "${topts[@]}" 2> "$tmp/err")
      local status=$?
      if [ "$status" -ne 0 ] || { [ -n "$want_out" ] && [ "$out" != "$want_out" ]; }; then
        echo "FAIL $src ($mode, traced $traced): exit $status, stdout $out (expected $want_out)"
        head -3 "$tmp/err"
        ok=0; continue
      fi
      [ -s "$stats" ] || { echo "FAIL $src ($mode, traced $traced): no stats"; ok=0; continue; }
      compare "$src ($mode, traced $traced)" "$stats" "$want" || ok=0
    done
  done
  if [ "$ok" = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}

# inputs a program asks for, each given a value of its type
args_for() {
  local src=$1 args="" i msg name type
  for i in 1 2 3 4 5 6 7 8; do
    # shellcheck disable=SC2086
    msg=$("$zgc" run "$src" $args 2>&1 > /dev/null | grep -o 'missing input [^ ]* ([a-z]*' | head -1)
    [ -z "$msg" ] && break
    name=$(awk '{ print $3 }' <<< "$msg")
    type=$(sed 's/.*(//' <<< "$msg")
    case $type in
      int) args="$args --arg $name=1" ;;
      float) args="$args --arg $name=1.5" ;;
      bool) args="$args --arg $name=true" ;;
      *) args="$args --arg $name=x" ;;
    esac
  done
  echo "$args"
}

# sampled SRC: whether this fixed program is among those checked (EVERY)
sampled() {
  nth=$((nth + 1))
  [ $(((nth - 1) % every)) -eq 0 ] || { skipped=$((skipped + 1)); return 1; }
}
skipped=0

while IFS='|' read -r ex opts want; do
  ex=$(echo "$ex" | xargs); [ -z "$ex" ] && continue; case $ex in \#*) continue ;; esac
  opts=$(echo "$opts" | xargs)
  want=$(echo "$want" | sed 's/^ *//; s/ *$//')
  sampled || continue
  one "examples/$ex" "$opts" "$want"
done < tests/run/examples.txt
for src in tests/run/*.zg; do
  grep -q '^// expect error:' "$src" && continue
  want=$(sed -n 's|^// expect: \(.*\)$|\1|p' "$src")
  [ -z "$want" ] && continue
  opts=$(sed -n 's|^// args: \(.*\)$|\1|p' "$src" | tr '\n' ' ')
  sampled || continue
  one "$src" "$opts" "$want"
done
for src in tests/golden/*.zg; do
  sampled || continue
  one "$src" "$(args_for "$src")" ""
done
# generated workflows: 2–32 lifelines, CPL guards nesting every operator;
# as processes up to 8 lifelines
for n in 2 4 8 16 32; do
  for seed in 1 2; do
    src=$tmp/gen-$n-$seed.zg
    "$zggen" --seed "$((n * 100 + seed))" --lifelines "$n" --statements 40 --depth 2 --rich > "$src"
    one "$src" "" "" "$([ "$n" -le 8 ] && echo 1 || echo 0)"
  done
done
echo "plan sizes: $checked_states lifeline states and $checked_edges edges compared"
echo "plan sizes: $pass passed, $fail failed$([ "$skipped" -gt 0 ] && echo ", $skipped fixed programs not sampled (every $every)")"
[ "$fail" -eq 0 ] && [ "$checked_edges" -gt 0 ]
