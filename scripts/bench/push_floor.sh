#!/usr/bin/env bash
# What one push costs Hearth against the floor of a push on the same machine, in one run.
#
# The floor is `hearth-load floor` (Sources/hearth-load/Floor.swift): a server that does
# nothing per push but one send() of the push's bytes (Hearth's envelope, Hearth's length)
# to each listening connection, from one buffer, on as many threads as the machine has
# cores. What it spends per push is what the kernel spends sending a push to a client that
# reads it: on loopback that includes the client's TCP input and its wake-up, which run
# inside the sender's send(). Hearth's cost per push is compared with that, not with a
# number measured on another day or with another client.
#
# Each round runs one fan-out cell on Hearth and one on the floor, in alternating order
# (ABBA), with the same client: hearth-load fanout, N connections listening on one location
# (the SSE user's favourites, signed in, reference rules), writes POSTed at RATE per second
# for SECONDS, every write's push counted on every connection. Hearth is a fresh process
# per cell (wire.sh's fan-out cell); the floor too. µs per push = the server's CPU seconds
# (user + system, all threads, over the write window) ÷ pushes delivered.
#
# SPLIT_CPUS=1 puts each side of a connection on its own core, as two machines would:
# the server (Hearth or the floor, every thread) on CPU 0, the client on CPU 1, and the
# loopback device's receive processing on CPU 1 too (Receive Packet Steering,
# /sys/class/net/lo/queues/rx-0/rps_cpus, set for the run and put back at exit; root
# only). Then a push's receive side runs on the client's core, not inside the server's
# send(), and µs per push is what the sending side costs. The server has one core there,
# so its delivery times say nothing about the default run's.
#
#   scripts/bench/push_floor.sh                      # N=10000, 10 writes/s, wire and SSE, 3 rounds
#   FLOOR_NS=1000 ROUNDS=1 scripts/bench/push_floor.sh
#   SPLIT_CPUS=1 ROUNDS=2 scripts/bench/push_floor.sh  # the sending side's cost alone
#
# Knobs (env): FLOOR_NS (10000) FLOOR_RATE (10) FLOOR_SECONDS (10) ROUNDS (3) SPLIT_CPUS (0)
#   TRANSPORTS (wire,sse) FLOOR_THREADS (the floor's sender threads: nproc) HEARTH_BIN
#   SKIP_BUILD LOADGEN_BIN LOADGEN_THREADS (2) LOADGEN_SOURCES (4) BENCH_QUIET_PCT (10)
#   BENCH_QUIET_WAIT (300) RESULTS KEEP_WORK=1
# Everything on 127.0.0.1, free ports; every process stopped and the temp dir removed at
# exit; nothing written into the repo. Results: $RESULTS (one JSON line per cell, with
# "server": hearth|floor and "round"), and the table on stdout and in ${RESULTS%.jsonl}.md.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_init push-floor
FLOOR_NS=${FLOOR_NS:-10000}; FLOOR_RATE=${FLOOR_RATE:-10}; FLOOR_SECONDS=${FLOOR_SECONDS:-10}
ROUNDS=${ROUNDS:-3}; TRANSPORTS=${TRANSPORTS:-wire,sse}; FLOOR_THREADS=${FLOOR_THREADS:-$(nproc)}
READERS=${READERS:-50}
[ "$LOADGEN" = compiled ] || { echo "push_floor.sh needs LOADGEN=compiled (the floor speaks to hearth-load)" >&2; exit 2; }
for t in ${TRANSPORTS//,/ }; do
  case $t in wire|sse) ;; *) echo "TRANSPORTS: wire and/or sse, not '$t'" >&2; exit 2;; esac
done

fanout_limits "$FLOOR_NS"
build_hearth
build_loadgen

# SPLIT_CPUS=1: the client under `taskset -c 1`, each server pinned to CPU 0 once started
# (threads it starts later inherit that), loopback's receive work steered to CPU 1.
CLIENT_PIN=()
SPLIT_NOTE="one machine's two cores shared by server, client and loopback's receive work"
if [ "${SPLIT_CPUS:-0}" = 1 ]; then
  RPS_FILE=/sys/class/net/lo/queues/rx-0/rps_cpus
  [ "$(nproc)" -ge 2 ] && [ -w "$RPS_FILE" ] && command -v taskset >/dev/null \
    || { echo "SPLIT_CPUS=1 needs 2 cores, taskset and a writable $RPS_FILE (root)" >&2; exit 2; }
  RPS_BEFORE=$(cat "$RPS_FILE")
  trap 'echo "$RPS_BEFORE" >"$RPS_FILE"; bench_cleanup' EXIT
  echo 2 >"$RPS_FILE"
  CLIENT_PIN=(taskset -c 1)
  SPLIT_NOTE="split: the server on CPU 0, the client and loopback's receive work (rps_cpus 2, was $RPS_BEFORE) on CPU 1"
