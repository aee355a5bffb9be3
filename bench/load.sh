# shellcheck shell=bash
# Sourced by the benchmarks that have a loaded mode (bench/pingpong/run,
# bench/pingpong/compare, bench/latency/run).
#
# bench_hogs: starts a CPU hog on every processor, hog k pinned to
# processor k (unpinned, a hog drifts and leaves a processor free for a
# while: runs pinned to that processor then see no hog), and appends
# their process ids to the caller's array `pids`, which the caller kills
# on exit.
bench_hogs() {
  local k
  for k in $(seq 0 $(($(nproc) - 1))); do
    (
      taskset -c "$k" true 2> /dev/null && exec taskset -c "$k" bash -c 'while :; do :; done'
      exec bash -c 'while :; do :; done'
    ) &
    pids+=("$!")
  done
}
