#!/usr/bin/env bash
# Database triggers (docs/triggers.md): what they cost writes, how fast events
# arrive, how fast a backlog drains. Hearth alone; receivers are scripts/bench/triggers.py's
# asyncio HTTP receiver (answers 204, records arrival times; its CPU is reported so it is
# seen not to be the limit).
#
#  (a) throughput: REST creates (the load harness's `create` scenario, harness.py + wrk,
#      reference rules, every request with its user's ID token) on three servers started
#      side by side with 0, 1 and 10 triggers matching every create
#      (/users/{uid}/favorites/{favId}); runs alternate 0, 1, 10, 0, 1, 10, ...; before
#      each run the receivers must have gone quiet (the previous runs' events delivered,
#      DRAIN_TIMEOUT at most), so a run measures writes with their own deliveries only.
#  (b) latency: one trigger on /bench/{run}/{id}, an open-loop writer (PUT, 8 keep-alive
#      connections, open rules) at each rate in RATES for RATE_SECONDS; latency = arrival
#      at the receiver - the event's ce-time (the write's commit time, ms), p50/p99.
#  (c) catch-up: one trigger (retry: true) on /bulk/{id} whose receiver is down; BACKLOG
#      events written (PATCHes of 1,000 children: one event each), then the receiver
#      starts; measured: receiver start -> first event (the retry backoff still running),
#      first -> last event, events/s.
#
# Knobs (env): RUNS (3) DURATION (10) WARMUP (3) CONNS (64) THREADS (2) QUICK=1
#   TLS=1 (the catch-up's receiver over https: a certificate for localhost made for the run,
#   trusted by Hearth through SSL_CERT_FILE)
#   RATES (100,1000) RATE_SECONDS (10) BACKLOG (100000) DRAIN_TIMEOUT (120 s) SKIP (any of
#   throughput,latency,catchup) HEARTH_BIN HEARTH_REV SKIP_BUILD=1 HEARTH_SYNC (full)
#   READERS (50) RESULTS KEEP_WORK=1 BENCH_QUIET_WAIT (here 5 s: the machine is shared)
# Everything on 127.0.0.1, port 0 / free ports; every process stopped and the temp dir
# removed at exit; nothing written into the repo. Results: $RESULTS (.jsonl, .meta) and a
# markdown table in ${RESULTS%.jsonl}.md.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
if [ "${QUICK:-0}" = 1 ]; then RATE_SECONDS=${RATE_SECONDS:-3}; BACKLOG=${BACKLOG:-5000}; fi
export BENCH_QUIET_WAIT=${BENCH_QUIET_WAIT:-5}
bench_init triggers
RATES=${RATES:-100,1000}; RATE_SECONDS=${RATE_SECONDS:-10}; BACKLOG=${BACKLOG:-100000}
DRAIN_TIMEOUT=${DRAIN_TIMEOUT:-120}; READERS=${READERS:-50}; SKIP=${SKIP:-}
PY=(python3 "$BENCH_DIR/triggers.py")
build_hearth
{ machine_facts; echo "receiver: scripts/bench/triggers.py (asyncio, stdlib), answers 204; Hearth keeps its connections to it between deliveries (idle ones closed after 1 s)"; } \
  | tee "$RESULTS.meta" >&2
TABLE=${RESULTS%.jsonl}.md
: >"$TABLE"

# start_receiver PORT [--tls CERT KEY]: sets RECEIVER_PID, RECEIVER_URL (waits for its
# "listening" line); with --tls the URL is https://localhost:PORT.
start_receiver() {
  local port=$1 fifo=$WORK/receiver-$1.fifo line fd
  shift
  rm -f "$fifo"; mkfifo "$fifo"
  "${PY[@]}" receiver --port "$port" "$@" >"$fifo" 2>>"$WORK/receiver.log" &
  RECEIVER_PID=$!; _PIDS+=("$RECEIVER_PID")
  exec {fd}<"$fifo"
  IFS= read -r -t 30 -u "$fd" line || { echo "receiver on $port did not start" >&2; exit 1; }
  cat <&"$fd" >>"$WORK/receiver.log" &
  _DRAINS+=("$!")
  exec {fd}<&-; rm -f "$fifo"
  RECEIVER_URL=http://127.0.0.1:$port
  if [ "${1:-}" = --tls ]; then RECEIVER_URL=https://localhost:$port; fi
}

