#!/usr/bin/env bash
# The compiler's shape and the cache of builds, with the real zgc:
#   - the commands that make no code never map libLLVM (LD_DEBUG=libs
#     lists every library the loader maps, dlopen'ed ones too); build and
#     run do, through the backend module; the commands that neither run
#     nor build never map SQLite, libnats or libcrypto (the runs module);
#   - a second `zgc run` of an unchanged program compiles nothing (the
#     notes of ZGC_CACHE_NOTES, and the cached executable's inode); a
#     program that differs only in comments is found by its fingerprint;
#     a changed program, imported file, C file, -O level or runtime
#     library misses; the
#     entry names zgc's build id (a changed compiler misses);
#   - a damaged cached executable is detected and built again;
#   - two `zgc run` of the same program at once both succeed;
#   - --processes links only the per-lifeline executables;
#   - ZGC_CACHE_ENTRIES bounds the cache, the entries used last kept;
#   - `zgc build -j1` and `-j2` make byte-identical objects.
#   usage: tests/run_cache.sh ZGC
set -euo pipefail
zgc=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ZGC_CACHE=$tmp/cache ZGC_CACHE_NOTES=1
fail() {
    echo "run_cache: $*"
    exit 1
}

# ---- libLLVM only where code is made ----------------------------------------
maps_llvm() { LD_DEBUG=libs "$@" 2>&1 >/dev/null | grep 'find library=libLLVM' > /dev/null; }
hello=$root/examples/hello.zg
printf '{"kind":"start"}\n' > "$tmp/t.jsonl"
for cmd in "check $hello" "project $hello" "guards $hello" "guards --plan $hello" \
    "parse --ast $hello" "view -o $tmp/h.html $hello" "anomalies $tmp/none.jsonl" \
    "trace show $tmp/t.jsonl" "runs list --store $tmp/s.db" "tasks --store $tmp/s.db" \
    "help check" "--version" "cache dir"; do
    # shellcheck disable=SC2086
    if maps_llvm "$zgc" $cmd; then fail "zgc $cmd maps libLLVM"; fi
done
maps_llvm "$zgc" build "$hello" -o "$tmp/out" || fail "zgc build does not map libLLVM?"
[ "$("$tmp/out/hello" --arg topic=hi)" = '"[write_reply:draft]"' ] || fail "the built hello is wrong"
maps_llvm "$zgc" emit-llvm "$hello" || fail "zgc emit-llvm does not map libLLVM?"
ZGC_BACKEND=/nonexistent/zgc-backend.so "$zgc" build "$hello" -o "$tmp/out" 2> "$tmp/err" &&
    fail "a missing backend module was not an error"
grep -q "cannot load the backend module /nonexistent/zgc-backend.so" "$tmp/err" ||
    fail "missing module: $(cat "$tmp/err")"

# ---- SQLite, libnats and libcrypto only where runs are handled ---------------
# (the runs module, zgc-runs.so: driver/runsmod.h)
maps_runs() { # (whatever the command's status)
    local libs
    libs=$(LD_DEBUG=libs "$@" 2>&1 >/dev/null || true)
    grep -Eq 'find library=(libsqlite3|libnats|libcrypto)' <<< "$libs"
}
for cmd in "check $hello" "project $hello" "guards $hello" "parse --ast $hello" \
    "view -o $tmp/h.html $hello" "trace show $tmp/t.jsonl" "anomalies $tmp/none.jsonl" \
    "fmt $hello" "help run" "--version"; do
    # shellcheck disable=SC2086
    if maps_runs "$zgc" $cmd; then fail "zgc $cmd maps SQLite, libnats or libcrypto"; fi
done
maps_runs "$zgc" runs list --store "$tmp/s.db" || fail "zgc runs does not load the runs module?"
ZGC_RUNS_MODULE=/nonexistent/zgc-runs.so "$zgc" cache dir 2> "$tmp/err" &&
    fail "a missing runs module was not an error"
grep -q "cannot load the runs module /nonexistent/zgc-runs.so" "$tmp/err" ||
    fail "missing runs module: $(cat "$tmp/err")"

