#!/usr/bin/env bash
# A store in a JetStream key-value bucket (runtime/store/natskv.c) on a
# real nats-server, started here on 127.0.0.1 with a random free port and a
# temporary store directory, killed at the end:
#   - three processes incrementing one cell at L1 lose no increment, and
#     `zgc anomalies` finds no A1 in their records; at L0 the same lose
#     increments or show A1 (so the first check can fail);
#   - a process killed inside a section (its lock and, half-way through a
#     commit, its intent left in the bucket): the next section waits for
#     the lease to end, takes the lock over and applies the intent; with a
#     busy timeout shorter than the lease it fails saying the store is
#     locked;
#   - the store outlives the server: killed with SIGKILL and restarted on
#     its store directory, the cell keeps its value;
#   - a durable run over NATS (--journal nats) with its store in a bucket:
#     named by its --run-id, `zgc runs show` finds it done, `zgc runs gc`
#     removes it with its message stream and its store's bucket; killed
#     (SIGKILL of one lifeline) and resumed with `zgc runs resume` and the
#     secret the launcher kept: the uninterrupted result, no increment
#     lost or doubled;
#   - the errors: a server that is down, a store opened at another level,
#     a durable run id that cannot name NATS subjects.
#   nats.sh ZGC NATS_STORE
set -u
zgc=$(realpath "${1:?usage: nats.sh ZGC NATS_STORE}")
prog=$(realpath "${2:?usage: nats.sh ZGC NATS_STORE}")
tmp=$(mktemp -d)
pid=""
cleanup() {
  [ -n "$pid" ] && kill -9 "$pid" 2> /dev/null && wait "$pid" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

port=0
start() {
  nats-server -a 127.0.0.1 -p "${port/#0/-1}" -js -sd "$tmp/js" >> "$tmp/log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    port=$(sed -n 's/.*Listening for client connections on 127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/log" | tail -1)
    [ -n "$port" ] && [ "$(grep -c 'Server is ready' "$tmp/log")" -ge "$1" ] && return 0
    sleep 0.05
  done
  echo "nats-server did not start:"; tail -5 "$tmp/log"; exit 1
}
start 1
url=nats://127.0.0.1:$port

# counter LEVEL BUCKET: three processes, 25 increments each
counter() {
  local level=$1 bucket=$2 p=()
  for w in 1 2 3; do
    "$prog" "$url" "$bucket" "$level" "$tmp/$bucket.jsonl" incr 25 "$w" > "$tmp/$bucket.$w" 2>&1 &
    p+=($!)
  done
  local st=0
  for q in "${p[@]}"; do wait "$q" || st=1; done
  [ "$st" = 0 ] || { bad "L$level: a process failed: $(cat "$tmp/$bucket".?)"; return 1; }
  "$prog" "$url" "$bucket" "$level" - get
}
a1() { "$zgc" anomalies --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["with"]["A1"])'; }

got=$(counter 1 l1)
if [ "$got" = 75 ]; then ok; else bad "L1: counter $got, not 75"; fi
n=$(a1 "$tmp/l1.jsonl")
if [ "$n" = 0 ]; then ok; else bad "L1: $n histories with A1"; fi
retries=$(cat "$tmp"/l1.? | paste -sd+ | bc)
echo "L1: 75 increments, $retries refused attempts run again"

got=$(counter 0 l0)
n=$(a1 "$tmp/l0.jsonl")
if [ "$got" != 75 ] || [ "$n" != 0 ]; then ok; else bad "L0: no lost increment and no A1"; fi
echo "L0: counter $got of 75, A1 in $n history"

# a dead holder: lock for 1.5 s, then taken over
"$prog" "$url" l1 1 - dead-holder 1500 || bad "dead-holder"
t0=$(date +%s%N)
got=$("$prog" "$url" l1 1 - get 2> "$tmp/err")
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$got" = 75 ] && [ "$ms" -ge 800 ]; then ok; else bad "takeover: '$got' after $ms ms: $(cat "$tmp/err")"; fi
# a busy timeout shorter than the lease
"$prog" "$url" l1 1 - dead-holder 3000 || bad "dead-holder"
if "$prog" "$url" l1 1 - busy 300 > /dev/null 2> "$tmp/err"; then
  bad "busy: an operation went through a held lock"
elif grep -q "locked by another process for longer than the busy timeout (300 ms)" "$tmp/err"; then ok
else bad "busy: $(cat "$tmp/err")"; fi
# an intent left half-way: applied by the next section
"$prog" "$url" l1 1 - dead-holder 200 12345 || bad "dead-holder"
got=$("$prog" "$url" l1 1 - get 2> "$tmp/err")
if [ "$got" = 12345 ]; then ok; else bad "intent: '$got': $(cat "$tmp/err")"; fi

# the store outlives the server
kill -9 "$pid"; wait "$pid" 2> /dev/null
start 2
got=$("$prog" "$url" l1 1 - get 2> "$tmp/err")
if [ "$got" = 12345 ]; then ok; else bad "after a restart: '$got': $(cat "$tmp/err")"; fi

