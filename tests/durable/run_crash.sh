#!/usr/bin/env bash
# The crash campaign of durable runs: random workflows with llm, effect and
# human actions (zggen --actions), run durably, killed with a real SIGKILL
# at random points (at a random event, ZGRT_KILL_AT_EVENT, or after a
# random time), in one process or as one process per lifeline (then every
# lifeline process is killed), resumed — and killed again — until they
# finish.  Each case must:
#   - finish with the result of an uninterrupted run (workflows without
#     parallel regions, coregions and CPL guards, whose result is
#     determined; for the others the trace check below recomputes it);
#   - leave a trace, all attempts together, that `zgc trace check` accepts
#     (every message received exactly once, FIFO, every event numbered
#     once, the result equal to the chart's);
#   - repeat no completed effect call: the test effect (effect.c) logs
#     every call's idempotency key; a key may come again only after a kill
#     that caught that call in flight (it was the last call of its
#     lifeline before the kill), and every key of the uninterrupted run is
#     there;
#   - repeat no completed model call: the fake OpenAI server's requests
#     are at least the attempts in the trace and at most those plus one a
#     lifeline a kill.
# Models: mock, scripted (an answers file per lifeline), or the fake
# server's "say" model (answers the prompt); human answers come from an
# --answers file.
#
#   run_crash.sh --zgc ZGC --zggen ZGGEN --fake FAKE_OPENAI [--cases N]
#                [--seed S] [--per N] [--keep DIR] [-v]
# --cases: cases in all (default 200); --per: cases per workflow (8).
# Soak results: tests/durable/README.md.
set -u
zgc="" zggen="" fake="" cases=200 seed=1 per=8 keep="" verbose=0
while [ $# -gt 0 ]; do
  case $1 in
    --zgc) zgc=$(realpath "$2"); shift ;;
    --zggen) zggen=$(realpath "$2"); shift ;;
    --fake) fake=$(realpath "$2"); shift ;;
    --cases) cases=$2; shift ;;
    --seed) seed=$2; shift ;;
    --per) per=$2; shift ;;
    --keep) keep=$2; shift ;;
    -v) verbose=1 ;;
    *) echo "run_crash.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$zgc" ] && [ -x "$zggen" ] && [ -x "$fake" ] ||
  { echo "usage: run_crash.sh --zgc ZGC --zggen ZGGEN --fake FAKE_OPENAI [--cases N]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
fakepid=""
cleanup() {
  [ -n "$fakepid" ] && kill "$fakepid" 2>/dev/null
  if [ -n "$keep" ]; then rm -rf "$keep"; mv "$tmp" "$keep"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

# the fake OpenAI server, for the "say" model
"$fake" > "$tmp/port" 2> "$tmp/fake.err" &
fakepid=$!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port=$(head -1 "$tmp/port")
[ -n "$port" ] || { echo "crash: the fake server did not start"; exit 1; }
export OPENAI_BASE_URL=http://127.0.0.1:$port/v1
say_count() {
  curl -s "http://127.0.0.1:$port/count?model=say" | tr -dc '0-9'
}

# deterministic random numbers: rnd N sets R to 0..N-1 (a variable, not
# output: $(…) would run it in a subshell and lose the generator's state)
rng=$seed
rnd() {
  rng=$(( (rng * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff ))
  R=$(( (rng >> 17) % $1 ))
}

pass=0 fail=0 ncases=0 kills=0
failed() { echo "FAIL $*"; fail=$((fail + 1)); }

# answers: a list per lifeline, so that each takes its own in order
answers_file() { # NL FILE KEY FIELD
  local nl=$1 out=$2 key=$3 field=$4
  {
    echo "{"
    for l in $(seq 0 $((nl - 1))); do
      printf '  "L%d.%s": [' "$l" "$key"
      for i in $(seq 0 299); do
        local v=$(( (i * 5 + l * 3 + 1) % 9 ))
        [ "$field" = n ] && v="\"$v\""
        printf '%s{"%s": %s}' "$([ "$i" -gt 0 ] && echo ,)" "$field" "$v"
      done
      printf ']%s\n' "$([ "$l" -lt $((nl - 1)) ] && echo ,)"
    done
    echo "}"
  } > "$out"
}

# the events of a finished run's trace, for the event-count kills
trace_events() { grep -c '"index"' "$1" 2>/dev/null || echo 0; }

# Waits until every process of a killed group is gone (a killed process
# lives on for a moment, and a resume would find it running); its leader
# has been waited for.
group_gone() { # PGID
  for _ in $(seq 200); do kill -0 -- "-$1" 2>/dev/null || return 0; sleep 0.01; done
}

# One attempt of a run, killed or not.  Sets att_status.  The attempt runs
# in a process group of its own (setsid), so that a kill reaches every
# process of it (zgc, its lifeline processes, or the lifelines started
# here).  KILL: none, event:N or time:MS.
attempt() { # KILL OUTFILE COMMAND...
  local how=$1 out=$2
  shift 2
  local env=()
  [[ $how == event:* ]] && env=(env "ZGRT_KILL_AT_EVENT=${how#event:}")
  setsid -w "${env[@]}" "$@" > "$out" 2>> "$case_dir/stderr" < /dev/null &
  local pid=$!
  if [[ $how == time:* ]]; then
    local ms=${how#time:}
    sleep "$(printf '0.%03d' "$ms")"
    if kill -0 "$pid" 2>/dev/null; then
      kill -9 -- "-$pid" 2>/dev/null
      echo "KILL" >> "$ZGC_TEST_EFFECT_LOG"
      kills=$((kills + 1))
      case_kills=$((case_kills + 1))
    fi
  fi
  { wait "$pid"; } 2> /dev/null
  att_status=$?
  [ "$att_status" -ne 0 ] && kill -9 -- "-$pid" 2>/dev/null && group_gone "$pid"
  if [[ $how == event:* ]] && [ "$att_status" -ne 0 ]; then
    # every process of the attempt goes: the one that killed itself and
    # the others with it
    kill -9 -- "-$pid" 2>/dev/null
    echo "KILL" >> "$ZGC_TEST_EFFECT_LOG"
    kills=$((kills + 1))
    case_kills=$((case_kills + 1))
  fi
  return 0
}

# The lifelines of a per-lifeline run, started here (the first attempt;
# resumes go through zgc runs resume).
start_processes() { # DIR NL STORE ID OPTIONS...
  local dir=$1 nl=$2 store=$3 id=$4
  shift 4
  local pids=()
  # the run's secret, as zgc run --processes makes it: private from its
  # first byte and whole under its name (a kill may come at any moment)
  [ -s "$dir/run.key" ] ||
    (umask 077 && head -c 32 /dev/urandom > "$dir/run.key.tmp" && mv "$dir/run.key.tmp" "$dir/run.key")
  for l in $(seq 0 $((nl - 1))); do
    local peers=()
    for m in $(seq 0 $((nl - 1))); do
      [ "$m" = "$l" ] || peers+=(--peer "L$m=unix:$dir/L$m.sock")
    done
    "$exe.L$l" --listen "unix:$dir/L$l.sock" "${peers[@]}" --durable="$store" --run-id "$id" \
      --secret-file "$dir/run.key" --result-file "$dir/L$l.result" "$@" &
    pids+=($!)
  done
  local st=0
  for p in "${pids[@]}"; do wait "$p" || st=$?; done
  return "$st"
}

one_case() { # WF_DIR NL DET MODEL_OPTS... (globals: exe, store, ref_result, ref_keys)
  local wdir=$1 nl=$2 det=$3
  shift 3
  local model=("$@")
  ncases=$((ncases + 1))
  local id=c$ncases
  case_dir=$wdir/$id
  mkdir -p "$case_dir"
  local trace=$case_dir/trace.jsonl
  export ZGC_TEST_EFFECT_LOG=$case_dir/effect.log
  : > "$ZGC_TEST_EFFECT_LOG"
  case_kills=0
  local mode=single
  rnd 2
  [ "$nl" -gt 1 ] && [ "$R" = 1 ] && mode=processes
  local before
  before=$(say_count)
  # where the first attempt dies: at an event of the uninterrupted run's
  # count (a process counts its own), or after some milliseconds
  local how
  rnd 2
  if [ "$R" = 0 ]; then
    rnd $(( ref_events > 1 ? ref_events : 1 ))
    how=event:$(( 1 + R ))
  else
    rnd 60
    how=time:$(( 1 + R ))
  fi
  local opts=(--answers "$wdir/answers.json" "${model[@]}" --trace "$trace" --backoff-scale 0
    --timeout 120)
  if [ "$mode" = single ]; then
    attempt "$how" "$case_dir/out" "$exe" --durable="$store" --run-id "$id" "${opts[@]}"
  else
    local d=$case_dir/sock
    mkdir -p "$d"
    # whole-run crashes: a lost peer stops the others at once (the restart
    # of one process while the others wait is run_restart.sh's)
    opts+=(--peer-wait 0)
    attempt "$how" "$case_dir/out" bash -c 'start_processes "$@"' _ "$d" "$nl" "$store" "$id" \
      "${opts[@]}"
  fi
  # resume until it finishes; the first resumes may be killed again.  An
  # attempt that ends without a kill must succeed; its output is the
  # result (the store's, for per-lifeline processes started here)
  local n=0 result="" kills_before
  local done=0
  if [ "$att_status" -eq 0 ]; then
    done=1
    if [ "$mode" = single ]; then result=$(cat "$case_dir/out"); else
      result=$("$zgc" runs resume "$id" --store "$store" 2>> "$case_dir/stderr"); fi
  elif [ "$case_kills" -eq 0 ]; then
    failed "$id ($mode, $how): the first attempt exited $att_status without a kill"
    sed 's/^/  /' "$case_dir/stderr" | tail -5
    return
  fi
  while [ "$done" = 0 ]; do
    n=$((n + 1))
    if [ $n -gt 8 ]; then
      failed "$id ($mode, $how): not done after 8 resumes"
      sed 's/^/  /' "$case_dir/stderr" | tail -5
      return
    fi
    local again=none
    rnd 3
    if [ $n -le 2 ] && [ "$R" = 0 ]; then
      rnd 2
      if [ "$R" = 0 ]; then
        rnd $(( ref_events + 1 ))
        again=event:$(( 1 + R ))
      else
        rnd 40
        again=time:$(( 1 + R ))
      fi
    fi
    kills_before=$case_kills
    # one process: the executable resumes it, or zgc runs resume; one
    # process per lifeline: zgc runs resume starts them all
    rnd 2
    if [ "$mode" = single ] && [ "$R" = 0 ]; then
      attempt "$again" "$case_dir/out" "$exe" --resume "$id" --durable="$store"
    else
      attempt "$again" "$case_dir/out" "$zgc" runs resume "$id" --store "$store"
    fi
    if [ "$att_status" -eq 0 ]; then
      done=1
      result=$(cat "$case_dir/out")
    elif [ "$case_kills" -eq "$kills_before" ]; then
      if tail -3 "$case_dir/stderr" | grep -qE "no run $id in the run store|no run store at"; then
        # killed before the run was in the store: nothing to resume, the
        # run starts again
        if [ "$mode" = single ]; then
          attempt none "$case_dir/out" "$exe" --durable="$store" --run-id "$id" "${opts[@]}"
        else
          attempt none "$case_dir/out" bash -c 'start_processes "$@"' _ "$case_dir/sock" "$nl" \
            "$store" "$id" "${opts[@]}"
        fi
        [ "$att_status" -eq 0 ] && continue
      fi
      failed "$id ($mode, $how): resume exited $att_status"
      sed 's/^/  /' "$case_dir/stderr" | tail -5
      return
    fi
  done
  # the trace: merged by zgc runs resume, or here when no resume was needed
  if [ "$mode" = processes ] && [ ! -s "$trace" ] && [ -s "$trace.L0" ]; then
    merge_trace "$trace" "$nl" "$result"
  fi
  local what="$id ($mode, $how, $n resumes, $case_kills kills, ${model[*]})"
  if [ "$det" = 1 ] && [ "$result" != "$ref_result" ]; then
    failed "$what: result $result, the uninterrupted run's $ref_result"
    return
  fi
  if ! "$zgc" trace check -q "$wdir/gen.zg" "$trace" > /dev/null 2> "$case_dir/check"; then
    failed "$what: trace: $(head -c 300 "$case_dir/check")"
    return
  fi
  # effects: a key comes again only after a kill caught it in flight
  local bad
  bad=$(completed_repeats "$ZGC_TEST_EFFECT_LOG")
  if [ -n "$bad" ]; then
    failed "$what: completed effect calls repeated: $(echo "$bad" | head -3 | tr '\n' ' ')"
    return
  fi
  if [ "$det" = 1 ]; then
    local keys
    keys=$(grep -v '^KILL$' "$ZGC_TEST_EFFECT_LOG" | sed 's|^[^/]*/||' | sort -u | tr '\n' ' ')
    if [ "$keys" != "$ref_keys" ]; then
      failed "$what: effect calls $keys, the uninterrupted run's $ref_keys"
      return
    fi
  fi
  # model requests: each attempt in the trace made once, plus at most one
  # call in flight a lifeline a kill
  if [[ " ${model[*]} " == *openai:say* ]]; then
    local after asked made
    after=$(say_count)
    asked=$((after - before))
    made=$(grep '"action":"guess"' "$trace" | grep -o '"attempts":[0-9]*' | cut -d: -f2 |
      awk '{ s += $1 } END { print s + 0 }')
    if [ "$asked" -lt "$made" ] || [ "$asked" -gt $((made + case_kills * nl)) ]; then
      failed "$what: $asked model requests for $made attempts in the trace ($case_kills kills)"
      return
    fi
  fi
  [ "$verbose" = 1 ] && echo "ok $what"
  pass=$((pass + 1))
  rm -rf "$case_dir"
}

export -f start_processes

nwf=$(( (cases + per - 1) / per ))
for w in $(seq 1 "$nwf"); do
  wdir=$tmp/w$w
  mkdir -p "$wdir"
  rnd 3
  nl=$(( 2 + R ))
  rnd 2
  det=$R
  rnd 20
  gopts=(--seed $((seed * 1000 + w)) --lifelines "$nl" --statements $(( 15 + R )) --actions)
  [ "$det" = 1 ] && gopts+=(--plain --no-parallel)
  "$zggen" "${gopts[@]}" > "$wdir/gen.zg"
  if ! "$zgc" build -O0 "$wdir/gen.zg" "$here/effect.c" -o "$wdir/out" > "$wdir/build.log" 2>&1; then
    failed "w$w: build: $(head -3 "$wdir/build.log")"
    continue
  fi
  export exe=$wdir/out/gen
  store=$wdir/runs.db
  answers_file "$nl" "$wdir/answers.json" ask n
  answers_file "$nl" "$wdir/scripted.json" guess g
  rnd 3
  case $R in
    0) model=(--llm mock --seed "$w") ;;
    1) model=(--llm "scripted:$wdir/scripted.json") ;;
    *) model=(--llm openai:say) ;;
  esac
  # the uninterrupted run (in memory)
  export ZGC_TEST_EFFECT_LOG=$wdir/ref.log
  : > "$ZGC_TEST_EFFECT_LOG"
  if ! ref_result=$("$exe" --answers "$wdir/answers.json" "${model[@]}" --backoff-scale 0 \
        --trace "$wdir/ref.jsonl" 2> "$wdir/ref.err" < /dev/null); then
    failed "w$w: the uninterrupted run failed: $(head -3 "$wdir/ref.err")"
    continue
  fi
  ref_events=$(trace_events "$wdir/ref.jsonl")
  ref_keys=$(sed 's|^[^/]*/||' "$ZGC_TEST_EFFECT_LOG" | sort -u | tr '\n' ' ')
  for _ in $(seq 1 "$per"); do
    [ "$ncases" -ge "$cases" ] && break
    one_case "$wdir" "$nl" "$det" "${model[@]}"
  done
  [ "$fail" -eq 0 ] && [ -z "$keep" ] && rm -rf "$wdir"
done
echo "crash: $pass passed, $fail failed ($ncases cases, $kills kills)"
[ "$fail" -eq 0 ]
