#!/usr/bin/env bash
# Planners (docs/runtime.md, "Planners"): workflows written by a scripted
# model while a workflow runs, compiled by the front end, run through
# ORC's JIT as nested runs.  Each case runs a program of this folder with
# one of its answer scripts (CASE.json) and checks the result or the
# error; every run that ends well is run with --trace and its trace
# checked by `zgc trace check`.
#   run.sh ZGC
set -u
zgc=$(realpath "${1:?usage: run.sh ZGC}")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

# run NAME PROGRAM SCRIPT ARG EXPECTED_STDOUT [RUN OPTIONS…]: a good run,
# its trace checked
good() {
  local name=$1 prog=$2 script=$3 arg=$4 want=$5
  shift 5
  local out
  out=$("$zgc" run "$here/$prog" --arg "$arg" --llm "scripted:$here/$script" \
    --trace "$tmp/$name.trace" "$@" 2>"$tmp/$name.err")
  local st=$?
  if [ $st -ne 0 ] || [ "$out" != "$want" ]; then
    bad "$name: exit $st, output '$out' (want '$want')"
    head -20 "$tmp/$name.err"
    return
  fi
  local traces=("$tmp/$name.trace")
  [ -e "$tmp/$name.trace" ] || traces=("$tmp/$name.trace".*)
  for t in "${traces[@]}"; do
    if ! "$zgc" trace check "$here/$prog" "$t" >"$tmp/$name.check" 2>&1; then
      bad "$name: trace check of $t"
      cat "$tmp/$name.check"
      return
    fi
  done
  ok
}

# fails NAME PROGRAM SCRIPT ARG PATTERN…: exit 1, each pattern (grep -F)
# in the error
fails() {
  local name=$1 prog=$2 script=$3 arg=$4
  shift 4
  "$zgc" run "$here/$prog" --arg "$arg" --llm "scripted:$here/$script" >"$tmp/$name.out" \
    2>"$tmp/$name.err"
  local st=$?
  if [ $st -ne 1 ]; then
    bad "$name: exit $st, want 1"
    head -20 "$tmp/$name.err"
    return
  fi
  for p in "$@"; do
    if ! grep -qF -- "$p" "$tmp/$name.err"; then
      bad "$name: the error does not say: $p"
      head -30 "$tmp/$name.err"
      return
    fi
  done
  ok
}

# a valid plan on the first try, in one process and in one per lifeline
good first_try delegate.zg first_try.json task=hi '"FORTY-TWO"'
good first_try_processes delegate.zg first_try.json task=hi '"FORTY-TWO"' --processes
good fenced delegate.zg fenced.json task=hi '"FORTY-TWO"'
# an invalid plan, then a valid one: the second request carries the
# first plan and its diagnostics (recorded with the act in the trace)
good retry delegate.zg retry.json task=hi '"FORTY-TWO"'
if grep -q '"action":"delegate"' "$tmp/retry.trace" &&
  grep '"action":"delegate"' "$tmp/retry.trace" | grep -qF 'It was rejected:\nplan.zg:5:28: error: argument `task` of `solve` must be `str`, not `int`'; then
  ok
else
  bad "retry: the second request does not carry the first plan's diagnostics"
fi
# the restrictions and the end invariant, after the retries
fails forbidden_action delegate.zg forbidden_action.json task=hi \
  'no valid workflow in 2 attempts' '`shout` is not among the actions this planner may use'
fails forbidden_construct delegate.zg forbidden_construct.json task=hi \
  '`if` is not allowed in this planner'
# a store and its operations: generated workflows share no store
fails store delegate.zg store.json task=hi \
  'a planner'"'"'s workflow may not declare a store (`Memo`)' \
  '`atomic` is not allowed in a planner'"'"'s workflows (an operation on store `Memo`)'
fails undeclared_worker delegate.zg undeclared_worker.json task=hi 'unknown lifeline `Ghost`'
fails end_invariant delegate.zg end_invariant.json task=hi \
  'the workflow must end with a worker sending the result to Boss'
fails too_big delegate.zg too_big.json task=hi 'more than 5 statements'
# imports are refused before any file is read (/dev/zero would not end)
fails import delegate.zg import.json task=hi 'cannot read `../../stdlib/llm.zg`: a planner'"'"'s workflow may not import files'


# limits of the run: iterations, wall time
fails loop loop.zg loop.json n=1 'more than 50 loop iterations'
fails timeout timeout.zg loop.json n=1 'the generated workflow failed: timeout after 1 s'
# a limit hit, the fallback taken (the nested run's error in the trace)
good fallback fallback.zg loop.json n=1 '-1'
# the example: a parallel arithmetic evaluator
good example ../../examples/arithmetic.zg ../../examples/arithmetic.json 'expression=(3 + 4) * (10 - 2)' 56
good example_processes ../../examples/arithmetic.zg ../../examples/arithmetic.json \
  'expression=(3 + 4) * (10 - 2)' 56 --processes
# nested planners
good nested nested.zg nested.json task=hi '"deep"'
good nested_processes nested.zg nested.json task=hi '"deep"' --processes
# the nested runs are in the trace, checked against the programs they
# recorded: a value changed two planners deep is found
sed 's/"msg":"Solver>Lead@main#1","writes":{"answer":"deep"}/"msg":"Solver>Lead@main#1","writes":{"answer":"shallow"}/' \
  "$tmp/nested.trace" >"$tmp/tampered.trace"
if cmp -s "$tmp/nested.trace" "$tmp/tampered.trace"; then
  bad "tampered: the nested trace does not have the receive to change"
elif "$zgc" trace check "$here/nested.zg" "$tmp/tampered.trace" >"$tmp/tampered.out" 2>&1; then
  bad "tampered: a changed nested value passes the trace check"
elif ! grep -qF 'the nested run of planner `outer`: subrun:5: lifeline Lead event 2: the nested run of planner `inner`' "$tmp/tampered.out"; then
  bad "tampered: $(cat "$tmp/tampered.out")"
else
  ok
fi
if grep -qF '"subrun":{"source":"var answer: str;' "$tmp/first_try.trace"; then ok; else bad "first_try: no nested run in the trace"; fi
# the prompt: the signature asked for, the vocabulary as declared, the
# instructions, the input values and the grammar summary (from parser.y)
act=$(grep '"action":"delegate"' "$tmp/first_try.trace")
for p in 'workflow plan(task: str @ Boss) -> str' 'llm solve(task: str) -> (answer: str) {' \
  'the workers Solver, Checker' 'Instructions: Let Solver solve it.' 'task: str = hi' \
  "'planner' identifier '(' params ')' opt_results '{' props '}'"; do
  if printf '%s' "$act" | grep -qF -- "$p"; then ok; else bad "first_try: the prompt does not say: $p"; fi
done

echo "planner: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
