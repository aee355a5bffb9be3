# shellcheck shell=bash disable=SC2034 # (its variables are the sourcing script's)
# Sourced by bench/pingpong/run and bench/pingpong/compare: where the two
# lifeline processes and the floor's two processes run.
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
