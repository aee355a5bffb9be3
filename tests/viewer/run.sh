#!/usr/bin/env bash
# The viewer's browser tests (run.mjs) with their npm packages: installs
# them with `npm ci` from the committed package-lock.json into the build
# directory (again only when the lock file changed), then runs the tests in
# Debian's headless Chromium.  No browser is downloaded: puppeteer-core
# drives /usr/bin/chromium (scripts/install-deps.sh installs it).
#
#   tests/viewer/run.sh ZGC ZGGEN BUILD_DIR [run.mjs options, e.g. --update]
set -euo pipefail
zgc=${1:?usage: run.sh ZGC ZGGEN BUILD_DIR}
zggen=${2:?usage: run.sh ZGC ZGGEN BUILD_DIR}
build=${3:?usage: run.sh ZGC ZGGEN BUILD_DIR}
shift 3
here=$(cd "$(dirname "$0")" && pwd)
for tool in node npm /usr/bin/chromium; do
  command -v "$tool" > /dev/null || {
    echo "viewer: $tool is missing (scripts/install-deps.sh installs it)"
    exit 1
  }
done
deps=$build/tests/viewer-npm
mkdir -p "$deps"
if ! cmp -s "$here/package-lock.json" "$deps/node_modules/.zgc-package-lock.json" 2> /dev/null; then
  cp "$here/package.json" "$here/package-lock.json" "$deps/"
  (cd "$deps" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$here/package-lock.json" "$deps/node_modules/.zgc-package-lock.json"
fi
exec node "$here/run.mjs" --zgc "$zgc" --zggen "$zggen" --modules "$deps/node_modules" "$@"
