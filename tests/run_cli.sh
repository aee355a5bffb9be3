#!/usr/bin/env bash
# The command line: help texts, usage errors, exit statuses, and hostile
# inputs (each must give a clear error and exit 1 — never a crash or hang).
set -u
zgc=$(realpath "${1:?usage: run_cli.sh ZGC}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# expect STATUS PATTERN -- CMD...: runs CMD, checks the exit status and that
# stdout+stderr contain PATTERN (a grep -E regex; empty = anything).
expect() {
  local want=$1 pat=$2; shift 3
  local out status
  out=$(timeout 20 "$@" 2>&1)
  status=$?
  if [ "$status" -ne "$want" ]; then
    echo "FAIL (exit $status, expected $want): $*"
    printf '%s\n' "$out" | head -5
    fail=$((fail + 1))
  elif [ -n "$pat" ] && ! printf '%s\n' "$out" | grep -Eq -- "$pat"; then
    echo "FAIL (no /$pat/ in output): $*"
    printf '%s\n' "$out" | head -5
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}

hello=$root/examples/hello.zg

# help and version
expect 0 '^usage: zgc <command>' -- "$zgc" --help
expect 0 '^usage: zgc <command>' -- "$zgc" help
expect 2 '^usage: zgc <command>' -- "$zgc"
expect 0 '^zgc [0-9]' -- "$zgc" --version
expect 0 '^from the build tree$' -- "$zgc" --version
# ZGC_STDLIB names the standard library's directory: an import of a file
# only it holds is found there, and not without it
mkdir -p "$tmp/mystd"
cat > "$tmp/mystd/only_here.zg" << 'ZG'
const ANSWER = 42;
ZG
cat > "$tmp/uses_std.zg" << 'ZG'
import "only_here.zg";
lifeline A;
var x: int = 0;
workflow w() -> int {
    A: x = ANSWER;
    return x @ A;
}
ZG
expect 0 '' -- env ZGC_STDLIB="$tmp/mystd" "$zgc" check "$tmp/uses_std.zg"
expect 1 'only_here.zg' -- "$zgc" check "$tmp/uses_std.zg"
for c in check project guards parse anomalies build run emit-llvm; do
  expect 0 "^usage: zgc $c" -- "$zgc" "$c" --help
  expect 0 "^usage: zgc $c" -- "$zgc" help "$c"
done

# usage errors: exit 2
expect 2 'unknown command `frobnicate`' -- "$zgc" frobnicate
expect 2 'no input file' -- "$zgc" check
expect 2 'unknown option `--bogus`' -- "$zgc" check --bogus "$hello"
expect 2 'more than one input file' -- "$zgc" project "$hello" "$hello"
expect 0 '' -- "$zgc" check "$hello" "$root/examples/merge.zg"
expect 1 'nope.zg' -- "$zgc" check "$tmp/nope.zg" "$hello"
expect 2 'needs a workflow name' -- "$zgc" project "$hello" --workflow
expect 2 'exactly one of --tokens and --ast' -- "$zgc" parse "$hello"

# one error per mistake, with a suggestion when a known word is close
expect 2 'unknown command `chek`; did you mean `check`\?' -- "$zgc" chek "$hello"
expect 2 'unknown command `rnu`; did you mean `run`\?' -- "$zgc" help rnu
expect 2 'unknown option `--workflw`; did you mean `--workflow`\?' -- "$zgc" check --workflw w "$hello"
expect 2 'unknown option `--lmm`; did you mean `--llm`\?' -- "$zgc" run "$hello" --lmm mock
expect 2 'unknown runs command `lst`; did you mean `list`\?' -- "$zgc" runs lst
expect 2 'unknown cache command `clen`; did you mean `clean`\?' -- "$zgc" cache clen
expect 2 'unknown trace command `chek`; did you mean `check`\?' -- "$zgc" trace chek "$hello" x
expect 2 'unknown option `--quite`; did you mean `--quiet`\?' -- "$zgc" trace check --quite "$hello" x
expect 2 'unknown command `zzzzzz`$' -- "$zgc" zzzzzz
out=$("$zgc" run "$hello" --arg tpoic=x 2>&1)
if [ "$(grep -c 'error' <<< "$out")" = 1 ] && grep -q "unknown input 'tpoic' in --arg; did you mean topic (str, owned by User)?" <<< "$out"; then
  pass=$((pass + 1))
else
  echo "FAIL: a misspelt --arg is one error with a suggestion: $out"; fail=$((fail + 1))
fi
# the configuration of actions is checked before anything runs, also in a
# workflow that calls no model (exit 2)
inc=$root/examples/increment.zg
expect 2 '--llm: unknown model spec .openia.; did you mean .openai.\?' -- "$zgc" run "$inc" --llm openia
expect 2 '--llm: unknown model spec .olama:llama3.; did you mean .ollama:llama3.\?' -- "$zgc" run "$inc" --llm olama:llama3
expect 2 '--llm: scripted model: cannot read .nofile.json.: No such file' -- "$zgc" run "$inc" --llm scripted:nofile.json
expect 2 '--llm-for A: model spec .scripted. needs a file' -- "$zgc" run "$inc" --llm-for A=scripted
printf '{"x": 3}' > "$tmp/bad_answers.json"
expect 2 '--answers: human answers: .*the value of x must be an answer object' -- "$zgc" run "$inc" --answers "$tmp/bad_answers.json"
expect 2 "OPENAI_BASE_URL must be an http:// or https:// URL" -- env OPENAI_BASE_URL=ftp://x "$zgc" run "$inc" --llm openai
expect 0 '^3$' -- "$zgc" run "$inc" --llm ollama:llama3

# the sample histories of the anomalies quick start (examples/histories)
h=$root/examples/histories
expect 0 'stale_read.jsonl: 2 records, level L0' -- "$zgc" anomalies "$h"
expect 0 'A1 record 1 \(txn 1\) read "brief" = "launch in May" at 0' -- "$zgc" anomalies "$h/stale_read.jsonl"
expect 0 'A2 record 1 \(txn 1\) planned tool "send_email"' -- "$zgc" anomalies "$h/phantom_tool.jsonl"
expect 0 'A3 record 2 \(txn "exec-1"\) is not aborted but its predecessor' -- "$zgc" anomalies "$h/cascade.jsonl"
expect 0 'clean.jsonl: 2 records, level L4' -- "$zgc" anomalies "$h/clean.jsonl"

# a run-time error shows its source line, in one process and per lifeline
for mode in "" --processes; do
  out=$("$zgc" run $mode "$root/tests/run/div_zero.zg" 2>&1)
  if [ "$(printf '%s\n' "$out" | sed -n 2,3p)" = "$(printf '    7 |     A: a = a / b;\n      |            ^')" ]; then
    pass=$((pass + 1))
  else
    echo "FAIL: no source excerpt after a run-time error ($mode): $out"; fail=$((fail + 1))
  fi
done

# input errors: exit 1
expect 1 'cannot read .*nope.zg' -- "$zgc" check "$tmp/nope.zg"
expect 1 'cannot read' -- "$zgc" check "$tmp"
expect 1 "no workflow named \`nope\`|unknown workflow \`nope\`" -- "$zgc" project --workflow nope "$hello"
expect 1 'no lifeline `Nobody`' -- "$zgc" project --lifeline Nobody "$hello"
expect 1 'no lifeline `Writr` in .*hello.zg; did you mean `Writer`\?' -- "$zgc" project --lifeline Writr "$hello"

# native code
expect 0 '"\[write_reply:draft\]"' -- "$zgc" run "$hello" --arg topic=hi
expect 0 '^define void @zg.body.User' -- "$zgc" emit-llvm "$hello"
expect 0 '' -- "$zgc" build "$hello" -o "$tmp/out"
expect 0 '"\[write_reply:draft\]"' -- "$tmp/out/hello" --arg topic=hi
expect 0 'topic +str, owned by User' -- "$tmp/out/hello" --help
expect 2 'missing input topic' -- "$tmp/out/hello"
expect 2 'unknown option `--frob`' -- "$zgc" run --frob "$hello"
# per-lifeline executables: the run's secret is required, and must be private
w=("$tmp/out/hello.Writer" --listen "unix:$tmp/w.sock" --peer "User=unix:$tmp/u.sock")
expect 2 'needs --secret-file FILE, the run.s secret.*head -c 32 /dev/urandom > run.key && chmod 600 run.key' -- "${w[@]}"
head -c 32 /dev/urandom > "$tmp/key" && chmod 644 "$tmp/key"
expect 1 "the secret file .*key may be read or written by others \\(mode 0644\\): make it private to its owner \\(chmod 600" -- "${w[@]}" --secret-file "$tmp/key"
head -c 15 /dev/urandom > "$tmp/short" && chmod 600 "$tmp/short"
expect 1 'the secret file .*short holds 15 bytes, at least 16 are needed' -- "${w[@]}" --secret-file "$tmp/short"
expect 1 'the secret file /dev/null is not a regular file' -- "${w[@]}" --secret-file /dev/null
expect 1 'cannot read the secret file .*nokey' -- "${w[@]}" --secret-file "$tmp/nokey"
expect 2 '--secret-file apply to per-lifeline executables only' -- "$tmp/out/hello" --arg topic=hi --secret-file "$tmp/short"
expect 2 '--heartbeat expects a non-negative number of seconds' -- "$tmp/out/hello" --arg topic=hi --heartbeat=-1
expect 2 'needs a value' -- "$zgc" run "$hello" --arg
expect 1 'cannot read' -- "$zgc" run "$tmp/nope.zg"

# success
expect 0 '' -- "$zgc" check "$hello"
expect 0 '^lifeline User \{' -- "$zgc" project "$hello"
expect 0 '^lifeline Writer \{' -- "$zgc" project --lifeline Writer "$hello"
expect 0 'identifier `User`' -- "$zgc" parse --tokens "$hello"
expect 0 'workflow hello' -- "$zgc" parse --ast "$hello"

# hostile inputs
: > "$tmp/empty.zg"
expect 0 '' -- "$zgc" check "$tmp/empty.zg"
expect 1 'no workflow' -- "$zgc" project "$tmp/empty.zg"
head -c 65536 /dev/urandom > "$tmp/garbage.zg" 2>/dev/null || dd if=/dev/urandom of="$tmp/garbage.zg" bs=1k count=64 2>/dev/null
expect 1 'garbage.zg:[0-9]+:[0-9]+: error: ' -- "$zgc" check "$tmp/garbage.zg"
printf 'lifeline A;\n/* never closed\n' > "$tmp/comment.zg"
expect 1 'comment.zg:2:1: error: unterminated comment' -- "$zgc" check "$tmp/comment.zg"
printf 'lifeline A;\nconst s = "caf\xe9";\n' > "$tmp/latin1.zg"
expect 1 'latin1.zg:2:15: error: invalid UTF-8' -- "$zgc" check "$tmp/latin1.zg"
printf 'lifeline A;\x00\n' > "$tmp/nul.zg"
expect 1 'nul.zg:1:12: error: unexpected byte 0x00' -- "$zgc" check "$tmp/nul.zg"
awk 'BEGIN { printf "lifeline A; var x: bool = true; workflow w() { "; for (i = 0; i < 1048576; i++) printf "{"; }' > "$tmp/braces.zg"
expect 1 'braces.zg:1:[0-9]+: error: ' -- "$zgc" check "$tmp/braces.zg"
awk 'BEGIN { printf "const c = "; for (i = 0; i < 1048576; i++) printf "("; printf "1"; }' > "$tmp/parens.zg"
expect 1 'brackets nested too deeply' -- "$zgc" check "$tmp/parens.zg"
awk 'BEGIN { printf "const c = 1"; for (i = 0; i < 349525; i++) printf "+1"; print ";" }' > "$tmp/chain.zg"
expect 1 'expression nested too deeply' -- "$zgc" check "$tmp/chain.zg"
awk 'BEGIN { printf "lifeline A; var x: bool = true; workflow w() { if "; for (i = 0; i < 200000; i++) printf "prev "; print "x @ A { skip A; } }" }' > "$tmp/prev.zg"
expect 1 'nested too deeply' -- "$zgc" check "$tmp/prev.zg"
awk 'BEGIN { printf "lifeline A, B; var x: bool = true; workflow w() { "; for (i = 0; i < 200; i++) printf "if x @ A { "; printf "skip B;"; for (i = 0; i < 200; i++) printf " }"; print " }" }' > "$tmp/nested_ok.zg"
expect 0 '' -- "$zgc" check "$tmp/nested_ok.zg"
expect 0 'if#200' -- "$zgc" project "$tmp/nested_ok.zg"
printf '"""never closed\n' > "$tmp/triple.zg"
expect 1 'triple.zg:1:1: error: unterminated string' -- "$zgc" check "$tmp/triple.zg"

# trace check (oracle/oracle.h, "Errors"): bad usage exits 2 with the
# usage; unreadable files, traces that disagree and traces beyond the
# checker's limits exit 1, each with its cause
expect 0 '^usage: zgc trace check' -- "$zgc" trace --help
expect 0 '^usage: zgc trace check' -- "$zgc" help trace
expect 2 '^usage: zgc trace check' -- "$zgc" trace
expect 2 'unknown trace command `frob`' -- "$zgc" trace frob
expect 2 'no workflow file' -- "$zgc" trace check
expect 2 'no trace file' -- "$zgc" trace check "$hello"
expect 2 'unknown option `--bogus`' -- "$zgc" trace check --bogus "$hello" "$tmp/hello.jsonl"
expect 2 'needs a workflow name' -- "$zgc" trace check "$hello" "$tmp/hello.jsonl" --workflow
expect 0 '' -- "$zgc" run "$hello" --arg topic=hi --trace "$tmp/hello.jsonl"
expect 0 'hello.jsonl: ok: [0-9]+ events' -- "$zgc" trace check "$hello" "$tmp/hello.jsonl"
expect 1 'cannot read .*nope.zg' -- "$zgc" trace check "$tmp/nope.zg" "$tmp/hello.jsonl"
expect 1 'cannot read .*nope.jsonl' -- "$zgc" trace check "$hello" "$tmp/nope.jsonl"
expect 1 'cannot read .*: Is a directory' -- "$zgc" trace check "$hello" "$tmp"
expect 1 "no workflow named \`nope\`|unknown workflow \`nope\`" -- "$zgc" trace check --workflow nope "$hello" "$tmp/hello.jsonl"
: > "$tmp/empty.jsonl"
expect 1 'trace check failed: .*empty.jsonl:1: the trace has no end line' -- "$zgc" trace check "$hello" "$tmp/empty.jsonl"
printf '{"kind":"start"\n' > "$tmp/cut.jsonl"
expect 1 'trace check failed: .*cut.jsonl:1: not JSON' -- "$zgc" trace check "$hello" "$tmp/cut.jsonl"
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; print "" }' > "$tmp/deep.jsonl"
expect 1 'trace check failed: .*deep.jsonl:1: not JSON: maximum parsing depth' -- "$zgc" trace check "$hello" "$tmp/deep.jsonl"
# beyond the limits: 60,001 events × 1,000 variables of stores
awk 'BEGIN { print "lifeline A;"; for (i = 0; i < 1000; i++) printf "var v%d: int;\n", i; print "workflow w() { A: v0 = 1; }" }' > "$tmp/vars.zg"
events() { # N: a start line, N acts of A, an end line
  awk -v n="$1" 'BEGIN { print "{\"kind\":\"start\",\"lifeline\":\"A\",\"store\":{}}"
    for (i = 1; i <= n; i++) printf "{\"lifeline\":\"A\",\"index\":%d,\"kind\":\"act\",\"action\":null,\"attempts\":1,\"writes\":{},\"vc\":{\"A\":%d}}\n", i, i
    print "{\"kind\":\"end\",\"result\":null}" }'
}
events 60001 > "$tmp/big.jsonl"
expect 1 'trace check failed: .*big.jsonl: trace too large to check \(60001 events\)' -- "$zgc" trace check "$tmp/vars.zg" "$tmp/big.jsonl"
# out of memory: the 480 MB of stores for 60,000 events (at the limit)
# under a 400 MB address space (not under AddressSanitizer, which cannot
# start with so little)
if (ulimit -v 400000 && "$zgc" --version) > /dev/null 2>&1; then
  events 60000 > "$tmp/big.jsonl"
  expect 1 '^zgc: error: out of memory$' -- bash -c 'ulimit -v 400000 && exec "$0" "$@"' "$zgc" trace check "$tmp/vars.zg" "$tmp/big.jsonl"
