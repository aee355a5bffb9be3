#!/usr/bin/env bash
# Hostile peers against executables built by zgc (per-lifeline processes on
# real sockets), each scenario with the error it must end in:
#
#   program    a lifeline built from another program with the same
#              declarations (pure inc adds 1000) is refused on both sides,
#              naming both; the same program built from elsewhere with
#              other flags is the same program
#   strays     an HTTP request to a lifeline's TCP port during setup, and
#              70 idle connections, are dropped with a note; the run ends
#              with its result
#   hangs      without --timeout, each ends with an error naming the peer
#              within the heartbeat limit (1 s here, and the default 5 s
#              once): a peer that says goodbye early, a 64 MB length prefix
#              and then silence, a SIGSTOP'd peer, a dropped frame, a
#              duplicated frame, one flipped bit in a control decision, a
#              relay that stops passing frames on
#   busy       an action longer than the limit does not trip it (with the
#              default workers, one worker, and the threads scheduler)
#   root cause 40 runs of zgc run --processes with programs whose lifeline
#              B fails at run time while A waits: stderr holds one error,
#              B's, with its source location
#
# usage: tests/net/run_hostile.sh ZGC FAKEPEER
set -uo pipefail
zgc=$(realpath "${1:?usage: run_hostile.sh ZGC FAKEPEER}")
fake=$(realpath "${2:?usage: run_hostile.sh ZGC FAKEPEER}")
here=$(cd "$(dirname "$0")" && pwd)
progs=$here/programs
tmp=$(mktemp -d /tmp/zgc-hostile-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2> /dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0 passes=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
pass() { passes=$((passes + 1)); }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# has FILE TEXT: FILE contains TEXT (fixed string)
has() { grep -qF -- "$2" "$1"; }

head -c 32 /dev/urandom > "$tmp/key" && chmod 600 "$tmp/key"
"$zgc" build "$progs/loop.zg" -o "$tmp/loop" > /dev/null || { echo "FAIL build loop.zg"; exit 1; }
"$zgc" build "$progs/other.zg" -o "$tmp/other" > /dev/null || { echo "FAIL build other.zg"; exit 1; }
cp "$progs/loop.zg" "$tmp/loop-copy.zg"
"$zgc" build "$tmp/loop-copy.zg" -o "$tmp/copy" -O0 > /dev/null || { echo "FAIL build copy"; exit 1; }
"$zgc" build "$progs/slow.zg" "$progs/slow.c" -o "$tmp/slow" > /dev/null ||
  { echo "FAIL build slow.zg"; exit 1; }

# lifeline NAME DIR ARGS...: lifeline NAME of DIR's workflow, in the
# background, its stdout and stderr in $tmp/NAME.out, .err; $! is its pid
sock=$tmp/s
mkdir -p "$sock"
lifeline() {
  local name=$1 dir=$2 exe
  shift 2
  exe=$(ls "$dir"/*."$name")
  "$exe" --secret-file "$tmp/key" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" &
}
# A and B of loop, connected directly (unix sockets in $sock)
a_args() { echo --listen "unix:$sock/A" --peer "B=unix:${1:-$sock/B}"; }
b_args() { echo --listen "unix:$sock/B" --peer "A=unix:$sock/A"; }
# wait_for PID SECONDS: waits for PID's exit within SECONDS; its status,
# or 124 (then it is killed)
wait_for() {
  local pid=$1 secs=$2 t0
  t0=$(now)
  while kill -0 "$pid" 2> /dev/null; do
    if awk -v a="$t0" -v b="$(now)" -v s="$secs" 'BEGIN { exit !(b - a > s) }'; then
      kill -KILL "$pid" 2> /dev/null
      wait "$pid" 2> /dev/null
      return 124
    fi
    sleep 0.05
  done
  wait "$pid"
}
reset() {
  for p in "${pids[@]}"; do kill -KILL "$p" 2> /dev/null; wait "$p" 2> /dev/null; done
  pids=()
  rm -f "$sock"/* "$tmp"/*.out "$tmp"/*.err
}

# ---- another program with the same declarations ---------------------------------------

reset
lifeline B "$tmp/other" $(b_args); pb=$!; pids+=("$pb")
lifeline A "$tmp/loop" $(a_args) --arg rounds=5; pa=$!; pids+=("$pa")
wait_for "$pa" 10; sa=$?
wait_for "$pb" 10; sb=$?
if [ "$sa" != 1 ] || [ "$sb" != 1 ]; then
  fail "program: A and B of different programs: exit $sa and $sb, expected 1 and 1"
elif ! has "$tmp/A.err" "they were built from different programs of workflow loop" ||
     ! has "$tmp/A.err" "lifeline A (program " || ! has "$tmp/A.err" "lifeline B (program " ||
     ! has "$tmp/B.err" "they were built from different programs of workflow loop"; then
  fail "program: the errors do not name both sides:"; cat "$tmp/A.err" "$tmp/B.err"
elif [ -s "$tmp/A.out" ]; then
  fail "program: a result from a run of two programs: $(cat "$tmp/A.out")"
else pass; fi

reset
lifeline B "$tmp/copy" $(b_args); pb=$!; pids+=("$pb")
lifeline A "$tmp/loop" $(a_args) --arg rounds=5; pa=$!; pids+=("$pa")
wait_for "$pa" 10; sa=$?
wait_for "$pb" 10; sb=$?
if [ "$sa" != 0 ] || [ "$sb" != 0 ] || [ "$(cat "$tmp/A.out")" != '{"0": 5}' ]; then
  fail "program: one program built from another path with -O0 was refused: $sa $sb"
  cat "$tmp/A.err" "$tmp/B.err"
else pass; fi

# ---- strays during setup ---------------------------------------------------------------

reset
port=0
for try in 1 2 3 4 5; do
  port=$((30000 + RANDOM % 29000))
  lifeline B "$tmp/loop" --listen "tcp:$port" --peer "A=unix:$sock/A"; pb=$!; pids+=("$pb")
  sleep 0.3
  kill -0 "$pb" 2> /dev/null && break
done
if ! "$fake" http "tcp:127.0.0.1:$port" 2> "$tmp/http.err"; then
  fail "strays: an HTTP request during setup: $(cat "$tmp/http.err")"
fi
lifeline A "$tmp/loop" --listen "unix:$sock/A" --peer "B=tcp:127.0.0.1:$port" --arg rounds=50
pa=$!; pids+=("$pa")
wait_for "$pa" 20; sa=$?
wait_for "$pb" 20; sb=$?
if [ "$sa" != 0 ] || [ "$sb" != 0 ] || [ "$(cat "$tmp/A.out")" != '{"0": 50}' ]; then
  fail "strays: an HTTP request during setup stopped the run ($sa, $sb):"
  cat "$tmp/A.err" "$tmp/B.err"
elif [ "$(grep -c . "$tmp/B.err")" != 1 ] ||
     ! has "$tmp/B.err" "loop.B: note: lifeline B: dropped a connection to tcp:$port: not a zgc lifeline (an HTTP request)"; then
  fail "strays: B's stderr is not one note about the HTTP request:"; cat "$tmp/B.err"
else pass; fi

reset
lifeline B "$tmp/loop" $(b_args); pb=$!; pids+=("$pb")
"$fake" idle "unix:$sock/B" 70 10 & pidle=$!; pids+=("$pidle")
sleep 0.5
lifeline A "$tmp/loop" $(a_args) --arg rounds=50; pa=$!; pids+=("$pa")
wait_for "$pa" 20; sa=$?
wait_for "$pb" 20; sb=$?
if [ "$sa" != 0 ] || [ "$sb" != 0 ] || [ "$(cat "$tmp/A.out")" != '{"0": 50}' ]; then
  fail "strays: 70 idle connections stopped the run ($sa, $sb):"; cat "$tmp/A.err" "$tmp/B.err"
elif ! has "$tmp/B.err" "connections were waiting for their handshake"; then
  fail "strays: 70 idle connections without a note:"; cat "$tmp/B.err"
else pass; fi

# a member that forges its program identity is dropped like a stray (with
# a note); A goes on waiting for B, here until its --timeout
reset
lifeline A "$tmp/loop" $(a_args "$sock/fakeB") --arg rounds=5 --timeout 2; pa=$!; pids+=("$pa")
"$fake" member B "unix:$sock/fakeB" "unix:$sock/A" "$tmp/key" forge 2> "$tmp/fake.err" &
pf=$!; pids+=("$pf")
wait_for "$pf" 10; sf=$?
wait_for "$pa" 10; sa=$?
if [ "$sf" != 3 ] || ! has "$tmp/fake.err" "they were built from different programs of workflow loop"; then
  fail "strays: a forged program identity was not refused (fakepeer exit $sf):"; cat "$tmp/fake.err"
elif [ "$sa" != 1 ] || ! has "$tmp/A.err" "loop.A: note: lifeline A: dropped a connection to unix:$sock/A: lifeline B (program" ||
     ! has "$tmp/A.err" "timed out after 2 s waiting for lifeline B to connect"; then
  fail "strays: A after a forged identity (exit $sa):"; cat "$tmp/A.err"
else pass; fi

# ---- hangs --------------------------------------------------------------------------------

# hang NAME LIMIT WHO TEXT: after the scenario has started, the process
# WHO must end with status 1 within LIMIT + 3 s, its stderr holding TEXT
hang() {
  local name=$1 limit=$2 who=$3 text=$4 t0=$5 st
  wait_for "$who" $((limit + 3)); st=$?
  local took
  took=$(elapsed "$t0")
  local errf=$6
  if [ "$st" = 124 ]; then
    fail "hang $name: still running after $((limit + 3)) s"
  elif [ "$st" != 1 ]; then
    fail "hang $name: exit $st, expected 1:"; cat "$errf"
  elif ! has "$errf" "$text"; then
    fail "hang $name: after ${took}s, without the expected error \"$text\":"; cat "$errf"
  else pass; fi
}

# early goodbye: the fake B says BYE without the messages A waits for
reset
lifeline A "$tmp/loop" $(a_args "$sock/fakeB") --arg rounds=5 --heartbeat 1; pa=$!; pids+=("$pa")
"$fake" member B "unix:$sock/fakeB" "unix:$sock/A" "$tmp/key" bye 2> "$tmp/fake.err" &
pids+=($!)
t0=$(now)
hang "early-goodbye" 1 "$pa" \
  "loop.A: error: lifeline A: $progs/loop.zg:15:9: waits for a message from B on main, but lifeline B has ended: it said goodbye without sending it" \
  "$t0" "$tmp/A.err"

# a 64 MB length prefix, then silence
reset
lifeline A "$tmp/loop" $(a_args "$sock/fakeB") --arg rounds=5 --heartbeat 1; pa=$!; pids+=("$pa")
"$fake" member B "unix:$sock/fakeB" "unix:$sock/A" "$tmp/key" prefix 2> "$tmp/fake.err" &
pids+=($!)
t0=$(now)
hang "64MB-prefix" 1 "$pa" \
  "loop.A: error: lifeline B (unix:$sock/fakeB) has sent nothing for 1 s, in the middle of a frame (0 of 67108864 bytes received): its process is stopped, hung or cut off" \
  "$t0" "$tmp/A.err"

# a stopped peer, at the default limit (5 s) and at 1 s
for hb in default 1; do
  reset
  opt=()
  [ "$hb" = default ] || opt=(--heartbeat "$hb")
  lifeline B "$tmp/loop" $(b_args) "${opt[@]}"; pb=$!; pids+=("$pb")
  lifeline A "$tmp/loop" $(a_args) --arg rounds=1000000000 "${opt[@]}"; pa=$!; pids+=("$pa")
  sleep 0.5
  kill -STOP "$pb"
  t0=$(now)
  limit=$([ "$hb" = default ] && echo 5 || echo 1)
  hang "sigstop-$hb" "$limit" "$pa" \
    "loop.A: error: lifeline B (unix:$sock/B) has sent nothing for $limit s: its process is stopped, hung or cut off" \
    "$t0" "$tmp/A.err"
  took=$(elapsed "$t0")
  if awk -v t="$took" -v l="$limit" 'BEGIN { exit !(t < l - 0.2) }'; then
    fail "hang sigstop-$hb: detected after ${took}s, before the limit of ${limit}s"
  fi
  kill -KILL "$pb"
done

# a stopped peer and --timeout: A waits for B alone (its poll leaves the
# scheduler's eventfd out and looks again every 50 ms), and the run's
# timeout, fired from another thread, still ends it at once, long before
# the heartbeat limit (5 s)
reset
lifeline B "$tmp/loop" $(b_args); pb=$!; pids+=("$pb")
t0=$(now)
lifeline A "$tmp/loop" $(a_args) --arg rounds=1000000000 --timeout 2; pa=$!; pids+=("$pa")
sleep 0.5
kill -STOP "$pb"
hang "sigstop-timeout" 2 "$pa" "loop.A: error: timeout after 2 s" "$t0" "$tmp/A.err"
took=$(elapsed "$t0")
if awk -v t="$took" 'BEGIN { exit !(t > 3.5) }'; then
  fail "hang sigstop-timeout: --timeout 2 ended the run after ${took}s"
fi
kill -KILL "$pb"

# a relay between A and B (A -> B through it) that does something to a frame
relayed() { # NAME TEXT RELAY-ARGS...
  local name=$1 text=$2
  shift 2
  reset
  "$fake" relay "unix:$sock/relayB" "unix:$sock/B" "$@" & pids+=($!)
  lifeline B "$tmp/loop" $(b_args) --heartbeat 1; pb=$!; pids+=("$pb")
  lifeline A "$tmp/loop" $(a_args "$sock/relayB") --arg rounds=1000000 --heartbeat 1
  pa=$!; pids+=("$pa")
  t0=$(now)
  hang "$name" 1 "$pb" "$text" "$t0" "$tmp/B.err"
  wait_for "$pa" 5 > /dev/null
}
integrity="failed its integrity check: it was modified, or frames were dropped, duplicated or reordered on the way"
relayed dropped-frame "loop.B: error: frame 8 from lifeline A (unix:$sock/A) $integrity" --drop 9
relayed duplicated-frame "loop.B: error: frame 7 from lifeline A (unix:$sock/A) $integrity" --dup 7
# A's 3rd control decision is in its 3rd frame (each iteration's decision
# and value are written together, one batch under one tag)
relayed flipped-decision "loop.B: error: frame 2 from lifeline A (unix:$sock/A) $integrity" \
  --kind ctl --flip 3
relayed stalled-relay \
  "loop.B: error: lifeline A (unix:$sock/A) has sent nothing for 1 s: its process is stopped, hung or cut off" \
  --stall 20

# ---- a long action is no silence ------------------------------------------------------------

# (default workers: an idle worker of B reads A's heartbeats; --workers 1:
# B's only worker is inside the action, and the transport's thread reads
# them; threads: the transport's thread reads all along)
for sched in "" "--workers 1" "--scheduler threads"; do
  reset
  # shellcheck disable=SC2086 # $sched: zero to two words
  lifeline B "$tmp/slow" $(b_args) --heartbeat 1 $sched; pb=$!; pids+=("$pb")
  # shellcheck disable=SC2086
  lifeline A "$tmp/slow" $(a_args) --heartbeat 1 $sched; pa=$!; pids+=("$pa")
  wait_for "$pa" 15; sa=$?
  wait_for "$pb" 15; sb=$?
  if [ "$sa" != 0 ] || [ "$sb" != 0 ] || [ "$(cat "$tmp/A.out")" != '{"0": 1}' ]; then
    fail "busy ($sched): a 3 s action with --heartbeat 1 ($sa, $sb):"; cat "$tmp/A.err" "$tmp/B.err"
  else pass; fi
done

# ---- the root cause wins ------------------------------------------------------------------

reset
declare -A want=(
  [rc_overflow]="zgc: error: lifeline B: $progs/rc_overflow.zg:7:12: integer overflow in \`+\`"
  [rc_divzero]="zgc: error: lifeline B: $progs/rc_divzero.zg:7:12: division by zero"
  [rc_binding]="zgc: error: lifeline B: $progs/rc_binding.zg:7:5: constant binding mismatch: expected 5, got 3"
)
bad=0
for i in $(seq 1 40); do
  case $((i % 3)) in 0) p=rc_overflow ;; 1) p=rc_divzero ;; 2) p=rc_binding ;; esac
  "$zgc" run --processes "$progs/$p.zg" > "$tmp/rc.out" 2> "$tmp/rc.err"
  st=$?
  # the error, then its source line and caret (two lines), nothing else
  if [ "$st" != 1 ] || [ "$(head -1 "$tmp/rc.err")" != "${want[$p]}" ] ||
    [ "$(wc -l < "$tmp/rc.err")" != 3 ] || ! sed -n 3p "$tmp/rc.err" | grep -q '^ *| *\^$'; then
    bad=$((bad + 1))
    [ "$bad" -le 3 ] && { echo "run $i ($p): exit $st, stderr:"; cat "$tmp/rc.err"; }
  fi
done
if [ "$bad" != 0 ]; then
  fail "root cause: $bad of 40 runs did not print exactly the failing lifeline's error"
else pass; fi

echo "hostile: $passes passed, $fails failed"
[ "$fails" = 0 ]
