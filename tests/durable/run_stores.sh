#!/usr/bin/env bash
# Durable runs of a workflow with a store, killed and resumed
# (docs/runtime.md "Durable runs", "Stores"): counter.zg, two lifelines
# incrementing one counter cell at L1, A's operations calling an effect
# tool (effect.c: it logs its call's idempotency key), run --durable in
# one process and as processes (--processes), killed with a real SIGKILL
# at a random event (ZGRT_KILL_AT_EVENT; random seeds), resumed with
# `zgc runs resume` (sometimes killed again) until done.  Each case checks:
#   - the result (the counter at the end) equals an uninterrupted run's;
#   - the OpRecords (--oprecords, kept across resumes) hold each committed
#     operation once (no transaction twice), and the committed increments
#     are exactly the counter: none lost, none doubled;
#   - `zgc trace check` accepts the trace of all attempts;
#   - no completed effect repeated: a key comes again only right after a
#     kill (the call was in flight).
#   run_stores.sh ZGC [CASES] [SEED]     (default 8 cases, seed 1)
set -u
zgc=$(realpath "${1:?usage: run_stores.sh ZGC [CASES] [SEED]}")
cases=${2:-8}
RANDOM=${3:-1}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ZGC_CACHE="$tmp/cache"
cd "$tmp"
pass=0 fail=0
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
t0=$SECONDS

# shellcheck source=lib.sh
. "$here/lib.sh"

# the uninterrupted run
mkdir ref && cd ref
export ZGC_TEST_EFFECT_LOG=$PWD/effect.log
ref=$("$zgc" run "$here/counter.zg" "$here/effect.c" --durable="$PWD/runs.db" --oprecords ops \
  --trace t.jsonl 2> err)
events=$(grep -c '"index"' t.jsonl)
cd ..
[ "$ref" = 12 ] || bad "uninterrupted run: result '$ref', not 12: $(tail -3 ref/err)"
[ -s ref/runs.db ] && [ -n "$(ls ref/stores/*/S.db 2> /dev/null)" ] ||
  bad "uninterrupted run: no store beside the run store"
# `zgc runs gc` removes a done run's stores with it, and the stores left
# of a run the run store no longer has
mkdir -p ref/stores/r-kept && : > ref/stores/r-kept/S.db
gc=$("$zgc" runs gc --store "$PWD/ref/runs.db" 2>&1)
[ -z "$(ls -d ref/stores/*/S.db 2> /dev/null)" ] && grep -q "the stores of 2 runs" <<<"$gc" ||
  bad "runs gc: the done run's stores stay: $gc; $(ls -R ref/stores)"

for c in $(seq "$cases"); do
  mode=single
  [ $((c % 2)) = 0 ] && mode=processes
  d=case$c
  mkdir "$d" && cd "$d"
  export ZGC_TEST_EFFECT_LOG=$PWD/effect.log
  : > "$ZGC_TEST_EFFECT_LOG"
  kills=0
  k=$((1 + RANDOM % events))
  opts=("$here/counter.zg" "$here/effect.c" --durable="$PWD/runs.db" --run-id "r$c"
    --oprecords ops --trace t.jsonl)
  if [ $mode = single ]; then
    kill_attempt "$k" out err "$zgc" run "${opts[@]}"
  else
    kill_attempt "$k" out err "$zgc" run --processes "${opts[@]}" --peer-wait 0
  fi
  what="case $c ($mode, killed at event $k)"
  n=0
  while [ "$att" -ne 0 ] && [ $n -lt 6 ]; do
    n=$((n + 1))
    again=0
    [ $n = 1 ] && [ $((RANDOM % 2)) = 0 ] && again=$((1 + RANDOM % events))
    before=$kills
    kill_attempt "$again" out err "$zgc" runs resume "r$c" --store "$PWD/runs.db"
    if [ "$att" -ne 0 ] && [ "$again" = 0 ]; then break; fi
    [ "$att" -ne 0 ] && [ $kills = "$before" ] && break
  done
  result=$(cat out)
  if [ "$att" -ne 0 ]; then
    bad "$what: not done (exit $att): $(tail -3 err)"
  elif [ "$result" != "$ref" ]; then
    bad "$what: result '$result', the uninterrupted run's '$ref'"
  else
    committed=$(grep '"aborted":false' ops | grep -o '"txn":[0-9]*' | sort)
    incs=$(grep '"aborted":false' ops | grep -c '"write_set":\["c"\]')
    twice=$(uniq -d <<< "$committed")
    if [ -n "$twice" ]; then
      bad "$what: committed operations recorded twice: $twice"
    elif [ "$incs" != "$result" ]; then
      bad "$what: $incs committed increments, the counter is $result"
    elif ! out=$("$zgc" trace check -q "$here/counter.zg" t.jsonl 2>&1); then
      bad "$what: trace: $(head -c 300 <<< "$out")"
    else
      # a key repeated must come right after a KILL (in flight at the kill)
      rep=$(awk '$0 == "KILL" { last = ""; killed = 1; next }
                 seen[$0]++ && !(killed && prev == $0) { print } { prev = $0; killed = 0 }' \
        "$ZGC_TEST_EFFECT_LOG")
      if [ -n "$rep" ]; then bad "$what: completed effect calls repeated: $rep"; else
        pass=$((pass + 1)); fi
    fi
  fi
  cd ..
done
echo "run_stores: $pass of $cases cases passed, $fail failed ($((SECONDS - t0)) s)"
[ "$fail" = 0 ]