# triggers_file FILE COUNT URL REF [RETRY]: COUNT triggers t0..t<COUNT-1>, all on REF, each
# with the loop guard's rate at its ceiling (maxEventsPerSecond 100,000), so that the
# benchmark measures recording and delivery, not the guard (docs/triggers.md).
triggers_file() {
  python3 - "$@" <<'EOF'
import json, sys
path, count, url, ref = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
retry = len(sys.argv) > 5 and sys.argv[5] == "retry"
json.dump({"triggers": [{"name": "t%d" % i, "event": "written", "ref": ref, "url": url, "retry": retry,
                         "maxEventsPerSecond": 100000}
                        for i in range(count)]}, open(path, "w"), indent=1)
EOF
}

field() { python3 -c 'import json,sys; v=json.loads(sys.argv[1]).get(sys.argv[2]); print("–" if v is None else (round(v, 1) if isinstance(v, float) else v))' "$1" "$2"; }
cpu() { "${PY[@]}" cpu "$1"; }

# ---- (a) write throughput with 0, 1 and 10 triggers ----
if [[ ,$SKIP, != *,throughput,* ]]; then
  log "(a) throughput: three servers (0, 1, 10 triggers), $READERS readers x 20 favourites + 50 writers each"
  declare -A PID URLS RECV RECV_PID
  for n in 0 1 10; do
    unset HEARTH_TRIGGERS
    if [ "$n" -gt 0 ]; then
      start_receiver "$(free_port)"; RECV[$n]=$RECEIVER_URL; RECV_PID[$n]=$RECEIVER_PID
      triggers_file "$WORK/triggers-$n.json" "$n" "$RECEIVER_URL/" "/users/{uid}/favorites/{favId}" retry
      export HEARTH_TRIGGERS=$WORK/triggers-$n.json
    fi
    start_hearth "$WORK/data-$n"
    unset HEARTH_TRIGGERS
    PID[$n]=$HEARTH_PID; URLS[$n]=$HEARTH_URL
    retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth-$n.json" $(auth_target_arg)
    python3 "$BENCH_DIR/hearth_setup.py" --base "$HEARTH_URL" --target "$WORK/hearth-$n.json" \
      --out "$WORK/fixtures-$n.json" --readers "$READERS" $(auth_setup_args) >&2
  done
  echo "hearth access: $ACCESS_NOTE; $(auth_header_note)" | tee -a "$RESULTS.meta" >&2
  drain_notes=()
  drain() {  # waits until both receivers are quiet; notes what they delivered since last time
    local n stats
    for n in 1 10; do
      stats=$("${PY[@]}" wait --receiver "${RECV[$n]}" --prefix "" --count 0 --stable 2 --timeout "$DRAIN_TIMEOUT")
      [ "$(field "$stats" complete)" = True ] || drain_notes+=("receiver of the $n-trigger server still busy after ${DRAIN_TIMEOUT}s")
      echo "$n triggers: $(field "$stats" count) events delivered so far" >&2
    done
  }
  for r in $(seq 1 "$RUNS"); do
    for n in 0 1 10; do
      drain
      echo "load before run $r of $n trigger(s): $(load_avgs)" | tee -a "$RESULTS.meta" >&2
      RUNS=1 run_wrk "$WORK/hearth-$n.json" "$WORK/fixtures-$n.json" create "${PID[$n]}" "triggers-$n"
    done
  done
  drain
  for n in 1 10; do
    echo "receiver of the $n-trigger server: $(field "$("${PY[@]}" wait --receiver "${RECV[$n]}" --prefix "" --count 0 --stable 0 --timeout 1)" count) events, $(cpu "${RECV_PID[$n]}") s CPU in all" \
      | tee -a "$RESULTS.meta" >&2
  done
  for note in "${drain_notes[@]}"; do echo "$note" | tee -a "$RESULTS.meta" >&2; done
  for n in 0 1 10; do stop_pid "${PID[$n]}"; done
  {
    echo "#### (a) REST creates with 0, 1 and 10 triggers matching every create"
    echo
    python3 "$BENCH_DIR/summarize.py" "$RESULTS" --names "triggers-0=Hearth 0 triggers,triggers-1=Hearth 1 trigger,triggers-10=Hearth 10 triggers" \
      --ratio "1 trigger vs 0=triggers-1:create/triggers-0:create" \
      --ratio "10 triggers vs 0=triggers-10:create/triggers-0:create"
    echo
  } >>"$TABLE"
