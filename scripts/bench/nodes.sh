#!/usr/bin/env bash
# Several Hearth nodes on one PostgreSQL, beside one Hearth on SQLite, in one
# run: acknowledged writes/s (REST PUT, closed loop, NODES_CONNS connections spread over
# the nodes) and fan-out latency (SSE subscribers spread over the nodes, writes at
# FAN_RATE/s on the first node; "local" = subscribers on the writer's node, "remote" =
# on the others). Configurations, alternating order per run: sqlite (1 node), postgres
# with 1, 2 and 3 nodes. Everything on this machine (2 cores): the nodes, PostgreSQL and
# the load generator share them, so more nodes cannot add CPU here (docs/scaling.md).
#
# PostgreSQL: a throwaway cluster (initdb into the temp dir, 127.0.0.1, a free port,
# fsync on, synchronous_commit on: an acknowledged write is on disk, as with SQLite's
# synchronous=full), run as the `postgres` user when this script runs as root; Hearth
# connects as a role without superuser rights. Each configuration gets a fresh database.
#
# Knobs (env): RUNS (3) SECONDS_PER (10) NODES_CONNS (64) FAN_SUBS (300) FAN_RATE (10)
#   CONFIGS ("sqlite 1,postgres 1,postgres 2,postgres 3": engine and node count, in this
#   order on odd runs and the reverse on even ones) MODES ("writes fanout")
#   SKIP_BUILD=1 HEARTH_BIN PG_BINDIR (highest /usr/lib/postgresql/*/bin) KEEP_WORK=1
# Results: $RESULTS (.jsonl) and a table on stdout; a writes row also gives the writes per
# committed batch over its nodes (from /metrics), the CPU of the nodes, of PostgreSQL and of
# the load generator over the run (% of one core; /proc/<pid>/stat, the generator's own
# process time), the servers' CPU per acknowledged write and the load average before it; a
# fan-out row the same CPUs and load, in a table of its own.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_init nodes
SECONDS_PER=${SECONDS_PER:-10}; NODES_CONNS=${NODES_CONNS:-64}; FAN_SUBS=${FAN_SUBS:-300}; FAN_RATE=${FAN_RATE:-10}
CONFIGS=${CONFIGS:-sqlite 1,postgres 1,postgres 2,postgres 3}; MODES=${MODES:-writes fanout}
PG_BINDIR=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PG_BINDIR/initdb" ] || { echo "no PostgreSQL (initdb) in $PG_BINDIR; apt-get install postgresql" >&2; exit 1; }
build_hearth
ulimit -n "$(ulimit -Hn)"

start_pg_cluster 300
psql_admin -c "CREATE ROLE hearth LOGIN PASSWORD 'hearth'"

{
  machine_facts | grep -v '^wrk'
  echo "postgresql: $("$PG_BINDIR/postgres" --version), fsync on, synchronous_commit on"
  echo "settings: $RUNS runs, ${SECONDS_PER}s each; writes: $NODES_CONNS connections; fan-out: $FAN_SUBS subscribers, $FAN_RATE writes/s"
} | tee "$RESULTS.meta" >&2

