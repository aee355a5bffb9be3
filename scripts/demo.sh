#!/usr/bin/env bash
# Installs the dependencies, builds zgc, and shows it on an example workflow:
# the diagnostics check, the projected local programs and the guard tables.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
./scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build -j2 > /dev/null
example=${1:-examples/merge.zg}
echo "\$ zgc check $example"
build/zgc check "$example" && echo "(clean)"
echo
echo "\$ zgc project $example"
build/zgc project "$example"
echo
echo "\$ zgc guards $example"
build/zgc guards "$example"
