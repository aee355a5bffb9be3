#!/usr/bin/env bash
# A soak outside CI: the all-in-one fan-out of bench/fanout/gen (one
# coordinator, N workers, fibers on the default workers) run RUNS times;
# every run must exit 0 with the exact result.  It found a fault of the
# one-process deadlock accounting that showed about once in 1,000–3,000
# runs (tests/runtime/README.md).
#
#   tests/runtime/fanout_soak.sh ZGC [RUNS] [WORKERS] [ROUNDS]
#
# Defaults: 3,000 runs, 16 workers, 3,000 rounds.  Prints each failing
# run's output and, at the end, the number of runs and of failures; exits
# 1 if any run failed.
set -u
zgc=$(realpath "${1:?usage: fanout_soak.sh ZGC [RUNS] [WORKERS] [ROUNDS]}")
runs=${2:-3000} workers=${3:-16} rounds=${4:-3000}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root/bench/fanout/gen" "$workers" > "$tmp/fanout.zg" || exit 2
"$zgc" build "$tmp/fanout.zg" -o "$tmp/out" > /dev/null || exit 2
sum=$((workers * rounds * (rounds + 1) / 2))
want="[$rounds, $sum]"
failed=0
for i in $(seq 1 "$runs"); do
  out=$(timeout 120 "$tmp/out/fanout" --arg rounds="$rounds" 2>&1)
  rc=$?
  if [ "$rc" -ne 0 ] || [ "$out" != "$want" ]; then
    failed=$((failed + 1))
    echo "run $i: exit $rc: $(head -c 400 <<< "$out")"
  fi
done
echo "fanout_soak: $runs runs, $failed failed ($workers workers, $rounds rounds)"
[ "$failed" -eq 0 ]
