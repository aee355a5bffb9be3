#!/usr/bin/env bash
# The oracle on the deep shapes the checker accepts: a tower of 30 named
# guards each using the one below twice (plain, and with a CPL operator
# and an @B.x term at its foot), and a chain of 20,000 named guards.  Each
# run's trace must be checked in a few seconds with every guard checked
# and nothing unverified: named guards are evaluated once per valuation
# (oracle/eval.c) and shared as formula nodes (oracle/cpl.c), and the
# check runs on a deep stack (oracle/check.c).  Looking a tower's guards
# through at every use would take 2^30 evaluations.
#   run_deep.sh ZGC
set -u
zgc=$(realpath "${1:?usage: run_deep.sh ZGC}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

tower() { # FOOT
  echo "lifeline A, B;"
  echo "var x: int = 1;"
  echo "var r: bool = false;"
  echo "guard g0 = $1;"
  for i in $(seq 1 30); do echo "guard g$i = g$((i - 1)) && g$((i - 1));"; done
  echo "workflow w() -> bool {"
  echo "    B(x) -> A(x);"
  echo "    if g30 @ A { A: r = true; }"
  echo "    return r @ A;"
  echo "}"
}
chain() {
  echo "lifeline A, B;"
  echo "var x: int = 1;"
  echo "var r: bool = false;"
  echo "guard g0 = x > 0;"
  for i in $(seq 1 20000); do echo "guard g$i = g$((i - 1)) && x < $((i + 10));"; done
  echo "workflow w() -> bool {"
  echo "    while g20000 && !r @ A { A: r = true; }"
  echo "    return r @ A;"
  echo "}"
}

# check NAME EXPECTED_SUMMARY_PART
check() {
  local name=$1 want=$2 out
  if ! timeout 120 "$zgc" run "$tmp/$name.zg" --trace "$tmp/$name.jsonl" > "$tmp/$name.out" 2> "$tmp/$name.err"; then
    echo "FAIL $name: the run failed: $(head -3 "$tmp/$name.err")"
    fail=$((fail + 1))
    return
  fi
  if ! out=$(timeout 10 "$zgc" trace check "$tmp/$name.zg" "$tmp/$name.jsonl" 2>&1); then
    echo "FAIL $name: trace check failed or took over 10 s: $out"
    fail=$((fail + 1))
    return
  fi
  case $out in
  *"$want"*", 0 unverified") pass=$((pass + 1)) ;;
  *) echo "FAIL $name: $out (expected \"$want\" and 0 unverified)"; fail=$((fail + 1)) ;;
  esac
}

tower "x > 0" > "$tmp/tower_plain.zg"
check tower_plain "1 plain guards checked"
tower "once (x > 0) && @B.x == 1" > "$tmp/tower_cpl.zg"
check tower_cpl "1 CPL and 0 plain guards checked"
chain > "$tmp/chain.zg"
check chain "0 CPL and 2 plain guards checked"
echo "deep: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
