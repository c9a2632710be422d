#!/usr/bin/env bash
# Does what runs between Hearth's create runs change them? compare.sh alternates the two
# servers, so each Hearth run follows a PocketBase run. This script runs Hearth's create
# runs one after another on one seeded server (as compare.sh seeds it), and before each
# run after the first either PocketBase takes its own create run (gap "pb", as in
# compare.sh) or nothing runs for as long (gap "idle"), the two in turn. Each run is
# bracketed by snapshots (create_gaps.py): server CPU per create split into user and system
# time, context switches per create, writes per group commit, ms per WAL sync, and the
# share of the machine's CPU the host stole, so a slow run shows whether the server did
# more work, or the same work for more CPU.
#
#   SKIP_BUILD=1 HEARTH_BIN=/path/to/hearth scripts/bench/create_gaps.sh
#
# Knobs (env): PAIRS (8: 2 x PAIRS runs) DURATION (10) WARMUP (3, before every run)
#   READERS (50) HEARTH_SYNC (full) BENCH_QUIET_WAIT (300) PB_VERSION PB_SEED, as compare.sh.
#   Needs wrk; no files in the repo.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_init create-gaps
PAIRS=${PAIRS:-8}
READERS=${READERS:-50}
build_hearth
ensure_pocketbase
pb_prepare
start_pocketbase
retarget "$BENCH_DIR/targets/pocketbase.json" "http://$PB_ADDR" "$WORK/pocketbase.json"
start_hearth "$WORK/hearth-data"
retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth.json" $(auth_target_arg)
python3 "$BENCH_DIR/hearth_setup.py" --base "$HEARTH_URL" --target "$WORK/hearth.json" --out "$WORK/hearth-fixtures.json" \
  --readers "$READERS" $(auth_setup_args) >&2

# one wrk run of the create scenario: target, fixtures, seconds, result file[, server pid
# whose CPU to measure]
create_run() {
  "${HARNESS[@]}" wrk --target "$1" --fixtures "$2" --scenario create --conns "$CONNS" --threads "$THREADS" \
    --runs 1 --duration "$3" --warmup 0 ${5:+--server-pid "$5"} --retries 0 --workdir "$WORK" --out "$4" >/dev/null
}
{
  machine_facts
  echo "hearth: $HEARTH_URL, $(auth_header_note); $(date -u "+%Y-%m-%d %H:%M UTC")"
  echo
  echo "| gap before | Hearth creates/s | server CPU % | CPU µs per create, user + system | context switches per create | writes per commit | ms per WAL sync | host steal % | other processes' CPU % |"
  echo "|---|---|---|---|---|---|---|---|---|"
} | tee "$RESULTS.md"
gap=first
for i in $(seq 1 $((2 * PAIRS))); do
  create_run "$WORK/hearth.json" "$WORK/hearth-fixtures.json" "$WARMUP" "$WORK/warmup.jsonl" "$HEARTH_PID"
  python3 "$BENCH_DIR/create_gaps.py" snap "$HEARTH_PID" "$HEARTH_URL" "$WORK/before.json"
  create_run "$WORK/hearth.json" "$WORK/hearth-fixtures.json" "$DURATION" "$RESULTS" "$HEARTH_PID"
  python3 "$BENCH_DIR/create_gaps.py" snap "$HEARTH_PID" "$HEARTH_URL" "$WORK/after.json"
  python3 "$BENCH_DIR/create_gaps.py" row "$WORK/before.json" "$WORK/after.json" "$(tail -n 1 "$RESULTS")" "$gap" \
    | tee -a "$RESULTS.md"
  [ "$i" -lt $((2 * PAIRS)) ] || break
  if [ $((i % 2)) = 1 ]; then
    create_run "$WORK/pocketbase.json" "$WORK/pb/fixtures.json" "$((WARMUP + DURATION))" "$WORK/pb.jsonl" "$PB_PID"
    gap=pb
  else
    sleep $((WARMUP + DURATION))   # as long as PocketBase's gap, with nothing running
    gap=idle
  fi
done
echo "table: $RESULTS.md; raw result lines: $RESULTS" >&2
