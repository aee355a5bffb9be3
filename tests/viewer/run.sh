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
deps=$build/tests/viewer-npm
"$here/../../scripts/npm-ci.sh" viewer "$here" "$deps" /usr/bin/chromium
exec node "$here/run.mjs" --zgc "$zgc" --zggen "$zggen" --modules "$deps/node_modules" "$@"
