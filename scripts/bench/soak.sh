#!/usr/bin/env bash
# Soak (not in CI): SOAK_STREAMS live streams held open plus a steady write load
# for SOAK_MINUTES, one Hearth process throughout; every SOAK_SAMPLE_SECONDS the server's
# RSS, open files and the latencies are sampled, so leaks and drift show as a curve.
#   - Hearth: release binary (HEARTH_BIN, else `swift build -c release`), fresh data dir,
#     the repository's reference rules.json, synchronous=full (HEARTH_SYNC), 127.0.0.1 on
#     a free port (lib.sh start_hearth, as streams.sh).
#   - SOAK_USERS anonymous accounts; SOAK_STREAMS streams spread round-robin over them, each
#     GET /users/<uid>/favorites.json, Accept: text/event-stream, the user's ID token.
#   - SOAK_WIRE wire-protocol listeners beside them (0: none), round-robin over the same
#     users: /.ws (wire.py's RFC 6455 client), `auth` with the user's ID token, `q` on
#     /users/<uid>/favorites, so both kinds hear the same writes; one that ends reconnects.
#   - Writes open loop at SOAK_RATE/s: write i PUTs favourite f<(i div U) mod SOAK_KEYS> of
#     user i mod U with every field the rules require (the first U x SOAK_KEYS writes create
#     favourites, the rest update them), so every write is an event on that user's streams.
#   - Per sample (one JSON line in $RESULTS): VmRSS / VmHWM (/proc/<pid>/status), open fds
#     (/proc/<pid>/fd), threads, data dir size, hearth_open_streams / _connections from
#     /metrics; write latency p50/p99/max (response − scheduled send, open loop); delivery
#     latency p50/p99/max (event on a subscriber − scheduled send); events delivered vs
#     expected (writes scheduled up to SOAK_SETTLE s before the sample; expected = that
#     user's subscribed streams); streams open, ends by reason, reconnects, lost; errors;
#     server / load generator / other processes' CPU % (the machine may be shared).
#   - Per minute (one "minute" JSON line, the writes scheduled in that minute): write-ack
#     p99 / max; delivery p99 / p99.9 / max for SSE and wire listeners apart; the slowest
#     writes with their scheduled send time in UTC (to line up with the server's log,
#     perf or strace); server / load generator / other CPU %; the load generator's
#     event-loop lag. The report says whether delivery max < 100 ms held in every minute
#     (the stall goal). SOAK_PERF=1: `perf record` of the server's fsync / fdatasync /
#     madvise / munmap tracepoints (a few hundred bytes a second, no stacks) throughout;
#     the report then gives the syncs per minute by file and, for each minute's slowest
#     writes, the syncs of 20 ms or more in flight meanwhile. A stall soak: SOAK_MINUTES=10 SOAK_SAMPLE_SECONDS=60 SOAK_RATE=10
#     SOAK_STREAMS=1000 SOAK_WIRE=1000.
#   - ID tokens live one hour, so the generator behaves as a client must: a token older than
#     SOAK_TOKEN_MAX_AGE s is refreshed (POST /v1/token) before use, and a stream that ends
#     (auth_revoked at its token's expiry, cancel, close) reconnects with Last-Event-ID and
#     the current token (SOAK_RECONNECT=0: every end is a lost stream instead).
#   - At the end: a drain (every write answered, its events in; at most 60 s), a last
#     sample, then the client closes every stream and the server's fds / open streams /
#     connections are read 5 s later (what is left over is a leak). Markdown table (one row
#     per sample) and summary: stdout and ${RESULTS%.jsonl}.md.
# Bounded: the generator stops itself after SOAK_MINUTES + setup/drain allowances, and
# `timeout` stops it 15 minutes after that at the latest.
#
# Knobs (env): SOAK_STREAMS (1000) SOAK_WIRE (0 wire-protocol listeners) SOAK_USERS (100) SOAK_RATE (20 writes/s) SOAK_MINUTES
#   (60) SOAK_SAMPLE_SECONDS (60) SOAK_KEYS (50 favourites per user) SOAK_WRITER_CONNS (16
#   keep-alive connections for the writes) SOAK_SETTLE (10) SOAK_TOKEN_MAX_AGE (3000)
#   SOAK_RECONNECT (1) SOAK_PERF (0) SOAK_STORM_MINUTE (0: none; N: half way through minute N the client drops
#   every SSE stream at once, as when all their tokens expire in one second, and each reconnects with
#   Last-Event-ID) SOAK_CHURN (0: open streams the client drops per minute, each then
#   reconnecting with Last-Event-ID, as on a flaky network) SOAK_NICE (0: niceness of the load generator) HEARTH_BIN
#   HEARTH_REV (what to record as the binary's commit when it was built elsewhere)
#   HEARTH_SYNC (full) SKIP_BUILD=1 RESULTS (/tmp/hearth-bench-soak-<date>.jsonl)
#   KEEP_WORK=1
# Limits: `ulimit -n` is raised to the hard limit; Hearth gets stream and connection caps
# (HEARTH_MAX_STREAMS, _PER_ADDRESS, HEARTH_MAX_CONNECTIONS, _PER_ADDRESS) that fit
# SOAK_STREAMS from 127.0.0.1 with room for reconnects.
# Everything on 127.0.0.1; every process stopped and the temp dir removed at exit; nothing
# is written into the repo.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"

