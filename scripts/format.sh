#!/usr/bin/env bash
# The house style over every source in git: .clang-format for the C
# sources and headers, `zgc fmt` for the workflows (.zg).
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   list the files that differ; exit 1 if any
# clang-format 14 (Debian 12's); other versions may format differently.
# The workflows need zgc: $ZGC, or build/zgc, built here when $ZGC is not
# set (CI checks the style before it builds).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
files=$(git ls-files '*.c' '*.h')
# Every workflow but the rejected programs of tests/fail (their expected
# diagnostics name lines and columns; several do not parse) and the fuzz
# seeds (kept byte for byte as they were found).
zg_files=$(git ls-files '*.zg' | grep -v -e '^tests/fail/' -e '^tests/fuzz/')
if [ -z "${ZGC:-}" ]; then
    [ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
    cmake --build build -j2 --target zgc > /dev/null
fi
zgc=${ZGC:-build/zgc}
if [ "$mode" = "--check" ]; then
    bad=0
    # many files a process, two processes at a time; only when some file
    # differs, one process a file to name each
    if ! echo "$files" | xargs -n 64 -P 2 clang-format --dry-run --Werror > /dev/null 2>&1; then
        for f in $files; do
            if ! clang-format --dry-run --Werror "$f" > /dev/null 2>&1; then
                echo "format: $f differs from .clang-format (scripts/format.sh rewrites it)"
                bad=1
            fi
        done
        [ "$bad" = 1 ] || { echo "format: clang-format failed" >&2; exit 1; }
    fi
    [ "$bad" = 0 ] && echo "format: $(echo "$files" | wc -l) files follow .clang-format"
    if ! unformatted=$("$zgc" fmt --check $zg_files); then
        [ -n "$unformatted" ] || { echo "format: zgc fmt failed" >&2; exit 1; }
        for f in $unformatted; do
            echo "format: $f differs from \`zgc fmt\` (scripts/format.sh rewrites it)"
        done
        bad=1
    else
        echo "format: $(echo "$zg_files" | wc -l) workflows follow \`zgc fmt\`"
    fi
    exit "$bad"
elif [ -z "$mode" ]; then
    clang-format -i $files
    "$zgc" fmt --write $zg_files
else
    echo "usage: scripts/format.sh [--check]" >&2
    exit 2
fi
