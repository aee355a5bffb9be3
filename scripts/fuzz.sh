#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each for a
# bounded time.  usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
CC=clang cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DZGC_FUZZ=ON -DZGC_SANITIZE=ON -DZGC_TESTS=OFF > /dev/null
cmake --build build-fuzz -j2 > /dev/null
run() {
  local target=$1; shift
  local work=build-fuzz/corpus-$target
  mkdir -p "$work"
  echo "fuzz: $target for ${secs}s"
  # The first directory collects new inputs; the others are read-only seeds.
  "build-fuzz/$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 "$work" "$@" 2>&1 | grep -E '^(stat::number_of_executed_units|==|SUMMARY|Done)' || true
  # libFuzzer exits non-zero and writes crash-*/leak-*/timeout-* on a finding
  if ls crash-* leak-* timeout-* oom-* 2>/dev/null | grep -q .; then
    echo "fuzz: $target found a failing input (see the files above)"; exit 1
  fi
}
run fuzz_frontend tests/fuzz/corpus/frontend examples tests/fail tests/golden
if [ -x build-fuzz/fuzz_anomalies ]; then
  run fuzz_anomalies tests/fuzz/corpus/anomalies
fi
echo "fuzz: 0 failing inputs"
