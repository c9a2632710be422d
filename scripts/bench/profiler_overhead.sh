#!/usr/bin/env bash
# What a profiling window costs creates: POST a favourite (the create scenario of
# scripts/bench/run, signed in under the reference rules.json when the build has accounts)
# with the profiler off and on, in the same run against one seeded Hearth, ROUNDS rounds
# alternating which goes first; req/s of each and the server's CPU per create (from
# /proc/<pid>/stat, steadier than req/s on a shared machine), the on/off ratios per round
# and their medians.
# "On" is a window started with POST /.profile (an admin token minted from the data
# directory) and stopped after the run, so every create is recorded and its rules timed
# (docs/profiling.md). The target: creates lose at most 5 % (median ratio >= 0.95).
# Prints the load average before the rounds and the CPU of the server and of wrk over them.
#
#   HEARTH_BIN=/path/to/hearth scripts/bench/profiler_overhead.sh
#
# Knobs (env): ROUNDS (10) SECS (5) CONNS (64) THREADS (2) HEARTH_SYNC (full). No files in the repo.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_init profiler-overhead
ROUNDS=${ROUNDS:-10}; SECS=${SECS:-5}; CONNS=${CONNS:-64}; THREADS=${THREADS:-2}
build_hearth
start_hearth_with_plan create
token=$("$HEARTH_BIN" token --admin --data-dir "$WORK/hearth-data")
profile() { curl -fsS -X POST -H "Authorization: Bearer $token" "$HEARTH_URL/.profile?action=$1${2:-}"; }
ticks() { awk '{print $14 + $15}' "/proc/$HEARTH_PID/stat"; }
creates() {  # one wrk run of the create plan; prints "req/s server-CPU-us-per-create"
  local t0 t1
  t0=$(ticks)
  wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s "$BENCH_DIR/wrk/replay.lua" "$HEARTH_URL/" -- "$WORK/plan.bin" >"$WORK/wrk.out" 2>&1
  t1=$(ticks)
  python3 -c 'import re,sys; rps=float(re.search(r"Requests/sec:\s+([0-9.]+)", open(sys.argv[1]).read()).group(1)); n=float(re.search(r"([0-9]+) requests in", open(sys.argv[1]).read()).group(1)); print("%.0f %.1f" % (rps, 1e6 * (float(sys.argv[2]) / float(sys.argv[3])) / n))' "$WORK/wrk.out" "$((t1 - t0))" "$(getconf CLK_TCK)"
}
run_off() { creates; }
run_on() {
  profile start "&duration=3600" >/dev/null
  local rps; rps=$(creates)
  profile stop >"$WORK/report.json"
  echo "$rps"
}
machine_facts >&2 || true
echo "load before: $(load_avgs)" >&2
creates >/dev/null  # warm-up, not counted
cpu_meter_start "$HEARTH_PID"
printf '%-6s %10s %10s %8s %12s %12s %8s\n' round off_rps on_rps on/off off_cpu_us on_cpu_us on/off
ratios=(); cpu_ratios=()
for round in $(seq 1 "$ROUNDS"); do
  if (( round % 2 )); then off=$(run_off); on=$(run_on); else on=$(run_on); off=$(run_off); fi
  read -r off_rps off_cpu <<<"$off"; read -r on_rps on_cpu <<<"$on"
  ratio=$(python3 -c "print('%.3f' % ($on_rps / $off_rps))")
  cpu_ratio=$(python3 -c "print('%.3f' % ($on_cpu / $off_cpu))")
  ratios+=("$ratio"); cpu_ratios+=("$cpu_ratio")
  printf '%-6s %10.0f %10.0f %8s %12s %12s %8s\n' "$round" "$off_rps" "$on_rps" "$ratio" "$off_cpu" "$on_cpu" "$cpu_ratio"
done
cpu_meter_report "wrk (and the curl and python3 between runs)" >&2
recorded=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sum(o["count"] for o in r["operations"] if o["kind"]=="write"))' "$WORK/report.json")
echo "load after: $(load_avgs); the last window recorded $recorded writes" >&2
python3 - "${ratios[*]}" "${cpu_ratios[*]}" <<'PY'
import statistics, sys
ratios = [float(r) for r in sys.argv[1].split()]
cpu = [float(r) for r in sys.argv[2].split()]
median = statistics.median(ratios)
print("req/s on/off: median %.3f (min %.3f, max %.3f); server CPU per create on/off: median %.3f (min %.3f, max %.3f)"
      % (median, min(ratios), max(ratios), statistics.median(cpu), min(cpu), max(cpu)))
print("creates lose %.1f %% with a window recording; target at most 5 %%: %s" % (100 * (1 - median), "met" if median >= 0.95 else "NOT met"))
PY
stop_hearth
