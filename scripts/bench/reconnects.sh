#!/usr/bin/env bash
# Reconnect bursts (not in CI): RECONNECT_STREAMS SSE streams all closed and reopened at
# once with Last-Event-ID, RECONNECT_ROUNDS times, and the server's CPU per reconnect (see
# scripts/bench/reconnects.py for what a round does and measures).
#   - Hearth: release binary (HEARTH_BIN, else `swift build -c release`), fresh data dir,
#     the repository's reference rules.json, synchronous=full (HEARTH_SYNC), 127.0.0.1 on
#     a free port (lib.sh start_hearth), stream and connection caps that fit the streams.
# Knobs (env): RECONNECT_STREAMS (1000) RECONNECT_USERS (100) RECONNECT_WRITES (500 live writes
#   per round) RECONNECT_ROUNDS (5) HEARTH_BIN HEARTH_REV (the binary's commit when it was built
#   elsewhere) SKIP_BUILD=1 RESULTS (/tmp/hearth-bench-reconnects-<date>.jsonl)
# Everything on 127.0.0.1; every process stopped and the temp dir removed at exit; nothing
# is written into the repo.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"

RECONNECT_STREAMS=${RECONNECT_STREAMS:-1000}; RECONNECT_USERS=${RECONNECT_USERS:-100}
RECONNECT_WRITES=${RECONNECT_WRITES:-500}; RECONNECT_ROUNDS=${RECONNECT_ROUNDS:-5}
bench_init_streams reconnects
if [ $((2 * RECONNECT_STREAMS + 200)) -gt "$NOFILE" ]; then
  echo "open-file limit $NOFILE is too low for $RECONNECT_STREAMS streams reconnecting" >&2; exit 1
fi
# room for every stream twice: a closed stream's connection may still be counted when its
# next one arrives
export HEARTH_MAX_STREAMS=$((2 * RECONNECT_STREAMS + 100))
export HEARTH_MAX_STREAMS_PER_ADDRESS=$HEARTH_MAX_STREAMS
export HEARTH_MAX_CONNECTIONS=$((NOFILE - 100))
export HEARTH_MAX_CONNECTIONS_PER_ADDRESS=$((2 * RECONNECT_STREAMS + 200))
build_hearth
{
  THREADS=- CONNS=- DURATION=- WARMUP=- RUNS=- machine_facts | grep -v -e '^wrk' -e '^nginx'
  echo "reconnect settings: $RECONNECT_STREAMS SSE streams over $RECONNECT_USERS users, $RECONNECT_WRITES live writes a round, $RECONNECT_ROUNDS rounds"
} | tee "$RESULTS.meta" >&2
start_hearth "$WORK/hearth-data"
[ "${AUTH_MODE:-0}" = 1 ] || { echo "this Hearth build has no accounts; the bench needs auth mode" >&2; exit 1; }
echo "hearth access: $ACCESS_NOTE" | tee -a "$RESULTS.meta" >&2
timeout --signal=TERM --kill-after=30 1800 python3 "$BENCH_DIR/reconnects.py" run --url "$HEARTH_URL" --pid "$HEARTH_PID" \
  --out "$RESULTS" --streams "$RECONNECT_STREAMS" --users "$RECONNECT_USERS" --writes "$RECONNECT_WRITES" \
  --rounds "$RECONNECT_ROUNDS"
stop_hearth
{
  echo
  echo "### Reconnect bursts: $RECONNECT_STREAMS SSE streams at once — $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  sed 's/^/    /' "$RESULTS.meta"
  echo
  python3 "$BENCH_DIR/reconnects.py" report "$RESULTS"
} | tee "${RESULTS%.jsonl}.md"
echo "raw result lines: $RESULTS; this table: ${RESULTS%.jsonl}.md" >&2
