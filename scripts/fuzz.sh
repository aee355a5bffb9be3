#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and runs each for a
# bounded time.  usage: scripts/fuzz.sh [SECONDS_PER_TARGET]   (default 60)
set -euo pipefail
secs=${1:-60}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
CC=clang cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DZGC_FUZZ=ON -DZGC_SANITIZE=ON -DZGC_TESTS=OFF > /dev/null
targets="fuzz_frontend fuzz_anomalies fuzz_frame fuzz_hello fuzz_trace fuzz_lsp"
# only the targets (and what they link), not the rest of the fuzz build
# shellcheck disable=SC2086
cmake --build build-fuzz -j2 --target $targets | grep -vE "^\[[0-9]+/[0-9]+\]" || true
[ -x build-fuzz/tests/fuzz/fuzz_frontend ] || { echo "fuzz: build failed"; exit 1; }
# Each target runs in the background, two at a time (ZGC_FUZZ_JOBS, default
# the number of cores): a target is one single-threaded process.
jobs=${ZGC_FUZZ_JOBS:-$(nproc)}
run() {
  local target=$1; shift
  local work=build-fuzz/corpus-$target log=build-fuzz/$target.log
  mkdir -p "$work" build-fuzz/artifacts
  # The first directory collects new inputs; the others are read-only seeds.
  if "build-fuzz/tests/fuzz/$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 \
      -artifact_prefix=build-fuzz/artifacts/ -print_final_stats=1 "$work" "$@" > "$log" 2>&1; then
    echo "fuzz: $target for ${secs}s: $(grep -E '^stat::number_of_executed_units' "$log" || echo 'no stats')"
  else
    echo "fuzz: $target found a failing input (in build-fuzz/artifacts/); its log, build-fuzz/$target.log, ends:"
    tail -40 "$log"
    return 1
  fi
}
pids=() failed=0
start() {
  if [ "${#pids[@]}" -ge "$jobs" ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
  run "$@" &
  pids+=($!)
}
start fuzz_frontend tests/fuzz/corpus/frontend examples tests/fail tests/golden
start fuzz_anomalies tests/fuzz/corpus/anomalies
start fuzz_frame tests/fuzz/corpus/frame
start fuzz_hello tests/fuzz/corpus/hello
start fuzz_trace tests/fuzz/corpus/trace
start fuzz_lsp tests/fuzz/corpus/lsp
for p in "${pids[@]}"; do wait "$p" || failed=1; done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: a target found a failing input"
  exit 1
fi
echo "fuzz: 0 failing inputs"
