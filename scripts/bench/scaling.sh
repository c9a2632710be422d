#!/usr/bin/env bash
# Scaling curves, Hearth alone: how read and write throughput and
# stream latency change with the size of the data and with the number of open streams,
# so users can see where one machine ends. Prints a Markdown section (stdout and
# $RESULTS_DIR/scaling.md) to paste into docs/bench/history.md; never edits the repo.
#
#   scripts/bench/scaling.sh                 # the full curves (~15 min on a quiet 2-core machine)
#   QUICK=1 scripts/bench/scaling.sh         # smoke run: tiny sizes, seconds per cell (~3 min)
#
# 1. Data size: for each size in SIZES (favourites; 20 per user, so 1,000,000 = 50,000
#    users), a fresh data dir and a fresh server (release build, the reference rules.json,
#    every request with its user's ID token, synchronous=full; lib.sh start_hearth):
#     - accounts: READERS readers, 50 writers and the SSE user sign up anonymously
#       (POST /v1/accounts:signUp, as hearth_setup.py --auth) on the still empty server,
#       which is then stopped;
#     - seeding: scaling.py data writes a JSON file in the export format
#       (/users/<uid>/favorites/<push id>, the reference workload's favourite shape; the
#       readers' users and users that exist only as data, in key order) and `hearth import`
#       loads it into the data dir (offline, one transaction) — HTTP would take hours for
#       1M. Recorded: the time to write the file and to import it, the file's size, the
#       database's size (hearth.sqlite + WAL), the server's start time and its RSS after a
#       few spot checks (scaling.py check);
#     - streams: harness.py sse, SIZE_STREAMS (1,000) subscribers on the SSE user's
#       favourites, 1 write/s for SSE_SECONDS: send→recv p50/p99, delivered %;
#     - HTTP: wrk (harness.py wrk, the compare.sh plans and wrk/replay.lua), CONNS
#       connections, WARMUP + DURATION s per scenario: list (a reader's 20 favourites),
#       get (one favourite), update (PATCH a note), create (POST a favourite, a writer's;
#       last, as it grows the data), req/s and p99; then the RSS after the runs; then list
#       and get again on a server with the read cache off (HEARTH_READ_CACHE_BYTES=0), so
#       every read goes to SQLite.
# 2. Number of streams, at the reference data size (READERS users x 20 favourites):
#     - delivery: streams.sh HEARTH_ONLY=1 (fresh server per run, 1 write/s for
#       SSE_SECONDS, N in STREAM_NS): send→recv p50/p99, last-of-N p99, events/s,
#       delivered %, lost streams, KiB per stream, RSS with N streams;
#     - writes while N streams are open (STREAM_WRITES=1): per N (and N = 0, the
#       baseline), a fresh copy of one imported reference data dir and a fresh server;
#       scaling.py hold opens N streams (harness.py's subscriber, the SSE user's
#       favourites) and keeps them open and idle while wrk runs create for the writers
#       (paths no stream watches: the cost of having the streams, not of feeding them).
#
# Knobs (env): SIZES (10000,100000,1000000; empty = skip part 1) STREAM_NS
#   (100,1000,5000,10000,20000; empty = skip part 2) STREAM_WRITES (1; 0 = only delivery)
#   DURATION (10) WARMUP (3) CONNS (64) THREADS (2) RUNS (1 per cell; median over runs)
#   READERS (1000: reader accounts per size, capped at the size's users; also the
#   reference data of part 2) SIZE_STREAMS (1000) SSE_SECONDS (10) SSE_PROCS (1
#   subscriber process) SSE_ATTEMPTS (3) QUICK=1 (SIZES=2000,10000 STREAM_NS=100,500
#   READERS=50 SIZE_STREAMS=100 SSE_SECONDS=3 DURATION=2 WARMUP=1, at most 5 s waiting for a
#   quiet machine, no retries) SKIP_BUILD=1 HEARTH_BIN HEARTH_REV HEARTH_SYNC (full) RESULTS_DIR
#   (/tmp/hearth-bench-scaling-<date>) KEEP_WORK=1 BENCH_QUIET_PCT (10) BENCH_QUIET_WAIT
#   (300) BENCH_RETRIES (3).
# Limits: an N needs N + STREAMS_FD_MARGIN (300) open files (lib.sh fanout_limits, which
# streams.sh applies); when the hard limit is lower it is raised (needs CAP_SYS_RESOURCE),
# else that N is measured at the limit minus the margin
# instead (e.g. 19,700 for 20,000 under a hard limit of 20,000; said in the meta).
# Disk: the 1M size needs a few GB in $TMPDIR at its peak (a 208 MiB JSON file, a database
# of 0.7 GiB, and the import's WAL until it is checkpointed); each size's data dir is removed
# once measured.
# Caveat: ID tokens live 1 hour; each part signs its users up right before it uses them.
# Everything on 127.0.0.1 and free ports; every process stopped and the temp dir removed at
# exit (lib.sh). Results: $RESULTS_DIR (scaling.jsonl, streams.jsonl, scaling.meta, scaling.md).
set -euo pipefail
T_START=$(date +%s)

