# Shell functions shared by the durable-run tests (run_crash.sh,
# run_restart.sh, run_stores.sh, run_commits.sh); sourced, not run.

# One attempt of a run in a process group of its own (setsid): its output
# in OUT, its stderr appended to ERR.  KILL: 0 (none), or an event N at
# which the first process to reach it kills itself (ZGRT_KILL_AT_EVENT);
# then the whole group goes (a resumed per-lifeline run may wait for its
# killed lifeline: once the kill is 10 s old the group is killed).  Sets
# att (the attempt's exit status); an attempt that failed is counted in
# kills and, when $ZGC_TEST_EFFECT_LOG is set, logged there as KILL.
kill_attempt() { # KILL OUT ERR COMMAND...
  local k=$1 out=$2 err=$3
  shift 3
  ZGRT_KILL_AT_EVENT=$k setsid -w "$@" > "$out" 2>> "$err" < /dev/null &
  local pid=$!
  if [ "$k" != 0 ]; then
    for _ in $(seq 1000); do kill -0 "$pid" 2> /dev/null || break; sleep 0.01; done
    kill -9 -- "-$pid" 2> /dev/null
  fi
  { wait "$pid"; } 2> /dev/null
  att=$?
  if [ "$att" -ne 0 ]; then
    kill -9 -- "-$pid" 2> /dev/null
    for _ in $(seq 200); do kill -0 -- "-$pid" 2> /dev/null || break; sleep 0.01; done
    [ -z "${ZGC_TEST_EFFECT_LOG:-}" ] || echo KILL >> "$ZGC_TEST_EFFECT_LOG"
    kills=$((kills + 1))
  fi
}

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
