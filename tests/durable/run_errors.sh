#!/usr/bin/env bash
# Failures around durable runs, each a clear error with its documented exit
# status, and nothing committed lost: a missing run id, a resume by another
# version of the program (the fingerprint names what changed) or in the
# other mode, a damaged store, a store locked by another process, a full
# disk (a file size limit), a cancelled run, gc.
#   run_errors.sh ZGC HOLD_LOCK
set -u
zgc=$(realpath "${1:?usage: run_errors.sh ZGC HOLD_LOCK}")
hold=$(realpath "${2:?usage: run_errors.sh ZGC HOLD_LOCK}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
pass=0 fail=0

# expect NAME STATUS TEXT COMMAND...: COMMAND exits STATUS and its stderr
# has TEXT
expect() {
  local name=$1 want=$2 text=$3
  shift 3
  "$@" > out 2> err < /dev/null
  local st=$?
  if [ "$st" -ne "$want" ]; then
    echo "FAIL $name: exit $st, expected $want"; sed 's/^/  /' err | head -5
    fail=$((fail + 1)); return 1
  fi
  if [ -n "$text" ] && ! grep -qF -- "$text" err; then
    echo "FAIL $name: stderr lacks: $text"; sed 's/^/  /' err | head -5
    fail=$((fail + 1)); return 1
  fi
  pass=$((pass + 1))
}
# the stdout of the last expect must be TEXT
stdout_is() {
  if [ "$(cat out)" != "$2" ]; then
    echo "FAIL $1: stdout $(cat out), expected $2"; fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}

S=$tmp/store/runs.db
export ZGC_STORE=$S
"$zgc" build "$here/approve.zg" -o v1 > /dev/null || { echo "FAIL build"; exit 1; }

# ---- help texts and usage errors
for c in runs tasks answer; do
  expect "$c --help" 0 "" "$zgc" $c --help
  grep -q "^usage: zgc $c" out && pass=$((pass + 1)) || { echo "FAIL $c --help: $(head -1 out)"; fail=$((fail + 1)); }
  expect "help $c" 0 "" "$zgc" help $c
done
expect "runs: no subcommand" 2 "usage: zgc runs list" "$zgc" runs
expect "runs: unknown subcommand" 2 "unknown runs command \`frob\`" "$zgc" runs frob
expect "runs show: no run" 2 "runs show needs a RUN" "$zgc" runs show
expect "answer: arguments" 2 "answer needs RUN TASK VALUE" "$zgc" answer r1 1
expect "answer: task number" 2 "TASK is a task's number, not \`x\`" "$zgc" answer r1 x y
expect "runs list: option" 2 "unknown option \`--bogus\`" "$zgc" runs list --bogus
expect "run: --run-id alone" 2 "--run-id applies to durable runs only" "$zgc" run "$here/approve.zg" --run-id x
expect "executable: --exit-when-waiting alone" 2 "--exit-when-waiting applies to durable runs only" \
  "$zgc" run "$here/approve.zg" --arg topic=t --exit-when-waiting
expect "run id syntax" 2 "--run-id expects a run id" "$zgc" run "$here/approve.zg" --durable --run-id "a b"

# ---- a missing run id and a missing store
expect "no store: list" 4 "no run store at $tmp/none.db" "$zgc" runs list --store "$tmp/none.db"
expect "first run waits" 3 "waits for human task 1" v1/review --durable --run-id r1 --arg topic=tea --exit-when-waiting
expect "resume: unknown run" 1 "no run nosuch in the run store $S" v1/review --resume nosuch
expect "runs show: unknown run" 1 "no run nosuch" "$zgc" runs show nosuch
expect "runs resume: unknown run" 1 "no run nosuch" "$zgc" runs resume nosuch
expect "tasks: unknown run" 1 "no run nosuch" "$zgc" tasks nosuch
expect "answer: unknown run" 1 "no run nosuch" "$zgc" answer nosuch 1 y
expect "answer: unknown task" 1 "run r1 has no task 7" "$zgc" answer r1 7 y
expect "run id taken" 4 "a run with id r1 exists already" v1/review --durable --run-id r1 --arg topic=tea
expect "resume with inputs" 2 "--resume takes the inputs and options stored with the run" v1/review --resume r1 --arg topic=x

# ---- another version of the program, another mode
sed 's/Publish {draft}?/Really publish {draft}?/' "$here/approve.zg" > prompt.zg
"$zgc" build prompt.zg -o v2 > /dev/null
expect "fingerprint: a prompt" 1 "run r1 was started by another version of workflow review" v2/review --resume r1
grep -qF "changed: declarations" err && ! grep -qF "changed: lifeline" err && pass=$((pass + 1)) ||
  { echo "FAIL fingerprint: a prompt: $(cat err)"; fail=$((fail + 1)); }
sed 's/Editor: tone = pick();/Editor: tone = pick();\n    Editor: ok = !ok;/' "$here/approve.zg" > code.zg
"$zgc" build code.zg -o v3 > /dev/null
expect "fingerprint: code" 1 "changed: lifeline Editor" v3/review --resume r1
grep -qF "lifeline Writer" err && { echo "FAIL fingerprint: code: $(cat err)"; fail=$((fail + 1)); }
expect "zgc run --resume: another version" 1 "changed: lifeline Editor" "$zgc" run code.zg --resume r1
head -c 32 /dev/urandom > "$tmp/run.key" && chmod 600 "$tmp/run.key"
expect "mode" 1 "run r1 runs every lifeline in one process" v1/review.Editor --resume r1 \
  --listen "unix:$tmp/e.sock" --peer "Writer=unix:$tmp/w.sock" --secret-file "$tmp/run.key"
# nothing was lost: the run goes on with its own program
expect "answer" 0 "" "$zgc" answer r1 1 yes
expect "answer again" 1 "task 1 of run r1 is answered, not pending" "$zgc" answer r1 1 no
expect "resume waits again" 3 "waits for human task 2" v1/review --resume r1 --exit-when-waiting
expect "select: bad answer" 1 "task 2 (select) takes a member's name or number 1..2" "$zgc" answer r1 2 3
expect "select" 0 "" "$zgc" answer r1 2 2
expect "resume finishes" 0 "resuming durable run r1 (attempt 3)" "$zgc" runs resume r1
stdout_is "resume finishes" '[true, "dry"]'
expect "resume a finished run" 0 "run r1 has finished" v1/review --resume r1
stdout_is "resume a finished run" '[true, "dry"]'

# ---- cancelled runs
expect "r2 waits" 3 "" v1/review --durable --run-id r2 --arg topic=tea --exit-when-waiting
expect "cancel" 0 "" "$zgc" runs cancel r2
expect "cancel again" 1 "run r2 is cancelled already" "$zgc" runs cancel r2
expect "resume cancelled" 1 "run r2 was cancelled; it cannot be resumed" v1/review --resume r2
expect "runs resume cancelled" 1 "run r2 was cancelled" "$zgc" runs resume r2
"$zgc" tasks r2 > out 2>&1
grep -q "no pending tasks" out && pass=$((pass + 1)) || { echo "FAIL cancel: tasks $(cat out)"; fail=$((fail + 1)); }
# a process that waits for a human stops when its run is cancelled
v1/review --durable --run-id r3 --arg topic=tea > r3.out 2> r3.err < /dev/null &
r3=$!
for _ in $(seq 100); do "$zgc" tasks r3 2> /dev/null | grep -q approve && break; sleep 0.1; done
expect "cancel a waiting process" 0 "" "$zgc" runs cancel r3
wait "$r3"
st=$?
if [ "$st" -eq 1 ] && grep -qF "run r3 was cancelled (zgc runs cancel)" r3.err; then pass=$((pass + 1)); else
  echo "FAIL cancelled process: exit $st: $(cat r3.err)"; fail=$((fail + 1)); fi

# ---- a store locked by another process
"$hold" "$S" 3 > lock.out &
holder=$!
for _ in $(seq 50); do [ -s lock.out ] && break; sleep 0.05; done
ZGC_STORE_TIMEOUT=0.5 expect "locked: a new run" 4 "the store is locked by another process (waited 0.5 s)" \
  v1/review --durable --run-id r4 --arg topic=tea
ZGC_STORE_TIMEOUT=0.5 expect "locked: cancel" 4 "the store is locked by another process" "$zgc" runs cancel r1
expect "locked: reading" 0 "" "$zgc" runs list
ZGC_STORE_TIMEOUT=20 expect "locked: a run waits for the lock" 3 "" \
  v1/review --durable --run-id r5 --arg topic=tea --exit-when-waiting
wait "$holder"

# ---- a full disk: a file size limit
"$zgc" build "$root/bench/durable/loop.zg" -o loop > /dev/null
F=$tmp/full/runs.db
mkdir -p full
# 2 MiB: a commit holds at most 1 MiB of journal (ZRD_COMMIT_BYTES), so the
# first commits fit, and the store (about 20 bytes an iteration) grows past
# the limit long before the run ends
expect "full disk" 4 "run store $F" bash -c "ulimit -f 2048; exec loop/loop --arg n=400000 --durable=$F --run-id f1"
grep -qE "disk is full|input/output error" err && pass=$((pass + 1)) ||
  { echo "FAIL full disk: $(cat err)"; fail=$((fail + 1)); }
"$zgc" runs show f1 --store "$F" --json > show.json
ev=$(grep -o '"events": [0-9]*' show.json | head -1 | grep -o '[0-9]*$')
[ "${ev:-0}" -gt 0 ] && pass=$((pass + 1)) || { echo "FAIL full disk: nothing committed"; fail=$((fail + 1)); }
expect "full disk: resume" 0 "resuming durable run f1 (attempt 2)" loop/loop --resume f1 --durable="$F"
stdout_is "full disk: resume" 400000

# ---- a damaged store
cp "$S" bad.db
printf 'this is not what SQLite wrote..' | dd of=bad.db bs=1 seek=0 conv=notrunc 2> /dev/null
expect "damaged: run" 4 "run store $tmp/bad.db is damaged" v1/review --durable=bad.db --arg topic=tea
expect "damaged: list" 4 "run store $tmp/bad.db is damaged" "$zgc" runs list --store bad.db
echo '{"not": "a database"}' > text.db
expect "not a store: run" 4 "is damaged" v1/review --durable=text.db --arg topic=tea
# a damaged page of the journal: the resume says so
v1/review --durable=pages.db --run-id p1 --arg topic=tea --exit-when-waiting > /dev/null 2>&1
"$zgc" answer p1 1 yes --store pages.db > /dev/null
size=$(stat -c %s pages.db)
for off in $(seq 4096 4096 $((size - 1))); do
  head -c 4096 /dev/zero | tr '\0' 'x' | dd of=pages.db bs=1 seek="$off" conv=notrunc 2> /dev/null
done
expect "damaged pages: resume" 4 "is damaged" v1/review --resume p1 --durable=pages.db

# ---- gc: finished and cancelled runs go, the others stay
expect "gc" 0 "" "$zgc" runs gc
grep -q "removed 3 runs" out && pass=$((pass + 1)) || { echo "FAIL gc: $(cat out)"; fail=$((fail + 1)); }
"$zgc" runs list > out
grep -q r5 out && ! grep -q "^r1 " out && pass=$((pass + 1)) || { echo "FAIL gc: list $(cat out)"; fail=$((fail + 1)); }

echo "durable errors: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
