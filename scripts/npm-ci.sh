#!/usr/bin/env bash
# Installs the npm packages of a test folder from its committed lock file
# into a directory of the build tree, with `npm ci` (no download of
# anything the lock file does not name), again only when the lock file
# changed.  Also checks that the tools the browser tests need are there.
#   usage: scripts/npm-ci.sh NAME SOURCE_DIR DEST_DIR [TOOL…]
#   NAME names the tests in messages; SOURCE_DIR holds package.json and
#   package-lock.json; the packages go to DEST_DIR/node_modules.
set -euo pipefail
name=${1:?usage: npm-ci.sh NAME SOURCE_DIR DEST_DIR [TOOL…]}
src=${2:?usage: npm-ci.sh NAME SOURCE_DIR DEST_DIR [TOOL…]}
dest=${3:?usage: npm-ci.sh NAME SOURCE_DIR DEST_DIR [TOOL…]}
shift 3
for tool in node npm "$@"; do
  command -v "$tool" > /dev/null || {
    echo "$name: $tool is missing (scripts/install-deps.sh installs it)" >&2
    exit 1
  }
done
mkdir -p "$dest"
if ! cmp -s "$src/package-lock.json" "$dest/node_modules/.zgc-package-lock.json" 2> /dev/null; then
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$src/package-lock.json" "$dest/node_modules/.zgc-package-lock.json"
fi
