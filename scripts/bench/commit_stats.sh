#!/usr/bin/env bash
# Where a create's time goes in the writer: one wrk scenario (default
# create) against a fresh seeded Hearth, and the writer's own figures from /metrics over
# the run: group commits, writes per commit, and the share of the run the writer spent
# inside commits (hearth_commit_duration_seconds: a batch's apply and COMMIT; the WAL's
# fsync ran inside COMMIT until the sync moved to its own queue, CommitSyncer, and no
# longer counts; its own series, hearth_wal_sync_seconds, gives the syncs' count and time),
# and where a write's time in the server goes: its wait for its batch to start
# (hearth_write_queue_seconds) and its whole time until its answer
# (hearth_write_duration_seconds), of which the rest is its batch's commit and the sync.
# A writer inside commits nearly all the time while the server's CPU stays
# well below the machine's was waiting on the disk, not short of CPU (docs/bench/history.md,
# "one node at full scale").
#
#   HEARTH_BIN=/path/to/hearth scripts/bench/commit_stats.sh [create|update|...]
#
# Prints the load average before the run and wrk's CPU beside the server's.
#
# Knobs (env): SECS (10) CONNS (64) THREADS (2) HEARTH_SYNC (full). No files in the repo.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
SCEN=${1:-create}
bench_init "commit-stats-$SCEN"
SECS=${SECS:-10}; CONNS=${CONNS:-64}; THREADS=${THREADS:-2}
build_hearth
start_hearth_with_plan "$SCEN"
# Each series carries its namespace's label (one namespace here); summed over labels below.
metrics() { curl -fsS "$HEARTH_URL/metrics" | grep -E '^hearth_(write_batch_size|commit_duration_seconds|wal_sync_seconds|write_queue_seconds|write_duration_seconds)_(sum|count)[{ ]'; }
metrics >"$WORK/before"
load_before=$(load_1min)
# wrk's CPU: the CPU of this shell's waited-for children (bash's `times`, run in this
# shell; lib.sh's children_cpu reads its second line) before and after it; the server is a
# child too, but is not waited for until it stops.
times >"$WORK/times0"
ticks0=$(awk '{print $14 + $15}' "/proc/$HEARTH_PID/stat")
wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" -s "$BENCH_DIR/wrk/replay.lua" "$HEARTH_URL/" -- "$WORK/plan.bin" >"$WORK/wrk.out" 2>&1
ticks1=$(awk '{print $14 + $15}' "/proc/$HEARTH_PID/stat")
times >"$WORK/times1"
wrk0=$(children_cpu "$WORK/times0"); wrk1=$(children_cpu "$WORK/times1")
metrics >"$WORK/after"
stop_hearth
echo "load average before the run: $load_before"
python3 - "$WORK/before" "$WORK/after" "$WORK/wrk.out" "$SECS" "$((ticks1 - ticks0))" "$(getconf CLK_TCK)" "$SCEN" \
  "$(awk -v a="$wrk0" -v b="$wrk1" 'BEGIN {print b - a}')" <<'EOF'
import re, sys
def read(path):
    totals = {}
    for line in open(path):
        if line.strip():
            name, value = line.rsplit(None, 1)
            name = name.split("{")[0]
            totals[name] = totals.get(name, 0.0) + float(value)
    return totals
before, after = read(sys.argv[1]), read(sys.argv[2])
d = {k: after[k] - before.get(k, 0.0) for k in after}
wrk = open(sys.argv[3]).read()
rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", wrk).group(1))
secs, ticks, hz = float(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
commits = d["hearth_write_batch_size_count"]
writes = d["hearth_write_batch_size_sum"]
inside = d["hearth_commit_duration_seconds_sum"]
cpu = ticks / hz
print("%s: %.0f req/s over %.0f s; server CPU %.0f %% of a core (%.0f us per request), wrk %.0f %%" % (
    sys.argv[7], rps, secs, 100 * cpu / secs, 1e6 * cpu / max(1.0, rps * secs), 100 * float(sys.argv[8]) / secs))
print("  group commits: %d, %.1f writes each; writer inside commits %.2f s of %.0f s (%.0f %%), %.2f ms per commit, %.0f us per write" % (
    commits, writes / max(1, commits), inside, secs, 100 * inside / secs, 1e3 * inside / max(1, commits), 1e6 * inside / max(1, writes)))
syncs, syncing = d.get("hearth_wal_sync_seconds_count", 0.0), d.get("hearth_wal_sync_seconds_sum", 0.0)
if syncs:
    print("  WAL syncs after commits: %d, %.1f commits each; syncing %.2f s of %.0f s (%.0f %%), %.2f ms per sync" % (
        syncs, commits / syncs, syncing, secs, 100 * syncing / secs, 1e3 * syncing / syncs))
answered = d.get("hearth_write_duration_seconds_count", 0.0)
if answered:
    waited, whole = d.get("hearth_write_queue_seconds_sum", 0.0), d["hearth_write_duration_seconds_sum"]
    print("  a write in the store: %.2f ms waiting for its batch, %.2f ms from joining the queue to its answer" % (
        1e3 * waited / answered, 1e3 * whole / answered))
EOF
