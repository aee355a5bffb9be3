#!/usr/bin/env bash
# `zgc fmt` on the command line: standard input to standard output,
# --check (lists what is not formatted, exit 1), --write (rewrites in
# place, keeps the mode), parse errors (exit 1, the parser's diagnostic,
# the other files still done), bad usage (exit 2).
#   usage: tests/fmt/run_cli.sh ZGC
set -euo pipefail
zgc=${1:?usage: run_cli.sh ZGC}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() {
    echo "fmt cli: $*"
    exit 1
}
expect_rc() { # want cmd...
    local want=$1 rc=0
    shift
    "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
    [ "$rc" = "$want" ] || fail "\`$*\` exited $rc, not $want: $(cat "$tmp/err")"
}

printf 'lifeline A,B;\nvar x:int=1;\nworkflow w(){A(x)->B(x);}\n' > "$tmp/ugly.zg"
cat > "$tmp/want.zg" << 'ZG'
lifeline A, B;
var x: int = 1;
workflow w() {
    A(x) -> B(x);
}
ZG
cp "$tmp/want.zg" "$tmp/clean.zg"
chmod 640 "$tmp/ugly.zg"

# standard input to standard output
expect_rc 0 "$zgc" fmt < "$tmp/ugly.zg"
cmp -s "$tmp/out" "$tmp/want.zg" || fail "stdin: got $(cat "$tmp/out")"
# files to standard output, unchanged on disk
expect_rc 0 "$zgc" fmt "$tmp/ugly.zg"
cmp -s "$tmp/out" "$tmp/want.zg" || fail "file: got $(cat "$tmp/out")"
# --check: the unformatted one is listed, exit 1; nothing written
expect_rc 1 "$zgc" fmt --check "$tmp/clean.zg" "$tmp/ugly.zg"
[ "$(cat "$tmp/out")" = "$tmp/ugly.zg" ] || fail "--check listed: $(cat "$tmp/out")"
expect_rc 0 "$zgc" fmt --check "$tmp/clean.zg"
[ ! -s "$tmp/out" ] || fail "--check of a clean file printed $(cat "$tmp/out")"
expect_rc 1 "$zgc" fmt --check < "$tmp/ugly.zg"
[ "$(cat "$tmp/out")" = "<stdin>" ] || fail "--check of stdin printed $(cat "$tmp/out")"
# --write: rewritten in place, mode kept, then clean
expect_rc 0 "$zgc" fmt --write "$tmp/ugly.zg"
cmp -s "$tmp/ugly.zg" "$tmp/want.zg" || fail "--write: got $(cat "$tmp/ugly.zg")"
[ "$(stat -c %a "$tmp/ugly.zg")" = 640 ] || fail "--write changed the mode"
[ -z "$(ls "$tmp" | grep fmt-)" ] || fail "--write left a temporary file"
expect_rc 0 "$zgc" fmt --check "$tmp/ugly.zg"
# a file that does not parse: its diagnostic, exit 1, untouched; the
# others still done
printf 'lifeline A\nvar x: int;\n' > "$tmp/bad.zg"
cp "$tmp/bad.zg" "$tmp/bad.orig"
printf 'lifeline  A;\n' > "$tmp/other.zg"
expect_rc 1 "$zgc" fmt --write "$tmp/bad.zg" "$tmp/other.zg"
grep -q "bad.zg:1:11: error: expected \`;\`" "$tmp/err" ||
    fail "no diagnostic for bad.zg: $(cat "$tmp/err")"
cmp -s "$tmp/bad.zg" "$tmp/bad.orig" || fail "a file that does not parse was changed"
[ "$(cat "$tmp/other.zg")" = "lifeline A;" ] || fail "the other file was not formatted"
# unreadable, usage
expect_rc 1 "$zgc" fmt "$tmp/missing.zg"
grep -q "cannot read $tmp/missing.zg" "$tmp/err" || fail "missing file: $(cat "$tmp/err")"
expect_rc 2 "$zgc" fmt --check --write "$tmp/clean.zg"
expect_rc 2 "$zgc" fmt --write
expect_rc 2 "$zgc" fmt --frobnicate
expect_rc 0 "$zgc" fmt --help
grep -q "usage: zgc fmt" "$tmp/out" || fail "--help printed $(cat "$tmp/out")"
echo "fmt cli: ok"
