#!/usr/bin/env bash
# The PostgreSQL client choice, measured: libpq (HearthPostgres's client, C,
# blocking, one thread per connection) against postgres-nio 1.33.2 (the maintained Swift
# client, async on SwiftNIO), both with prepared statements, on one throwaway PostgreSQL
# cluster (as scripts/bench/nodes.sh starts it). Workloads: `select` (one round trip) with
# 1 and 4 connections, and `batch` (HearthPostgres's writer: BEGIN, one counter-row UPDATE,
# 8 INSERTs, COMMIT) on 1 connection. Alternating client order per run.
#
# The client package (scripts/bench/pgclient) is built here in release mode, not by the
# main package or CI; CLEAN_BUILD=1 times a build from scratch (postgres-nio and SwiftNIO).
# Knobs (env): RUNS (3) SECONDS_PER (5) PG_BINDIR CLEAN_BUILD=1
# Results: $RESULTS (.jsonl) and a table on stdout.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_init pgclient
SECONDS_PER=${SECONDS_PER:-5}
PG_BINDIR=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PG_BINDIR/initdb" ] || { echo "no PostgreSQL (initdb) in $PG_BINDIR; apt-get install postgresql" >&2; exit 1; }
PACKAGE="$REPO/scripts/bench/pgclient"
if [ "${CLEAN_BUILD:-0}" = 1 ]; then rm -rf "$PACKAGE/.build"; fi
build_start=$(date +%s)
(cd "$PACKAGE" && swift build -c release 2>&1 | tail -1) >&2
log "pgclient-bench built in $(( $(date +%s) - build_start )) s (CLEAN_BUILD=${CLEAN_BUILD:-0})"
BIN="$PACKAGE/.build/release/pgclient-bench"
HEARTH_BIN=$BIN; HEARTH_REV="scripts/bench/pgclient (no Hearth binary in this benchmark)"; THREADS=-; CONNS=-; DURATION=$SECONDS_PER; WARMUP=0

start_pg_cluster 50
psql_admin -c "CREATE ROLE hearth LOGIN PASSWORD 'hearth'" -c "CREATE DATABASE bench OWNER hearth"
DB=bench psql_admin -c "CREATE TABLE bench_meta (id int PRIMARY KEY, n bigint NOT NULL); INSERT INTO bench_meta VALUES (1, 0);
  CREATE TABLE bench_rows (k text COLLATE \"C\" PRIMARY KEY, v bigint NOT NULL); ALTER TABLE bench_meta OWNER TO hearth; ALTER TABLE bench_rows OWNER TO hearth"

{
  machine_facts | grep -v '^wrk'
  echo "postgresql: $("$PG_BINDIR/postgres" --version), fsync on, synchronous_commit on"
  echo "settings: $RUNS runs, ${SECONDS_PER}s each"
} | tee "$RESULTS.meta" >&2

configs=("select 1" "select 4" "batch 1")
for run in $(seq 1 "$RUNS"); do
  clients=(libpq nio)
  if [ $((run % 2)) = 0 ]; then clients=(nio libpq); fi
  for config in "${configs[@]}"; do
    read -r workload connections <<<"$config"
    for client in "${clients[@]}"; do
      DB=bench psql_admin -c "TRUNCATE bench_rows"
      # the load before, and the CPU of the client and of PostgreSQL over the run: the client
      # from this shell's `times` (its waited-for children), PostgreSQL from the postmaster's
      # own and reaped children's time plus its live children's (pg_cluster_ticks)
      load=$(load_1min); pg0=$(pg_cluster_ticks); times >"$WORK/times.start"; t0=$(date +%s.%N)
      "$BIN" "$client" "$workload" "$connections" "$SECONDS_PER" 127.0.0.1 "$PGPORT" bench >"$WORK/run.json"
      times >"$WORK/times.end"; t1=$(date +%s.%N); pg1=$(pg_cluster_ticks)
      python3 - "$WORK/run.json" "$run" "$load" "$t0" "$t1" "$(children_cpu "$WORK/times.start")" \
        "$(children_cpu "$WORK/times.end")" "$pg0" "$pg1" "$(getconf CLK_TCK)" <<'PY' | tee -a "$RESULTS" >&2
import json, sys
d = json.load(open(sys.argv[1]))
run, load, t0, t1, c0, c1, p0, p1, hz = sys.argv[2:]
secs = float(t1) - float(t0)
d.update(run=int(run), load_before=float(load), client_cpu_pct=round(100 * (float(c1) - float(c0)) / secs, 1),
         postgres_cpu_pct=round(100 * (int(p1) - int(p0)) / int(hz) / secs, 1))
print(json.dumps(d))
PY
    done
  done
done

python3 - "$RESULTS" <<'EOF2'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| workload | connections | libpq ops/s (median; runs) | postgres-nio ops/s (median; runs) | libpq / nio | load before (runs) | CPU % of a core, client / PostgreSQL: libpq; nio (medians) |")
print("|---|---|---|---|---|---|---|")
for workload, connections in (("select", 1), ("select", 4), ("batch", 1)):
    cell, cpu, loads = {}, {}, []
    for client in ("libpq", "nio"):
        runs = [r for r in rows if r["client"] == client and r["workload"] == workload and r["connections"] == connections]
        values = [r["ops_per_s"] for r in runs]
        cell[client] = (statistics.median(values), values)
        cpu[client] = "%.0f / %.0f" % (statistics.median(r["client_cpu_pct"] for r in runs),
                                       statistics.median(r["postgres_cpu_pct"] for r in runs))
        loads += [r["load_before"] for r in runs]
    fmt = lambda c: f"{cell[c][0]:,.0f} ({', '.join(f'{v:,.0f}' for v in cell[c][1])})"
    print(f"| {workload} | {connections} | {fmt('libpq')} | {fmt('nio')} | {cell['libpq'][0] / cell['nio'][0]:.2f}× "
          f"| {min(loads):.2f}–{max(loads):.2f} | {cpu['libpq']}; {cpu['nio']} |")
EOF2
