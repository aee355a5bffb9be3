#!/usr/bin/env bash
# --schedule SEED with fibers on ONE worker: seeds give different
# interleavings.  tests/run/coregion.zg: Hub takes A's and B's reports in
# arrival order; over 16 seeds both orders must occur and every run must
# give the right result.
#
#   tests/runtime/run_schedules.sh ZGC
set -euo pipefail
zgc=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$zgc" build "$root/tests/run/coregion.zg" -o "$tmp/co" > /dev/null

# order SEED: Hub's receives, "AB" or "BA"
order() {
  local out
  out=$("$tmp/co/w" --scheduler fibers --workers 1 --schedule "$1" --trace "$tmp/t.jsonl")
  [ "$out" = 30 ] || { echo "run_schedules: seed $1: result '$out', expected 30" >&2; exit 1; }
  grep '"lifeline":"Hub"' "$tmp/t.jsonl" | grep -o '"from":"[AB]"' | cut -d'"' -f4 | tr -d '\n'
}

seen=""
for seed in $(seq 1 16); do
  o=$(order "$seed")
  case $o in AB|BA) ;; *) echo "run_schedules: seed $seed: Hub received '$o'" >&2; exit 1 ;; esac
  case " $seen " in *" $o "*) ;; *) seen="$seen $o" ;; esac
done
n=$(echo $seen | wc -w)
if [ "$n" -lt 2 ]; then
  echo "run_schedules: 16 seeds on one worker gave only the order$seen" >&2
  exit 1
fi
echo "run_schedules: orders over 16 seeds:$seen"
