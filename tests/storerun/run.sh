#!/usr/bin/env bash
# Store operations run (docs/runtime.md "Stores"), with zgc and real
# SQLite files:
#   - race.zg at every level L0..L4 (one process, --schedule 1): the
#     OpRecords of --oprecords have none of the anomalies the level
#     excludes (L1: A1, L2: also A3, L3: also A6, L4: also A2); at L0 the
#     Writer's two effects, the slow one issued first, take place in the
#     other order (A6) and its planned tool is removed while it runs (A2
#     for some seed of 1..5); every effect that took place (the C
#     functions' log) is in some record's co; the trace's store events
#     (read, commit, abort) are there, and `zgc trace check` takes the
#     trace;
#   - the same over per-lifeline processes (--processes: one SQLite store
#     in the run's directory), L0 and L3;
#   - over NATS (--processes --nats: the store in a JetStream key-value
#     bucket of the run, on a real nats-server), L0 and L1;
#   - the six susceptible topologies of examples/topologies (copies, at
#     L0 … L4): at L0 some seed of 1..8 of --schedule gives A1, and at
#     L1 … L4 none of those seeds does;
#   - a durable run's store beside its run store, or where --store-file
#     says;
#   - clear errors: a SQLite store of another level or other cell types,
#     an unwritable records file, --store-file with --store-dir,
#     --oprecords for a workflow without a store;
#     several stores: one records file per store (FILE.S).
#   run.sh ZGC
# STORERUN_LEVELS (default "0 1 2 3 4"; 0 always) and STORERUN_TOPOLOGIES
# (default: the six) narrow it: the sanitizer builds run L0, L1, L3, L4 of
# swarm only (tests/CMakeLists.txt).
set -u
zgc=$(realpath "${1:?usage: run.sh ZGC}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ZGC_CACHE="$tmp/cache"
cd "$tmp"
pass=0 fail=0 notes=""
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }
note() { case "$notes" in *"$1"*) ;; *) notes="$notes$1"$'\n' ;; esac; }

. "$here/levels.sh"
# at LEVEL FILE OUT: a copy of FILE declared at LEVEL
at() { sed "s/consistency L[0-4];/consistency L$1;/" "$2" > "$3"; }
# trace_check FILE.zg TRACE
trace_check() {
  local out
  if out=$("$zgc" trace check "$1" "$2" 2>&1); then ok; else bad "trace check $1: $out"; fi
}
# the errors of FILE, without the level warnings and notes of the build
diagnostics() { grep -v 'Wstore-level\|: note: \|^ ' "$1"; }
L4_MSG='at L4 a tool call is dispatched against that registry only'