fi

# a result that cannot be written is a failure (exit 1 and the cause), for
# every command that prints one: stdout is /dev/full
expect_full() { # PATTERN -- CMD...
  local pat=$1; shift 2
  local out status
  out=$(timeout 60 "$@" 2>&1 > /dev/full)
  status=$?
  if [ "$status" -ne 1 ] || ! printf '%s\n' "$out" | grep -Eq -- "$pat"; then
    echo "FAIL (exit $status, expected 1 and /$pat/ with stdout full): $*"
    printf '%s\n' "$out" | head -5
    fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
}
full='cannot write (the result )?to standard output: No space left on device'
for c in project guards emit-llvm; do expect_full "$full" -- "$zgc" "$c" "$hello"; done
expect_full "$full" -- "$zgc" parse --ast "$hello"
expect_full "$full" -- "$zgc" parse --tokens "$hello"
expect_full "$full" -- "$zgc" --help
expect_full "$full" -- "$zgc" run "$hello" --arg topic=hi
expect_full "$full" -- "$zgc" run --processes "$hello" --arg topic=hi
expect_full "$full" -- "$tmp/out/hello" --arg topic=hi
expect_full "$full" -- "$zgc" trace check "$hello" "$tmp/hello.jsonl"
printf '{"agent":"a","reads":{},"writes":{"x":1}}\n' > "$tmp/h.jsonl"
expect_full "$full" -- "$zgc" anomalies "$tmp/h.jsonl"
# inputs that are not regular files are refused at once (a FIFO would
# block, a device never ends)
mkfifo "$tmp/fifo"
expect 1 'cannot read .*fifo: not a regular file' -- "$zgc" check "$tmp/fifo"
expect 1 'cannot read .*fifo: not a regular file' -- "$zgc" trace check "$tmp/fifo" "$tmp/hello.jsonl"
expect 1 'cannot read .*fifo: not a regular file' -- "$zgc" trace check "$hello" "$tmp/fifo"
expect 1 'cannot read /dev/zero: not a regular file' -- "$zgc" trace check "$hello" /dev/zero
expect 1 'fifo: error: cannot read: not a regular file' -- "$zgc" anomalies "$tmp/fifo"
expect 1 'dev/zero: error: cannot read: not a regular file' -- "$zgc" anomalies /dev/zero
expect 2 'human answers: cannot read .*fifo.: not a regular file' -- "$zgc" run "$root/tests/run/human.zg" --answers "$tmp/fifo"
expect 2 'scripted model: cannot read .*fifo.: not a regular file' -- "$zgc" run "$root/tests/run/scripted.zg" --llm "scripted:$tmp/fifo"