SOAK_STREAMS=${SOAK_STREAMS:-1000}; SOAK_USERS=${SOAK_USERS:-100}; SOAK_RATE=${SOAK_RATE:-20}
SOAK_MINUTES=${SOAK_MINUTES:-60}; SOAK_SAMPLE_SECONDS=${SOAK_SAMPLE_SECONDS:-60}; SOAK_KEYS=${SOAK_KEYS:-50}
SOAK_WRITER_CONNS=${SOAK_WRITER_CONNS:-16}; SOAK_SETTLE=${SOAK_SETTLE:-10}
SOAK_TOKEN_MAX_AGE=${SOAK_TOKEN_MAX_AGE:-3000}; SOAK_RECONNECT=${SOAK_RECONNECT:-1}; SOAK_CHURN=${SOAK_CHURN:-0}
SOAK_STORM_MINUTE=${SOAK_STORM_MINUTE:-0}
SOAK_NICE=${SOAK_NICE:-0}; SOAK_WIRE=${SOAK_WIRE:-0}; SOAK_PERF=${SOAK_PERF:-0}
LISTENERS=$((SOAK_STREAMS + SOAK_WIRE))

bench_init_streams soak
if [ $((LISTENERS + SOAK_WRITER_CONNS + 200)) -gt "$NOFILE" ]; then
  echo "open-file limit $NOFILE (hard limit $(ulimit -Hn)) is too low for $LISTENERS listeners" >&2; exit 1
fi
export HEARTH_MAX_STREAMS=${HEARTH_MAX_STREAMS:-$((2 * LISTENERS + 100))}
export HEARTH_MAX_STREAMS_PER_ADDRESS=${HEARTH_MAX_STREAMS_PER_ADDRESS:-$HEARTH_MAX_STREAMS}
export HEARTH_MAX_CONNECTIONS=${HEARTH_MAX_CONNECTIONS:-$((NOFILE - 100))}
export HEARTH_MAX_CONNECTIONS_PER_ADDRESS=${HEARTH_MAX_CONNECTIONS_PER_ADDRESS:-$((2 * LISTENERS + SOAK_WRITER_CONNS + 200))}
build_hearth
if ! "$HEARTH_BIN" users --help >/dev/null 2>&1; then
  echo "$HEARTH_BIN has no accounts; the soak needs signed-in users" >&2; exit 1
fi

{
  # machine_facts is written for the wrk scripts; its wrk line does not apply here
  THREADS=- CONNS=- DURATION=- WARMUP=- RUNS=- machine_facts | grep -v -e '^wrk' -e '^nginx'
  echo "soak settings: $SOAK_STREAMS SSE streams and $SOAK_WIRE wire listeners over $SOAK_USERS users, $SOAK_RATE writes/s for $SOAK_MINUTES min," \
       "sample every ${SOAK_SAMPLE_SECONDS}s, $SOAK_KEYS favourites per user, $SOAK_WRITER_CONNS writer connections," \
       "reconnect=$SOAK_RECONNECT, churn $SOAK_CHURN/min, storm in minute $SOAK_STORM_MINUTE, token refresh at ${SOAK_TOKEN_MAX_AGE}s, load generator nice $SOAK_NICE, fd limit $NOFILE"
  echo "hearth limits: HEARTH_MAX_STREAMS=$HEARTH_MAX_STREAMS HEARTH_MAX_STREAMS_PER_ADDRESS=$HEARTH_MAX_STREAMS_PER_ADDRESS" \
       "HEARTH_MAX_CONNECTIONS=$HEARTH_MAX_CONNECTIONS HEARTH_MAX_CONNECTIONS_PER_ADDRESS=$HEARTH_MAX_CONNECTIONS_PER_ADDRESS," \
       "synchronous=${HEARTH_SYNC:-full}"
} | tee "$RESULTS.meta" >&2
echo "results -> $RESULTS" >&2

