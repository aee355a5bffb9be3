#!/usr/bin/env bash
# Installs the dependencies, builds zgc and runs every test:
#   0. the house style: every C file follows .clang-format;
#   1. the unit, golden, fail, CLI, layering and browser tests (ctest; the
#      browser tests install their npm packages themselves: tests/viewer)
#      in a normal build;
#   2. the same tests built with AddressSanitizer + UndefinedBehaviorSanitizer
#      (but the editor files' test, which runs no zgc code);
#   3. the runtime under ThreadSanitizer: every example and run program
#      (tests/run) and a short conformance run, built with -DZGC_TSAN=ON
#      (ZGC_TSAN_CASES conformance cases, default 300);
#   4. a smoke pass of the benchmarks (bench/run --smoke);
#   5. each libFuzzer target for a short time (ZGC_FUZZ_SECONDS, default 20);
#   6. the conformance run: random workflows under random schedules, every
#      trace checked by `zgc trace check` (ZGC_CONFORMANCE_CASES, default 600).
# Longer campaigns (conformance, CPL, crash and mutation soaks) run outside
# CI: their commands and results are in the README of each test folder.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
./scripts/install-deps.sh

echo "== format"
./scripts/format.sh --check

echo "== build (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build -j2
ctest --test-dir build --output-on-failure -j2 -LE conformance

echo "== build (ASan + UBSan)"
cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Debug -DZGC_SANITIZE=ON > /dev/null
cmake --build build-san -j2
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-san --output-on-failure -j2 -LE conformance -E '^editors$'

echo "== ThreadSanitizer: run programs and conformance"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZGC_TSAN=ON > /dev/null
cmake --build build-tsan -j2 --target zgc zggen
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 tests/run_programs.sh build-tsan/zgc
TSAN_OPTIONS=halt_on_error=1 tests/conformance/run --cases "${ZGC_TSAN_CASES:-300}" \
  --zgc build-tsan/zgc --zggen build-tsan/tests/zggen

echo "== benchmarks (smoke)"
bench/run --smoke --build build --out build/bench-results

echo "== fuzz"
./scripts/fuzz.sh "${ZGC_FUZZ_SECONDS:-20}"

echo "== conformance"
tests/conformance/run --cases "${ZGC_CONFORMANCE_CASES:-600}" --zgc build/zgc --zggen build/tests/zggen

n=$(( $(ctest --test-dir build -N -LE conformance | grep -c 'Test *#') +
      $(ctest --test-dir build-san -N -LE conformance -E '^editors$' | grep -c 'Test *#') + 4 ))
echo "all: $n passed, 0 failed"
