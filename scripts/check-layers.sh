#!/usr/bin/env bash
# Checks that dependencies between the parts of zgc run one way.
#
#   scripts/check-layers.sh BUILD_DIR
#
# Two graphs are read from the tree as it is, not from a list kept by hand:
#   includes  every `#include "…"` of every C source, header and grammar
#             file, resolved to the file it names;
#   calls     for every object file of the project's libraries and of the
#             zgc command (tests and benchmarks excluded), its undefined
#             symbols that another object of the project defines
#             (nm -u against nm --defined-only).
# Each file belongs to a part (its top folder; runtime/net, runtime/nats, runtime/agent,
# runtime/view, runtime/durable and runtime/store are parts of their own).  An edge from
# part P to part Q is allowed only when RULES lists Q for P; the runtime's public headers
# zgrt_abi.h and zgrt.h may be included by the backend (the contract of the
# code it generates) but nothing of the runtime may be called.  Neither
# graph may have a cycle between files (tsort finds them).
# The backend's code generation is a module of its own (zgc-backend.so,
# with libLLVM) that the zgc command loads with dlopen: the driver may
# include backend/backend.h and call only backend/load.c (part
# backend/load), and the zgc executable must not need libLLVM (readelf -d;
# LAYERS_NO_LLVM replaces the list of executables checked), nor SQLite,
# libnats or libcrypto (the runs module's: driver/runsmod.h).  Prints every
# violation and exits 1 if there is one.
set -euo pipefail
# pathspecs such as runtime/*.c go to git as they are (git matches them in
# subfolders too), never expanded by the shell to the top folder's files
set -f
build=${1:?usage: scripts/check-layers.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$build" && pwd)
cd "$root"

# part: the parts it may depend on (includes and calls); LAYERS_RULES
# replaces the table (tests/run_layers.sh checks that a narrower table
# makes this script fail)
RULES=${LAYERS_RULES:-'
vocab:
compiler: vocab
grammar: compiler vocab
backend: compiler vocab
oracle: grammar compiler vocab
anomalies:
viewer: compiler vocab
backend/load: compiler vocab
fmt: grammar compiler vocab
lsp: fmt grammar compiler vocab
driver: grammar compiler backend/load oracle anomalies viewer fmt lsp runtime/view vocab
runtime: vocab
runtime/net: runtime vocab
runtime/nats: runtime runtime/net vocab
runtime/agent: runtime vocab
runtime/view: vocab
runtime/durable: runtime vocab
runtime/store: runtime vocab
runtime/main: runtime runtime/net runtime/nats runtime/agent runtime/view runtime/durable runtime/store vocab
planner: backend grammar compiler runtime runtime/agent vocab
'}
# headers one part may include from another without depending on its code
HEADER_ONLY='
backend: runtime/zgrt_abi.h runtime/zgrt.h
backend/load: backend/backend.h
driver: backend/backend.h
runtime/nats: runtime/durable/storage.h
planner: runtime/zgrt_abi.h runtime/zgrt.h runtime/zgrt_nested.h
'

# The rules as awk functions: part_of(file), allowed(from, to) and
# header_only(from, header), shared by the checks below (one awk process
# per check rather than one per edge).
AWK_RULES='
function part_of(f) {
    if (f ~ /^runtime\/(net|nats|agent|view|durable|store)\//) { split(f, q, "/"); return q[1] "/" q[2] }
    if (f == "runtime/main.c") return "runtime/main"
    if (f == "backend/load.c") return "backend/load"
    if (index(f, "/")) return substr(f, 1, index(f, "/") - 1)
    return ""
}
function table(text, into,    lines, n, i, k, w, m, j) {
    n = split(text, lines, "\n")
    for (i = 1; i <= n; i++) {
        k = index(lines[i], ":"); if (!k) continue
        m = split(substr(lines[i], k + 1), w, " ")
        for (j = 1; j <= m; j++) into[substr(lines[i], 1, k - 1) SUBSEP w[j]] = 1
    }
}
function allowed(from, to) { return (from SUBSEP to) in ALLOW }
function header_only(from, h) { return (from SUBSEP h) in HONLY }
BEGIN { table(ENVIRON["LAYERS_RULES_TEXT"], ALLOW); table(ENVIRON["LAYERS_HEADER_ONLY_TEXT"], HONLY) }
'
export LAYERS_RULES_TEXT=$RULES LAYERS_HEADER_ONLY_TEXT=$HEADER_ONLY

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
problem() {
    echo "layers: $*"
    fail=1
}

# tsort's report of loops, one loop a line: "a -> b -> a"
loops() {
    awk '/input contains a loop/ { if (l != "") print l; l = ""; first = ""; next }
         { sub(/^tsort: /, ""); if (first == "") first = $0; l = l (l == "" ? "" : " -> ") $0 }
         END { if (l != "") print l }' | awk '{ printf " [%s]", $0 }'
}

parts='compiler grammar backend runtime oracle anomalies viewer fmt lsp driver vocab planner'

# ---- includes ---------------------------------------------------------------
# every header of the parts, by its base name (names are unique across parts)
git ls-files -- $(for p in $parts; do echo "$p/*.h"; done) > "$tmp/headers"
dups=$(awk -F/ '{ print $NF }' "$tmp/headers" | sort | uniq -d)
[ -z "$dups" ] || problem "header names used twice: $dups"
# generated by bison/flex for grammar/
printf 'grammar/parser.h\ngrammar/lexer.h\n' >> "$tmp/headers"

# every include line: "FILE NAME", then resolved and checked in one pass
git ls-files -- $(for p in $parts; do printf '%s/*.c %s/*.h %s/*.l %s/*.y ' "$p" "$p" "$p" "$p"; done) |
    xargs grep -H '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*"' |
    sed 's/^\([^:]*\):[^"]*"\([^"]*\)".*/\1 \2/' > "$tmp/includes" || true
awk "$AWK_RULES"'
    FNR == NR { n = split($0, q, "/"); if (!(q[n] in header)) header[q[n]] = $0; next }
    {
        f = $1; n = split($2, q, "/"); target = header[q[n]]
        if (target == "" || target == f) next
        print f, target > edges
        from = part_of(f); to = part_of(target)
        if (from != to && !allowed(from, to) && !header_only(from, target))
            print "layers: " f " includes " target ": " from " may not depend on " to
    }' edges="$tmp/inc_edges" "$tmp/headers" "$tmp/includes" > "$tmp/inc_problems"
touch "$tmp/inc_edges"
if [ -s "$tmp/inc_problems" ]; then cat "$tmp/inc_problems"; fail=1; fi
if ! tsort "$tmp/inc_edges" > /dev/null 2> "$tmp/inc_loop"; then
    problem "include cycles:$(loops < "$tmp/inc_loop")"
fi

# ---- calls --------------------------------------------------------------------
# object file -> source path: BUILD/<dir>/CMakeFiles/<target>.dir/<path>.o
# (with Ninja, only the objects today's build produces: a build directory
# may keep objects of files or targets that were moved away)
if [ -f "$build/build.ninja" ]; then
    ninja -C "$build" -t targets all | sed -n 's|^\([^:]*/CMakeFiles/[^:]*\.o\): .*|\1|p' |
        sed "s|^|$build/|" | sort > "$tmp/objects"
else
    find "$build" -path "$build/tests" -prune -o -path "$build/bench" -prune -o \
        -path '*/CMakeFiles/*.dir/*' -name '*.o' -print | sort > "$tmp/objects"
fi
: > "$tmp/checked"
while read -r o; do
    [ -f "$o" ] || { problem "$o is not built: build everything first"; continue; }
    rel=${o#"$build"/}
    dir=${rel%%/CMakeFiles/*}
    src=${rel#*/CMakeFiles/*.dir/}
    src=${src%.o}
    [ "$dir" = "$rel" ] && dir=""
    case $dir in
    tests* | bench* | "") continue ;;
    esac
    # a program run by the build only (planner/gen_grammar.c), linked
    # into nothing
    case $rel in */zpl_gen_grammar.dir/*) continue ;; esac
    file="$dir/$src"
    # only the sources of today's tree (a build directory may keep objects
    # of files that were moved away) and the grammar's generated ones
    [ -f "$file" ] || [ -f "$build/$file" ] || continue
    echo "$o $file" >> "$tmp/checked"
done < "$tmp/objects"
# one nm for all objects (nm loads its plugins, libLLVM's among them, once
# per run): "OBJECT: … SYMBOL" lines, named by their source file
symbols() { # nm options, output file
    awk '{ print $1 }' "$tmp/checked" | xargs -r nm -A "${@:1:$#-1}" |
        awk 'FNR == NR { src[$1 ":"] = $2; next }
             { f = src[substr($0, 1, index($0, ":"))]; if (f != "" && NF == 3) print $NF, f }' \
            "$tmp/checked" - > "${!#}"
}
symbols --defined-only -g "$tmp/defs"
symbols -u "$tmp/undefs"
[ -s "$tmp/defs" ] || problem "no object files under $build: build it first"
sort -u "$tmp/defs" > "$tmp/defs.s"
sort -u "$tmp/undefs" > "$tmp/undefs.s"
# symbol defined in two files: ambiguous, and a sign of one concept in two homes
dupsyms=$(awk '{ print $1 }' "$tmp/defs.s" | uniq -d | head -20)
[ -z "$dupsyms" ] || problem "symbols defined in more than one file: $dupsyms"
join "$tmp/undefs.s" "$tmp/defs.s" | awk '$2 != $3 { print $2, $3, $1 }' | sort -u > "$tmp/calls"
awk "$AWK_RULES"'{
    from = part_of($1); to = part_of($2)
    if (from != to && !allowed(from, to))
        print "layers: " $1 " calls " $3 " of " $2 ": " from " may not depend on " to
}' "$tmp/calls" > "$tmp/call_problems"
if [ -s "$tmp/call_problems" ]; then cat "$tmp/call_problems"; fail=1; fi
awk '{ print $1, $2 }' "$tmp/calls" | sort -u > "$tmp/call_edges"
if ! tsort "$tmp/call_edges" > /dev/null 2> "$tmp/call_loop"; then
    problem "call cycles between files:$(loops < "$tmp/call_loop")"
fi

# ---- libLLVM only in the backend module ------------------------------------
for exe in ${LAYERS_NO_LLVM:-$build/zgc}; do
    if [ ! -f "$exe" ]; then
        problem "$exe is not built: build everything first"
    elif readelf -d "$exe" | grep -q 'NEEDED.*libLLVM'; then
        problem "$exe needs libLLVM: only the backend module (zgc-backend.so) may"
    fi
done
[ -f "$build/zgc-backend.so" ] || problem "$build/zgc-backend.so is not built"

# ---- SQLite, libnats and libcrypto only in the modules ---------------------
# (the runs module, zgc-runs.so, and the backend module: commands that
# neither build nor run do not pay for their relocations; driver/runsmod.h)
for exe in ${LAYERS_NO_LLVM:-$build/zgc}; do
    if [ -f "$exe" ] && readelf -d "$exe" | grep -Eq 'NEEDED.*(libsqlite3|libnats|libcrypto|libssl)'; then
        problem "$exe needs $(readelf -d "$exe" | grep -Eo '(libsqlite3|libnats|libcrypto|libssl)[^]]*' | tr '\n' ' ')- only the modules (zgc-runs.so, zgc-backend.so) may"
    fi
done
[ -f "$build/zgc-runs.so" ] || problem "$build/zgc-runs.so is not built"

n_inc=$(wc -l < "$tmp/inc_edges")
n_call=$(awk '{ print $1, $2 }' "$tmp/calls" | sort -u | wc -l)
if [ "$fail" = 0 ]; then
    echo "layers: ok ($n_inc include edges, $n_call call edges between files, no cycle, no forbidden direction)"
fi
exit "$fail"
