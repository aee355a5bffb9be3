#!/usr/bin/env bash
# Per-lifeline processes over a real NATS server (runtime/nats,
# docs/runtime.md "Distributed runs").  Every nats-server is started here
# on 127.0.0.1 with a random free port and a temporary store directory
# (-js -sd), and killed at the end, also on failure.
#
#   run.sh ZGC ZGGEN [SECTION...]   sections: programs conformance
#                                   security faults durable cluster
#                                   journal
#                                   (default: all)
#
# programs  every tests/run program and example (tests/run_programs.sh)
#           as zgc run --processes --nats, each trace accepted by zgc
#           trace check (NATS_PROGRAMS_EVERY=N: every Nth one)
# conformance  a small conformance run (tests/conformance/run --nats):
#           random workflows under random schedules, every lifeline a
#           process, every trace checked
# security  refused with a clear error, nothing delivered: no, wrong and
#           right user/password, token, NKey (and an NKey login that
#           reached the server without its signature, tried again:
#           natsraw.py strips it); TLS with a wrong CA, without
#           the client certificate the server requires, and right; a
#           lifeline whose server account may publish only as another
#           lifeline (subject permissions); frames of another secret, of
#           another run and of another lifeline replayed onto a run's
#           subjects (natsraw.py relays them); a lifeline of another
#           program; zgc runs list, tasks and answer --nats with each
#           of these credentials (refused, and accepted)
# faults    a lifeline process killed with SIGKILL mid-run: its peer
#           reports it within the heartbeat; the server killed and
#           restarted mid-run: the run ends with its result or with a
#           clear error, never a wrong result or a hang
# durable   JetStream (--durable): with NATS_DURABLE_PROGRAMS=1 every run
#           program and example (2 minutes, not in CI); the restart campaign of tests/durable/run_restart.sh over NATS
#           (random workflows, one lifeline process killed with SIGKILL at
#           a random event and resumed, sometimes from another directory:
#           the uninterrupted result, every trace checked, no completed
#           effect repeated; --peer-wait expiring; zgc run --processes
#           --durable printing the restart command); the NATS server
#           killed with SIGKILL and restarted on its file store while a
#           message is being sent, several times: the run completes with
#           its result and repeats no completed effect; the frames a
#           lifeline sends to one peer between two waits stored as one
#           message of the stream (batch.zg; the stream's state asked of
#           the server)
# journal   --journal nats (journals in a JetStream key-value bucket): the
#           restart campaign of run_restart.sh --journal-nats (the killed
#           lifeline resumed from an empty directory, no run store
#           anywhere); a second process taking over a running lifeline's
#           journal (another host name: unshare --uts): the first one's
#           next write is refused and it fails saying so; the errors of a
#           server that is down, a bucket that is missing on a resume, and
#           --journal nats without --nats; the journal stored with the run
#           (a resume without --journal finds the run's bucket or run
#           store; another --journal is refused); zgc runs list, show and
#           cancel --nats on a bucket's runs; zgc runs resume --nats (the
#           run's killed processes started again by zgc, and those of
#           lifelines that never started, found beside the others; its
#           result from the bucket, no completed effect repeated; the
#           refusals, a run record of an earlier zgc without the
#           lifelines' names among them: natsraw.py rewrites one) and
#           zgc runs gc --nats; human tasks of a bucket's run (zgc tasks
#           and zgc answer --nats), also by a lifeline with exactly the
#           documented permissions
# cluster   a three-server JetStream cluster on loopback, a durable run
#           with --nats-replicas 3, one server killed with SIGKILL mid-run:
#           the run completes with its result, no completed effect repeated
set -u
zgc=$(realpath "${1:?usage: run.sh ZGC ZGGEN [SECTION...]}")
zggen=$(realpath "${2:?usage: run.sh ZGC ZGGEN [SECTION...]}")
shift 2
sections=${*:-programs conformance security faults durable cluster journal}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
servers=() helpers=()
cleanup() {
  local p
  for p in "${helpers[@]}" "${servers[@]}"; do kill -9 "$p" 2> /dev/null; done
  wait 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
failed() { echo "FAIL $*"; fail=$((fail + 1)); }

# start_server NAME [PORT] [nats-server options…]: sets PORT and PID_<NAME>.
# PORT 0: a random free one (the server picks it: -p -1).
start_server() {
  local name=$1 port=$2
  shift 2
  mkdir -p "$tmp/$name"
  touch "$tmp/$name/log"
  local from
  from=$(($(wc -l < "$tmp/$name/log") + 1)) # a restart: only the new lines
  nats-server -a 127.0.0.1 -p "${port/#0/-1}" -js -sd "$tmp/$name/store" "$@" \
    >> "$tmp/$name/log" 2>&1 &
  local pid=$!
  servers+=("$pid")
  eval "PID_$name=$pid"
  PORT=""
  for _ in $(seq 100); do
    PORT=$(tail -n +"$from" "$tmp/$name/log" |
      sed -n 's/.*Listening for client connections on 127.0.0.1:\([0-9]*\).*/\1/p' | tail -1)
    [ -n "$PORT" ] && tail -n +"$from" "$tmp/$name/log" | grep -q "Server is ready" && return 0
    sleep 0.05
  done
  echo "nats: nats-server $name did not start:"
  tail -5 "$tmp/$name/log"
  exit 1
}

# A run's secret.
secret() { (umask 077 && head -c 32 /dev/urandom > "$1"); }

# expect_refused WHAT STATUS_FILE ERR_FILE TEXT…: exit 1 and every TEXT on
# stderr, and no result.
expect_refused() {
  local what=$1 st=$2 err=$3
  shift 3
  if [ "$st" -eq 0 ]; then
    failed "$what: succeeded"
    return 1
  fi
  local t
  for t in "$@"; do
    if ! grep -qF -- "$t" "$err"; then
      failed "$what: stderr lacks: $t"
      sed 's/^/  /' "$err" | head -6
      return 1
    fi
  done
  ok
}

# runs_auth WHAT URL EXPECT [OPTION…]: `zgc runs list --nats URL OPTION…`
# (and tasks, answer) against a server with authentication and no bucket:
# EXPECT ok: connected and authenticated (the bucket is missing, exit 4);
# else EXPECT is a text of the refusal on stderr (exit 4)
runs_auth() {
  local what=$1 url=$2 expect=$3 st c
  shift 3
  for c in "runs list" "tasks" "answer r1 1 yes"; do
    # shellcheck disable=SC2086
    "$zgc" $c --nats "$url" "$@" > "$tmp/ra.out" 2> "$tmp/ra.err"
    st=$?
    if [ "$expect" = ok ]; then
      [ $st = 4 ] && grep -q "key-value bucket ZGC_JOURNAL does not exist on the NATS server" \
        "$tmp/ra.err" && ok || failed "zgc $c --nats, $what: exit $st: $(cat "$tmp/ra.err")"
    else
      [ $st = 4 ] && grep -q "cannot connect to the NATS server $url" "$tmp/ra.err" &&
        grep -qF -- "$expect" "$tmp/ra.err" && ok ||
        failed "zgc $c --nats, $what: exit $st: $(cat "$tmp/ra.err")"
    fi
  done
}

# ---- programs -----------------------------------------------------------
programs() {
  start_server main 0
  local url=nats://127.0.0.1:$PORT
  if RUN_MODES=processes RUN_EXTRA="--nats $url" RUN_EVERY="${NATS_PROGRAMS_EVERY:-1}" \
    "$root/tests/run_programs.sh" "$zgc" \
    > "$tmp/programs.out" 2>&1; then
    ok
    tail -1 "$tmp/programs.out"
  else
    failed "programs over NATS:"
    grep -v '^run:' "$tmp/programs.out" | head -20
  fi
}

# ---- conformance --------------------------------------------------------
conformance() {
  start_server conf 0
  if "$root/tests/conformance/run" --cases "${NATS_CONFORMANCE_CASES:-24}" --schedules 4 \
    --nats "nats://127.0.0.1:$PORT" --zgc "$zgc" --zggen "$zggen" > "$tmp/conf.out" 2>&1; then
    ok
    tail -1 "$tmp/conf.out"
  else
    failed "conformance over NATS:"
    tail -20 "$tmp/conf.out"
  fi
}

# The relay workflow (wait.zg) built once: $exe.A and $exe.B.
exe=""
build_relay() {
  [ -n "$exe" ] && return
  "$zgc" build "$here/wait.zg" "$here/gate.c" "$root/tests/durable/effect.c" -o "$tmp/relay" > /dev/null || { echo "nats: build failed"; exit 1; }
  exe=$tmp/relay/relay
}

# run_pair DIR URL RUN KEY_A KEY_B [options for both…]: runs lifelines A
# and B of the relay workflow (A's gate open); sets STA and STB, the
# outputs in DIR/{out,err}.{A,B}.
run_pair() {
  local d=$1 url=$2 run=$3 ka=$4 kb=$5
  shift 5
  mkdir -p "$d"
  "$exe.A" --nats "$url" --run "$run" --secret-file "$ka" --arg topic=t "$@" \
    > "$d/out.A" 2> "$d/err.A" < /dev/null &
  local pa=$!
  "$exe.B" --nats "$url" --run "$run" --secret-file "$kb" --arg topic=t "$@" \
    > "$d/out.B" 2> "$d/err.B" < /dev/null &
  local pb=$!
  wait $pa
  STA=$?
  wait $pb
  STB=$?
}

pair_ok() { # WHAT DIR
  if [ "$STA" = 0 ] && [ "$STB" = 0 ] && [ "$(cat "$2/out.A")" = '{"0": "t/open!"}' ]; then
    ok
  else
    failed "$1: exit $STA/$STB, result $(cat "$2/out.A")"
    sed 's/^/  /' "$2"/err.* | head -6
  fi
}

# ---- security -------------------------------------------------------------
security() {
  build_relay
  local k=$tmp/run.key k2=$tmp/other.key
  secret "$k"
  secret "$k2"

  # usage: what --nats needs, and where it applies
  local st
  "$exe.A" --nats nats://127.0.0.1:1 --secret-file "$k" --arg topic=t > /dev/null 2> "$tmp/use"
  st=$?
  [ $st = 2 ] && grep -q "needs --run RUN with --nats" "$tmp/use" && ok ||
    failed "--nats without --run: exit $st: $(cat "$tmp/use")"
  "$exe.A" --nats nats://127.0.0.1:1 --run a.b --secret-file "$k" --arg topic=t > /dev/null \
    2> "$tmp/use"
  st=$?
  [ $st = 2 ] && grep -q "run expects a run id" "$tmp/use" && ok ||
    failed "--run a.b: exit $st: $(cat "$tmp/use")"
  "$exe.A" --nats nats://127.0.0.1:1 --run r --listen unix:/tmp/x --secret-file "$k" \
    --arg topic=t > /dev/null 2> "$tmp/use"
  st=$?
  [ $st = 2 ] && grep -q "nats replaces --listen and --peer" "$tmp/use" && ok ||
    failed "--nats with --listen: exit $st: $(cat "$tmp/use")"
  "$exe" --nats nats://127.0.0.1:1 --arg topic=t > /dev/null 2> "$tmp/use"
  st=$?
  [ $st = 2 ] && grep -q "apply to per-lifeline executables only" "$tmp/use" && ok ||
    failed "--nats for every lifeline in one process: exit $st: $(cat "$tmp/use")"
  "$exe.A" --nats nats://127.0.0.1:1 --run r --secret-file "$k" --nats-cert "$k" \
    --arg topic=t > /dev/null 2> "$tmp/use"
  st=$?
  [ $st = 1 ] && grep -q "nats-cert and --nats-key go together" "$tmp/use" && ok ||
    failed "--nats-cert alone: exit $st: $(cat "$tmp/use")"
  "$exe.A" --nats nats://127.0.0.1:1 --run r --secret-file "$k" --arg topic=t --timeout 5 \
    > /dev/null 2> "$tmp/use"
  st=$?
  [ $st = 1 ] && grep -q "cannot connect to the NATS server nats://127.0.0.1:1" "$tmp/use" && ok ||
    failed "no server: exit $st: $(cat "$tmp/use")"

  # user and password (from the environment only)
  cat > "$tmp/users.conf" << 'EOF'
authorization { users = [ { user: alice, password: "pw-alice-7731" } ] }
EOF
  start_server users 0 -c "$tmp/users.conf"
  local url=nats://127.0.0.1:$PORT
  run_pair "$tmp/u0" "$url" u0 "$k" "$k" --timeout 10
  expect_refused "no credentials" "$STA" "$tmp/u0/err.A" "cannot connect to the NATS server $url" \
    "authorization failed"
  ZGC_NATS_PASSWORD=wrong run_pair "$tmp/u1" "$url" u1 "$k" "$k" --nats-user alice --timeout 10
  expect_refused "wrong password" "$STB" "$tmp/u1/err.B" "cannot connect to the NATS server $url" \
    "authorization failed"
  run_pair "$tmp/u2" "$url" u2 "$k" "$k" --nats-user alice --timeout 10
  expect_refused "no password" "$STA" "$tmp/u2/err.A" 'needs its password in $ZGC_NATS_PASSWORD'
  ZGC_NATS_PASSWORD=pw-alice-7731 run_pair "$tmp/u3" "$url" u3 "$k" "$k" --nats-user alice
  pair_ok "user and password" "$tmp/u3"
  runs_auth "no credentials" "$url" "authorization failed"
  ZGC_NATS_PASSWORD=wrong runs_auth "wrong password" "$url" "authorization failed" --nats-user alice
  (unset ZGC_NATS_PASSWORD && "$zgc" tasks --nats "$url" --nats-user alice) > /dev/null \
    2> "$tmp/ra.err"
  st=$?
  [ $st = 4 ] && grep -q 'needs its password in $ZGC_NATS_PASSWORD' "$tmp/ra.err" && ok ||
    failed "zgc tasks --nats-user without a password: exit $st: $(cat "$tmp/ra.err")"
  ZGC_NATS_PASSWORD=pw-alice-7731 runs_auth "user and password" "$url" ok --nats-user alice
  if grep -q "pw-alice-7731" "$tmp/ra.err"; then failed "zgc printed a password"; else ok; fi
  if grep -q "pw-alice-7731" "$tmp"/u*/err.* 2> /dev/null; then failed "a password was printed"; else ok; fi

  # token: from a file or the environment
  cat > "$tmp/token.conf" << 'EOF'
authorization { token: "tok-5511-zgc" }
EOF
  start_server token 0 -c "$tmp/token.conf"
  url=nats://127.0.0.1:$PORT
  (umask 077 && echo "tok-wrong" > "$tmp/bad.token" && echo "tok-5511-zgc" > "$tmp/good.token")
  run_pair "$tmp/t0" "$url" t0 "$k" "$k" --nats-token-file "$tmp/bad.token" --timeout 10
  expect_refused "wrong token" "$STA" "$tmp/t0/err.A" "authorization failed"
  run_pair "$tmp/t1" "$url" t1 "$k" "$k" --nats-token-file "$tmp/good.token"
  pair_ok "token file" "$tmp/t1"
  ZGC_NATS_TOKEN=tok-5511-zgc run_pair "$tmp/t2" "$url" t2 "$k" "$k"
  pair_ok "token from the environment" "$tmp/t2"
  runs_auth "wrong token" "$url" "authorization failed" --nats-token-file "$tmp/bad.token"
  runs_auth "token file" "$url" ok --nats-token-file "$tmp/good.token"
  ZGC_NATS_TOKEN=tok-5511-zgc runs_auth "token from the environment" "$url" ok
  if grep -q "tok-5511-zgc" "$tmp/ra.err"; then failed "zgc printed a token"; else ok; fi

  # NKey
  python3 "$here/natsraw.py" nkey "$tmp/user.nk" "$tmp/user.pub"
  python3 "$here/natsraw.py" nkey "$tmp/other.nk" "$tmp/other.pub"
  printf 'authorization { users = [ { nkey: %s } ] }\n' "$(cat "$tmp/user.pub")" > "$tmp/nkey.conf"
  start_server nkey 0 -c "$tmp/nkey.conf"
  url=nats://127.0.0.1:$PORT
  run_pair "$tmp/n0" "$url" n0 "$k" "$k" --nats-nkey "$tmp/other.nk" --timeout 10
  expect_refused "unknown NKey" "$STA" "$tmp/n0/err.A" "authorization failed"
  run_pair "$tmp/n1" "$url" n1 "$k" "$k" --nats-nkey "$tmp/user.nk"
  pair_ok "NKey" "$tmp/n1"
  runs_auth "unknown NKey" "$url" "authorization failed" --nats-nkey "$tmp/other.nk"
  runs_auth "NKey" "$url" ok --nats-nkey "$tmp/user.nk"
  # a login that reached the server without its signature (the C client
  # sometimes sends one so) is tried again: through a proxy that strips
  # the first connection's signature, the pair still runs, the server
  # refused that login, and one more connection was made
  rm -f "$tmp/unsigned.port" "$tmp/unsigned.n"
  python3 "$here/natsraw.py" unsigned "$PORT" "$tmp/unsigned.port" "$tmp/unsigned.n" &
  helpers+=($!)
  for _ in $(seq 100); do [ -s "$tmp/unsigned.port" ] && break; sleep 0.05; done
  local refusals
  refusals=$(grep -c 'Authorization Violation\|Signature\|authentication error' "$tmp/nkey/log" || true)
  run_pair "$tmp/n2" "nats://127.0.0.1:$(cat "$tmp/unsigned.port")" n2 "$k" "$k" \
    --nats-nkey "$tmp/user.nk"
  pair_ok "NKey, a first login without its signature" "$tmp/n2"
  if [ "$(grep -c 'Authorization Violation\|Signature\|authentication error' "$tmp/nkey/log")" -gt "$refusals" ] &&
    [ "$(cat "$tmp/unsigned.n")" -ge 3 ]; then
    ok
  else
    failed "the unsigned login: $(cat "$tmp/unsigned.n") connections, server log: $(tail -3 "$tmp/nkey/log")"
  fi

  # TLS: the server's certificate from a test CA, client certificates
  # required (verify)
  local c=$tmp/certs
  mkdir -p "$c"
  (
    cd "$c" || exit 1
    for ca in ca wrongca; do
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
        -keyout $ca.key -out $ca.pem -subj "/CN=zgc test $ca" 2> /dev/null
    done
    for who in server client; do
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout $who.key \
        -out $who.csr -subj "/CN=127.0.0.1" 2> /dev/null
      printf 'subjectAltName=IP:127.0.0.1\n' > $who.ext
      openssl x509 -req -in $who.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 1 \
        -extfile $who.ext -out $who.pem 2> /dev/null
    done
  ) || { failed "openssl could not make the test certificates"; return; }
  cat > "$tmp/tls.conf" << EOF
tls { cert_file: "$c/server.pem", key_file: "$c/server.key", ca_file: "$c/ca.pem", verify: true }
EOF
  start_server tls 0 -c "$tmp/tls.conf"
  url=tls://127.0.0.1:$PORT
  run_pair "$tmp/s0" "$url" s0 "$k" "$k" --nats-ca "$c/wrongca.pem" --nats-cert "$c/client.pem" \
    --nats-key "$c/client.key" --timeout 10
  expect_refused "wrong CA" "$STA" "$tmp/s0/err.A" "cannot connect to the NATS server $url" "TLS"
  run_pair "$tmp/s1" "$url" s1 "$k" "$k" --nats-ca "$c/ca.pem" --timeout 10
  expect_refused "no client certificate" "$STA" "$tmp/s1/err.A" \
    "cannot connect to the NATS server $url" "the server may require a client certificate"
  run_pair "$tmp/s2" "$url" s2 "$k" "$k" --nats-ca "$c/ca.pem" --nats-cert "$c/client.pem" \
    --nats-key "$c/client.key"
  pair_ok "TLS with a client certificate" "$tmp/s2"
  runs_auth "wrong CA" "$url" "TLS" --nats-ca "$c/wrongca.pem" --nats-cert "$c/client.pem" \
    --nats-key "$c/client.key"
  runs_auth "TLS with a client certificate" "$url" ok --nats-ca "$c/ca.pem" \
    --nats-cert "$c/client.pem" --nats-key "$c/client.key"
  "$zgc" runs list --nats "$url" --nats-cert "$c/client.pem" > /dev/null 2> "$tmp/ra.err"
  st=$?
  [ $st = 4 ] && grep -q "nats-cert and --nats-key go together" "$tmp/ra.err" && ok ||
    failed "zgc runs list --nats-cert alone: exit $st: $(cat "$tmp/ra.err")"

  # subject permissions: each lifeline's account publishes only as itself;
  # B's process started with A's account is refused by the server
  cat > "$tmp/perm.conf" << 'EOF'
authorization { users = [
  { user: a, password: pa, permissions: { publish: "zg.p1.*.A", subscribe: "zg.p1.A.*" } },
  { user: b, password: pb, permissions: { publish: "zg.p1.*.B", subscribe: "zg.p1.B.*" } }
] }
EOF
  start_server perm 0 -c "$tmp/perm.conf"
  url=nats://127.0.0.1:$PORT
  mkdir -p "$tmp/p0"
  (ZGC_NATS_PASSWORD=pa "$exe.A" --nats "$url" --run p1 --secret-file "$k" \
    --nats-user a --arg topic=t --timeout 3 > "$tmp/p0/out.A" 2> "$tmp/p0/err.A" < /dev/null) &
  local pa=$!
  ZGC_NATS_PASSWORD=pa "$exe.B" --nats "$url" --run p1 --secret-file "$k" --nats-user a \
    --arg topic=t --timeout 10 > "$tmp/p0/out.B" 2> "$tmp/p0/err.B" < /dev/null
  STB=$?
  expect_refused "B with A's account" "$STB" "$tmp/p0/err.B" "Permissions Violation"
  wait $pa
  # and with the right accounts the same run works
  run_perm_ok() {
    mkdir -p "$tmp/p1"
    (ZGC_NATS_PASSWORD=pa "$exe.A" --nats "$url" --run p1 --secret-file "$k" \
      --nats-user a --arg topic=t > "$tmp/p1/out.A" 2> "$tmp/p1/err.A" < /dev/null) &
    local pa=$!
    ZGC_NATS_PASSWORD=pb "$exe.B" --nats "$url" --run p1 --secret-file "$k" --nats-user b \
      --arg topic=t > "$tmp/p1/out.B" 2> "$tmp/p1/err.B" < /dev/null
    STB=$?
    wait $pa
    STA=$?
  }
  run_perm_ok
  pair_ok "each lifeline with its own account" "$tmp/p1"

  # frames that are not this run's: A waits (its human answer never
  # comes) while frames of another run, of another secret and of another
  # lifeline are relayed onto its subjects; B waits for A meanwhile
  start_server open 0
  url=nats://127.0.0.1:$PORT
  local d=$tmp/x
  mkdir -p "$d"
  # the victim run r1: its A waits at its gate
  ZGC_TEST_GATE=$d/gate "$exe.A" --nats "$url" --run r1 --secret-file "$k" --arg topic=t \
    --timeout 20 > "$d/out.A" 2> "$d/err.A" < /dev/null &
  local victim_a=$!
  "$exe.B" --nats "$url" --run r1 --secret-file "$k" --arg topic=t --timeout 20 \
    > "$d/out.B" 2> "$d/err.B" < /dev/null &
  local victim_b=$!
  # relays: run r2 (same secret) A → B frames into r1's B as if from A;
  # run r3 (another secret) likewise; r1's own B → A frames into A's inbox
  # as if from B... played back on a second subject of B (as from A itself)
  python3 "$here/natsraw.py" relay "$PORT" "zg.r2.B.A" "zg.r1.B.A" "$d/n2" & helpers+=($!)
  python3 "$here/natsraw.py" relay "$PORT" "zg.r3.B.A" "zg.r1.B.A" "$d/n3" & helpers+=($!)
  python3 "$here/natsraw.py" relay "$PORT" "zg.r1.B.A" "zg.r1.A.B" "$d/n4" & helpers+=($!)
  for _ in $(seq 200); do [ -s "$d/n2" ] && [ -s "$d/n3" ] && [ -s "$d/n4" ] && break; sleep 0.05; done
  "$exe.A" --nats "$url" --run r2 --secret-file "$k" --arg topic=t > /dev/null 2>&1 &
  local o1=$!
  "$exe.B" --nats "$url" --run r2 --secret-file "$k" --arg topic=t > /dev/null 2>&1 < /dev/null &
  local o2=$!
  "$exe.A" --nats "$url" --run r3 --secret-file "$k2" --arg topic=t > /dev/null 2>&1 &
  local o3=$!
  "$exe.B" --nats "$url" --run r3 --secret-file "$k2" --arg topic=t > /dev/null 2>&1 < /dev/null &
  local o4=$!
  wait $o1 $o2 $o3 $o4
  sleep 0.5
  # nothing of them reached the victim's B (it still waits), and B noted
  # the refused frames
  if kill -0 $victim_b 2> /dev/null && [ "$(cat "$d/n2")" -gt 0 ] && [ "$(cat "$d/n3")" -gt 0 ]; then
    ok
  else
    failed "replayed frames: B ended or nothing was relayed: $(cat "$d/err.B")"
  fi
  if grep -q "failed authentication" "$d/err.B" && grep -q "failed authentication" "$d/err.A"; then
    ok
  else
    failed "replayed frames were not refused with a note:"
    sed 's/^/  /' "$d/err.A" "$d/err.B" | head -6
  fi
  # the victim run still works once A's gate opens
  echo open > "$d/gate"
  wait $victim_a
  STA=$?
  wait $victim_b
  STB=$?
  pair_ok "the run beside the replayed frames" "$d"

  # a lifeline of another program (same names, same secret)
  sed 's/x + "!"/x + "?"/' "$here/wait.zg" > "$tmp/other.zg"
  "$zgc" build "$tmp/other.zg" "$here/gate.c" "$root/tests/durable/effect.c" -o "$tmp/other" > /dev/null
  mkdir -p "$tmp/o"
  "$exe.A" --nats "$url" --run o1 --secret-file "$k" --arg topic=t --timeout 10 \
    > "$tmp/o/out.A" 2> "$tmp/o/err.A" < /dev/null &
  local pa=$!
  "$tmp/other/relay.B" --nats "$url" --run o1 --secret-file "$k" --arg topic=t --timeout 10 \
    > "$tmp/o/out.B" 2> "$tmp/o/err.B" < /dev/null
  STB=$?
  wait $pa
  STA=$?
  expect_refused "another program (A)" "$STA" "$tmp/o/err.A" "runs another program"
  expect_refused "another program (B)" "$STB" "$tmp/o/err.B" "runs another program"
}

# ---- faults -------------------------------------------------------------
faults() {
  build_relay
  local k=$tmp/run.key
  [ -e "$k" ] || secret "$k"
  start_server fault 0
  local port=$PORT url=nats://127.0.0.1:$PORT d=$tmp/f
  mkdir -p "$d"
  # A killed with SIGKILL while B waits for it: B reports it within the
  # heartbeat (1 s here)
  ZGC_TEST_GATE=$d/gate "$exe.A" --nats "$url" --run f1 --secret-file "$k" --arg topic=t \
    --heartbeat 1 > "$d/out.A" 2> "$d/err.A" < /dev/null &
  local pa=$!
  local t0=$SECONDS
  "$exe.B" --nats "$url" --run f1 --secret-file "$k" --arg topic=t --heartbeat 1 \
    > "$d/out.B" 2> "$d/err.B" < /dev/null &
  local pb=$!
  sleep 1
  kill -9 $pa
  wait $pa 2> /dev/null
  wait $pb
  STB=$?
  expect_refused "A killed" "$STB" "$d/err.B" "lifeline A (nats://127.0.0.1:$port) has sent nothing for 1 s"
  [ $((SECONDS - t0)) -le 8 ] && ok || failed "A killed: B took $((SECONDS - t0)) s to notice"

  # the server killed and restarted while A waits for its answer: core
  # NATS delivers at most once, so the run either completes with the
  # right result or stops with a clear error — never a wrong result or a
  # hang
  mkdir -p "$d/r"
  ZGC_TEST_GATE=$d/r/gate "$exe.A" --nats "$url" --run f2 --secret-file "$k" --arg topic=t \
    --heartbeat 5 > "$d/r/out.A" 2> "$d/r/err.A" < /dev/null &
  pa=$!
  "$exe.B" --nats "$url" --run f2 --secret-file "$k" --arg topic=t --heartbeat 5 \
    > "$d/r/out.B" 2> "$d/r/err.B" < /dev/null &
  pb=$!
  sleep 1
  kill -9 "$PID_fault"
  start_server fault "$port"
  sleep 1
  echo open > "$d/r/gate"
  wait $pa
  STA=$?
  wait $pb
  STB=$?
  if [ "$STA" = 0 ] && [ "$STB" = 0 ]; then
    pair_ok "server restarted (completed)" "$d/r"
    echo "nats: server restarted mid-run (core NATS): the run completed"
  elif grep -qE "were lost|has sent nothing|lost the connection" "$d/r"/err.*; then
    ok
    echo "nats: server restarted mid-run (core NATS): stopped: $(grep -hE "were lost|has sent nothing|lost the connection" "$d/r"/err.* | head -1)"
  else
    failed "server restarted: exit $STA/$STB without a clear error"
    sed 's/^/  /' "$d/r"/err.* | head -6
  fi
}

# ---- durable --------------------------------------------------------------
# Every run program and example as a durable run over NATS (about 2
# minutes: outside CI, NATS_DURABLE_PROGRAMS=1).
durable_programs() { # URL
  local url=$1
  mkdir -p "$tmp/dp"
  if RUN_MODES=processes RUN_EXTRA="--nats $url --durable=$tmp/dp/runs.db" \
    "$root/tests/run_programs.sh" "$zgc" > "$tmp/dp/out" 2>&1; then
    ok
    tail -1 "$tmp/dp/out"
  elif [ "$(grep -c '^FAIL' "$tmp/dp/out")" = 1 ] &&
    grep -q '^FAIL tests/run/human_no_terminal.zg (processes): exit 124' "$tmp/dp/out"; then
    # a durable run's human question waits as a task instead of failing
    ok
    tail -1 "$tmp/dp/out"
  else
    failed "programs over NATS, durable:"
    grep -A3 '^FAIL' "$tmp/dp/out" | head -20
  fi
}

durable() {
  start_server dur 0
  local port=$PORT url=nats://127.0.0.1:$PORT
  [ "${NATS_DURABLE_PROGRAMS:-0}" = 1 ] && durable_programs "$url"
  if "$root/tests/durable/run_restart.sh" --zgc "$zgc" --zggen "$zggen" \
    --cases "${NATS_RESTART_CASES:-8}" --nats "$url" > "$tmp/restart.out" 2>&1; then
    ok
    tail -1 "$tmp/restart.out"
  else
    failed "the restart campaign over NATS:"
    grep -A3 '^FAIL' "$tmp/restart.out" | head -20
  fi

  # the frames a lifeline sends to one peer between two waits are one
  # message of the stream: batch.zg, 20 iterations of A's loop decision
  # and two numbers to B (one message each) and B's sum back (one), then
  # A's last decision and each lifeline's BYE: 43 messages (83 when every
  # frame was a message of its own); 42 when B's BYE reached A before A
  # ended (a lifeline sends no BYE to a peer that has ended: on a loaded
  # machine B can end first)
  mkdir -p "$tmp/batch"
  local got msgs
  got=$(cd "$tmp/batch" && "$zgc" run --processes --nats "$url" --durable="$tmp/batch/runs.db" \
    --run-id batch1 --arg rounds=20 "$here/batch.zg" 2> "$tmp/batch/err")
  msgs=$(python3 "$here/natsraw.py" request "$port" '$JS.API.STREAM.INFO.ZG_batch1' |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["state"]["messages"])')
  if [ "$got" = 40 ] && { [ "$msgs" = 43 ] || [ "$msgs" = 42 ]; }; then ok
  else failed "batched frames: result '$got' (40), $msgs messages in the stream (43, or 42 without A's BYE): $(tail -3 "$tmp/batch/err")"; fi

  # the server killed (SIGKILL) and restarted on its store while A sends
  build_relay
  local k=$tmp/run.key i
  [ -e "$k" ] || secret "$k"
  for i in 1 2 3; do
    local d=$tmp/srv$i
    mkdir -p "$d"
    export ZGC_TEST_EFFECT_LOG=$d/effect.log
    ZGC_TEST_GATE=$d/gate "$exe.A" --nats "$url" --run "srv$i" --secret-file "$k" --arg topic=t \
      --durable="$d/runs.db" --run-id "srv$i" --peer-wait 30 > "$d/out.A" 2> "$d/err.A" \
      < /dev/null &
    local pa=$!
    "$exe.B" --nats "$url" --run "srv$i" --secret-file "$k" --arg topic=t \
      --durable="$d/runs.db" --run-id "srv$i" --peer-wait 30 > "$d/out.B" 2> "$d/err.B" \
      < /dev/null &
    local pb=$!
    # A has made its first effect call: it runs, its stream and consumer
    # exist (a loaded machine may take seconds to get there); and B is
    # connected: its consumer exists too (a lifeline that cannot reach
    # the server when it starts stops at once, which is not this case)
    for _ in $(seq 600); do [ -s "$d/effect.log" ] && break; sleep 0.05; done
    for _ in $(seq 600); do
      [ "$(python3 "$here/natsraw.py" request "$port" "\$JS.API.STREAM.INFO.ZG_srv$i" 2> /dev/null |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["state"].get("consumer_count", 0))' \
          2> /dev/null)" = 2 ] && break
      sleep 0.05
    done
    # open the gate, then kill the server 0, 20 or 40 ms later: A's
    # message is before, in or after the server's hands
    echo open > "$d/gate"
    sleep "0.0$(( (i - 1) * 2 ))"
    kill -9 "$(eval echo "\$PID_dur")"
    wait "$(eval echo "\$PID_dur")" 2> /dev/null
    sleep 0.3
    start_server dur "$port"
    wait $pa
    STA=$?
    wait $pb
    STB=$?
    pair_ok "server restarted mid-run, durable ($i)" "$d"
    if [ "$(sort "$d/effect.log" | uniq -d)" = "" ] && [ "$(wc -l < "$d/effect.log")" = 2 ]; then
      ok
    else
      failed "server restarted ($i): effect calls: $(tr '\n' ' ' < "$d/effect.log")"
    fi
  done
  unset ZGC_TEST_EFFECT_LOG
}

# ---- cluster --------------------------------------------------------------
# A JetStream cluster of three servers on loopback; a durable run whose
# stream has three replicas; the server only B is connected to is killed
# with SIGKILL while A waits at its gate: the run completes on the other
# two, with its result and no completed effect repeated.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
cluster() {
  build_relay
  local k=$tmp/run.key i j p=() c=()
  [ -e "$k" ] || secret "$k"
  for i in 1 2 3; do p[$i]=$(free_port); c[$i]=$(free_port); done
  for i in 1 2 3; do
    local routes=""
    for j in 1 2 3; do [ "$j" != "$i" ] && routes="$routes${routes:+, }nats://127.0.0.1:${c[$j]}"; done
    # (JetStream and its store directory: start_server's -js -sd)
    printf 'server_name: n%s\ncluster { name: zgc, listen: "127.0.0.1:%s", routes: [ %s ] }\n' \
      "$i" "${c[$i]}" "$routes" > "$tmp/n$i.conf"
    start_server "n$i" "${p[$i]}" -c "$tmp/n$i.conf"
  done
  # the cluster elects its metadata leader within seconds
  for _ in $(seq 300); do
    grep -q "metadata leader" "$tmp"/n?/log && break
    sleep 0.05
  done
  local d=$tmp/cl
  mkdir -p "$d"
  export ZGC_TEST_EFFECT_LOG=$d/effect.log
  ZGC_TEST_GATE=$d/gate "$exe.A" --nats "nats://127.0.0.1:${p[2]},nats://127.0.0.1:${p[3]}" \
    --nats-replicas 3 --run cl1 --secret-file "$k" --arg topic=t --durable="$d/runs.db" \
    --run-id cl1 --timeout 60 --peer-wait 30 > "$d/out.A" 2> "$d/err.A" < /dev/null &
  local pa=$!
  "$exe.B" --nats "nats://127.0.0.1:${p[1]},nats://127.0.0.1:${p[2]}" --nats-replicas 3 \
    --run cl1 --secret-file "$k" --arg topic=t --durable="$d/runs.db" --run-id cl1 --timeout 60 \
    --peer-wait 30 > "$d/out.B" 2> "$d/err.B" < /dev/null &
  local pb=$!
  # A is at its gate (its first effect call made), B has had time to set up
  for _ in $(seq 600); do [ -s "$d/effect.log" ] && break; sleep 0.05; done
  sleep 1
  kill -9 "$PID_n1"
  wait "$PID_n1" 2> /dev/null
  echo open > "$d/gate"
  wait $pa
  STA=$?
  wait $pb
  STB=$?
  pair_ok "JetStream cluster (3 replicas), one server killed" "$d"
  if [ "$(sort "$d/effect.log" | uniq -d)" = "" ] && [ "$(wc -l < "$d/effect.log")" = 2 ]; then
    ok
  else
    failed "cluster: effect calls: $(tr '\n' ' ' < "$d/effect.log")"
  fi
  unset ZGC_TEST_EFFECT_LOG
}

# ---- journal ----------------------------------------------------------------
# The permissions of lifeline L of run RUN in durable mode, journals in
# bucket BUCKET, exactly as docs/runtime.md ("Security model and server
# permissions") lists them.
durable_user() { # USER PASSWORD RUN L BUCKET
  local R=$3 L=$4 B=$5
  cat << EOF
  { user: $1, password: $2, permissions: {
      publish: ["zg.$R.*.$L", "zg.$R.*.$L.c", "\$JS.API.INFO",
                "\$JS.API.STREAM.CREATE.ZG_$R", "\$JS.API.STREAM.INFO.ZG_$R",
                "\$JS.API.CONSUMER.INFO.ZG_$R.$L", "\$JS.API.CONSUMER.DELETE.ZG_$R.$L",
                "\$JS.API.CONSUMER.CREATE.ZG_$R.$L", "\$JS.API.CONSUMER.CREATE.ZG_$R.$L.>",
                "\$JS.API.CONSUMER.DURABLE.CREATE.ZG_$R.$L", "\$JS.ACK.ZG_$R.$L.>",
                "\$JS.API.STREAM.INFO.KV_$B", "\$JS.API.STREAM.CREATE.KV_$B",
                "\$JS.API.STREAM.MSG.GET.KV_$B", "\$JS.API.DIRECT.GET.KV_$B.\$KV.$B.$R.>",
                "\$KV.$B.$R.run", "\$KV.$B.$R.L.$L", "\$KV.$B.$R.C.$L.>"],
      subscribe: ["zg.$R.$L.>", "_INBOX.>"] } }
EOF
}

# Durable runs (a run store, and --journal nats) under per-lifeline
# accounts with exactly the documented permissions: they complete with no
# permission violation; B's process with A's account is refused.
durable_permissions() {
  build_relay
  local k=$tmp/run.key d=$tmp/dperm
  [ -e "$k" ] || secret "$k"
  mkdir -p "$d"
  {
    echo "authorization { users = ["
    durable_user a pa dp1 A KVP
    durable_user b pb dp1 B KVP
    durable_user c pc dp2 A KVP
    durable_user e pe dp2 B KVP
    echo "] }"
  } > "$d/perm.conf"
  start_server dperm 0 -c "$d/perm.conf"
  local url=nats://127.0.0.1:$PORT run jo ua ub pwa pwb what
  # B's process with A's account: refused (before the run, so that
  # nothing of B's is in the bucket yet)
  mkdir -p "$d/x"
  ZGC_NATS_PASSWORD=pc "$exe.B" --nats "$url" --run dp2 --secret-file "$k" --nats-user c \
    --arg topic=t --durable --journal nats:KVP --timeout 10 > "$d/x/out.B" \
    2> "$d/x/err.B" < /dev/null
  expect_refused "durable: B with A's account" "$?" "$d/x/err.B" "Permissions Violation"
  for run in dp1 dp2; do
    if [ "$run" = dp1 ]; then
      jo=(--durable="$d/runs.db") ua=a pwa=pa ub=b pwb=pb what="a run store"
    else
      jo=(--durable --journal nats:KVP) ua=c pwa=pc ub=e pwb=pe what="--journal nats"
    fi
    mkdir -p "$d/$run"
    (cd "$d/$run" && ZGC_NATS_PASSWORD=$pwa exec "$exe.A" --nats "$url" --run "$run" \
      --secret-file "$k" --nats-user "$ua" --arg topic=t "${jo[@]}" --timeout 60 \
      > "$d/$run/out.A" 2> "$d/$run/err.A" < /dev/null) &
    local pa=$!
    (cd "$d/$run" && ZGC_NATS_PASSWORD=$pwb exec "$exe.B" --nats "$url" --run "$run" \
      --secret-file "$k" --nats-user "$ub" --arg topic=t "${jo[@]}" --timeout 60 \
      > "$d/$run/out.B" 2> "$d/$run/err.B" < /dev/null)
    STB=$?
    wait $pa
    STA=$?
    pair_ok "durable run $run ($what) with the documented permissions" "$d/$run"
  done
  if grep -q "Permissions Violation" "$tmp/dperm/log"; then
    failed "the documented durable permissions are not enough: $(grep -m3 "Permissions Violation" "$tmp/dperm/log")"
  else
    ok
  fi
}

# A lifeline that asks a human, under the documented durable permissions
# with --journal nats and the documented additions for tasks (its task's
# keys, the watcher of the run's task keys): its task is made, answered
# by zgc answer --nats (an account of its own), and the run completes
# with no permission violation.
tasks_permissions() {
  local k=$tmp/run.key d=$tmp/tperm R=tp1 B=KVTP pw pe stw ste
  [ -e "$k" ] || secret "$k"
  rm -rf "$d" && mkdir -p "$d"
  "$zgc" build "$root/tests/durable/handoff.zg" -o "$d/ho" > /dev/null ||
    { failed "tasks permissions: build"; return; }
  {
    echo "authorization { users = ["
    durable_user w pw "$R" Writer "$B"
    durable_user e pe "$R" Editor "$B" |
      sed "s|\"\\\$KV.$B.$R.C.Editor.>\"|&, \"\\\$KV.$B.$R.T.>\", \"\\\$JS.API.CONSUMER.CREATE.KV_$B\", \"\\\$JS.API.STREAM.NAMES\"|"
    echo "  { user: admin, password: pad }"
    echo "] }"
  } > "$d/perm.conf"
  grep -q "T\.>" "$d/perm.conf" || { failed "tasks permissions: the configuration: $(cat "$d/perm.conf")"; return; }
  start_server tperm 0 -c "$d/perm.conf"
  local url=nats://127.0.0.1:$PORT
  local adm=(--nats "$url" --journal "nats:$B" --nats-user admin)
  ZGC_NATS_PASSWORD=pw "$d/ho/review.Writer" --nats "$url" --run "$R" --secret-file "$k" \
    --nats-user w --arg topic=tea --llm mock --durable --journal "nats:$B" > "$d/out.W" \
    2> "$d/err.W" < /dev/null &
  pw=$!
  ZGC_NATS_PASSWORD=pe "$d/ho/review.Editor" --nats "$url" --run "$R" --secret-file "$k" \
    --nats-user e --arg topic=tea --llm mock --durable --journal "nats:$B" > "$d/out.E" \
    2> "$d/err.E" < /dev/null &
  pe=$!
  for _ in $(seq 600); do
    ZGC_NATS_PASSWORD=pad "$zgc" tasks "$R" "${adm[@]}" 2> /dev/null | grep -q approve && break
    sleep 0.05
  done
  ZGC_NATS_PASSWORD=pad expect_exit "tasks permissions: answer" 0 "answered task 1 of run $R" \
    "$zgc" answer "$R" 1 yes "${adm[@]}"
  wait $pw
  stw=$?
  wait $pe
  ste=$?
  if [ "$stw" = 0 ] && [ "$ste" = 0 ] && [ "$(cat "$d/out.W")" = '{"0": true}' ]; then
    ok
  else
    failed "a task under the documented permissions: exit $stw/$ste, result $(cat "$d/out.W"): $(cat "$d/err.W" "$d/err.E" | head -c 800)"
  fi
  if grep -q "Permissions Violation" "$tmp/tperm/log"; then
    failed "the documented task permissions are not enough: $(grep -m3 "Permissions Violation" "$tmp/tperm/log")"
  else
    ok
  fi
}

journal() {
  start_server kvj 0
  local url=nats://127.0.0.1:$PORT
  if "$root/tests/durable/run_restart.sh" --zgc "$zgc" --zggen "$zggen" \
    --cases "${NATS_KV_CASES:-4}" --nats "$url" --journal-nats > "$tmp/kvrestart.out" 2>&1; then
    ok
    tail -1 "$tmp/kvrestart.out"
  else
    failed "the restart campaign with --journal nats:"
    grep -A3 '^FAIL' "$tmp/kvrestart.out" | head -20
  fi
  build_relay
  local k=$tmp/run.key d=$tmp/kv
  [ -e "$k" ] || secret "$k"
  mkdir -p "$d"
  # a second process takes over lifeline A's journal while A runs
  if unshare --uts true 2> /dev/null; then
    export ZGC_TEST_EFFECT_LOG=$d/effect.log
    : > "$d/effect.log"
    ZGC_TEST_GATE=$d/gate "$exe.A" --nats "$url" --run kv1 --secret-file "$k" --arg topic=t \
      --durable --journal nats:KVT > "$d/out.A" 2> "$d/err.A" < /dev/null &
    local pa=$!
    "$exe.B" --nats "$url" --run kv1 --secret-file "$k" --arg topic=t --durable \
      --journal nats:KVT --peer-wait 0 > "$d/out.B" 2> "$d/err.B" < /dev/null &
    local pb=$!
    for _ in $(seq 600); do [ -s "$d/effect.log" ] && break; sleep 0.05; done
    # another host (its own host name): the pid of the first process
    # cannot be checked there, the journal's revision is
    unshare --uts sh -c "hostname zgc-other-host && exec \"\$0\" \"\$@\"" "$exe.A" \
      --nats "$url" --run kv1 --secret-file "$k" --journal nats:KVT --resume kv1 \
      > "$d/out.A2" 2> "$d/err.A2" < /dev/null &
    local pa2=$!
    for _ in $(seq 200); do grep -q "attempt 2" "$d/err.A2" && break; sleep 0.05; done
    echo open > "$d/gate"
    wait $pa
    local sta=$?
    kill -9 $pa2 $pb 2> /dev/null
    wait $pa2 $pb 2> /dev/null
    if [ "$sta" != 0 ] && grep -q "was written by another process" "$d/err.A"; then
      ok
    else
      failed "a second process on A's journal: A exited $sta: $(head -c 400 "$d/err.A"); A2: $(head -c 600 "$d/err.A2")"
    fi
    unset ZGC_TEST_EFFECT_LOG
  else
    echo "nats: journal: unshare --uts is not permitted here; the second-process case is skipped"
  fi
  durable_permissions
  journal_stored "$url"
  runs_nats "$url"
  resume_gc_nats "$url"
  tasks_nats "$url"
  tasks_permissions
  # errors: exit status and message
  expect_exit "--journal nats, server down" 4 "journal nats: cannot connect to the NATS server" \
    "$exe.A" --nats nats://127.0.0.1:1 --run kv2 --secret-file "$k" --arg topic=t --durable \
    --journal nats
  expect_exit "--journal nats, bucket missing" 4 "bucket NOSUCH does not exist" \
    "$exe.A" --nats "$url" --run kv3 --secret-file "$k" --journal nats:NOSUCH --resume kv3
  expect_exit "--journal nats, no such run" '!0' "no run nosuch in the run store key-value bucket KVT" \
    "$exe.A" --nats "$url" --run kv3 --secret-file "$k" --journal nats:KVT --resume nosuch
  expect_exit "--journal nats without --nats" 2 "applies to per-lifeline executables with --nats" \
    "$exe" --arg topic=t --durable --journal nats
}

# expect_exit WHAT STATUS TEXT COMMAND…: COMMAND exits with STATUS ('!0':
# any but 0) and says TEXT.
expect_exit() {
  local what=$1 want=$2 text=$3 out st
  shift 3
  out=$("$@" 2>&1 < /dev/null)
  st=$?
  if { [ "$want" = '!0' ] && [ "$st" != 0 ]; } || [ "$st" = "$want" ]; then
    if echo "$out" | grep -qF -- "$text"; then
      ok
      return 0
    fi
  fi
  failed "$what: exit $st, expected $want and '$text': $out"
  return 1
}

# The journal is stored with the run: lifeline A of a run journaled in
# bucket KVR killed with SIGKILL at its gate and resumed from an empty
# directory without --journal: the resume finds the run's bucket and the
# run completes with its result, no completed effect repeated; a
# --journal naming another bucket or the run store is refused first.  A
# finished run journaled in a run store: a resume with --journal nats is
# refused, one without prints its result.
journal_stored() { # URL
  local url=$1 k=$tmp/run.key d=$tmp/kvs pa pb
  rm -rf "$d" && mkdir -p "$d/a" "$d/b" "$d/c"
  export ZGC_TEST_EFFECT_LOG=$d/effect.log
  : > "$d/effect.log"
  (cd "$d/a" && ZGC_TEST_GATE=$d/gate exec "$exe.A" --nats "$url" --run kvs1 \
    --secret-file "$k" --arg topic=t --durable --journal nats:KVR > "$d/out.A" 2> "$d/err.A" \
    < /dev/null) &
  pa=$!
  (cd "$d/b" && exec "$exe.B" --nats "$url" --run kvs1 --secret-file "$k" --arg topic=t \
    --durable --journal nats:KVR > "$d/out.B" 2> "$d/err.B" < /dev/null) &
  pb=$!
  # A's first effect is in its journal: A waits at its gate
  wait_events kvs1 A --nats "$url" --journal nats:KVR ||
    failed "the journal stored with the run: A journaled nothing"
  kill -9 $pa
  wait $pa 2> /dev/null
  echo open > "$d/gate"
  cd "$d/c" || return
  expect_exit "resume in another bucket" 1 \
    "run kvs1 keeps its journals in the key-value bucket KVR (--journal nats:KVR), not in the key-value bucket OTHER" \
    "$exe.A" --nats "$url" --run kvs1 --secret-file "$k" --resume kvs1 --journal nats:OTHER
  expect_exit "resume in the run store" 1 \
    "run kvs1 keeps its journals in the key-value bucket KVR (--journal nats:KVR), not in the run store" \
    "$exe.A" --nats "$url" --run kvs1 --secret-file "$k" --resume kvs1 --journal sqlite
  "$exe.A" --nats "$url" --run kvs1 --secret-file "$k" --resume kvs1 > "$d/out.A" 2> "$d/err.A" \
    < /dev/null
  STA=$?
  cd "$root" || return
  wait $pb
  STB=$?
  pair_ok "the journal stored with the run, resumed without --journal" "$d"
  if [ "$(sort "$d/effect.log" | uniq -d)" = "" ] && [ "$(wc -l < "$d/effect.log")" = 2 ]; then
    ok
  else
    failed "the journal stored with the run: effect calls: $(tr '\n' ' ' < "$d/effect.log")"
  fi
  unset ZGC_TEST_EFFECT_LOG
  if "$zgc" runs show kvs1 --nats "$url" --journal nats:KVR > "$d/show" 2>&1 &&
    grep -q '^status: done, attempt 2' "$d/show" && grep -q '^result: "t/open!"' "$d/show"; then
    ok
  else
    failed "zgc runs show --nats of a run that is done: $(cat "$d/show")"
  fi
  # a run in a run store
  run_pair "$d/s" "$url" kvs2 "$k" "$k" --durable="$d/runs.db" --run-id kvs2
  pair_ok "a run in a run store over NATS" "$d/s"
  expect_exit "resume in a bucket" 1 \
    "run kvs2 keeps its journals in the run store $d/runs.db (--journal sqlite), not in the key-value bucket ZGC_JOURNAL" \
    "$exe.A" --nats "$url" --run kvs2 --secret-file "$k" --resume kvs2 --durable="$d/runs.db" \
    --journal nats
  expect_exit "resume in the run store" 0 '"t/open!"' \
    "$exe.A" --nats "$url" --run kvs2 --secret-file "$k" --resume kvs2 --durable="$d/runs.db"
}

# Human tasks of a run journaled in bucket KVH (handoff.zg: the Editor
# asks a human while the Writer waits): zgc tasks, runs show and runs list
# --nats show the pending task, an answer that does not fit is refused,
# zgc answer --nats answers it, the run completes with the answer, a
# second answer is refused.
tasks_nats() { # URL
  local url=$1 k=$tmp/run.key d=$tmp/kvh pw pe stw ste
  local kvh=(--nats "$url" --journal nats:KVH)
  rm -rf "$d" && mkdir -p "$d"
  "$zgc" build "$root/tests/durable/handoff.zg" -o "$d/ho" > /dev/null || { failed "tasks --nats: build"; return; }
  "$d/ho/review.Writer" --nats "$url" --run kvh1 --secret-file "$k" --arg topic=tea --llm mock \
    --durable --journal nats:KVH > "$d/out.W" 2> "$d/err.W" < /dev/null &
  pw=$!
  "$d/ho/review.Editor" --nats "$url" --run kvh1 --secret-file "$k" --arg topic=tea --llm mock \
    --durable --journal nats:KVH > "$d/out.E" 2> "$d/err.E" < /dev/null &
  pe=$!
  for _ in $(seq 600); do
    "$zgc" tasks kvh1 "${kvh[@]}" 2> /dev/null | grep -q approve && break
    sleep 0.05
  done
  "$zgc" tasks "${kvh[@]}" > "$d/tasks" 2>&1
  if grep -Eq '^kvh1 +1 Editor +approve +confirm +bool +pending +Publish' "$d/tasks"; then ok; else failed "tasks --nats: $(cat "$d/tasks")"; fi
  "$zgc" runs show kvh1 "${kvh[@]}" > "$d/show" 2>&1
  if grep -Eq '^  Editor +running +[0-9]+ events +waits for human task 1 \(approve\)' "$d/show" &&
    grep -q '^tasks (1 pending):' "$d/show"; then
    ok
  else
    failed "runs show --nats with a task: $(cat "$d/show")"
  fi
  "$zgc" runs list "${kvh[@]}" > "$d/list" 2>&1
  if grep -Eq '^kvh1 +review +running +1 +1 ' "$d/list"; then ok; else failed "runs list --nats with a task: $(cat "$d/list")"; fi
  expect_exit "answer --nats that does not fit" 1 "task 1 (confirm) takes y, yes, true or n, no, false, not 'maybe'" \
    "$zgc" answer kvh1 1 maybe "${kvh[@]}"
  expect_exit "answer --nats" 0 'answered task 1 of run kvh1: {"value":true}' \
    "$zgc" answer kvh1 1 yes "${kvh[@]}"
  wait $pw
  stw=$?
  wait $pe
  ste=$?
  if [ "$stw" = 0 ] && [ "$ste" = 0 ] && [ "$(cat "$d/out.W")" = '{"0": true}' ]; then
    ok
  else
    failed "a task answered with --nats: exit $stw/$ste, result $(cat "$d/out.W"): $(cat "$d/err.W" "$d/err.E")"
  fi
  expect_exit "answer --nats, twice" 1 "task 1 of run kvh1 is answered, not pending" \
    "$zgc" answer kvh1 1 no "${kvh[@]}"
}

# wait_events RUN LIFELINE WHERE…: until `zgc runs show RUN --json WHERE…`
# says LIFELINE journaled an event (at most 30 s); 1 if it never did.
wait_events() {
  local run=$1 l=$2
  shift 2
  for _ in $(seq 600); do
    "$zgc" runs show "$run" --json "$@" 2> /dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if any(x["lifeline"] == sys.argv[1] and x["events"] > 0 for x in d["lifelines"]) else 1)
' "$l" 2> /dev/null && return 0
    sleep 0.05
  done
  return 1
}