# a durable run over NATS with its journals and its store in buckets: named
# by its --run-id, shown and removed by `zgc runs` with its message stream
# and its store's bucket
durable=$(cd "$(dirname "$0")/../durable" && pwd)
export ZGC_CACHE="$tmp/cache"
streams() { ls "$tmp"/js/jetstream/*/streams 2> /dev/null | tr '\n' ' '; }
got=$(cd "$tmp" && "$zgc" run --processes --nats "$url" --durable --journal nats --run-id kv-r1 \
  "$durable/counter.zg" "$durable/effect.c" 2> "$tmp/err")
if [ "$got" = 12 ] && [[ " $(streams) " == *" KV_zgs-kv-r1-S "* ]] && [[ " $(streams) " == *" ZG_kv-r1 "* ]]; then ok
else bad "durable run over NATS: '$got', streams $(streams): $(tail -3 "$tmp/err")"; fi
out=$("$zgc" runs show kv-r1 --nats "$url" --journal nats 2>&1)
if grep -q "status: done" <<<"$out"; then ok; else bad "runs show kv-r1: $out"; fi
out=$("$zgc" runs gc --nats "$url" --journal nats 2>&1)
if grep -q "removed 1 run" <<<"$out" && [[ " $(streams) " != *"kv-r1"* ]]; then ok
else bad "runs gc: $out; streams $(streams)"; fi
# killed (a real SIGKILL of one lifeline's process, --peer-wait 0: the
# launcher stops) and resumed by `zgc runs resume` with the secret the
# launcher kept (.zgc/secrets/RUN.key): the uninterrupted result, every
# increment committed once, the kept secret gone once the run is done.
# A is killed at its 34th event, the read of its last atomic block, after
# it took B's message: B has started (a process killed before the other
# has begun leaves a run that `zgc runs resume` cannot start: that
# lifeline has no record yet); B makes 27 events, fewer than 34
mkdir -p "$tmp/kr" && rm -f "$tmp/kr/ops"
export ZGC_TEST_EFFECT_LOG="$tmp/kr/effect.log"
(cd "$tmp/kr" && ZGRT_KILL_AT_EVENT=34 setsid -w "$zgc" run --processes --nats "$url" --durable \
  --journal nats --run-id kv-r2 --oprecords ops --peer-wait 0 "$durable/counter.zg" \
  "$durable/effect.c" > /dev/null 2> err)
st=$?
if [ $st != 0 ] && [ -f "$tmp/kr/.zgc/secrets/kv-r2.key" ]; then ok
else bad "killed durable run over NATS: exit $st, secret: $(ls -R "$tmp/kr/.zgc" 2>&1); $(tail -3 "$tmp/kr/err")"; fi
got=$(cd "$tmp/kr" && "$zgc" runs resume kv-r2 --nats "$url" --journal nats 2> err2)
incs=$(grep '"aborted":false' "$tmp/kr/ops" | grep -c '"write_set":\["c"\]')
twice=$(grep '"aborted":false' "$tmp/kr/ops" | grep -o '"txn":[0-9]*' | sort | uniq -d)
if [ "$got" = 12 ] && [ "$incs" = 12 ] && [ -z "$twice" ] && [ ! -e "$tmp/kr/.zgc/secrets/kv-r2.key" ]; then ok
else bad "resumed durable run over NATS: '$got', $incs increments, twice '$twice': $(tail -3 "$tmp/kr/err2")"; fi
# per lifeline, --journal nats names the run by --run only
if (cd "$tmp" && "$zgc" run --processes --nats "$url" --durable --journal nats --run-id 'a.b' \
  "$durable/counter.zg" "$durable/effect.c" > /dev/null 2> "$tmp/err"); then bad "run id a.b accepted"
elif grep -q "must be 1 to 64 letters, digits" "$tmp/err"; then ok; else bad "run id a.b: $(cat "$tmp/err")"; fi

"$zgc" build "$durable/counter.zg" "$durable/effect.c" -o "$tmp/out" > /dev/null 2>&1 &&
  head -c 32 /dev/urandom > "$tmp/run.key" && chmod 600 "$tmp/run.key"
"$tmp/out/counter.A" --nats "$url" --run x1 --run-id y1 --durable --journal nats \
  --secret-file "$tmp/run.key" > /dev/null 2> "$tmp/err"
st=$?
if [ $st = 2 ] && grep -q "the run's id is its NATS run (--run x1)" "$tmp/err"; then ok
else bad "--run x1 --run-id y1 --journal nats: exit $st: $(cat "$tmp/err")"; fi

# errors
if "$prog" "$url" l1 3 - get > /dev/null 2> "$tmp/err"; then bad "another level accepted"
elif grep -q "level" "$tmp/err"; then ok; else bad "another level: $(cat "$tmp/err")"; fi
kill -9 "$pid"; wait "$pid" 2> /dev/null; pid=""
if "$prog" "$url" l1 1 - get > /dev/null 2> "$tmp/err"; then bad "a dead server accepted"
elif grep -q "cannot connect" "$tmp/err"; then ok; else bad "dead server: $(cat "$tmp/err")"; fi

echo "store nats: $pass passed, $fail failed"
[ "$fail" = 0 ]