log "Hearth: fresh data dir, reference rules + ID tokens"
start_hearth "$WORK/hearth-data"
[ "${AUTH_MODE:-0}" = 1 ] || { echo "this Hearth build has no accounts; the soak needs auth mode" >&2; exit 1; }
echo "hearth access: $ACCESS_NOTE" | tee -a "$RESULTS.meta" >&2

log "soak: $SOAK_STREAMS SSE streams, $SOAK_WIRE wire listeners, $SOAK_RATE writes/s, $SOAK_MINUTES min, a sample every ${SOAK_SAMPLE_SECONDS}s"
PERF_PID=
if [ "$SOAK_PERF" = 1 ]; then
  command -v perf >/dev/null || { echo "SOAK_PERF=1 needs perf (apt-get install linux-perf)" >&2; exit 1; }
  # CLOCK_MONOTONIC: the clock of the generator's send times; bounded like the generator
  timeout --signal=INT "$(python3 -c 'import sys; print(int(float(sys.argv[1]) * 60) + 1500)' "$SOAK_MINUTES")" \
    perf record -q -k CLOCK_MONOTONIC -o "$WORK/syncs.perf" -p "$HEARTH_PID" \
      -e syscalls:sys_enter_fsync,syscalls:sys_exit_fsync,syscalls:sys_enter_fdatasync,syscalls:sys_exit_fdatasync \
      -e syscalls:sys_enter_madvise,syscalls:sys_enter_munmap >"$WORK/perf.log" 2>&1 &
  PERF_PID=$!
  _PIDS+=("$PERF_PID")
fi
limit=$(python3 -c 'import sys; print(int(float(sys.argv[1]) * 60) + 900 + 300)' "$SOAK_MINUTES")
reconnect_flag=; [ "$SOAK_RECONNECT" = 1 ] || reconnect_flag=--no-reconnect
rc=0
timeout --signal=TERM --kill-after=30 "$limit" nice -n "$SOAK_NICE" python3 "$BENCH_DIR/soak.py" run \
  --url "$HEARTH_URL" --pid "$HEARTH_PID" --data-dir "$WORK/hearth-data" --out "$RESULTS" \
  --streams "$SOAK_STREAMS" --wire "$SOAK_WIRE" --users "$SOAK_USERS" --rate "$SOAK_RATE" --minutes "$SOAK_MINUTES" \
  --sample-seconds "$SOAK_SAMPLE_SECONDS" --keys "$SOAK_KEYS" --writer-conns "$SOAK_WRITER_CONNS" \
  --settle "$SOAK_SETTLE" --token-max-age "$SOAK_TOKEN_MAX_AGE" --churn-per-min "$SOAK_CHURN" --storm-minute "$SOAK_STORM_MINUTE" $reconnect_flag || rc=$?
[ "$rc" = 0 ] || echo "soak.py exited with status $rc; reporting what was sampled" >&2
if [ -n "$PERF_PID" ]; then
  kill -INT "$PERF_PID" 2>/dev/null || true; wait "$PERF_PID" 2>/dev/null || true
  perf script -i "$WORK/syncs.perf" -F tid,time,event,trace 2>/dev/null \
    | python3 "$BENCH_DIR/soak.py" syncs "$RESULTS" >>"$RESULTS.syncs" || echo "perf: no syncs read ($(tail -1 "$WORK/perf.log"))" >&2
  cat "$RESULTS.syncs" >>"$RESULTS" 2>/dev/null || true
  rm -f "$RESULTS.syncs"
fi
kill -0 "$HEARTH_PID" 2>/dev/null || echo "hearth (pid $HEARTH_PID) is no longer running!" | tee -a "$RESULTS.meta" >&2
stop_hearth

# what Hearth logged above info level, for the record
if grep -E '(warning|error|critical)' "$WORK/hearth.log" >/dev/null 2>&1; then
  echo "hearth log, warnings and errors: $(grep -c -E '(warning|error|critical)' "$WORK/hearth.log") lines; first 20:" >&2
  grep -E '(warning|error|critical)' "$WORK/hearth.log" | head -20 >&2
fi

[ -s "$RESULTS" ] || { echo "no results" >&2; exit 1; }
{
  echo
  echo "### Soak: $SOAK_STREAMS SSE streams + $SOAK_WIRE wire listeners, $SOAK_RATE writes/s, $SOAK_MINUTES min — $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  sed 's/^/    /' "$RESULTS.meta"
  echo
  python3 "$BENCH_DIR/soak.py" report "$RESULTS"
} | tee "${RESULTS%.jsonl}.md"
echo >&2
echo "raw result lines: $RESULTS; this table: ${RESULTS%.jsonl}.md" >&2
exit "$rc"