# zgc runs list/show/cancel --nats on a run journaled in bucket KVC: A
# waits at its gate; list and show print the run and its lifelines as
# for a run store; cancel marks the run, both processes stop (one saying
# the run was cancelled, the other that or that its peer stopped), a
# resume and a second cancel are refused; the usage errors.
# zgc runs resume and gc --nats on a run journaled in bucket KVG: both
# processes killed while A waits at its gate, the run resumed by zgc runs
# resume --nats (its result from the bucket, no completed effect
# repeated), then removed by zgc runs gc --nats
resume_gc_nats() { # URL
  local url=$1 k=$tmp/run.key d=$tmp/kvr pa pb st
  local kvr=(--nats "$url" --journal nats:KVG)
  rm -rf "$d" && mkdir -p "$d"
  export ZGC_TEST_EFFECT_LOG=$d/effect.log
  ZGC_TEST_GATE=$d/gate "$exe.A" --nats "$url" --run kvr1 --secret-file "$k" --arg topic=t \
    --durable --journal nats:KVG > "$d/out.A" 2> "$d/err.A" < /dev/null &
  pa=$!
  "$exe.B" --nats "$url" --run kvr1 --secret-file "$k" --arg topic=t --durable \
    --journal nats:KVG > "$d/out.B" 2> "$d/err.B" < /dev/null &
  pb=$!
  wait_events kvr1 A "${kvr[@]}" || failed "runs resume --nats: A journaled nothing"
  expect_exit "runs resume --nats, running" 1 "run kvr1 is running" \
    "$zgc" runs resume kvr1 "${kvr[@]}" --secret-file "$k"
  expect_exit "runs gc --nats, running" 0 "removed 0 runs" "$zgc" runs gc --failed "${kvr[@]}"
  kill -9 $pa $pb 2> /dev/null
  wait $pa $pb 2> /dev/null
  expect_exit "runs resume --nats without the secret" 2 "needs the run's secret: --secret-file" \
    "$zgc" runs resume kvr1 "${kvr[@]}"
  expect_exit "runs resume --secret-file without --nats" 2 "--secret-file goes with --nats" \
    "$zgc" runs resume kvr1 --secret-file "$k"
  echo open > "$d/gate"
  ZGC_TEST_GATE=$d/gate "$zgc" runs resume kvr1 "${kvr[@]}" --secret-file "$k" > "$d/out" \
    2> "$d/err" < /dev/null
  st=$?
  unset ZGC_TEST_EFFECT_LOG
  if [ $st = 0 ] && [ "$(cat "$d/out")" = '"t/open!"' ] && grep -q "attempt 2" "$d/err" &&
    [ "$(sort "$d/effect.log" | uniq -d | wc -l)" = 0 ] && [ "$(wc -l < "$d/effect.log")" = 2 ]; then
    ok
  else
    failed "runs resume --nats: exit $st, result $(cat "$d/out"): $(head -c 600 "$d/err"); effects: $(cat "$d/effect.log")"
  fi
  expect_exit "runs resume --nats, done" 0 "run kvr1 has finished" \
    "$zgc" runs resume kvr1 "${kvr[@]}" --secret-file "$k"
  expect_exit "runs gc --nats" 0 "removed 1 run" "$zgc" runs gc "${kvr[@]}"
  "$zgc" runs list "${kvr[@]}" > "$d/list" 2>&1
  if grep -q "^no runs in key-value bucket KVG" "$d/list"; then ok; else failed "runs list --nats after gc: $(cat "$d/list")"; fi
  expect_exit "runs resume --nats after gc" 1 "no run kvr1 in the key-value bucket KVG" \
    "$zgc" runs resume kvr1 "${kvr[@]}" --secret-file "$k"
  # a lifeline whose executable is not on this host
  ZGC_TEST_GATE=$d/gate2 "$exe.A" --nats "$url" --run kvr2 --secret-file "$k" --arg topic=t \
    --durable --journal nats:KVG > "$d/out.A" 2> "$d/err.A" < /dev/null &
  pa=$!
  cp "$exe.B" "$d/relay.B"
  "$d/relay.B" --nats "$url" --run kvr2 --secret-file "$k" --arg topic=t --durable \
    --journal nats:KVG > "$d/out.B" 2> "$d/err.B" < /dev/null &
  pb=$!
  wait_events kvr2 A "${kvr[@]}" || failed "runs resume --nats: A journaled nothing"
  for _ in $(seq 200); do "$zgc" runs show kvr2 "${kvr[@]}" 2>/dev/null | grep -Eq '^  B ' && break; sleep 0.05; done
  kill -9 $pa $pb 2> /dev/null
  wait $pa $pb 2> /dev/null
  rm "$d/relay.B"
  expect_exit "runs resume --nats, an executable elsewhere" 1 \
    "the executable of lifeline B ($d/relay.B) is not on this host" \
    "$zgc" runs resume kvr2 "${kvr[@]}" --secret-file "$k"
  # a lifeline that never started: A alone, killed at its gate; the
  # resume starts A again and B for the first time, B's executable found
  # beside A's
  rm -f "$d/gate3"
  export ZGC_TEST_EFFECT_LOG=$d/effect3.log
  ZGC_TEST_GATE=$d/gate3 "$exe.A" --nats "$url" --run kvr3 --secret-file "$k" --arg topic=t \
    --durable --journal nats:KVG > "$d/out.A" 2> "$d/err.A" < /dev/null &
  pa=$!
  wait_events kvr3 A "${kvr[@]}" || failed "runs resume --nats: A journaled nothing"
  kill -9 $pa 2> /dev/null
  wait $pa 2> /dev/null
  echo open > "$d/gate3"
  ZGC_TEST_GATE=$d/gate3 "$zgc" runs resume kvr3 "${kvr[@]}" --secret-file "$k" > "$d/out" \
    2> "$d/err" < /dev/null
  st=$?
  unset ZGC_TEST_EFFECT_LOG
  if [ $st = 0 ] && [ "$(cat "$d/out")" = '"t/open!"' ] &&
    [ "$(sort "$d/effect3.log" | uniq -d | wc -l)" = 0 ] && [ "$(wc -l < "$d/effect3.log")" = 2 ]; then
    ok
  else
    failed "runs resume --nats, B never started: exit $st, result $(cat "$d/out"): $(head -c 600 "$d/err"); effects: $(cat "$d/effect3.log")"
  fi
  # … and one whose executable is not beside the started one's
  mkdir -p "$d/alone"
  cp "$exe.A" "$d/alone/relay.A"
  rm -f "$d/gate4"
  ZGC_TEST_GATE=$d/gate4 "$d/alone/relay.A" --nats "$url" --run kvr4 --secret-file "$k" \
    --arg topic=t --durable --journal nats:KVG > "$d/out.A" 2> "$d/err.A" < /dev/null &
  pa=$!
  wait_events kvr4 A "${kvr[@]}" || failed "runs resume --nats: A journaled nothing"
  kill -9 $pa 2> /dev/null
  wait $pa 2> /dev/null
  expect_exit "runs resume --nats, B never started and not beside A" 1 \
    "lifeline B never started and its executable is not beside the others ($d/alone/relay.B)" \
    "$zgc" runs resume kvr4 "${kvr[@]}" --secret-file "$k"
  # … and a run record of an earlier zgc, which did not keep the
  # lifelines' names: which executable to start is not known
  python3 "$here/natsraw.py" unname "${url##*:}" KVG kvr4.run ||
    failed "natsraw.py unname: could not rewrite kvr4's record"
  expect_exit "runs resume --nats, a record without the lifelines' names" 1 \
    "run kvr4 cannot be resumed here: 1 of its 2 lifelines never started (start them with their executables and --run kvr4)" \
    "$zgc" runs resume kvr4 "${kvr[@]}" --secret-file "$k"
}

