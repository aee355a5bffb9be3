#!/usr/bin/env bash
# Installs the dependencies, builds zgc, and shows it on example workflows:
# compiles and runs them with the mock model (in one process, then one
# process per lifeline), and prints a projection and a guard table.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
./scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build -j2 > /dev/null
show() { echo "\$ $*"; "$@"; echo; }
show build/zgc run examples/hello.zg --arg topic="Say hello"
show build/zgc run examples/consensus.zg --arg notes="fever, low blood pressure" --arg diag=sepsis
show build/zgc run --processes examples/merge.zg --arg candidate=pr-42 --arg patch=diff --llm scripted:examples/merge.merged.json
show build/zgc run examples/stale.zg
show build/zgc project examples/hello.zg
show build/zgc guards examples/merge.zg
