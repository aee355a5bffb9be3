#!/usr/bin/env bash
# Run tests: every tests/run/*.zg and every example is built and run, in one
# process and as one process per lifeline (--processes), and must give the
# expected result:
#   // args: RUN OPTIONS        options for `zgc run` (optional)
#   // expect: JSON             the exact stdout (exit 0)
#   // expect error: TEXT       exit 1 and TEXT on stderr (several allowed)
# Examples are listed with their options and results in tests/run/examples.txt,
# the standard library's (one line per outcome) in tests/run/stdlib.txt.
# Every successful run writes a trace, checked by `zgc trace check` (a
# well-formed MSC whose vector clocks match the causal order, erasure
# equivalence with the global workflow, recomputed values and guards).
#   run_programs.sh ZGC
# RUN_MODES (default "inprocess processes") chooses the modes and
# RUN_EXTRA adds options to every run (tests/nats/run.sh: --nats URL);
# RUN_EVERY=N runs only every Nth program (the 1st, the N+1st, …; CI's
# sanitizer build takes every second one over NATS: scripts/test.sh).
set -u
zgc=$(realpath "${1:?usage: run_programs.sh ZGC}")
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
every=${RUN_EVERY:-1} index=0 skipped=0
case $every in '' | *[!0-9]* | 0) echo "run_programs.sh: RUN_EVERY must be a positive integer" >&2; exit 2 ;; esac
# picked: true for every RUN_EVERY-th program
picked() {
  index=$((index + 1))
  [ $(((index - 1) % every)) -eq 0 ] && return 0
  skipped=$((skipped + 1))
  return 1
}

# one FILE "OPTIONS" EXPECT_STDOUT ERRORS(newline-separated) MODE
one() {
  local src=$1 opts=$2 want=$3 errs=$4 mode=$5
  local extra=() out err status
  [ "$mode" = processes ] && extra=(--processes)
  local trace=$tmp/trace.jsonl
  rm -f "$trace"
  # shellcheck disable=SC2086
  out=$(timeout 60 "$zgc" run "$src" "${extra[@]}" $opts ${RUN_EXTRA:-} --trace "$trace" 2> "$tmp/err")
  status=$?
  err=$(cat "$tmp/err")
  local label="$src ($mode)"
  if [ -n "$errs" ]; then
    if [ "$status" -ne 1 ]; then
      echo "FAIL $label: exit $status, expected 1"; printf '%s\n' "$err" | head -5
      fail=$((fail + 1)); return
    fi
    while IFS= read -r e; do
      [ -z "$e" ] && continue
      if ! grep -qF -- "$e" <<< "$err"; then
        echo "FAIL $label: stderr lacks: $e"; printf '%s\n' "$err" | head -5
        fail=$((fail + 1)); return
      fi
    done <<< "$errs"
    pass=$((pass + 1)); return
  fi
  if [ "$status" -ne 0 ] || [ "$out" != "$want" ]; then
    echo "FAIL $label: exit $status, stdout: $out (expected $want)"; printf '%s\n' "$err" | head -5
    fail=$((fail + 1)); return
  fi
  # the workflow file is the first argument ending in .zg
  if ! "$zgc" trace check -q "$src" "$trace" > /dev/null 2> "$tmp/check"; then
    echo "FAIL $label: trace: $(cat "$tmp/check")"
    fail=$((fail + 1)); return
  fi
  pass=$((pass + 1))
}

for src in tests/run/*.zg; do
  opts=$(sed -n 's|^// args: \(.*\)$|\1|p' "$src" | tr '\n' ' ')
  want=$(sed -n 's|^// expect: \(.*\)$|\1|p' "$src")
  errs=$(sed -n 's|^// expect error: \(.*\)$|\1|p' "$src")
  picked || continue
  for mode in ${RUN_MODES:-inprocess processes}; do one "$src" "$opts" "$want" "$errs" "$mode"; done
done
while IFS='|' read -r ex opts want; do
  ex=$(echo "$ex" | xargs); [ -z "$ex" ] && continue; case $ex in \#*) continue ;; esac
  opts=$(echo "$opts" | xargs)
  want=$(echo "$want" | sed 's/^ *//; s/ *$//')
  picked || continue
  for mode in ${RUN_MODES:-inprocess processes}; do one "examples/$ex" "$opts" "$want" "" "$mode"; done
done < <(cat tests/run/examples.txt tests/run/stdlib.txt)
note=""
[ "$skipped" -gt 0 ] && note=" ($skipped programs left out: RUN_EVERY=$every)"
echo "run: $pass passed, $fail failed$note"
[ "$fail" -eq 0 ]