t0=$SECONDS
# ---- race.zg at every level ---------------------------------------------------
race_level() { # MODE LEVEL SEED (MODE: "" or --processes)
  local mode=$1 l=$2 seed=$3 name=race$2${1:+p}
  at "$l" "$here/race.zg" $name.zg
  rm -f $name.ops $name.log $name.trace
  local out st
  ZG_EFFECT_LOG=$tmp/$name.log "$zgc" run $mode $name.zg "$here/effects.c" --schedule "$seed" \
    --oprecords $name.ops --trace $name.trace > /dev/null 2> $name.err
  st=$?
  out=$(diagnostics $name.err)
  # L4: the Writer's retry may find its tool removed: the run stops, saying why
  if [ "$st" -ne 0 ] && ! { [ "$l" = 4 ] && grep -q "$L4_MSG" <<<"$out"; }; then
    bad "race L$l $mode seed $seed: exit $st: $out"
    return
  fi
  read -r a1 a2 a3 a6 <<<"$(counts $name.ops)"
  [ -n "${a6:-}" ] && excluded "$l" "$a1" "$a2" "$a3" "$a6" && ok ||
    bad "race L$l $mode seed $seed: A1 $a1 A2 $a2 A3 $a3 A6 $a6 at L$l"
  # every effect that took place is in some record's co
  local took inco
  took=$(wc -l < $name.log 2>/dev/null || echo 0)
  inco=$(python3 -c 'import json,sys; print(sum(len(json.loads(l)["co"]) for l in open(sys.argv[1])))' $name.ops)
  [ "$took" = "$inco" ] && ok || bad "race L$l $mode: $took effects took place, $inco in the records' co"
  [ "$st" -eq 0 ] || return 0
  grep -q '"kind":"read","store":"Board","cell":"text"' $name.trace &&
    grep -q '"kind":"commit","store":"Board","txn":' $name.trace && ok ||
    bad "race L$l $mode: no read or commit event in the trace"
  grep -q '"kind":"act","action":"slow","attempts":1,"store":"Board"' $name.trace && ok ||
    bad "race L$l $mode: the tool call's act event has no store"
  trace_check $name.zg $name.trace
  echo "$a1 $a2 $a3 $a6" > $name.counts
}
levels="0 ${STORERUN_LEVELS:-1 2 3 4}"
levels=$(tr ' ' '\n' <<<"$levels" | sort -un | tr '\n' ' ')
for l in $levels; do race_level "" $l 1; done
read -r a1 a2 a3 a6 < race0.counts 2>/dev/null
[ "${a6:-0}" -ge 1 ] && ok || bad "race L0: no A6 (the slow effect issued first took place last)"
found=0
for seed in 1 2 3 4 5; do
  [ $seed = 1 ] || race_level "" 0 $seed
  read -r a1 a2 a3 a6 < race0.counts 2>/dev/null && [ "$a2" -ge 1 ] && { found=1; break; }
done
[ $found = 1 ] && ok || bad "race L0: no A2 in seeds 1..5"
# a refused commit is an abort event, and the next attempt reads again
grep -qs '"kind":"abort","store":"Board","txn":[0-9]*,"attempt":1,"reason":' race[1-4].trace &&
  grep -qs '"kind":"read","store":"Board","cell":"text","value":"[^"]*","version":[0-9]*,"attempt":2' race[1-4].trace &&
  ok || note "no retry happened at L1..L4 with seed 1 (timing)"

echo "race.zg, one process: $((SECONDS - t0)) s"; t0=$SECONDS
# ---- per-lifeline processes over one SQLite store ------------------------------
race_level --processes 0 1
read -r a1 a2 a3 a6 < race0p.counts 2>/dev/null
[ "${a6:-0}" -ge 1 ] && ok || bad "race L0 --processes: no A6"
[[ " $levels " == *" 3 "* ]] && race_level --processes 3 1

