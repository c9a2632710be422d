#!/usr/bin/env bash
# Namespaces on PostgreSQL: acknowledged writes/s with 1, 2 and 4 busy
# namespaces on NODES Hearth nodes sharing one PostgreSQL database. Each namespace is a
# schema of its own with its own ordering lock and change numbering, so writes to
# different namespaces should not wait on each other. The load: scripts/bench/nodes.py
# writes, NODES_CONNS keep-alive connections spread round-robin over the nodes, connection
# i writing to namespace bench-<i % N> (`?ns=`); the same connection count for every N.
# Everything on this machine: the nodes, PostgreSQL and the load generator share its
# cores, so what is measured is whether namespaces contend, not a cluster's capacity.
#
# Knobs (env): RUNS (3) SECONDS_PER (10) NODES (3) NODES_CONNS (64) SKIP_BUILD=1 HEARTH_BIN
#   PG_BINDIR (highest /usr/lib/postgresql/*/bin) KEEP_WORK=1
# Results: $RESULTS (.jsonl) and a table on stdout, with the load before each run and the CPU
# of the nodes, of PostgreSQL and of the load generator over it.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_init namespaces
SECONDS_PER=${SECONDS_PER:-10}; NODES=${NODES:-3}; NODES_CONNS=${NODES_CONNS:-64}
PG_BINDIR=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PG_BINDIR/initdb" ] || { echo "no PostgreSQL (initdb) in $PG_BINDIR; apt-get install postgresql" >&2; exit 1; }
build_hearth
ulimit -n "$(ulimit -Hn)"

start_pg_cluster 400
psql_admin -c "CREATE ROLE hearth LOGIN PASSWORD 'hearth'"

{
  machine_facts | grep -v '^wrk'
  echo "load before: $(load_avgs)"
  echo "postgresql: $("$PG_BINDIR/postgres" --version), fsync on, synchronous_commit on"
  echo "settings: $RUNS runs, ${SECONDS_PER}s each, $NODES nodes, $NODES_CONNS connections"
} | tee "$RESULTS.meta" >&2

echo '{"rules": {".read": true, ".write": true}}' > "$WORK/rules.json"
cat > "$WORK/namespaces.json" <<JSON
{"namespaces": {"bench-0": {"rules": "rules.json"}, "bench-1": {"rules": "rules.json"},
                "bench-2": {"rules": "rules.json"}, "bench-3": {"rules": "rules.json"}}}
JSON
NODE_PIDS=()
start_nodes() {  # start_nodes STORE -> PORTS
  local store=$1 ports=() i port
  NODE_PIDS=()
  for i in $(seq 1 "$NODES"); do
    port=$(free_port)
    mkdir -p "$WORK/node$i"
    HEARTH_ACCESS_LOG=false "$HEARTH_BIN" serve --port "$port" --data-dir "$WORK/node$i" --rules "$WORK/rules.json" \
      --namespaces-file "$WORK/namespaces.json" --store "$store" --log-level warning >"$WORK/node$i.log" 2>&1 &
    NODE_PIDS+=($!)
    ports+=("$port")
  done
  for port in "${ports[@]}"; do
    for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  done
  PORTS=$(IFS=,; echo "${ports[*]}")
}
stop_nodes() { for pid in "${NODE_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; NODE_PIDS=(); }

for run in $(seq 1 "$RUNS"); do
  order=(1 2 4)
  if [ $((run % 2)) = 0 ]; then order=(4 2 1); fi
  for count in "${order[@]}"; do
    db="ns_${run}_${count}"
    psql_admin -c "CREATE DATABASE $db OWNER hearth"
    log "run $run: $count busy namespace(s) on $NODES nodes"
    start_nodes "postgres://hearth:hearth@127.0.0.1:$PGPORT/$db"
    load_before=$(load_1min)
    pgp=$(pg_pids); node_ticks0=$(ticks_of "${NODE_PIDS[@]}"); pg_ticks0=$(ticks_of $pgp)
    line=$(python3 "$BENCH_DIR/nodes.py" writes --ports "$PORTS" --connections "$NODES_CONNS" --seconds "$SECONDS_PER" --namespaces "$count")
    node_ticks=$(( $(ticks_of "${NODE_PIDS[@]}") - node_ticks0 )); pg_ticks=$(( $(ticks_of $pgp) - pg_ticks0 ))
    with_server_cpu "$line" "$load_before" "$node_ticks" "$pg_ticks" |
      python3 -c "import json,sys; d=json.load(sys.stdin); d.update(run=$run); print(json.dumps(d))" | tee -a "$RESULTS" >&2
    stop_nodes
  done
done

python3 - "$RESULTS" <<'EOF2'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = lambda values: round(statistics.median(values), 1)
base = med([r["writes_per_s"] for r in rows if r["namespaces"] == 1])
print("| busy namespaces | writes/s (median; runs) | vs 1 | write p50 / p99 ms | errors | CPU % nodes / PostgreSQL / client (median) | load before (runs) |")
print("|---|---|---|---|---|---|---|")
for count in (1, 2, 4):
    w = [r for r in rows if r["namespaces"] == count]
    wps = med([r["writes_per_s"] for r in w])
    print(f"| {count} | {wps:.0f} ({', '.join(str(round(r['writes_per_s'])) for r in w)}) | {wps / base:.2f}x | "
          f"{med([r['p50_ms'] for r in w])} / {med([r['p99_ms'] for r in w])} | {sum(r['errors'] for r in w)} | "
          f"{med([r['nodes_cpu_pct'] for r in w])} / {med([r['postgres_cpu_pct'] for r in w])} / {med([r['client_cpu_pct'] for r in w])} | "
          f"{', '.join(str(r['load_before']) for r in w)} |")
EOF2