runs_nats() { # URL
  local url=$1 k=$tmp/run.key d=$tmp/kvc pa pb sta stb
  local kvc=(--nats "$url" --journal nats:KVC)
  rm -rf "$d" && mkdir -p "$d"
  export ZGC_TEST_EFFECT_LOG=$d/effect.log
  ZGC_TEST_GATE=$d/gate "$exe.A" --nats "$url" --run kvc1 --secret-file "$k" --arg topic=t \
    --durable --journal nats:KVC > "$d/out.A" 2> "$d/err.A" < /dev/null &
  pa=$!
  "$exe.B" --nats "$url" --run kvc1 --secret-file "$k" --arg topic=t --durable \
    --journal nats:KVC > "$d/out.B" 2> "$d/err.B" < /dev/null &
  pb=$!
  unset ZGC_TEST_EFFECT_LOG
  wait_events kvc1 A "${kvc[@]}" || failed "runs --nats: A journaled nothing"
  "$zgc" runs list "${kvc[@]}" > "$d/list" 2>&1
  if grep -Eq '^kvc1 +relay +running +1 +0 ' "$d/list"; then ok; else failed "runs list --nats: $(cat "$d/list")"; fi
  "$zgc" runs show kvc1 "${kvc[@]}" > "$d/show" 2>&1
  if grep -q '^run kvc1: workflow relay (.*wait.zg), one process per lifeline' "$d/show" &&
    grep -q '^status: running, attempt 1' "$d/show" && grep -Eq '^  A +running +1 events' "$d/show" &&
    grep -q '      note -> \[' "$d/show"; then
    ok
  else
    failed "runs show --nats: $(cat "$d/show")"
  fi
  expect_exit "runs cancel --nats" 0 "cancelled run kvc1" "$zgc" runs cancel kvc1 "${kvc[@]}"
  # both processes stop (within their once-a-second look at the run)
  for _ in $(seq 400); do
    kill -0 $pa 2> /dev/null || kill -0 $pb 2> /dev/null || break
    sleep 0.05
  done
  kill -9 $pa $pb 2> /dev/null
  wait $pa
  sta=$?
  wait $pb
  stb=$?
  # (the first to see it stops; the other sees that or its peer's stop)
  local said=0 f
  for f in "$d/err.A" "$d/err.B"; do
    if grep -q "run kvc1 was cancelled (zgc runs cancel)" "$f"; then
      said=$((said + 1))
    elif ! grep -q "stopped: its run failed" "$f"; then
      said=-9
    fi
  done
  if [ "$sta" != 0 ] && [ "$stb" != 0 ] && [ "$sta" != 137 ] && [ "$stb" != 137 ] &&
    [ "$said" -ge 1 ]; then
    ok
  else
    failed "runs cancel --nats: A exited $sta ($(cat "$d/err.A")), B $stb ($(cat "$d/err.B"))"
  fi
  "$zgc" runs show kvc1 "${kvc[@]}" > "$d/show" 2>&1
  if grep -q '^status: cancelled' "$d/show"; then ok; else failed "runs show --nats after cancel: $(cat "$d/show")"; fi
  expect_exit "a cancelled run resumed" 1 "run kvc1 was cancelled; it cannot be resumed" \
    "$exe.A" --nats "$url" --run kvc1 --secret-file "$k" --resume kvc1
  expect_exit "runs cancel --nats, twice" 1 "run kvc1 has ended (cancelled)" \
    "$zgc" runs cancel kvc1 "${kvc[@]}"
  expect_exit "runs show --nats, no such run" 1 "no run nosuch in the key-value bucket KVC on $url" \
    "$zgc" runs show nosuch "${kvc[@]}"
  expect_exit "runs list --nats, no such bucket" 4 "the key-value bucket NOPE does not exist" \
    "$zgc" runs list --nats "$url" --journal nats:NOPE
  expect_exit "runs show --nats, server down" 4 "cannot connect to the NATS server nats://127.0.0.1:1" \
    "$zgc" runs show kvc1 --nats nats://127.0.0.1:1
  expect_exit "runs --journal without --nats" 2 "--journal needs --nats URL" \
    "$zgc" runs show kvc1 --journal nats
  expect_exit "runs --store and --nats" 2 "--store and --nats name two different places" \
    "$zgc" runs list --store "$d/x.db" --nats "$url"
}

for s in $sections; do
  case $s in
    programs | conformance | security | faults | durable | cluster | journal) "$s" ;;
    *) echo "run.sh: unknown section $s" >&2; exit 2 ;;
  esac
  echo "nats: $s done at ${SECONDS}s"
done
echo "nats: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