# the exact command, for the history section: the knobs that were set, then the script
KNOBS="QUICK SIZES STREAM_NS STREAM_WRITES DURATION WARMUP CONNS THREADS RUNS READERS SIZE_STREAMS SSE_SECONDS SSE_PROCS
  SSE_ATTEMPTS SKIP_BUILD HEARTH_BIN HEARTH_REV HEARTH_SYNC BENCH_QUIET_PCT BENCH_QUIET_WAIT BENCH_RETRIES"
CMDLINE=
for k in $KNOBS; do
  if [ -n "${!k+x}" ]; then
    v=${!k}
    if [[ $v =~ ^[A-Za-z0-9_./,:=+@%-]*$ ]]; then CMDLINE+="$k=$v "; else CMDLINE+="$k='${v//\'/\'\\\'\'}' "; fi
  fi
done
CMDLINE+="scripts/bench/scaling.sh"

source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
if [ "${QUICK:-0}" = 1 ]; then
  SIZES=${SIZES-2000,10000}; STREAM_NS=${STREAM_NS-100,500}; READERS=${READERS:-50}
  SIZE_STREAMS=${SIZE_STREAMS:-100}; SSE_SECONDS=${SSE_SECONDS:-3}; SSE_ATTEMPTS=${SSE_ATTEMPTS:-1}
fi
SIZES=${SIZES-10000,100000,1000000}; STREAM_NS=${STREAM_NS-100,1000,5000,10000,20000}
STREAM_WRITES=${STREAM_WRITES:-1}; READERS=${READERS:-1000}; WRITERS=50
SIZE_STREAMS=${SIZE_STREAMS:-1000}; SSE_SECONDS=${SSE_SECONDS:-10}; SSE_PROCS=${SSE_PROCS:-1}
SSE_ATTEMPTS=${SSE_ATTEMPTS:-3}
RUNS=${RUNS:-1}                      # one run per cell (bench_init would default to 3)
STAMP=$(date -u +%Y%m%d-%H%M%S)
RUN_DATE=$(date -u '+%Y-%m-%d %H:%M UTC')
OUT=${RESULTS_DIR:-${TMPDIR:-/tmp}/hearth-bench-scaling-$STAMP}
mkdir -p "$OUT"
RESULTS=$OUT/scaling.jsonl

# open files: the largest N (+ the margin fanout_limits asks of streams.sh); raise the hard
# limit if it is lower
max_n=$SIZE_STREAMS; for n in ${STREAM_NS//,/ }; do [ "$n" -gt "$max_n" ] && max_n=$n; done
fd_note=
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt $((max_n + 1000)) ]; then
  ulimit -Hn $((max_n + 1000)) 2>/dev/null || fd_note="hard open-file limit $(ulimit -Hn) (could not raise it)"
