#!/usr/bin/env bash
# Builds the VS Code extension (editors/vscode) into a .vsix: its npm
# packages come from the committed package-lock.json (`npm ci`, in a copy
# under the build directory, never in the source tree), and @vscode/vsce,
# locked there too, packs it.
#
#   scripts/build-vsix.sh [BUILD_DIR]      (default build) -> BUILD_DIR/zippergen-zg.vsix
#
# Install it with `code --install-extension BUILD_DIR/zippergen-zg.vsix`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
mkdir -p "$build"
build=$(cd "$build" && pwd)
for tool in node npm; do
    command -v "$tool" > /dev/null || {
        echo "build-vsix: $tool is missing (scripts/install-deps.sh installs it)" >&2
        exit 1
    }
done
work=$build/editors/vscode
mkdir -p "$work"
# the sources, fresh; node_modules again only when the lock file changed
find "$work" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
tar -C "$root/editors/vscode" --exclude=node_modules --exclude='*.vsix' -cf - . | tar -C "$work" -xf -
if ! cmp -s "$work/package-lock.json" "$work/node_modules/.zgc-package-lock.json" 2> /dev/null; then
    (cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
    cp "$work/package-lock.json" "$work/node_modules/.zgc-package-lock.json"
fi
out=$build/zippergen-zg.vsix
(cd "$work" && node_modules/.bin/vsce package --allow-missing-repository --skip-license \
    -o "$out" < /dev/null > "$build/editors/vsce.log" 2>&1) || {
    cat "$build/editors/vsce.log" >&2
    echo "build-vsix: vsce failed" >&2
    exit 1
}
echo "build-vsix: $out"