echo '{"rules": {".read": true, ".write": true}}' > "$WORK/rules.json"
NODE_PIDS=()
start_nodes() {  # start_nodes STORE COUNT -> PORTS
  local store=$1 count=$2 ports=() i port
  NODE_PIDS=()
  for i in $(seq 1 "$count"); do
    port=$(free_port)
    mkdir -p "$WORK/node$i"
    HEARTH_ACCESS_LOG=false HEARTH_MAX_STREAMS_PER_ADDRESS=100000 HEARTH_MAX_STREAMS=100000 \
      "$HEARTH_BIN" serve --port "$port" --data-dir "$WORK/node$i" --rules "$WORK/rules.json" --store "$store" \
      --log-level warning >"$WORK/node$i.log" 2>&1 &
    NODE_PIDS+=($!)
    ports+=("$port")
  done
  for port in "${ports[@]}"; do
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  done
  PORTS=$(IFS=,; echo "${ports[*]}")
}
stop_nodes() { for pid in "${NODE_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done; NODE_PIDS=(); }

IFS=, read -r -a configs <<<"$CONFIGS"
for run in $(seq 1 "$RUNS"); do
  order=("${configs[@]}")
  if [ $((run % 2)) = 0 ]; then
    order=()
    for ((i = ${#configs[@]} - 1; i >= 0; i--)); do order+=("${configs[$i]}"); done
  fi
  for config in "${order[@]}"; do
    read -r engine count <<<"$config"
    if [ "$engine" = sqlite ]; then
      rm -rf "$WORK/node1"; store="sqlite:$WORK/node1"
    else
      db="bench_${run}_${count}"
      psql_admin -c "CREATE DATABASE $db OWNER hearth"
      store="postgres://hearth:hearth@127.0.0.1:$PGPORT/$db"
    fi
    log "run $run: $engine, $count node(s)"
    start_nodes "$store" "$count"
    for mode in $MODES; do
      load_before=$(load_1min)
      pgp=""; if [ "$engine" = postgres ]; then pgp=$(pg_pids); fi
      node_ticks0=$(ticks_of "${NODE_PIDS[@]}"); pg_ticks0=$(ticks_of $pgp)
      if [ "$mode" = writes ]; then
        line=$(python3 "$BENCH_DIR/nodes.py" writes --ports "$PORTS" --connections "$NODES_CONNS" --seconds "$SECONDS_PER")
      else
        line=$(python3 "$BENCH_DIR/nodes.py" fanout --ports "$PORTS" --subscribers "$FAN_SUBS" --rate "$FAN_RATE" --seconds "$SECONDS_PER")
      fi
      node_ticks=$(( $(ticks_of "${NODE_PIDS[@]}") - node_ticks0 )); pg_ticks=$(( $(ticks_of $pgp) - pg_ticks0 ))
      line=$(with_server_cpu "$line" "$load_before" "$node_ticks" "$pg_ticks")
      if [ "$mode" = writes ]; then
        # Writes per committed batch, over every node (hearth_write_batch_size's sum / count).
        per_batch=$(for port in ${PORTS//,/ }; do curl -sf "http://127.0.0.1:$port/metrics"; done |
          awk '/^hearth_write_batch_size_sum/ {s += $2} /^hearth_write_batch_size_count/ {c += $2} END {print (c ? s / c : "null")}')
        line=$(echo "$line" | python3 -c "import json,sys; d=json.load(sys.stdin); d.update(writes_per_batch=$per_batch); print(json.dumps(d))")
      fi
      echo "$line" | python3 -c "import json,sys; d=json.load(sys.stdin); d.update(engine='$engine', run=$run); print(json.dumps(d))" | tee -a "$RESULTS" >&2
    done
    stop_nodes
  done
done

python3 - "$RESULTS" <<'EOF2'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def med(values):
    values = [v for v in values if v is not None]
    return round(statistics.median(values), 1) if values else None
base = med([r["writes_per_s"] for r in rows if r["mode"] == "writes" and r["engine"] == "sqlite"])
print("| store | nodes | writes/s (median) | vs SQLite | writes per batch | CPU % nodes / PostgreSQL / client | CPU µs per write (nodes + PostgreSQL) | load before | write p50 / p99 ms | fan-out local p50 / p99 ms | fan-out remote p50 / p99 ms | delivered % |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for engine, nodes in (("sqlite", 1), ("postgres", 1), ("postgres", 2), ("postgres", 3)):
    w = [r for r in rows if r["mode"] == "writes" and r["engine"] == engine and r["nodes"] == nodes]
    f = [r for r in rows if r["mode"] == "fanout" and r["engine"] == engine and r["nodes"] == nodes]
    if not w: continue
    wps = med([r["writes_per_s"] for r in w])
    fmt = lambda k: med([r.get(k) for r in f])
    remote = "–" if nodes == 1 else f"{fmt('remote_p50_ms')} / {fmt('remote_p99_ms')}"
    print(f"| {engine} | {nodes} | {wps:.0f} ({', '.join(str(round(r['writes_per_s'])) for r in w)}) | {f'{wps / base:.2f}×' if base else '–'} | {med([r.get('writes_per_batch') for r in w])} | "
          f"{med([r.get('nodes_cpu_pct') for r in w])} / {med([r.get('postgres_cpu_pct') for r in w])} / {med([r.get('client_cpu_pct') for r in w])} | "
          f"{med([r.get('servers_cpu_us_per_write') for r in w])} | {med([r.get('load_before') for r in w])} | "
          f"{med([r['p50_ms'] for r in w])} / {med([r['p99_ms'] for r in w])} | {fmt('local_p50_ms')} / {fmt('local_p99_ms')} | {remote} | {fmt('delivered_pct')} |")
print()
print("| store | nodes | fan-out local p50 / p99 ms | fan-out remote p50 / p99 ms | delivered % | CPU % nodes / PostgreSQL / client | load before |")
print("|---|---|---|---|---|---|---|")
for engine, nodes in (("sqlite", 1), ("postgres", 1), ("postgres", 2), ("postgres", 3)):
    f = [r for r in rows if r["mode"] == "fanout" and r["engine"] == engine and r["nodes"] == nodes]
    if not f: continue
    fmt = lambda k: med([r.get(k) for r in f])
    remote = "–" if nodes == 1 else f"{fmt('remote_p50_ms')} / {fmt('remote_p99_ms')}"
    print(f"| {engine} | {nodes} | {fmt('local_p50_ms')} / {fmt('local_p99_ms')} | {remote} | {fmt('delivered_pct')} | "
          f"{fmt('nodes_cpu_pct')} / {fmt('postgres_cpu_pct')} / {fmt('client_cpu_pct')} | {fmt('load_before')} |")
EOF2