# a build is all or nothing: when one link fails, the executables of the
# earlier build stay as they were and no temporary file is left
# zgc build writes into a directory named after the workflow, and never
# over a file it did not make
(cd "$tmp" && "$zgc" build "$hello" > /dev/null) && [ -x "$tmp/hello/hello" ] && grep -qx hello.User "$tmp/hello/.zgc-build" &&
  pass=$((pass + 1)) || { echo "FAIL: zgc build without -o"; fail=$((fail + 1)); }
expect 0 '' -- sh -c "cd '$tmp' && '$zgc' build '$hello'"
touch "$tmp/hello/notes.txt"
expect 1 'the output directory hello holds files zgc build did not make \(notes.txt\)' -- sh -c "cd '$tmp' && '$zgc' build '$hello'"
mkdir -p "$tmp/mine" && echo mine > "$tmp/mine/hello.Writer"
expect 1 'mine/hello.Writer exists and was not made by zgc build: it is not overwritten' -- "$zgc" build "$hello" -o "$tmp/mine"
[ "$(cat "$tmp/mine/hello.Writer")" = mine ] && pass=$((pass + 1)) || { echo "FAIL: a user's file was overwritten"; fail=$((fail + 1)); }
# an action without its C function: refused with the list, unless allowed
score=$root/examples/extern/score.zg
expect 1 'effect .publish. needs .int zg_publish' -- "$zgc" build "$score" -o "$tmp/sc"
expect 1 'extern pure `readability` needs `int zg_readability\(zgrt_call \*call\)`' -- "$zgc" run "$score" --arg draft=x
expect 0 '' -- "$zgc" build --allow-unlinked "$score" -o "$tmp/sc"
expect 1 'extern action `readability` is not linked' -- "$zgc" run --allow-unlinked "$score" --arg draft=x
# the build cached by that run is not used by a run that does not allow it
expect 1 'extern pure `readability` needs `int zg_readability' -- "$zgc" run "$score" --arg draft=x
expect 0 '' -- "$zgc" build -O "$hello" -o "$tmp/atomic"
before=$(cat "$tmp/atomic/hello" "$tmp/atomic/hello.Writer" | cksum)
printf '#!/bin/sh\ncase "$*" in *atomic/.hello.zgc-*) echo "refusing to link" >&2; exit 1;; esac\nexec cc "$@"\n' > "$tmp/failcc"
chmod +x "$tmp/failcc"
# -O0 (the default) makes the new executables differ from the earlier
# ones (-O, that is -O2)
expect 1 'linking `.*atomic/hello` failed' -- env CC="$tmp/failcc" "$zgc" build -O0 "$hello" -o "$tmp/atomic"
after=$(cat "$tmp/atomic/hello" "$tmp/atomic/hello.Writer" | cksum)
if [ "$before" = "$after" ] && [ "$(ls -A "$tmp/atomic" | wc -l)" = 4 ]; then pass=$((pass + 1)); else
    echo "FAIL: a failed build changed $tmp/atomic: $(ls -A "$tmp/atomic")"; fail=$((fail + 1)); fi

