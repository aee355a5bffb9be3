# shellcheck shell=bash disable=SC2034,SC2154 # (its variables, and $tmp, are the sourcing script's)
# Sourced by bench/pingpong/run, compare and ladder: where the two lifeline
# processes and the floor's two processes run, and how a two-process run
# is timed.
#
#   --one-core  all of them on processor 0
#   --split     pingpong.A and the floor's parent on processor 0,
#               pingpong.B and the floor's child on processor 1
#               (floor_socketpair --split pins its processes itself)
#
# Sets pin_a and pin_b (the commands' prefixes for pingpong.A and
# pingpong.B), fpin and fopt (the floor's prefix and options) and place
# (one-core, split, or empty: the kernel's choice).
pin_a=() pin_b=() fpin=() fopt=() place=""
# a failure inside $(...) ends the script too (pp_run's check of the
# result is made in one: without this it would print and go on)
shopt -s inherit_errexit

# placement_option PROG OPTION: 0 when OPTION is a placement (taken),
# 1 otherwise; exits 2 when a second, different placement is asked for.
placement_option() {
  local want
  case $2 in
    --one-core) want=one-core ;;
    --split) want="split" ;;
    *) return 1 ;;
  esac
  if [ -n "$place" ] && [ "$place" != "$want" ]; then
    echo "$1: --one-core and --split choose different placements: give one" >&2
    exit 2
  fi
  place=$want
  if [ "$want" = one-core ]; then
    pin_a=(taskset -c 0) pin_b=(taskset -c 0) fpin=(taskset -c 0) fopt=()
  else
    pin_a=(taskset -c 0) pin_b=(taskset -c 1) fpin=() fopt=(--split)
  fi
}

# placement_check PROG: exits 2 when the placement cannot be had here.
placement_check() {
  if [ "$place" = split ] && [ "$(nproc)" -lt 2 ]; then
    echo "$1: --split needs two processors; this machine has $(nproc)" >&2
    exit 2
  fi
}

# placement_note: the placement, for the line that reports the load.
placement_note() {
  case $place in
    one-core) echo " (--one-core: the processes and their floors on processor 0)" ;;
    split) echo " (--split: A and the floor's parent on processor 0, B and its child on 1)" ;;
  esac
}

# pp_run PROG DIR N: nanoseconds of one two-process run of DIR/pingpong.A
# and DIR/pingpong.B, N rounds, placed by pin_a and pin_b (B started
# first, A timed until both have exited; their sockets in $tmp, the run's
# secret $tmp/key); exits 1 when A's result is not N (PROG: the script,
# for the message).
pp_run() {
  local prog=$1 dir=$2 n=$3 t0 t1 out pb
  rm -f "$tmp/A.sock" "$tmp/B.sock"
  t0=$(date +%s%N)
  "${pin_b[@]}" "$dir/pingpong.B" --listen "unix:$tmp/B.sock" --peer "A=unix:$tmp/A.sock" \
    --secret-file "$tmp/key" --arg rounds="$n" > /dev/null &
  pb=$!
  out=$("${pin_a[@]}" "$dir/pingpong.A" --listen "unix:$tmp/A.sock" --peer "B=unix:$tmp/B.sock" \
    --secret-file "$tmp/key" --arg rounds="$n")
  wait "$pb"
  t1=$(date +%s%N)
  [ "$out" = "{\"0\": $n}" ] || { echo "$prog: $dir/pingpong.A returned '$out'" >&2; exit 1; }
  echo $((t1 - t0))
}

# pp_per_iter PROG DIR N: nanoseconds per iteration of N rounds: the whole
# commands minus the same with 0 rounds (process start, connection and
# exit), over N.
pp_per_iter() {
  local base full
  base=$(pp_run "$1" "$2" 0)
  full=$(pp_run "$1" "$2" "$3")
  awk -v a="$full" -v b="$base" -v n="$3" 'BEGIN { printf "%.1f", (a - b) / n }'
}

# median: the median of the numbers on standard input (spaces or lines).
median() { tr ' ' '\n' | { grep . || true; } | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
