#!/usr/bin/env bash
# The oracle recomputes the values of the rule tests itself: every
# tests/run program that checks a rule of the language reference's §5
# (rules_*.zg, fold_agree.zg, strings.zg; those that end in an error
# excepted) is run, in one process and as processes, and `zgc trace
# check` must verify every value it recomputes — "0 unverified" — so the
# compiler's folding, the run-time code and the oracle's evaluator are
# seen to agree on each of them, not just not to disagree.
#   run_rules.sh ZGC
set -u
zgc=$(realpath "${1:?usage: run_rules.sh ZGC}")
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for src in tests/run/rules_*.zg tests/run/fold_agree.zg tests/run/strings.zg; do
  grep -q '^// expect error:' "$src" && continue
  opts=$(sed -n 's|^// args: \(.*\)$|\1|p' "$src" | tr '\n' ' ')
  for mode in inprocess processes; do
    extra=()
    [ "$mode" = processes ] && extra=(--processes)
    rm -f "$tmp/t.jsonl"
    # shellcheck disable=SC2086
    if ! timeout 60 "$zgc" run "$src" "${extra[@]}" $opts --trace "$tmp/t.jsonl" > /dev/null 2> "$tmp/err"; then
      echo "FAIL $src ($mode): the run failed: $(head -3 "$tmp/err")"
      fail=$((fail + 1)); continue
    fi
    if ! out=$("$zgc" trace check "$src" "$tmp/t.jsonl" 2>&1); then
      echo "FAIL $src ($mode): $out"
      fail=$((fail + 1)); continue
    fi
    case $out in
    *", 0 values recomputed"*) echo "FAIL $src ($mode): no value recomputed: $out"; fail=$((fail + 1)) ;;
    *", 0 unverified") pass=$((pass + 1)) ;;
    *) echo "FAIL $src ($mode): values left unverified: $out"; fail=$((fail + 1)) ;;
    esac
  done
done
echo "oracle rules: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
