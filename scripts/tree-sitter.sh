#!/usr/bin/env bash
# Generates the tree-sitter parser of .zg (editors/tree-sitter-zg: grammar.js
# to src/parser.c) and runs its corpus tests, with tree-sitter-cli from the
# committed package-lock.json, in a copy under the build directory.
#
#   scripts/tree-sitter.sh [BUILD_DIR]     (default build)
#
# tree-sitter-cli's npm package downloads its program when it installs,
# from outside the npm registry: where that host cannot be reached, this
# fails at `npm ci` (the grammar is still checked without it by
# tests/editors/treesitter.mjs, ctest `editors`).  With a tree-sitter
# program from elsewhere on PATH (TREE_SITTER=tree-sitter), npm is skipped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
mkdir -p "$build"
build=$(cd "$build" && pwd)
work=$build/editors/tree-sitter-zg
mkdir -p "$work"
find "$work" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
tar -C "$root/editors/tree-sitter-zg" --exclude=node_modules -cf - . | tar -C "$work" -xf -
ts=${TREE_SITTER:-}
if [ -z "$ts" ]; then
    if ! cmp -s "$work/package-lock.json" "$work/node_modules/.zgc-package-lock.json" 2> /dev/null; then
        (cd "$work" && npm ci --no-audit --no-fund --loglevel=error) || {
            echo "tree-sitter: npm ci failed: tree-sitter-cli could not install its program" >&2
            exit 1
        }
        cp "$work/package-lock.json" "$work/node_modules/.zgc-package-lock.json"
    fi
    ts=$work/node_modules/.bin/tree-sitter
fi
(cd "$work" && "$ts" generate && "$ts" test)
echo "tree-sitter: generated $work/src/parser.c; the corpus tests pass"
