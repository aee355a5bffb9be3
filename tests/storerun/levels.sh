# levels.sh — sourced by the store-operation tests (run.sh, random.sh):
# what a level excludes, read from `zgc anomalies` ($zgc).

# counts FILE: "A1 A2 A3 A6" of the history FILE
counts() {
  "$zgc" anomalies "$1" | sed -n 's/^  A1 \([0-9]*\), A2 \([0-9]*\), A3 \([0-9]*\).*, A6 \([0-9]*\)$/\1 \2 \3 \4/p'
}
# excluded LEVEL A1 A2 A3 A6: the anomalies level LEVEL excludes are 0
# (L1: A1, L2: also A3, L3: also A6, L4: also A2)
excluded() {
  local l=$1 a1=$2 a2=$3 a3=$4 a6=$5
  { [ "$l" -lt 1 ] || [ "$a1" = 0 ]; } && { [ "$l" -lt 2 ] || [ "$a3" = 0 ]; } &&
    { [ "$l" -lt 3 ] || [ "$a6" = 0 ]; } && { [ "$l" -lt 4 ] || [ "$a2" = 0 ]; }
}
