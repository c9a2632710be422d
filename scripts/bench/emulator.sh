#!/usr/bin/env bash
# Hearth as the Realtime Database emulator in a test suite: how long `hearth
# serve --accept-emulator-owner` takes from exec to its first answer (GET /healthz), and
# the wall time of a small rules-test suite run as @firebase/rules-unit-testing drives an
# emulator: Tests/EndToEndTests/Python/rules_unit_testing.py (two test environments side
# by side: rules set per namespace, mock-token users, owner writes, clearDatabase; its
# checks over REST and the wire protocol). Each run: a fresh data directory, start,
# suite, stop (SIGTERM), the whole of it timed too (what `emulators:exec` wraps); and over
# each suite, the CPU of the server and of the suite's client (lib.sh's cpu_meter_*).
#
# Knobs (env): RUNS (10) SKIP_BUILD=1 HEARTH_BIN KEEP_WORK=1
# Results: $RESULTS (.jsonl) and medians on stdout.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
RUNS=${RUNS:-10}
bench_init emulator
build_hearth
PYTHON=$("$REPO/scripts/python-env.sh")
SUITE="$REPO/Tests/EndToEndTests/Python/rules_unit_testing.py"
{
  machine_facts | grep -v '^wrk'
  echo "load before: $(load_avgs)"
  echo "settings: $RUNS runs"
} | tee "$RESULTS.meta" >&2
echo '{"rules": {".read": false, ".write": false}}' > "$WORK/rules.json"
now_ms() { date +%s%3N; }

for run in $(seq 1 "$RUNS"); do
  rm -rf "$WORK/data"
  port=$(free_port)
  began=$(now_ms)
  HEARTH_ACCESS_LOG=false "$HEARTH_BIN" serve --port "$port" --data-dir "$WORK/data" --rules "$WORK/rules.json" \
    --accept-emulator-owner --log-level warning >"$WORK/server.log" 2>&1 &
  pid=$!
  until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do
    kill -0 "$pid" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
    sleep 0.005
  done
  ready=$(now_ms)
  cpu_meter_start "$pid"
  "$PYTHON" "$SUITE" side_by_side "$port" >"$WORK/suite.log" 2>&1 || { cat "$WORK/suite.log" >&2; exit 1; }
  done_at=$(now_ms)
  cpu_meter_report "the suite's client" >>"$WORK/cpu.txt"
  kill -TERM "$pid"; wait "$pid" || true
  stopped=$(now_ms)
  checks=$(grep -c '^ok ' "$WORK/suite.log")
  echo "{\"run\": $run, \"start_ms\": $((ready - began)), \"suite_ms\": $((done_at - ready)), \"total_ms\": $((stopped - began)), \"checks\": $checks}" | tee -a "$RESULTS" >&2
done

python3 - "$RESULTS" <<'EOF2'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for key, what in (("start_ms", "start (exec to first /healthz answer)"), ("suite_ms", "rules-test suite"),
                  ("total_ms", "start + suite + stop")):
    values = sorted(r[key] for r in rows)
    print(f"| {what} | {statistics.median(values):.0f} ms | {values[0]}–{values[-1]} ms |")
print(f"| checks per suite run | {rows[0]['checks']} | |")
EOF2
echo "CPU over each suite (load before its run; server; the suite's client, which the test library drives):"
cat "$WORK/cpu.txt"
