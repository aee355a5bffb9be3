#!/usr/bin/env bash
# Human tasks of durable runs, end to end, and the run store as both sides
# read and write it: the runtime writes runs, lifelines and tasks that
# `zgc runs` and `zgc tasks` read (table and --json); `zgc answer` and
# `zgc runs cancel` write what the runtime reads.
#   - --exit-when-waiting: the run stops (exit 3) while it waits; `zgc
#     answer` (typed and checked like --answers) completes the task; `zgc
#     runs resume` goes on, until the run is done; the trace of every
#     attempt is one chart (zgc trace check);
#   - a process that keeps waiting goes on as soon as the task is answered;
#   - answers through a pipe (printf 'y\n2\n' | zgc run …);
#   - one process per lifeline (--processes): the waiting lifeline stops
#     the run, the resume finishes it.
#   run_tasks.sh ZGC
set -u
zgc=$(realpath "${1:?usage: run_tasks.sh ZGC}")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
export ZGC_STORE=$tmp/.zgc/runs.db
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
# run STATUS COMMAND...: stdout in out, stderr in err
run() {
  local want=$1
  shift
  "$@" > out 2> err < /dev/null
  local st=$?
  [ "$st" -eq "$want" ] && ok || { bad "$*: exit $st, expected $want"; sed 's/^/  /' err | head -5; }
}
has() { grep -qF -- "$2" "$1" && ok || { bad "$1 lacks: $2"; sed 's/^/  /' "$1" | head -8; }; }
src=$here/approve.zg

# ---- --exit-when-waiting, answers, resumes (in one process)
run 3 "$zgc" run --durable --run-id t1 "$src" --arg topic=tea --exit-when-waiting --trace t1.jsonl
has err "lifeline Editor waits for human task 1 (approve); answer with: zgc answer t1 1 VALUE"
run 0 "$zgc" tasks
has out "t1                               1 Editor       approve          confirm  bool       pending   Publish [compose:draft]?"
run 0 "$zgc" tasks t1 --json
has out '"prompt": "Publish [compose:draft]?"'
has out '"kind": "confirm"'
run 0 "$zgc" runs list
has out "t1                           review               waiting             1      1"
run 0 "$zgc" runs show t1 --json
has out '"status": "waiting"'
has out '"state": "waits for human task 1 (approve)"'
has out '"action": "compose"'
has out '"results": ['
run 1 "$zgc" answer t1 1 maybe
has err "task 1 (confirm) takes y, yes, true or n, no, false, not 'maybe'"
run 0 "$zgc" answer t1 1 YES
has out 'answered task 1 of run t1: {"value":true}'
run 3 "$zgc" runs resume t1 --exit-when-waiting
has err "waits for human task 2 (pick)"
run 0 "$zgc" tasks t1 --json
has out '"members": ['
has out '"warm",'
run 0 "$zgc" answer t1 2 dry
run 0 "$zgc" runs resume t1
[ "$(cat out)" = '[true, "dry"]' ] && ok || bad "t1 result: $(cat out)"
run 0 "$zgc" trace check "$src" t1.jsonl
run 0 "$zgc" runs show t1
has out "status: done, attempt 3"
has out 'result: [true, "dry"]'
run 0 "$zgc" tasks t1 --all
has out "answered"

# ---- a process that keeps waiting
"$zgc" run --durable --run-id t2 "$src" --arg topic=tea > t2.out 2> t2.err < /dev/null &
t2=$!
for _ in $(seq 100); do "$zgc" tasks t2 2> /dev/null | grep -q approve && break; sleep 0.1; done
run 0 "$zgc" answer t2 1 n
for _ in $(seq 100); do "$zgc" tasks t2 2> /dev/null | grep -q pick && break; sleep 0.1; done
run 0 "$zgc" answer t2 2 warm
wait "$t2" && ok || bad "t2 exited $?: $(cat t2.err)"
[ "$(cat t2.out)" = '[false, "warm"]' ] && ok || bad "t2 result: $(cat t2.out)"

# ---- answers through a pipe (also a durable run's, before any task)
printf 'y\n2\n' | "$zgc" run "$src" --arg topic=x > out 2> err
[ "$(cat out)" = '[true, "dry"]' ] && ok || bad "pipe: $(cat out) $(cat err)"
printf 'n\nwarm\n' | "$zgc" run --durable --run-id t3 "$src" --arg topic=x > out 2> err
[ "$(cat out)" = '[false, "warm"]' ] && ok || bad "durable pipe: $(cat out) $(cat err)"
# the pipe ends before the second answer: that one is a task
printf 'y\n' | "$zgc" run --durable --run-id t4 "$src" --arg topic=x --exit-when-waiting > out 2> err
[ $? -eq 3 ] && ok || bad "pipe then task: $(cat err)"
has err "waits for human task 1 (pick)"

# ---- one process per lifeline
run 3 "$zgc" run --durable --processes --run-id p1 "$src" --arg topic=tea --exit-when-waiting \
  --trace p1.jsonl
has err "waits for human task 1 (approve)"
run 0 "$zgc" runs show p1 --json
has out '"mode": "processes"'
has out '"status": "waiting"'
run 0 "$zgc" answer p1 1 y
# from another directory: the run works in its own (its trace too)
mkdir -p elsewhere
run 3 bash -c "cd elsewhere && exec '$zgc' runs resume p1 --exit-when-waiting"
run 0 "$zgc" answer p1 2 1
run 0 "$zgc" runs resume p1
[ "$(cat out)" = '[true, "warm"]' ] && ok || bad "p1 result: $(cat out)"
run 0 "$zgc" trace check "$src" p1.jsonl
run 0 "$zgc" runs show p1 --json
has out '"status": "done"'

echo "durable tasks: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