fi

# ---- (b) commit -> delivery latency ----
if [[ ,$SKIP, != *,latency,* ]]; then
  log "(b) latency: one trigger, open-loop writes at $RATES/s for ${RATE_SECONDS}s, $RUNS runs each, alternating"
  start_receiver "$(free_port)"; LAT_URL=$RECEIVER_URL; LAT_PID=$RECEIVER_PID
  triggers_file "$WORK/triggers-lat.json" 1 "$LAT_URL/" "/bench/{run}/{id}" retry
  export HEARTH_TRIGGERS=$WORK/triggers-lat.json
  HEARTH_AUTH=0 start_hearth "$WORK/data-lat"
  unset HEARTH_TRIGGERS
  {
    echo "#### (b) commit → delivery latency, one trigger (open rules, PUT, 8 keep-alive connections)"
    echo
    echo "| writes/s | run | load before | writes ok / sent | writer late p99 | delivered | p50 ms | p99 ms | max ms | Hearth CPU % | receiver CPU % | writer CPU % |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  } >>"$TABLE"
  # % of a core between two CPU readings (s) taken at times t0 and t1 (s)
  cpu_pct() { python3 -c 'import sys; a,b,t0,t1=map(float,sys.argv[1:]); print(round(100*(b-a)/(t1-t0)))' "$1" "$2" "$3" "$4"; }
  for r in $(seq 1 "$RUNS"); do
    for rate in ${RATES//,/ }; do
      before=$(load_avgs); hc=$(cpu "$HEARTH_PID"); rc=$(cpu "$LAT_PID"); t0=$(date +%s.%N)
      # the writer's CPU: bash's `times` in this shell, before and after the one command
      # substitution that runs it (a waited-for child's CPU counts in this shell's children)
      times >"$WORK/times.start"
      wrote=$("${PY[@]}" rate --base "$HEARTH_URL" --rate "$rate" --seconds "$RATE_SECONDS" --prefix "bench/r${rate}x$r")
      times >"$WORK/times.end"; tw=$(date +%s.%N)
      writer_cpu=$(cpu_pct "$(children_cpu "$WORK/times.start")" "$(children_cpu "$WORK/times.end")" "$t0" "$tw")
      stats=$("${PY[@]}" wait --receiver "$LAT_URL" --prefix "bench/r${rate}x$r/" --count "$(field "$wrote" ok)" --timeout "$DRAIN_TIMEOUT")
      t1=$(date +%s.%N)
      echo "| $rate | $r | $before | $(field "$wrote" ok) / $(field "$wrote" sent) | $(field "$wrote" late_p99_ms) ms | $(field "$stats" count) | $(field "$stats" p50_ms) | $(field "$stats" p99_ms) | $(field "$stats" max_ms) | $(cpu_pct "$hc" "$(cpu "$HEARTH_PID")" "$t0" "$t1") | $(cpu_pct "$rc" "$(cpu "$LAT_PID")" "$t0" "$t1") | $writer_cpu |" >>"$TABLE"
      echo "{\"kind\": \"trigger-latency\", \"rate\": $rate, \"run\": $r, \"writer\": $wrote, \"receiver\": $stats}" >>"$RESULTS"
    done
  done
  echo >>"$TABLE"
  stop_hearth; stop_pid "$LAT_PID"
fi

# ---- (c) catching up a backlog after a receiver outage ----
if [[ ,$SKIP, != *,catchup,* ]]; then
  log "(c) catch-up: $BACKLOG events written with the receiver down, then it starts"
  port=$(free_port)
  receiver_url=http://127.0.0.1:$port/; tls_args=()
  if [ "${TLS:-0}" = 1 ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -addext subjectAltName=DNS:localhost -days 1 \
      -keyout "$WORK/tls-key.pem" -out "$WORK/tls-cert.pem" 2>/dev/null
    receiver_url=https://localhost:$port/; tls_args=(--tls "$WORK/tls-cert.pem" "$WORK/tls-key.pem")
    export SSL_CERT_FILE=$WORK/tls-cert.pem  # Hearth's libssl trusts the run's certificate
    echo "catch-up receiver over https (TLS=1)" | tee -a "$RESULTS.meta" >&2
  fi
  triggers_file "$WORK/triggers-bulk.json" 1 "$receiver_url" "/bulk/{id}" retry
  export HEARTH_TRIGGERS=$WORK/triggers-bulk.json
  HEARTH_AUTH=0 start_hearth "$WORK/data-bulk"
  unset HEARTH_TRIGGERS SSL_CERT_FILE
  t0=$(date +%s.%N)
  "${PY[@]}" bulk --base "$HEARTH_URL" --count "$BACKLOG" --batch 1000 --prefix bulk >&2
  written_s=$(python3 -c "import time; print(round(time.time() - $t0, 1))")
  before=$(load_avgs)
  hc=$(cpu "$HEARTH_PID")
  start_receiver "$port" "${tls_args[@]}"
  started_ms=$(python3 -c 'import time; print(time.time() * 1000)')
  stats=$("${PY[@]}" wait --receiver "$RECEIVER_URL" --prefix "bulk/" --count "$BACKLOG" --timeout 1800)
  hearth_cpu=$(python3 -c "print(round($(cpu "$HEARTH_PID") - $hc, 1))")
  python3 - "$stats" "$started_ms" "$BACKLOG" "$written_s" "$before" "$hearth_cpu" >>"$TABLE" <<'EOF'
import json, sys
s = json.loads(sys.argv[1]); started = float(sys.argv[2]); backlog = int(sys.argv[3])
drain = (s["last_ms"] - s["first_ms"]) / 1000 if s["count"] > 1 else None
print("#### (c) catching up %d pending events after a receiver outage (one trigger)" % backlog)
print()
total = (s["last_ms"] - started) / 1000
print("| written in | load before | delivered | receiver start → first event | first → last | events/s | receiver start → all | Hearth CPU s (catch-up) | receiver CPU s (% of one core) |")
print("|---|---|---|---|---|---|---|---|---|")
print("| %s s (%d PATCHes) | %s | %d%s | %.1f s | %s s | %s | %.1f s | %s | %.1f (%.0f %%) |" % (
    sys.argv[4], (backlog + 999) // 1000, sys.argv[5], s["count"], "" if s["complete"] else " (INCOMPLETE)",
    (s["first_ms"] - started) / 1000, "%.1f" % drain if drain else "–",
    "%.0f" % (s["count"] / drain) if drain else "–", total, sys.argv[6], s["cpu_s"], 100 * s["cpu_s"] / total))
print()
EOF
  echo "{\"kind\": \"trigger-catchup\", \"backlog\": $BACKLOG, \"receiver\": $stats}" >>"$RESULTS"
  stop_hearth
fi

cat "$TABLE"
echo "raw result lines: $RESULTS; this table: $TABLE" >&2