# ---- the cache --------------------------------------------------------------
run() { # expected-note args...
    local want=$1
    shift
    "$zgc" run "$@" > "$tmp/out.txt" 2> "$tmp/err.txt" || fail "zgc run $*: $(cat "$tmp/err.txt")"
    grep -q "cache: $want" "$tmp/err.txt" || fail "zgc run $*: no '$want' in: $(cat "$tmp/err.txt")"
}
cp "$hello" "$tmp/h.zg"
run compiled "$tmp/h.zg" --arg topic=hi
entry=$(ls -d "$ZGC_CACHE"/*-O0-*)
ino=$(stat -c %i "$entry/hello")
run "found by source" "$tmp/h.zg" --arg topic=hi
grep -q "compiled" "$tmp/err.txt" && fail "a second run compiled"
[ "$(stat -c %i "$entry/hello")" = "$ino" ] || fail "a second run replaced the executable"
[ "$(cat "$tmp/out.txt")" = '"[write_reply:draft]"' ] || fail "cached hello: $(cat "$tmp/out.txt")"
build_id=$("$zgc" --version | sed -n 's/.*(build \([0-9a-f]*\)).*/\1/p')
[ -n "$build_id" ] && [[ $entry == *"-$build_id" ]] || fail "the entry $entry does not name build $build_id"
printf '// a comment changes nothing\n' >> "$tmp/h.zg"
run "found by fingerprint" "$tmp/h.zg" --arg topic=hi
sed 's/Write a concise reply./Write a long reply./' "$hello" > "$tmp/h2.zg"
run compiled "$tmp/h2.zg" --arg topic=hi
run compiled -O1 "$tmp/h.zg" --arg topic=hi
run "found by source" -O1 "$tmp/h.zg" --arg topic=hi
# another runtime library: the same archive with one more member
cp "$(dirname "$zgc")/runtime/libzgrt.a" "$tmp/libzgrt.a"
echo 'int zgc_cache_test_extra;' > "$tmp/extra.c"
cc -c "$tmp/extra.c" -o "$tmp/extra.o"
ar r "$tmp/libzgrt.a" "$tmp/extra.o" 2>/dev/null
ZGC_RUNTIME_LIB=$tmp/libzgrt.a run compiled "$tmp/h.zg" --arg topic=hi
# the runtime library's hash is remembered with its identity (runtime.id):
# the same library is found again, and one changed in place misses
ZGC_RUNTIME_LIB=$tmp/libzgrt.a run "found by source" "$tmp/h.zg" --arg topic=hi
grep -q "^$tmp/libzgrt.a\$" "$ZGC_CACHE/runtime.id" || fail "no runtime.id for $tmp/libzgrt.a"
echo 'int zgc_cache_test_extra2;' > "$tmp/extra2.c"
cc -c "$tmp/extra2.c" -o "$tmp/extra2.o"
ar r "$tmp/libzgrt.a" "$tmp/extra2.o" 2>/dev/null
ZGC_RUNTIME_LIB=$tmp/libzgrt.a run compiled "$tmp/h.zg" --arg topic=hi
# C files
ex=$root/examples/extern
cp "$ex/actions.c" "$tmp/actions.c"
run compiled "$ex/score.zg" "$tmp/actions.c" --arg draft="Short words help."
run "found by source" "$ex/score.zg" "$tmp/actions.c" --arg draft="Short words help."
printf '\n/* changed */\n' >> "$tmp/actions.c"
run compiled "$ex/score.zg" "$tmp/actions.c" --arg draft="Short words help."

# a statement on another line is the same fingerprint but another message:
# its run-time error must name the new line
cp "$root/tests/run/div_zero.zg" "$tmp/dz.zg"
"$zgc" run "$tmp/dz.zg" > /dev/null 2> "$tmp/err.txt" && fail "div_zero ran"
grep -q "dz.zg:7:12: division by zero" "$tmp/err.txt" || fail "div_zero: $(cat "$tmp/err.txt")"
{ echo '// one more line'; cat "$root/tests/run/div_zero.zg"; } > "$tmp/dz.zg"
"$zgc" run "$tmp/dz.zg" > /dev/null 2> "$tmp/err.txt" && fail "div_zero ran"
grep -q "dz.zg:8:12: division by zero" "$tmp/err.txt" ||
    fail "a moved statement ran the old build: $(cat "$tmp/err.txt")"

# the same file by another path: its messages name that path
(cd "$tmp" && "$zgc" run dz.zg > /dev/null 2> "$tmp/err.txt") && fail "div_zero ran"
grep -q "^zgc: error: lifeline A: dz.zg:8:12: division by zero" "$tmp/err.txt" ||
    fail "a run by a relative path named another path: $(cat "$tmp/err.txt")"
grep -q "^    8 | " "$tmp/err.txt" || fail "no source line after the error: $(cat "$tmp/err.txt")"

# an imported file: a change in it misses, though the importing file is the same
mkdir -p "$tmp/imp"
printf 'pure inc(t: int) -> int = t + 1;\n' > "$tmp/imp/lib.zg"
sed 's/^pure inc.*$/import "lib.zg";/' "$root/examples/increment.zg" > "$tmp/imp/main.zg"
run compiled "$tmp/imp/main.zg"
[ "$(cat "$tmp/out.txt")" = 3 ] || fail "imported inc: $(cat "$tmp/out.txt")"
run "found by source" "$tmp/imp/main.zg"
printf 'pure inc(t: int) -> int = t + 2;\n' > "$tmp/imp/lib.zg"
run compiled "$tmp/imp/main.zg"
[ "$(cat "$tmp/out.txt")" = 4 ] || fail "a changed import ran the old build: $(cat "$tmp/out.txt")"

# a damaged executable
printf 'garbage' | dd of="$entry/hello" bs=1 seek=200 conv=notrunc status=none
run compiled "$tmp/h.zg" --arg topic=hi
grep -q "is damaged; building it again" "$tmp/err.txt" || fail "damage not reported: $(cat "$tmp/err.txt")"
[ "$(cat "$tmp/out.txt")" = '"[write_reply:draft]"' ] || fail "rebuilt hello: $(cat "$tmp/out.txt")"
run "found by source" "$tmp/h.zg" --arg topic=hi

# --processes: only the per-lifeline executables
sed 's/concise/short/' "$hello" > "$tmp/h3.zg"
run compiled --processes "$tmp/h3.zg" --arg topic=hi
e3=$(grep -l "short" "$ZGC_CACHE"/*/source.zg | xargs dirname)
[ -x "$e3/hello.User" ] && [ -x "$e3/hello.Writer" ] || fail "no per-lifeline executables in $e3"
[ ! -e "$e3/hello" ] || fail "--processes linked the all-in-one executable"
run compiled "$tmp/h3.zg" --arg topic=hi # now the all-in-one one
[ -x "$e3/hello" ] || fail "no all-in-one executable after a run in one process"

# two at once, on an empty cache
"$zgc" cache clean > /dev/null
for i in 1 2; do "$zgc" run "$hello" --arg topic=hi > "$tmp/c$i.out" 2> "$tmp/c$i.err" & done
wait %1 || fail "concurrent run 1: $(cat "$tmp/c1.err")"
wait %2 || fail "concurrent run 2: $(cat "$tmp/c2.err")"
for i in 1 2; do
    [ "$(cat "$tmp/c$i.out")" = '"[write_reply:draft]"' ] || fail "concurrent run $i: $(cat "$tmp/c$i.out")"
done
run "found by source" "$hello" --arg topic=hi
ls -d "$ZGC_CACHE"/tmp-* 2> /dev/null && fail "temporary build directories left behind"

# a bound: the entries used last are kept
"$zgc" cache clean > /dev/null
for t in one two three; do
    sed "s/concise/$t/" "$hello" > "$tmp/b.zg"
    ZGC_CACHE_ENTRIES=2 run compiled "$tmp/b.zg" --arg topic=hi
done
[ "$(ls -d "$ZGC_CACHE"/*-O* | wc -l)" = 2 ] || fail "ZGC_CACHE_ENTRIES=2 kept $(ls -d "$ZGC_CACHE"/*-O* | wc -l)"
grep -q "two" "$ZGC_CACHE"/*/source.zg && grep -q "three" "$ZGC_CACHE"/*/source.zg ||
    fail "the bound removed an entry used recently"
ZGC_CACHE_ENTRIES=2 run "found by source" "$tmp/b.zg" --arg topic=hi

# ---- parallel compilation: the same objects ----------------------------------
wf=$root/examples/consensus.zg
"$zgc" build -j1 --keep-objects -o "$tmp/j1" "$wf"
"$zgc" build -j2 --keep-objects -o "$tmp/j2" "$wf"
n=0
for o in "$tmp"/j1/*.o; do
    cmp -s "$o" "$tmp/j2/$(basename "$o")" || fail "$(basename "$o") differs between -j1 and -j2"
    n=$((n + 1))
done
[ "$n" -ge 4 ] || fail "only $n objects"

# ---- debugging information: dropped at the link unless -g -------------------
# (a zgc built with the sanitizers keeps it always: their reports name lines)
"$zgc" build -g -o "$tmp/g" "$wf"
has_debug() { readelf -S "$1" | grep -c '\.debug_info' > /dev/null; }
exe=$tmp/j1/diagnosis
has_debug "$tmp/g/diagnosis" || fail "zgc build -g: no .debug_info in the executable"
syms=$(nm "$exe") # (not piped into grep -q: nm would die of SIGPIPE)
if grep -q -e '__asan_init' -e '__tsan_init' <<< "$syms"; then
    has_debug "$exe" || fail "a sanitized zgc dropped the runtime's debugging information"
else
    ! has_debug "$exe" || fail "zgc build without -g: the executable keeps .debug_info"
    grep -q ' zgrt_main$' <<< "$syms" || fail "zgc build without -g: the symbol table is gone"
fi
"$exe" --help > /dev/null || fail "the executable built without -g does not run"
echo "run_cache: ok"