echo "race.zg, processes: $((SECONDS - t0)) s"; t0=$SECONDS
# ---- per-lifeline processes over NATS: the stores in key-value buckets ---------
if command -v nats-server > /dev/null; then
  nats-server -a 127.0.0.1 -p -1 -js -sd "$tmp/js" > "$tmp/nats.log" 2>&1 &
  nats_pid=$!
  port=""
  for _ in $(seq 100); do
    port=$(sed -n 's/.*Listening for client connections on 127.0.0.1:\([0-9]*\).*/\1/p' "$tmp/nats.log")
    [ -n "$port" ] && grep -q "Server is ready" "$tmp/nats.log" && break
    sleep 0.05
  done
  if [ -n "$port" ]; then
    race_level "--processes --nats nats://127.0.0.1:$port" 0 1
    read -r a1 a2 a3 a6 < race0p.counts 2>/dev/null
    [ "${a6:-0}" -ge 1 ] && ok || bad "race L0 --processes --nats: no A6"
    [ ! -e race0p.db ] && ls "$tmp"/js/jetstream/*/streams 2> /dev/null | grep -q '^KV_zgs-.*-Board$' &&
      ok || bad "race L0 --nats: the store is not in a key-value bucket: $(ls -R "$tmp/js" | head -20)"
    [[ " $levels " == *" 1 "* ]] && race_level "--processes --nats nats://127.0.0.1:$port" 1 1
  else
    bad "nats-server did not start: $(tail -3 "$tmp/nats.log")"
  fi
  kill "$nats_pid" 2> /dev/null
  wait "$nats_pid" 2> /dev/null
  echo "race.zg, processes over NATS: $((SECONDS - t0)) s"; t0=$SECONDS
else
  note "no nats-server: the stores in key-value buckets not tested"
fi
# ---- the susceptible topologies -------------------------------------------------
# topo_run T L SEED: copy L of topology T run with SEED (exit status in
# T.L.SEED.st); the first seed of every copy runs two at a time, which
# builds the copies into the cache for the others
topo_run() {
  local t=$1 l=$2 seed=$3 src=$root/examples/topologies/$1.zg cfiles=""
  grep -q '^effect' "$src" && cfiles=$here/effects.c
  local input=$(sed -n 's/^workflow [a-z_]*(\([a-z_]*\):.*/\1/p' "$src")
  [ -f "$t$l.zg" ] || sed "s/consistency L[0-4];/consistency L$l;/" "$src" > "$t$l.zg"
  "$zgc" run "$t$l.zg" $cfiles --arg "$input=x" --seed "$seed" --schedule "$seed" \
    --oprecords "$t.$l.$seed.ops" > /dev/null 2> "$t.$l.$seed.err"
  echo $? > "$t.$l.$seed.st"
}
export -f topo_run
export zgc root here
topologies=${STORERUN_TOPOLOGIES:-blackboard collaboration competing_consensus hierarchical_teams swarm map_reduce_accumulator}
for t in $topologies; do for l in $levels; do printf '%s %s 1\n' $t $l; done; done |
  xargs -P 2 -L 1 bash -c 'topo_run "$@"' _
# topo_check T L SEED: the anomalies L excludes are absent (L4: the run
# may stop, saying why, when a tool was removed before an operation began)
topo_check() {
  local t=$1 l=$2 seed=$3 st out
  [ -f "$t.$l.$seed.st" ] || topo_run $t $l $seed
  st=$(cat "$t.$l.$seed.st")
  out=$(diagnostics "$t.$l.$seed.err")
  if [ "$st" -ne 0 ] && ! { [ $l = 4 ] && grep -q "$L4_MSG" <<<"$out"; }; then
    bad "$t L$l seed $seed: exit $st: $out"
    return
  fi
  read -r a1 a2 a3 a6 <<<"$(counts "$t.$l.$seed.ops")"
  [ -n "${a6:-}" ] && excluded $l "$a1" "$a2" "$a3" "$a6" && ok ||
    bad "$t L$l seed $seed: A1 $a1 A2 $a2 A3 $a3 A6 $a6"
}
for t in $topologies; do
  seeds="" a1=0
  for seed in 1 2 3 4 5 6 7 8; do
    [ -f "$t.0.$seed.st" ] || topo_run $t 0 $seed
    seeds="$seeds $seed"
    [ "$(cat "$t.0.$seed.st")" = 0 ] || { bad "$t L0 seed $seed: $(cat "$t.0.$seed.err")"; break; }
    read -r a1 a2 a3 a6 <<<"$(counts "$t.0.$seed.ops")"
    [ "${a1:-0}" -ge 1 ] && break
  done
  [ "${a1:-0}" -ge 1 ] && ok || { bad "$t: no A1 at L0 in seeds$seeds"; continue; }
  for l in $levels; do [ $l = 0 ] || for seed in $seeds; do topo_check $t $l $seed; done; done
  echo "$t: A1 at L0 with seed ${seeds##* }; none at levels${levels#0} with seeds$seeds"
done