fi
bench_init scaling                    # DURATION WARMUP CONNS THREADS, $WORK, cleanup trap, tools
NOFILE=$(ulimit -n)
ns=()                                 # an N above the limit is measured at the limit instead
for n in ${STREAM_NS//,/ }; do
  if [ $((n + STREAMS_FD_MARGIN)) -gt "$NOFILE" ]; then
    fd_note+="${fd_note:+; }N=$n measured as N=$((NOFILE - STREAMS_FD_MARGIN)) (open-file limit $NOFILE)"
    n=$((NOFILE - STREAMS_FD_MARGIN))
  fi
  [[ " ${ns[*]} " == *" $n "* ]] || ns+=("$n")
done
STREAM_NS=$(IFS=,; echo "${ns[*]}")
max_n=$SIZE_STREAMS; for n in "${ns[@]}"; do [ "$n" -gt "$max_n" ] && max_n=$n; done
export HEARTH_MAX_STREAMS=${HEARTH_MAX_STREAMS:-$((max_n + 100))}
export HEARTH_MAX_STREAMS_PER_ADDRESS=${HEARTH_MAX_STREAMS_PER_ADDRESS:-$HEARTH_MAX_STREAMS}
export HEARTH_MAX_CONNECTIONS=${HEARTH_MAX_CONNECTIONS:-$((NOFILE - 100))}
SCALE=(python3 "$BENCH_DIR/scaling.py")
echo "results -> $OUT" >&2

build_hearth
export HEARTH_BIN SKIP_BUILD=1               # streams.sh uses this binary, no second build

{
  machine_facts
  echo "data-size curve: favourites=$SIZES (20 per user), seeded with hearth import; accounts: $READERS readers (capped at" \
       "the users of a size), $WRITERS writers, the SSE user; streams: $SIZE_STREAMS subscribers, 1 write/s for ${SSE_SECONDS}s"
  echo "streams curve: N=${STREAM_NS:-none}, 1 write/s for ${SSE_SECONDS}s, $RUNS run(s) per cell, fresh server per run," \
       "$SSE_PROCS subscriber process(es); writes with N idle streams: $([ "$STREAM_WRITES" = 1 ] && echo "create, wrk -c$CONNS" || echo skipped)"
  echo "streams data: $READERS users x 20 favourites (delivery: seeded over HTTP by streams.sh; writes: hearth import)"
  echo "hearth limits: HEARTH_MAX_STREAMS=$HEARTH_MAX_STREAMS HEARTH_MAX_STREAMS_PER_ADDRESS=$HEARTH_MAX_STREAMS_PER_ADDRESS" \
       "HEARTH_MAX_CONNECTIONS=$HEARTH_MAX_CONNECTIONS, fd limit $NOFILE${fd_note:+ — $fd_note}"
} | tee "$OUT/scaling.meta" >&2

now() { echo "$EPOCHREALTIME"; }
since() { python3 -c 'import sys; print("%.2f" % (float(sys.argv[2]) - float(sys.argv[1])))' "$1" "$(now)"; }
db_bytes() { du -cb "$1"/hearth.sqlite* 2>/dev/null | awk 'END {print $1}'; }

# seed DIR FAVOURITES READERS PREFIX: accounts (signed up on a brief server), then the
# import file and `hearth import` into DIR. Writes PREFIX-fixtures.json and sets
# SEED_GEN_S SEED_IMPORT_S SEED_FILE_BYTES SEED_USERS.
seed() {
  local dir=$1 favs=$2 readers=$3 prefix=$4 t0
  log "seeding $favs favourites: $readers readers + $WRITERS writers + the SSE user sign up"
  start_hearth "$dir"
  [ "${AUTH_MODE:-0}" = 1 ] || { echo "this Hearth build has no accounts; scaling.sh needs auth mode" >&2; exit 1; }
  "${SCALE[@]}" accounts --base "$HEARTH_URL" --readers "$readers" --writers "$WRITERS" --out "$prefix-accounts.json" >&2
  stop_hearth
  t0=$(now)
  "${SCALE[@]}" data --accounts "$prefix-accounts.json" --favourites "$favs" --out "$prefix-data.json" \
    --fixtures "$prefix-fixtures.json" >&2
  SEED_GEN_S=$(since "$t0")
  SEED_FILE_BYTES=$(stat -c %s "$prefix-data.json")
  SEED_USERS=$(( (favs + 19) / 20 ))
  log "hearth import ($((SEED_FILE_BYTES / 1048576)) MiB)"
  t0=$(now)
  "$HEARTH_BIN" import "$prefix-data.json" --data-dir "$dir" >&2
  SEED_IMPORT_S=$(since "$t0")
  echo "imported in ${SEED_IMPORT_S}s; database $(( $(db_bytes "$dir") / 1048576 )) MiB" >&2
  rm -f "$prefix-data.json" "$prefix-accounts.json"
}

# ---- 1. data size
size_cell() {
  local size=$1 dir=$WORK/size-$1 fx=$WORK/size-$1-fixtures.json readers t0 start_s rss_seeded rss_after db
  readers=$READERS; [ "$readers" -gt $((size / 20)) ] && readers=$((size / 20))
  seed "$dir" "$size" "$readers" "$WORK/size-$size"
  db=$(db_bytes "$dir")
  t0=$(now)
  start_hearth "$dir"
  start_s=$(since "$t0")
  retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth.json" auth
  "${SCALE[@]}" check --base "$HEARTH_URL" --fixtures "$fx" >&2
  sleep 1
  rss_seeded=$("${HARNESS[@]}" rss "$HEARTH_PID")
  log "size $size: streams, $SIZE_STREAMS subscribers, 1 write/s for ${SSE_SECONDS}s"
  rm -f "$WORK/sse.jsonl"
  "${HARNESS[@]}" sse --target "$WORK/hearth.json" --fixtures "$fx" --subscribers "$SIZE_STREAMS" --runs "$RUNS" \
    --retries "${BENCH_RETRIES:-2}" --rate 1 --duration "$SSE_SECONDS" --procs "$SSE_PROCS" --server-pid "$HEARTH_PID" \
    --out "$WORK/sse.jsonl" >&2 || echo "SSE run failed (size $size); continuing" >&2
  if [ -s "$WORK/sse.jsonl" ]; then
    python3 -c 'import json,sys
for line in open(sys.argv[1]):
    r = json.loads(line); r["size"] = int(sys.argv[2]); print(json.dumps(r, sort_keys=True))' \
      "$WORK/sse.jsonl" "$size" >>"$RESULTS"
  fi
  for s in list get update create; do
    log "size $size: $s, wrk -c$CONNS, $RUNS x ${DURATION}s"
    run_wrk "$WORK/hearth.json" "$fx" "$s" "$HEARTH_PID" "size-$size"
  done
  rss_after=$("${HARNESS[@]}" rss "$HEARTH_PID")
  stop_hearth
  # the same reads with the read cache off: every read goes to SQLite, so these show how
  # the storage itself scales (with the cache on, the readers' lists are cache hits)
  HEARTH_READ_CACHE_BYTES=0 start_hearth "$dir"
  retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth.json" auth
  for s in list get; do
    log "size $size: $s with the read cache off, wrk -c$CONNS, $RUNS x ${DURATION}s"
    run_wrk "$WORK/hearth.json" "$fx" "$s" "$HEARTH_PID" "size-$size-nocache"
  done
  stop_hearth
  python3 -c 'import json,sys; k=["size","users","readers","accounts","gen_s","import_s","file_bytes","db_bytes","start_s","rss_seeded_kib","rss_after_kib"]
v=[float(x) if "." in x else int(x) for x in sys.argv[1:]]
print(json.dumps(dict(zip(k, v), kind="seed", target="hearth", date=__import__("time").strftime("%Y-%m-%d %H:%M:%S")), sort_keys=True))' \
    "$size" "$SEED_USERS" "$readers" "$((readers + WRITERS + 1))" "$SEED_GEN_S" "$SEED_IMPORT_S" "$SEED_FILE_BYTES" "$db" \
    "$start_s" "$rss_seeded" "$rss_after" | tee -a "$RESULTS" >&2
  rm -rf "$dir"
}
for size in ${SIZES//,/ }; do
  log "data size: $size favourites"
  size_cell "$size"
done

# ---- 2. number of streams
failed=
if [ -n "$STREAM_NS" ]; then
  log "streams: delivery for N=$STREAM_NS (streams.sh HEARTH_ONLY=1, $READERS readers x 20)"
  if ! env RESULTS="$OUT/streams.jsonl" HEARTH_ONLY=1 READERS="$READERS" RUNS="$RUNS" SSE_NS="$STREAM_NS" SSE_RATES=1 \
      SSE_SECONDS="$SSE_SECONDS" SSE_PROCS="$SSE_PROCS" SSE_ATTEMPTS="$SSE_ATTEMPTS" KEEP_WORK=0 \
      "$BENCH_DIR/streams.sh" >&2; then
    echo "streams.sh FAILED; continuing" >&2; failed+=" streams"
  fi
  if [ "$STREAM_WRITES" = 1 ]; then
    log "streams: create with N idle streams open, N=0,$STREAM_NS"
    seed "$WORK/ref-seed" $((READERS * 20)) "$READERS" "$WORK/ref"
    for n in 0 ${STREAM_NS//,/ }; do
      rm -rf "$WORK/ref-run"; cp -a "$WORK/ref-seed" "$WORK/ref-run"
      start_hearth "$WORK/ref-run"
      retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth.json" auth
      log "create with $n idle streams: wrk -c$CONNS, $RUNS x ${DURATION}s"
      "${SCALE[@]}" hold --target "$WORK/hearth.json" --fixtures "$WORK/ref-fixtures.json" --streams "$n" \
        --server-pid "$HEARTH_PID" --conns "$CONNS" --threads "$THREADS" --duration "$DURATION" --warmup "$WARMUP" \
        --runs "$RUNS" --retries "${BENCH_RETRIES:-3}" --procs "$SSE_PROCS" --workdir "$WORK" --out "$RESULTS" >&2 \
        || { echo "hold N=$n FAILED; continuing" >&2; failed+=" writes-N=$n"; }
      stop_hearth
      rm -rf "$WORK/ref-run"
    done
  fi
fi
if grep -E '(warning|error|critical)' "$WORK/hearth.log" >/dev/null 2>&1; then
  echo "hearth log, warnings and errors (first 20):" >&2
  grep -E '(warning|error|critical)' "$WORK/hearth.log" | head -20 >&2
fi

echo "took $(( $(date +%s) - T_START )) s${failed:+; FAILED:$failed}" | tee -a "$OUT/scaling.meta" >&2
echo >&2
report_args=(--dir "$OUT" --date "$RUN_DATE" --command "$CMDLINE")
[ "${QUICK:-0}" = 1 ] && report_args+=(--quick)
"${SCALE[@]}" report "${report_args[@]}"
echo "results: $OUT (scaling.md, scaling.jsonl, streams.jsonl, scaling.meta)" >&2
[ -z "$failed" ]