# the per-lifeline executables: copies of the all-in-one one that differ
# from it in the role record only (four bytes: the lifeline's number);
# a renamed copy still runs its lifeline alone, a damaged role is a clear
# error
expect 0 '' -- "$zgc" build "$hello" -o "$tmp/roles"
r=$tmp/roles
ndiff=$(cmp -l "$r/hello" "$r/hello.Writer" | wc -l)
if [ "$(stat -c %s "$r/hello")" = "$(stat -c %s "$r/hello.Writer")" ] && [ "$ndiff" -ge 1 ] &&
    [ "$ndiff" -le 4 ] && [ "$(cmp -l "$r/hello.User" "$r/hello.Writer" | wc -l)" = 1 ]; then
  pass=$((pass + 1))
else
  echo "FAIL: hello.Writer is not hello with its role (${ndiff} bytes differ)"; fail=$((fail + 1))
fi
cp "$r/hello.Writer" "$r/writer"
expect 2 'this executable runs lifeline Writer only' -- "$r/writer" --arg topic=x
# Writer is lifeline 1: -1 (ff ff ff ff) and 1 (01 00 00 00) differ in all
# four bytes, so the first difference is where the role is
off=$(cmp -l "$r/hello" "$r/hello.Writer" | awk 'NR == 1 { print $1 - 1 }')
printf '\007\000\000\000' | dd of="$r/writer" bs=1 seek="$off" conv=notrunc status=none
expect 1 'this executable is damaged: its role names lifeline 7, and the program has 2' -- "$r/writer"

# names: a lifeline name of the longest length runs as processes; a
# TMPDIR too long for the sockets is a clear error, not a late one
long=$(printf 'M%.0s' $(seq 64))
printf 'lifeline %s, B;\nvar x: int = 1;\nworkflow w() -> int { %s(x) -> B(x); return x @ B; }\n' "$long" "$long" > "$tmp/long.zg"
expect 0 '^1$' -- "$zgc" run --processes "$tmp/long.zg"
mkdir -p "$tmp/$(printf 'd%.0s' $(seq 90))"
expect 1 'is too long for a Unix socket .*set TMPDIR to a shorter directory' -- env TMPDIR="$tmp/$(printf 'd%.0s' $(seq 90))" "$zgc" run --processes "$tmp/long.zg"

# a merged trace that cannot be written: exit 1, and the per-lifeline
# traces stay
expect 1 'cannot (write|create) the trace' -- "$zgc" run --processes "$hello" --arg topic=hi --trace /proc/zgc-no-dir/t.jsonl

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
