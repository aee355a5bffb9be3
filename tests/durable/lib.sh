# Shell functions shared by the durable-run campaigns (run_crash.sh,
# run_restart.sh); sourced, not run.

# Merges per-lifeline traces FILE.<L> as zgc run --processes does: the start
# lines, the other lines, the end line with the result.
merge_trace() { # TRACE NL RESULT
  local t=$1 nl=$2 res=$3
  {
    for l in $(seq 0 $((nl - 1))); do grep '"kind":"start"' "$t.L$l"; done
    for l in $(seq 0 $((nl - 1))); do grep -v '"kind":"start"' "$t.L$l" | grep -v '"kind":"end"'; done
    printf '{"kind":"end","result":%s}\n' "$res"
  } > "$t"
}

# The effect calls of the test effect's log (effect.c: one idempotency key
# RUN/LIFELINE/POSITION a line, KILL after every kill) that were repeated
# although completed: a key may come again only after a kill, and only if
# it was its lifeline's last call before that kill (in flight).  Prints
# them, one a line.
completed_repeats() { # LOG
  awk '
    /^KILL$/ { seg++; next }
    { split($0, k, "/"); life = k[2]; last[seg, life] = $0; at[$0] = at[$0] " " seg; keys[$0] = 1 }
    END {
      for (key in keys) {
        m = split(at[key], s, " ");
        for (i = 1; i < m; i++) {
          split(key, k, "/");
          if (s[i] == s[i + 1] || last[s[i], k[2]] != key) { print key; break }
        }
      }
    }' "$1"
}