fi

{
  machine_facts | grep -v '^wrk settings'
  echo "push floor settings: N=$FLOOR_NS on one location, $FLOOR_RATE writes/s for ${FLOOR_SECONDS}s, transports $TRANSPORTS," \
       "$ROUNDS round(s) of Hearth and the floor in ABBA order, fresh server per cell, the floor's sender threads: $FLOOR_THREADS"
  echo "hearth limits: HEARTH_MAX_STREAMS=$HEARTH_MAX_STREAMS HEARTH_MAX_CONNECTIONS=$HEARTH_MAX_CONNECTIONS, synchronous=${HEARTH_SYNC:-full}"
  echo "cores: $SPLIT_NOTE"
  loadgen_note
} | tee "$RESULTS.meta" >&2
echo "results -> $RESULTS" >&2

seed_fanout push_floor.sh

# start_floor: the floor server on a free port; sets FLOOR_PID and FLOOR_PORT.
start_floor() {
  local fifo=$WORK/floor.fifo line fd
  rm -f "$fifo"; mkfifo "$fifo"
  "$LOADGEN_BIN" floor --threads "$FLOOR_THREADS" >"$fifo" 2>>"$WORK/floor.log" &
  FLOOR_PID=$!
  _PIDS+=("$FLOOR_PID")
  exec {fd}<"$fifo"
  FLOOR_PORT=
  if IFS= read -r -t 30 -u "$fd" line && [[ $line =~ ^port\ ([0-9]+)$ ]]; then FLOOR_PORT=${BASH_REMATCH[1]}; fi
  exec {fd}<&-
  rm -f "$fifo"
  [ -n "$FLOOR_PORT" ] || { echo "the floor server did not report its port; log:" >&2; cat "$WORK/floor.log" >&2; exit 1; }
  echo "floor pid $FLOOR_PID on port $FLOOR_PORT ($FLOOR_THREADS sender threads)" >&2
}

# cell SERVER TRANSPORT ROUND: one fan-out cell on a fresh server; its line goes to $RESULTS.
cell() {
  local server=$1 transport=$2 round=$3 pid port out=$WORK/cell.jsonl
  if [ "$server" = hearth ]; then
    start_hearth "$WORK/hearth-data"
    hearth_reset_sse_user "$HEARTH_URL" "$WORK/hearth-fixtures.json"
    pid=$HEARTH_PID port=$HEARTH_PORT
  else
    start_floor
    pid=$FLOOR_PID port=$FLOOR_PORT
  fi
  [ ${#CLIENT_PIN[@]} = 0 ] || taskset -a -cp 0 "$pid" >/dev/null
  log "round $round: $server, $transport, N=$FLOOR_NS, $FLOOR_RATE writes/s for ${FLOOR_SECONDS}s, pid $pid"
  rm -f "$out"
  local load; load=$(load_1min)   # the 1-minute load average before the cell
  "${CLIENT_PIN[@]}" "$LOADGEN_BIN" fanout --transport "$transport" --port "$port" --uid "$LOADGEN_UID" --token "@$LOADGEN_TOKEN_FILE" \
    --subscribers "$FLOOR_NS" --path '/users/${uid}/favorites' --rate "$FLOOR_RATE" --duration "$FLOOR_SECONDS" \
    --threads "$LOADGEN_THREADS" --sources "$LOADGEN_SOURCES" --server-pid "$pid" --run "$round" --label "$server" \
    --out "$out" --quiet "${BENCH_QUIET_PCT:-10}" --quiet-wait "${BENCH_QUIET_WAIT:-300}" >&2 \
    || echo "cell failed ($server, $transport, round $round); continuing" >&2
  if [ "$server" = hearth ]; then stop_hearth; else stop_pid "$FLOOR_PID"; FLOOR_PID=; fi
  [ -s "$out" ] || return 0
  python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); r.update(server=sys.argv[2], round=int(sys.argv[3]), load_before=float(sys.argv[4])); print(json.dumps(r, sort_keys=True))' \
    "$out" "$server" "$round" "$load" >>"$RESULTS"
}

for r in $(seq 1 "$ROUNDS"); do
  for t in ${TRANSPORTS//,/ }; do
    if [ $((r % 2)) = 1 ]; then cell hearth "$t" "$r"; cell floor "$t" "$r"
    else cell floor "$t" "$r"; cell hearth "$t" "$r"; fi
  done
done

{
  echo
  echo "### Hearth's push against the floor of a push — $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  sed 's/^/    /' "$RESULTS.meta"
  echo
  python3 "$BENCH_DIR/push_floor.py" "$RESULTS"
} | tee "${RESULTS%.jsonl}.md"