echo "topologies: $((SECONDS - t0)) s"; t0=$SECONDS
# ---- errors ---------------------------------------------------------------------------
cat > typed.zg <<'ZG'
lifeline A;
var x: str;
store S {
    cell c: str = "";
    consistency L1;
}
workflow typed() -> str {
    A: atomic S {
        x = read c;
        write c = x + "a";
    }
    return x @ A;
}
ZG
sed 's/var x: str;/var x: int;/; s/cell c: str = "";/cell c: int = 0;/; s/x + "a"/x + 1/; s/-> str/-> int/' typed.zg > typed_int.zg
at 3 typed.zg typed3.zg
out=$("$zgc" run typed.zg --store-file s.db 2>/dev/null) && [ "$out" = '""' ] &&
  out=$("$zgc" run typed.zg --store-file s.db 2>/dev/null) && [ "$out" = '"a"' ] && ok ||
  bad "a store file keeps the store between runs: $out"
out=$("$zgc" run typed3.zg --store-file s.db 2>&1); st=$?
[ $st = 1 ] && grep -q 'error: store S: the store s.db has level L1, not L3' <<<"$out" && ok ||
  bad "another level: exit $st: $out"
out=$("$zgc" run typed_int.zg --store-file s.db 2>&1); st=$?
[ $st = 1 ] && grep -q "error: store S: cell 'c' is a str cell in the store, not int" <<<"$out" && ok ||
  bad "another cell type: exit $st: $out"
out=$("$zgc" run typed.zg --oprecords "$tmp/no/such/dir/ops" 2>&1); st=$?
[ $st = 1 ] && grep -q "error: store S: cannot open the OpRecord file $tmp/no/such/dir/ops: No such file or directory" <<<"$out" &&
  ok || bad "unwritable records: exit $st: $out"
# a durable run keeps its store beside the run store (stores/RUN/S.db), a
# new run starts from the default, --store-file keeps it where it says
# (kills and resumes: tests/durable/run_stores.sh)
out=$("$zgc" run typed.zg --durable="$tmp/runs.db" --run-id d1 2>&1); st=$?
[ $st = 0 ] && [ "$(tail -1 <<<"$out")" = '""' ] && [ -s "$tmp/stores/d1/S.db" ] && ok ||
  bad "--durable: exit $st: $out"
out=$("$zgc" run typed.zg --durable="$tmp/runs.db" --run-id d2 2>/dev/null) && [ "$out" = '""' ] &&
  out=$("$zgc" run typed.zg --durable="$tmp/runs.db" --run-id d3 --store-file d.db 2>/dev/null) &&
  [ "$out" = '""' ] &&
  out=$("$zgc" run typed.zg --durable="$tmp/runs.db" --run-id d4 --store-file d.db 2>/dev/null) &&
  [ "$out" = '"a"' ] && ok || bad "--durable with --store-file: $out"
out=$("$zgc" run typed.zg --store-file a.db --store-dir . 2>&1); st=$?
[ $st = 1 ] && grep -q -- '--store-file and --store-dir exclude each other' <<<"$out" && ok ||
  bad "--store-file with --store-dir: exit $st: $out"
out=$("$zgc" run "$root/examples/hello.zg" --arg topic=x --oprecords ops.none 2>&1); st=$?
[ $st = 2 ] && grep -q -- '--oprecords: workflow hello declares no store, so there is nothing to record' <<<"$out" &&
  [ ! -e ops.none ] && ok || bad "--oprecords without a store: exit $st: $out"
# several stores: FILE.S per store, and --store-dir DIR/S.db
sed 's/^workflow typed() -> str {/store T {\n    cell d: int = 0;\n    consistency L0;\n}\nvar y: int;\nworkflow typed() -> str {\n    A: atomic T {\n        y = read d;\n        write d = y + 1;\n    }/' typed.zg > two.zg
mkdir -p stores
out=$("$zgc" run two.zg --oprecords two.ops --store-dir stores 2>&1) && [ -s two.ops.S ] && [ -s two.ops.T ] &&
  [ -s stores/S.db ] && [ -s stores/T.db ] && [ "$(counts two.ops.T)" = "0 0 0 0" ] && ok ||
  bad "two stores: $out; $(ls)"

echo "errors: $((SECONDS - t0)) s"
[ -n "$notes" ] && printf 'note: %s\n' "$notes" | sed '/^note: $/d'
echo "storerun: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
