#!/usr/bin/env bash
# Installs the dependencies, builds zgc and runs every test:
#   0. the house style: every C file follows .clang-format;
#   1. in a normal (optimized) build, the tests that depend on it: the
#      randomized campaigns at their CI size, the time-bound browser check
#      (a page of 100,000 events; the other browser checks run in stage 2)
#      and language-server test (the browser test installs its npm packages
#      itself: tests/viewer), packaging, the editor files, the layering
#      check and the runtime's own unit tests (fibers, sockets, signals);
#   2. every test built with AddressSanitizer + UndefinedBehaviorSanitizer
#      (the unit, golden, rejected-program, CLI, documentation, run, NATS,
#      durable, planner, oracle … tests), but the four named below, which
#      run in stage 1; plan_sizes and the randomized tests take fewer
#      cases there (the functional tests run once here rather than twice:
#      the optimized runtime runs every program again in stage 3);
#   3. the runtime under ThreadSanitizer: every example and run program
#      (tests/run) and a short conformance run, built with -DZGC_TSAN=ON
#      (ZGC_TSAN_CASES conformance cases, default 80);
#   4. a smoke pass of the benchmarks (bench/run --smoke);
#   5. each libFuzzer target for a short time (ZGC_FUZZ_SECONDS, default 10);
#   6. the conformance run: random workflows under random schedules, every
#      trace checked by `zgc trace check` (ZGC_CONFORMANCE_CASES, default 400).
# Longer campaigns (conformance, CPL, crash and mutation soaks) run outside
# CI: their commands and results are in the README of each test folder.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# stage NAME: prints the stage's header; the seconds of each stage are
# printed at the end (the whole script must stay under 30 minutes on CI)
times="" stage_name="" stage_start=$SECONDS
stage() {
  [ -n "$stage_name" ] && times="$times$(printf '%6d s  %s' $((SECONDS - stage_start)) "$stage_name")"$'\n'
  stage_name=$1 stage_start=$SECONDS
  [ -n "$1" ] && echo "== $1"
  return 0
}
stage "dependencies"
./scripts/install-deps.sh

stage "format"
./scripts/format.sh --check

stage "build and tests (RelWithDebInfo)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > /dev/null
cmake --build build -j2
# (ctest --test-dir build runs them all; CI runs the rest in stage 2)
normal_tests='^(cpl|storerun_random|durable_crash|durable_restart|mutation|plan_sizes|planner_property|browser_timed|lsp_perf|install|editors|layers|test_runtime|fiber_schedules|test_net|test_unicode|signals)$'
ctest --test-dir build --output-on-failure -j2 -LE conformance -R "$normal_tests"

stage "build and tests (ASan + UBSan)"
# not under the sanitizers: the editor files' test (it runs no zgc code), the
# package's installation test (dpkg and the installed files), the trace
# checker's mutation campaign (its checking half runs under the sanitizers in
# the trace fuzz target; recording its traces there took minutes) and the
# random workflows with stores (the store runtime runs under the sanitizers
# in storerun, test_store and durable_stores)
san_skip='^(editors|install|mutation|storerun_random)$'
cmake -S . -B build-san -G Ninja -DCMAKE_BUILD_TYPE=Debug -DZGC_SANITIZE=ON > /dev/null
cmake --build build-san -j2
# every third run program over NATS here, and every second one in ctest
# `run` (every one runs in both modes in stage 3, under ThreadSanitizer;
# the whole sets are the defaults, NATS_PROGRAMS_EVERY=1 and RUN_EVERY=1,
# as `ctest --test-dir build -R 'run|nats'` runs them)
RUN_EVERY=2 NATS_PROGRAMS_EVERY=3 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-san --output-on-failure -j2 -LE conformance -E "$san_skip"

stage "ThreadSanitizer: run programs and conformance"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZGC_TSAN=ON > /dev/null
cmake --build build-tsan -j2 --target zgc zggen
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 tests/run_programs.sh build-tsan/zgc
TSAN_OPTIONS=halt_on_error=1 tests/conformance/run --cases "${ZGC_TSAN_CASES:-80}" \
  --zgc build-tsan/zgc --zggen build-tsan/tests/zggen

stage "benchmarks (smoke)"
bench/run --smoke --build build --out build/bench-results

stage "fuzz"
./scripts/fuzz.sh "${ZGC_FUZZ_SECONDS:-10}"

stage "conformance"
tests/conformance/run --cases "${ZGC_CONFORMANCE_CASES:-400}" --zgc build/zgc --zggen build/tests/zggen

n=$(( $(ctest --test-dir build -N -LE conformance -R "$normal_tests" | grep -c 'Test *#') +
      $(ctest --test-dir build-san -N -LE conformance -E "$san_skip" | grep -c 'Test *#') + 4 ))
stage ""
printf '%s' "$times"
printf '%6d s  all\n' "$SECONDS"
echo "all: $n passed, 0 failed"
