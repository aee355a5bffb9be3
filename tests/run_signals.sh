#!/usr/bin/env bash
# Signals: SIGINT, SIGTERM or SIGHUP to `zgc run` (one process, and one
# process per lifeline) stops the lifelines, removes the temporary build
# directory and ends zgc with the conventional status 128 + signal; after
# SIGKILL of zgc, its lifeline processes die with it (PR_SET_PDEATHSIG); a
# trace file takes its name only when it is whole.
#   usage: tests/run_signals.sh ZGC
set -u
zgc=${1:?usage: run_signals.sh ZGC}
tmp=$(mktemp -d)
trap 'pkill -KILL -f "$tmp/" 2> /dev/null; rm -rf "$tmp"' EXIT
pass=0 fail=0
cat > "$tmp/spin.zg" << 'ZG'
lifeline A, B;
var n: int = 0;
workflow spin() -> int {
    while n < 2000000000 @ A { A: n = n + 1; }
    A(n) -> B(n);
    return n @ B;
}
ZG
mkdir "$tmp/t"

# zgc run starts the executable of one process from the cache of builds
export ZGC_CACHE=$tmp/cache
# waits until N processes run from the temporary directory or the cache
# (at most 60 s)
wait_procs() {
    for _ in $(seq 600); do
        [ "$(pgrep -f "$tmp/(t/zgc-run|cache/)" | wc -l)" -ge "$1" ] && return 0
        sleep 0.1
    done
    return 1
}
check() { # WHAT OK
    if [ "$2" = 0 ]; then pass=$((pass + 1)); else echo "FAIL: $1"; fail=$((fail + 1)); fi
}

for sig in INT TERM HUP; do
    for mode in single processes; do
        flag=; n=1
        [ $mode = processes ] && flag=--processes n=2
        TMPDIR=$tmp/t "$zgc" run $flag "$tmp/spin.zg" > /dev/null 2> "$tmp/err" &
        pid=$!
        wait_procs $n
        check "$sig $mode: the lifelines start" $?
        kill -s $sig $pid
        wait $pid 2> /dev/null
        status=$?
        want=$((128 + $(kill -l $sig)))
        [ $status = $want ]
        check "$sig $mode: zgc ends with $want (got $status; $(head -c 300 "$tmp/err"))" $?
        sleep 0.2
        [ -z "$(pgrep -f "$tmp/(t/zgc-run|cache/)")" ]
        check "$sig $mode: no lifeline process is left" $?
        [ -z "$(ls -A "$tmp/t")" ]
        check "$sig $mode: the temporary directory is removed ($(ls "$tmp/t"))" $?
    done
done

# SIGKILL: nothing to forward, but the lifelines die with zgc
TMPDIR=$tmp/t "$zgc" run --processes "$tmp/spin.zg" > /dev/null 2>&1 &
pid=$!
wait_procs 2
check "KILL: the lifelines start" $?
kill -KILL $pid
wait $pid 2> /dev/null
gone=1
for _ in $(seq 50); do
    [ -z "$(pgrep -f "$tmp/(t/zgc-run|cache/)")" ] && gone=0 && break
    sleep 0.1
done
check "KILL: the lifeline processes die with zgc" $gone

# A trace takes its name only when it is whole: FILE.partial while the run
# goes on and after a SIGKILL, FILE (and no FILE.partial) once it ended,
# with its result or its error.
"$zgc" build "$tmp/spin.zg" -o "$tmp/b" > /dev/null
"$tmp/b/spin" --trace "$tmp/tr.jsonl" > /dev/null 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/tr.jsonl.partial" ] && break; sleep 0.05; done
[ -s "$tmp/tr.jsonl.partial" ] && [ ! -e "$tmp/tr.jsonl" ]
check "trace: FILE.partial while the run goes on, no FILE" $?
kill -KILL $pid
wait $pid 2> /dev/null
[ -s "$tmp/tr.jsonl.partial" ] && [ ! -e "$tmp/tr.jsonl" ] && grep -q '"kind":"start"' "$tmp/tr.jsonl.partial"
check "trace: after SIGKILL, FILE.partial with the lines so far, no FILE" $?
cat > "$tmp/short.zg" << 'ZG'
lifeline A, B;
var n: int = 0;
workflow short(d: int @ A) -> int {
    A: n = 10 / d;
    A(n) -> B(n);
    return n @ B;
}
ZG
for d in 2 0; do
    rm -f "$tmp/s.jsonl" "$tmp/s.jsonl.partial"
    "$zgc" run "$tmp/short.zg" --arg d=$d --trace "$tmp/s.jsonl" > /dev/null 2>&1
    [ -s "$tmp/s.jsonl" ] && [ ! -e "$tmp/s.jsonl.partial" ] && tail -n 1 "$tmp/s.jsonl" | grep -q '"kind":"end"'
    check "trace: FILE whole after a run that ended (d=$d)" $?
done

echo "signals: $pass passed, $fail failed"
[ "$fail" = 0 ]
