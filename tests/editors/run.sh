#!/usr/bin/env bash
# The editor files (editors/): the tree-sitter grammar on every workflow
# and its corpus, read by tree-sitter itself (scripts/tree-sitter.sh:
# the parser generated, its corpus tests, every workflow parsed, the
# highlight queries run) and by an Earley reading of grammar.js that
# also holds the queries to the lexer's keywords (treesitter.mjs), the VS Code extension's TextMate grammar
# in VS Code's own engine (textmate.mjs) and the highlighting screenshots of
# the documentation, TextMate's and tree-sitter's (screenshot.mjs, headless
# Chromium), its script parses, the Vim syntax
# file in Vim (vim.sh), and the .vsix builds (scripts/build-vsix.sh) with
# what an editor needs in it.  The npm packages come from the committed
# lock files, installed with `npm ci` into the build directory (again only
# when a lock file changed).
#   usage: tests/editors/run.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: tests/editors/run.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
deps=$build/tests/editors-npm
"$root/scripts/npm-ci.sh" editors "$here" "$deps" /usr/bin/chromium vim
node "$here/treesitter.mjs" "$root"
"$root/scripts/tree-sitter.sh" "$build"
node "$here/textmate.mjs" "$root" "$deps/node_modules"
node "$here/screenshot.mjs" "$root" "$deps/node_modules" \
  "${TREE_SITTER:-$build/tools/tree-sitter/tree-sitter}" "$build/editors"
node --check "$root/editors/vscode/extension.js"
"$here/vim.sh" "$root"
"$root/scripts/build-vsix.sh" "$build" > /dev/null
vsix=$build/zippergen-zg.vsix
for f in extension/package.json extension/extension.js extension/language-configuration.json \
    extension/syntaxes/zg.tmLanguage.json extension/node_modules/vscode-languageclient/package.json; do
    # a zip names its files in clear
    grep -qaF "$f" "$vsix" || {
        echo "editors: $vsix has no $f"
        exit 1
    }
done
echo "editors: ok ($vsix, $(stat -c %s "$vsix") bytes)"
