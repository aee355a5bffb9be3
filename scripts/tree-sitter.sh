#!/usr/bin/env bash
# Generates the tree-sitter parser of .zg (editors/tree-sitter-zg: grammar.js
# to src/parser.c) in a copy under the build directory, and checks it with
# the tree-sitter program itself:
#   - `tree-sitter generate` accepts the grammar (no conflicts);
#   - its corpus tests pass (test/corpus: the examples, the language
#     reference's snippets, the syntax's corners);
#   - every .zg file of the repository parses without an ERROR or MISSING
#     node, but the syntax errors that tests/fail/syntax_*.zg are there to
#     show and the fuzzers' seeds (tests/fuzz), and so do 300 random
#     workflows from BUILD_DIR/tests/zggen (when it is built);
#   - the highlight queries (queries/highlights.scm) compile against the
#     generated language, capture in every example, and capture no node of
#     any of those workflows twice.
# The program: $TREE_SITTER when set, else Debian's, which
# scripts/tree-sitter-cli.sh puts into BUILD_DIR/tools/tree-sitter.
#
#   scripts/tree-sitter.sh [BUILD_DIR]     (default build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
mkdir -p "$build"
build=$(cd "$build" && pwd)
work=$build/editors/tree-sitter-zg
rm -rf "$work"
mkdir -p "$work"
tar -C "$root/editors/tree-sitter-zg" --exclude=node_modules -cf - . | tar -C "$work" -xf -
ts=${TREE_SITTER:-}
if [ -z "$ts" ]; then
  "$root/scripts/tree-sitter-cli.sh" "$build/tools/tree-sitter" > /dev/null
  ts=$build/tools/tree-sitter/tree-sitter
fi
"$ts" --version > /dev/null 2>&1 || { echo "tree-sitter: $ts does not run (tree-sitter --version)" >&2; exit 1; }
# the parser tree-sitter compiles to load, and its settings, stay here
export TREE_SITTER_LIBDIR=$work/lib TREE_SITTER_DIR=$work/config
mkdir -p "$TREE_SITTER_LIBDIR" "$TREE_SITTER_DIR"
echo '{"parser-directories": []}' > "$TREE_SITTER_DIR/config.json"
cd "$work"
# (0.22 also writes language bindings unless told not to; later ones never do)
if "$ts" generate --help 2>&1 | grep -q -- --no-bindings; then "$ts" generate --no-bindings; else "$ts" generate; fi
"$ts" test > test.log 2>&1 || {
  cat test.log
  echo "tree-sitter: the corpus tests fail" >&2
  exit 1
}
ntests=$(grep -c '✓' test.log || true)

# every workflow but the syntax errors shown on purpose and the fuzz seeds
find "$root" \( -name '.*' -o -name 'build*' -o -name node_modules \) -prune -o \
  -name '*.zg' -type f -print | grep -v -e '/tests/fail/syntax_' -e '/tests/fuzz/' | sort > files.txt
nfiles=$(wc -l < files.txt)
[ "$nfiles" -gt 100 ] || { echo "tree-sitter: only $nfiles workflows found under $root" >&2; exit 1; }
# whole LIST WHAT: every file LIST names parses without an ERROR or MISSING
# node (tree-sitter parse --quiet prints only those that do not, and exits 1)
whole() {
  local rc=0
  "$ts" parse --quiet --paths "$1" > "$1.log" 2> "$1.err" || rc=$?
  if grep -E '\((ERROR|MISSING)' "$1.log"; then
    echo "tree-sitter: $2 above do not parse whole" >&2
    exit 1
  fi
  if [ "$rc" != 0 ] || [ -s "$1.log" ]; then
    cat "$1.log" "$1.err" >&2
    echo "tree-sitter: tree-sitter parse failed on $2 (exit $rc)" >&2
    exit 1
  fi
}
whole files.txt "the workflows"

# random workflows of every shape the generator makes (tests/gen: rich
# expressions, full CPL, actions, stores at each level), which zgc's parser
# takes: tree-sitter must parse them whole too
nrandom=0
if [ -x "$build/tests/zggen" ]; then
  mkdir -p random
  for s in $(seq 1 300); do
    case $((s % 6)) in
      0) opts=(--rich) ;;
      1) opts=(--cpl-full) ;;
      2) opts=(--actions) ;;
      3) opts=(--stores $((s % 5))) ;;
      4) opts=(--rich --actions --statements 40) ;;
      *) opts=(--stores 4 --actions --rich) ;;
    esac
    "$build/tests/zggen" --seed "$s" "${opts[@]}" > "random/g$s.zg"
    echo "$work/random/g$s.zg"
  done > random.txt
  whole random.txt "the random workflows ($work/random)"
  nrandom=300
else
  echo "tree-sitter: no $build/tests/zggen: random workflows not checked" >&2
fi

# the highlight queries: they compile, capture in every example, and no
# node of any workflow is captured twice (highlighters differ in which of
# two captures they show: tree-sitter's own the first, Neovim the last)
while IFS= read -r f; do
  out=$("$ts" query queries/highlights.scm "$f" 2> query.err < /dev/null) || {
    cat query.err
    echo "tree-sitter: queries/highlights.scm does not run on $f" >&2
    exit 1
  }
  case $f in
    "$root"/examples/*) grep -q 'capture:' <<< "$out" || { echo "tree-sitter: no highlight in $f" >&2; exit 1; } ;;
  esac
  twice=$(sed -n 's/.*capture: [0-9]* - \([a-z._]*\), start: \(([0-9]*, [0-9]*)\), end: \(([0-9]*, [0-9]*)\).*/\2 \3 \1/p' <<< "$out" |
    sort -u | awk '{ k = $1 $2 $3 $4 } k == p { print; n++ } { p = k } END { exit n > 0 }') || {
    echo "$twice" | head -5
    echo "tree-sitter: queries/highlights.scm captures a node of $f twice (above: its place and a name)" >&2
    exit 1
  }
done < files.txt
echo "tree-sitter: $("$ts" --version): generated $work/src/parser.c; $ntests corpus tests pass; $nfiles workflows and $nrandom random ones parse whole; the highlight queries run on every one, no node captured twice"
