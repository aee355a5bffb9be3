#!/usr/bin/env bash
# Random workflows with stores (tests/gen/zggen.c --stores: parallel
# regions, ifs, loops, coregions, and atomic blocks on random lifelines
# that read one or both cells of a store, call its tools and write), each
# at every level L0..L4, run under several schedules:
#   - in one process (`zgc run --schedule SEED`), and once per level over
#     per-lifeline processes (`zgc run --processes`, one SQLite store in
#     the run's directory);
#   - every run ends with status 0;
#   - `zgc anomalies` over its OpRecords finds none of the anomalies the
#     level excludes (L1: A1, L2: also A3, L3: also A6, L4: also A2);
#   - the records agree with the trace: as many committed records as
#     commit events, as many aborted records as abort events, and none
#     aborted at L0 (L0 never refuses a commit);
#   - every effect that took place (the C functions' log) is in some
#     record's co;
#   - `zgc trace check` accepts the trace.
# At the end it prints what the runs showed: operations, retries at
# L1..L4, and the anomalies found at L0 (where they are allowed).
#   random.sh ZGC ZGGEN
# STORERANDOM_CASES (default 3), STORERANDOM_SEEDS (schedules per level,
# default 2), STORERANDOM_PROCESSES (levels run over processes, default
# "0 1 2 3 4") and STORERANDOM_SEED (the first workflow's seed, default 1)
# size it; the soak's command is in tests/storerun/README.md.
set -u
zgc=$(realpath "${1:?usage: random.sh ZGC ZGGEN}")
zggen=$(realpath "${2:?usage: random.sh ZGC ZGGEN}")
here=$(cd "$(dirname "$0")" && pwd)
cases=${STORERANDOM_CASES:-3}
seeds=${STORERANDOM_SEEDS:-2}
proc_levels=${STORERANDOM_PROCESSES-0 1 2 3 4}
first=${STORERANDOM_SEED:-1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ZGC_CACHE="$tmp/cache"
cd "$tmp"
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() {
  echo "FAIL $*"
  fail=$((fail + 1))
}
# the totals the runs showed
ops=0 retries=0 l0_a1=0 l0_a6=0 runs=0

. "$here/levels.sh"
# records FILE: "COMMITTED ABORTED EFFECTS" of the history FILE
records() {
  python3 -c 'import json,sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(sum(not r["aborted"] for r in rs), sum(bool(r["aborted"]) for r in rs), sum(len(r["co"]) for r in rs))' "$1"
}

# one NAME LEVEL MODE SEED: run NAME.zg (MODE: "" or --processes) and check it
one() {
  local name=$1 l=$2 mode=$3 seed=$4 run=$1.$4${3:+p}
  local what="case $name L$l ${mode:-one process} seed $seed"
  rm -f $run.ops $run.log $run.trace
  ZG_EFFECT_LOG=$tmp/$run.log "$zgc" run -Wno-all $mode $name.zg "$here/effects.c" \
    ${mode:---schedule $seed} --oprecords $run.ops --trace $run.trace > /dev/null 2> $run.err
  local st=$?
  runs=$((runs + 1))
  if [ $st -ne 0 ]; then
    bad "$what: exit $st: $(head -5 $run.err)"
    sed 's/^/    /' $name.zg
    return
  fi
  local a1 a2 a3 a6
  read -r a1 a2 a3 a6 <<<"$(counts $run.ops)"
  [ -n "${a6:-}" ] && excluded "$l" "$a1" "$a2" "$a3" "$a6" && ok ||
    bad "$what: A1 ${a1:-?} A2 ${a2:-?} A3 ${a3:-?} A6 ${a6:-?} at L$l"
  if [ "$l" = 0 ]; then
    l0_a1=$((l0_a1 + ${a1:-0}))
    l0_a6=$((l0_a6 + ${a6:-0}))
  fi
  local committed aborted inco commits aborts took
  read -r committed aborted inco <<<"$(records $run.ops)"
  commits=$(grep -c '"kind":"commit","store":"S"' $run.trace)
  aborts=$(grep -c '"kind":"abort","store":"S"' $run.trace)
  [ "$committed" = "$commits" ] && [ "$aborted" = "$aborts" ] && ok ||
    bad "$what: records $committed committed, $aborted aborted; trace $commits commits, $aborts aborts"
  [ "$l" != 0 ] || [ "$aborted" = 0 ] && ok || bad "$what: $aborted aborted records at L0"
  took=$(cat $run.log 2> /dev/null | wc -l)
  [ "$took" = "$inco" ] && ok || bad "$what: $took effects took place, $inco in the records' co"
  ops=$((ops + committed))
  retries=$((retries + aborted))
  local out
  if out=$("$zgc" trace check $name.zg $run.trace 2>&1); then ok; else bad "$what: trace check: $out"; fi
}

t0=$SECONDS
for c in $(seq "$first" $((first + cases - 1))); do
  lifes=$((3 + c % 2)) stmts=$((16 + c % 8))
  for l in 0 1 2 3 4; do
    name=c$c.L$l
    "$zggen" --seed "$c" --lifelines $lifes --statements $stmts --stores $l > $name.zg ||
      { bad "zggen --seed $c --stores $l failed"; continue; }
    grep -q 'atomic S' $name.zg || { ok; continue; } # no operation drawn: nothing to run
    for seed in $(seq 1 "$seeds"); do one $name $l "" $seed; done
    [[ " $proc_levels " == *" $l "* ]] && one $name $l --processes 1
  done
done
echo "random workflows with stores: $cases cases x 5 levels, $runs runs ($seeds schedules each" \
  "in one process, levels '$proc_levels' over processes): $ops operations committed," \
  "$retries attempts refused and retried at L1..L4; at L0 A1 $l0_a1, A6 $l0_a6;" \
  "$((SECONDS - t0)) s"
echo "random.sh: $pass passed, $fail failed"
[ $fail = 0 ]
