#!/usr/bin/env bash
# The house style (.clang-format) over every C source and header in git.
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   list the files that differ; exit 1 if any
# clang-format 14 (Debian 12's); other versions may format differently.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
files=$(git ls-files '*.c' '*.h')
if [ "$mode" = "--check" ]; then
    bad=0
    for f in $files; do
        if ! clang-format --dry-run --Werror "$f" > /dev/null 2>&1; then
            echo "format: $f differs from .clang-format (scripts/format.sh rewrites it)"
            bad=1
        fi
    done
    [ "$bad" = 0 ] && echo "format: $(echo "$files" | wc -l) files follow .clang-format"
    exit "$bad"
elif [ -z "$mode" ]; then
    clang-format -i $files
else
    echo "usage: scripts/format.sh [--check]" >&2
    exit 2
fi
