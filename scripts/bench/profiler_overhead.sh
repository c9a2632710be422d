#!/usr/bin/env bash
# What a profiling window costs creates: POST a favourite (the create scenario of
# scripts/bench/run, signed in under the reference rules.json when the build has accounts)
# with the profiler off and on, in the same run against one seeded Hearth, ROUNDS rounds
# alternating which goes first; req/s of each, the on/off ratio per round and the median.
# "On" is a window started with POST /.profile (an admin token minted from the data
# directory) and stopped after the run, so every create is recorded and its rules timed
# (docs/profiling.md). The target: creates lose at most 5 % (median ratio >= 0.95).
#
#   HEARTH_BIN=/path/to/hearth scripts/bench/profiler_overhead.sh
#
# Knobs (env): ROUNDS (5) SECS (8) CONNS (64) THREADS (2) HEARTH_SYNC (full). No files in the repo.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_init profiler-overhead
ROUNDS=${ROUNDS:-5}; SECS=${SECS:-8}; CONNS=${CONNS:-64}; THREADS=${THREADS:-2}
build_hearth
start_hearth_with_plan create
token=$("$HEARTH_BIN" token --admin --data-dir "$WORK/hearth-data")
profile() { curl -fsS -X POST -H "Authorization: Bearer $token" "$HEARTH_URL/.profile?action=$1${2:-}"; }
creates() {  # one wrk run of the create plan; prints req/s
  wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s "$BENCH_DIR/wrk/replay.lua" "$HEARTH_URL/" -- "$WORK/plan.bin" >"$WORK/wrk.out" 2>&1
  python3 -c 'import re,sys; print(re.search(r"Requests/sec:\s+([0-9.]+)", open(sys.argv[1]).read()).group(1))' "$WORK/wrk.out"
}
run_off() { creates; }
run_on() {
  profile start "&duration=3600" >/dev/null
  local rps; rps=$(creates)
  profile stop >"$WORK/report.json"
  echo "$rps"
}
machine_facts >&2 || true
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
creates >/dev/null  # warm-up, not counted
printf '%-6s %10s %10s %8s\n' round off_rps on_rps on/off
ratios=()
for round in $(seq 1 "$ROUNDS"); do
  if (( round % 2 )); then off=$(run_off); on=$(run_on); else on=$(run_on); off=$(run_off); fi
  ratio=$(python3 -c "print('%.3f' % ($on / $off))")
  ratios+=("$ratio")
  printf '%-6s %10.0f %10.0f %8s\n' "$round" "$off" "$on" "$ratio"
done
recorded=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(o["count"] for o in r["operations"] if o["kind"]=="write"))' "$WORK/report.json")
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg); the last window recorded $recorded writes" >&2
python3 - "${ratios[@]}" <<'PY'
import statistics, sys
ratios = [float(r) for r in sys.argv[1:]]
median = statistics.median(ratios)
print("median on/off %.3f (min %.3f, max %.3f): creates lose %.1f %% with a window recording; target at most 5 %%: %s"
      % (median, min(ratios), max(ratios), 100 * (1 - median), "met" if median >= 0.95 else "NOT met"))
PY
stop_hearth
