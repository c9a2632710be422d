#!/usr/bin/env bash
# Query indexes: `orderBy` a child + `limitToLast=10` over N children (default 100,000),
# before and after the location's index exists.
#  - The first query of a location is answered in memory (the whole location is read and
#    sorted, as without an index) and asks the writer to build the index; measured on
#    3 fresh locations (3 samples).
#  - Later queries read the index: measured with curl (5 samples) and wrk (-t2 -c8) for
#    throughput.
# Hearth: release build, synchronous=full, port 0, a fresh temp data dir, a rules file that
# opens the three locations and declares `.indexOn: "at"` on each.
# Prints the load average before the queries and the CPU of the server and of the clients
# (curl, wrk) during them.
# Knobs (env): N (100000) DURATION (5) HEARTH_BIN SKIP_BUILD=1 KEEP_WORK=1
# Everything on 127.0.0.1; processes stopped and temp files removed at exit.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_init query-index
N=${N:-100000}
DURATION=${DURATION:-5}
build_hearth
cat >"$WORK/rules.json" <<'RULES'
{"rules": {"$log": {".read": true, ".write": true, ".indexOn": ["at"]}}}
RULES
export HEARTH_RULES_FILE=$WORK/rules.json
start_hearth "$WORK/data"

log "seeding 3 locations x $N children"
# In PATCHes of 20,000 children (40,000 nodes): one write may hold at most
# maxNodesPerWrite (100,000) nodes.
python3 - "$N" "$WORK/part" <<'PY'
import json, sys
n, out = int(sys.argv[1]), sys.argv[2]
for part, start in enumerate(range(0, n, 20000)):
    with open("%s%03d.json" % (out, part), "w") as f:
        json.dump({"c%07d" % i: {"at": (i * 7919) % n, "note": "entry %d" % i} for i in range(start, min(n, start + 20000))}, f)
PY
for loc in log1 log2 log3; do
  for part in "$WORK"/part*.json; do
    curl -fsS -o /dev/null -X PATCH --data-binary @"$part" "$HEARTH_URL/$loc.json?print=silent"
  done
done

q='orderBy=%22at%22&limitToLast=10'
cpu_meter_start "$HEARTH_PID"
cold=()
for loc in log1 log2 log3; do
  cold+=("$(curl -fsS -o "$WORK/cold.json" -w '%{time_total}' "$HEARTH_URL/$loc.json?$q")")
done
# The index builds on the writer right after the first query; wait until it answers fast
# (a query that reads the index), bounded.
for _ in $(seq 1 100); do
  t=$(curl -fsS -o /dev/null -w '%{time_total}' "$HEARTH_URL/log1.json?$q")
  awk -v t="$t" 'BEGIN { exit !(t < 0.05) }' && break
  sleep 0.2
done
warm=()
for _ in 1 2 3 4 5; do
  warm+=("$(curl -fsS -o "$WORK/warm.json" -w '%{time_total}' "$HEARTH_URL/log1.json?$q")")
done
cmp -s <(python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1]))))' "$WORK/cold.json") \
       <(python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1]))))' "$WORK/warm.json") \
  || echo "note: cold (log3) and warm (log1) answers differ in keys, as expected only if the data differs" >&2
wrk_out=$(wrk -t2 -c8 -d"${DURATION}s" --latency "$HEARTH_URL/log1.json?$q")
rps=$(awk '/Requests\/sec/ {print $2}' <<<"$wrk_out")
p50=$(awk '$1=="50%" {print $2}' <<<"$wrk_out")
p99=$(awk '$1=="99%" {print $2}' <<<"$wrk_out")
cpu_meter_report "curl and wrk" >"$WORK/meter.txt"  # in this shell: its `times` must see wrk
ms() { awk -v t="$1" 'BEGIN { printf "%.1f", t * 1000 }'; }
echo
echo "| $N children, orderBy=\"at\"&limitToLast=10 | time |"
echo "|---|---|"
echo "| first query, no index yet (in memory; 3 locations) | $(ms "${cold[0]}") / $(ms "${cold[1]}") / $(ms "${cold[2]}") ms |"
echo "| with the index (curl, 5 samples) | $(ms "${warm[0]}") / $(ms "${warm[1]}") / $(ms "${warm[2]}") / $(ms "${warm[3]}") / $(ms "${warm[4]}") ms |"
echo "| with the index, wrk -t2 -c8 ${DURATION}s | $rps req/s, p50 $p50, p99 $p99 |"
echo
echo "the queries (all of the above): $(cat "$WORK/meter.txt")"
stop_hearth
