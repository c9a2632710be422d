#!/usr/bin/env bash
# Two Hearth builds writing to PostgreSQL at the same time, each through its own nodes into
# its own database on one cluster, each driven by its own closed-loop REST PUT load
# (nodes.py writes): which build gets more writes done out of the same machine.
#
# Why at the same time: on a shared 2-core machine the rate of one build swings by ±30 %
# from one 10-second run to the next (the machine's speed, not the build), so run-after-run
# pairs (nodes.sh) need many pairs to see a change of a few percent. Running both at once
# puts both under the same swings: the ratio B/A of one round moves by a few percent where
# the rates move by half. What it measures is efficiency under contention (writes per
# unit of the machine), not one build's rate alone: nodes.sh stays the measure of a
# build's writes/s. Check the method first with the same binary as A and B (the ratio
# should stay near 1.00).
#
# Each round: fresh databases for A and B, NODES nodes each (started in alternating order
# round by round), both loads started together for SECONDS_PER seconds, then everything
# stopped. fsync and synchronous_commit on, as nodes.sh.
#
# Knobs (env): A_BIN, B_BIN (required: two hearth binaries) NODES (1) ROUNDS (8)
#   CONNS (32: connections per build) SECONDS_PER (10) PG_BINDIR KEEP_WORK=1
#   SEED_ROWS (0): rows put in each database's tree before the load (leaves under /seed,
#   written straight into `nodes`), then ANALYZE, as a database in use for a while holds
#   them (a fresh one's tables are never analysed within a run)
# Results: $RESULTS (.jsonl, one line per build per round) and a table on stdout: each
# round's writes/s for A and B and their ratio, each build's CPU per write in its nodes and
# in its PostgreSQL sessions (/proc/<pid>/stat), then the median ratio, the geometric mean and in how many rounds B
# was higher.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
CONNS=${CONNS:-32}  # before bench_init, whose default is 64
bench_init nodes-ab
: "${A_BIN:?set A_BIN and B_BIN to two hearth binaries}" "${B_BIN:?set A_BIN and B_BIN to two hearth binaries}"
NODES=${NODES:-1}; ROUNDS=${ROUNDS:-8}; SECONDS_PER=${SECONDS_PER:-10}; SEED_ROWS=${SEED_ROWS:-0}
PG_BINDIR=${PG_BINDIR:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
[ -x "$PG_BINDIR/initdb" ] || { echo "no PostgreSQL (initdb) in $PG_BINDIR; apt-get install postgresql" >&2; exit 1; }
for bin in "$A_BIN" "$B_BIN"; do [ -x "$bin" ] || { echo "not an executable: $bin" >&2; exit 2; }; done

start_pg_cluster $((20 * NODES + 20))
psql_admin -c "CREATE ROLE hearth LOGIN PASSWORD 'hearth'"
echo '{"rules": {".read": true, ".write": true}}' > "$WORK/rules.json"
{
  HEARTH_BIN=$A_BIN machine_facts | grep -v '^wrk\|^hearth:'
  echo "postgresql: $("$PG_BINDIR/postgres" --version), fsync on, synchronous_commit on"
  echo "A: $A_BIN ($(sha256sum "$A_BIN" | cut -c1-12)); B: $B_BIN ($(sha256sum "$B_BIN" | cut -c1-12))"
  echo "settings: $ROUNDS rounds of ${SECONDS_PER}s, $NODES node(s) and $CONNS connections per build, $SEED_ROWS rows seeded"
} | tee "$RESULTS.meta" >&2

# start_set NAME BIN DB: NODES nodes of BIN on database DB; sets SET_PORTS and SET_PIDS.
start_set() {
  local name=$1 bin=$2 db=$3 ports=() pids=() i port
  for i in $(seq 1 "$NODES"); do
    port=$(free_port); mkdir -p "$WORK/$name$i"
    HEARTH_ACCESS_LOG=false "$bin" serve --port "$port" --data-dir "$WORK/$name$i" --rules "$WORK/rules.json" \
      --store "postgres://hearth:hearth@127.0.0.1:$PGPORT/$db" --log-level warning >"$WORK/$name$i.log" 2>&1 &
    pids+=($!); _PIDS+=($!); ports+=("$port")
  done
  for port in "${ports[@]}"; do
    for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
    curl -sf "http://127.0.0.1:$port/healthz" >/dev/null || { echo "a node of $name did not start; see $WORK/$name*.log" >&2; exit 1; }
  done
  SET_PORTS=$(IFS=,; echo "${ports[*]}"); SET_PIDS="${pids[*]}"
}
ticks_of() { local pid; for pid in "$@"; do awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0; done | awk '{s += $1} END {print s + 0}'; }

for round in $(seq 1 "$ROUNDS"); do
  for set in a b; do psql_admin -c "CREATE DATABASE ${set}_$round OWNER hearth"; done
  # Alternate which build starts first, so neither is always the one started on a quieter machine.
  if [ $((round % 2)) = 1 ]; then order="a b"; else order="b a"; fi
  for set in $order; do
    if [ "$set" = a ]; then start_set a "$A_BIN" "a_$round"; A_PORTS=$SET_PORTS; A_PIDS=$SET_PIDS
    else start_set b "$B_BIN" "b_$round"; B_PORTS=$SET_PORTS; B_PIDS=$SET_PIDS; fi
  done
  if [ "$SEED_ROWS" -gt 0 ]; then
    for set in a b; do
      # kind 2 is an integer leaf (LeafKind.int in HearthStore), as the engines store one
      DB=${set}_$round psql_admin -c "INSERT INTO nodes(path, kind, ival) SELECT 'seed/' || g, 2, g FROM generate_series(1, $SEED_ROWS) g" -c "ANALYZE"
    done
  fi
  load_before=$(load_1min)
  # Each build's PostgreSQL sessions (they stay open for the run).
  A_PG=$(psql_admin -At -c "SELECT pid FROM pg_stat_activity WHERE datname = 'a_$round'" | tr '\n' ' ')
  B_PG=$(psql_admin -At -c "SELECT pid FROM pg_stat_activity WHERE datname = 'b_$round'" | tr '\n' ' ')
  # shellcheck disable=SC2086
  a0=$(ticks_of $A_PIDS); b0=$(ticks_of $B_PIDS); ap0=$(ticks_of $A_PG); bp0=$(ticks_of $B_PG)
  python3 "$BENCH_DIR/nodes.py" writes --ports "$A_PORTS" --connections "$CONNS" --seconds "$SECONDS_PER" >"$WORK/a.json" &
  a_load=$!
  python3 "$BENCH_DIR/nodes.py" writes --ports "$B_PORTS" --connections "$CONNS" --seconds "$SECONDS_PER" >"$WORK/b.json" &
  b_load=$!
  wait "$a_load" "$b_load"
  # shellcheck disable=SC2086
  a_ticks=$(( $(ticks_of $A_PIDS) - a0 )); b_ticks=$(( $(ticks_of $B_PIDS) - b0 ))
  # shellcheck disable=SC2086
  ap_ticks=$(( $(ticks_of $A_PG) - ap0 )); bp_ticks=$(( $(ticks_of $B_PG) - bp0 ))
  python3 - "$WORK/a.json" "$WORK/b.json" "$a_ticks,$ap_ticks" "$b_ticks,$bp_ticks" "$(getconf CLK_TCK)" "$round" "$load_before" >>"$RESULTS" <<'EOF'
import json, sys
hz, rnd, load = int(sys.argv[5]), int(sys.argv[6]), float(sys.argv[7])
for build, path, ticks in (("A", sys.argv[1], sys.argv[3]), ("B", sys.argv[2], sys.argv[4])):
    d = json.load(open(path))
    nodes, pg = (int(t) for t in ticks.split(","))
    per = lambda t: round(1e6 * t / hz / d["writes"], 1) if d["writes"] else None
    d.update(build=build, round=rnd, load_before=load, nodes_cpu_us_per_write=per(nodes), postgres_cpu_us_per_write=per(pg))
    print(json.dumps(d))
EOF
  tail -2 "$RESULTS" >&2
  # shellcheck disable=SC2086
  for pid in $A_PIDS $B_PIDS; do stop_pid "$pid"; done
done

python3 - "$RESULTS" <<'EOF'
import json, math, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {(r["round"], r["build"]): r for r in rows}
rounds = sorted({r["round"] for r in rows})
print("| round | load before | A writes/s | B writes/s | B / A | CPU µs per write, nodes + PostgreSQL, A / B | write p99 ms A / B | client (nodes.py) CPU % of a core, A / B |")
print("|---|---|---|---|---|---|---|---|")
ratios = []
for n in rounds:
    a, b = by.get((n, "A")), by.get((n, "B"))
    if not a or not b or not a["writes_per_s"]: continue
    ratio = b["writes_per_s"] / a["writes_per_s"]
    ratios.append(ratio)
    print(f"| {n} | {a['load_before']} | {a['writes_per_s']:.0f} | {b['writes_per_s']:.0f} | {ratio:.3f} | "
          f"{a['nodes_cpu_us_per_write']} + {a['postgres_cpu_us_per_write']} / {b['nodes_cpu_us_per_write']} + {b['postgres_cpu_us_per_write']} | "
          f"{a['p99_ms']} / {b['p99_ms']} | {a.get('client_cpu_pct', '–')} / {b.get('client_cpu_pct', '–')} |")
if ratios:
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    print(f"\nB / A: median {statistics.median(ratios):.3f}, geometric mean {geo:.3f}, "
          f"range {min(ratios):.3f}–{max(ratios):.3f}; B higher in {sum(r > 1 for r in ratios)} of {len(ratios)} rounds")
EOF
