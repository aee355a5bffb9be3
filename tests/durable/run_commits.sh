#!/usr/bin/env bash
# When a durable per-lifeline run commits (docs/runtime.md "Durable
# runs", "Output commit"): fan.zg, whose coordinator C takes two replies
# in a coregion every round and then sends the next round's requests.
#   - Without a CPL monitor the order C took the replies in changes
#     nothing it sends, so its sends do not wait for a commit: C's
#     journal holds far fewer commits (chunks) than rounds.
#   - With a guard that needs the monitor (`once`: the order of C's
#     events is what the monitor reads, and its values travel with the
#     messages), every round's first send waits for the commit of the
#     picks before it: at least one commit a round.
#   - The run without a monitor, killed with SIGKILL mid-run (every
#     process, up to three times) and resumed with `zgc runs resume`,
#     ends with the uninterrupted result, and its trace (every attempt
#     in one file) is accepted by `zgc trace check`.
#   run_commits.sh ZGC
set -u
zgc=$(realpath "${1:?usage: run_commits.sh ZGC}")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ZGC_CACHE="$tmp/cache"
cd "$tmp"
# shellcheck source=lib.sh
. "$here/lib.sh"
pass=0 fail=0
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
rounds=200
want=$((rounds * (rounds + 1)))

# chunks STORE LIFELINE: the commits of that lifeline's journal
chunks() { sqlite3 "$1" "SELECT count(*) FROM journal WHERE lifeline = $2"; }

# without a monitor
out=$("$zgc" run --processes --durable="$tmp/a.db" "$here/fan.zg" --arg rounds=$rounds 2> a.err)
[ "$out" = "$want" ] || bad "fan.zg: result '$out', not $want: $(tail -3 a.err)"
n=$(chunks a.db 0)
if [ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -lt $((rounds / 4)) ]; then pass=$((pass + 1)); else
  bad "fan.zg without a monitor: C committed $n times in $rounds rounds (expected fewer than $((rounds / 4)))"
fi

# with a monitor: `once i >= 0` is true, the result is the same
sed 's/while i < rounds @ C/while i < rounds \&\& once i >= 0 @ C/' "$here/fan.zg" > fanm.zg
grep -q 'once i >= 0' fanm.zg || bad "fanm.zg: the guard was not added"
out=$("$zgc" run --processes --durable="$tmp/m.db" fanm.zg --arg rounds=$rounds 2> m.err)
[ "$out" = "$want" ] || bad "fanm.zg: result '$out', not $want: $(tail -3 m.err)"
n=$(chunks m.db 0)
if [ -n "$n" ] && [ "$n" -ge "$rounds" ]; then pass=$((pass + 1)); else
  bad "fanm.zg (a monitor): C committed $n times in $rounds rounds (expected at least $rounds)"
fi

# killed and resumed: a longer run, every process killed with SIGKILL
# once one of them reaches a random event (ZGRT_KILL_AT_EVENT), then
# resumed, the first two resumes killed again the same way
big=1000
bigwant=$((big * (big + 1)))
kills=0
kill_attempt $((200 + RANDOM % 4000)) k.out k.err "$zgc" run --processes --durable="$tmp/k.db" --run-id k1 \
  --trace k.jsonl --peer-wait 0 "$here/fan.zg" --arg rounds=$big
[ "$kills" = 1 ] || bad "the run to kill was not killed (exit $att): $(tail -3 k.err)"
n=0
while [ "$att" -ne 0 ] && [ $n -lt 6 ]; do
  n=$((n + 1))
  again=0
  [ $n -le 2 ] && again=$((200 + RANDOM % 4000))
  kill_attempt "$again" k.out k.err "$zgc" runs resume k1 --store "$tmp/k.db"
done
out=$(cat k.out)
if [ "$att" = 0 ] && [ "$out" = "$bigwant" ]; then pass=$((pass + 1)); else
  bad "fan.zg killed $kills times and resumed: exit $att, result '$out', not $bigwant: $(tail -3 k.err)"
fi
if "$zgc" trace check -q "$here/fan.zg" k.jsonl > k.check 2>&1; then pass=$((pass + 1)); else
  bad "fan.zg killed and resumed: zgc trace check refused the trace: $(head -c 300 k.check)"
fi

echo "commits: $pass passed, $fail failed (the resumed run killed $kills times)"
[ "$fail" = 0 ]
