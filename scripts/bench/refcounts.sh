#!/usr/bin/env bash
# Count, per request, the Swift runtime calls one wrk scenario costs the server: object
# allocations, retains, releases and the slow-path reference counting (uprobes on
# libswiftCore.so and malloc through `perf probe`), SQLite statement steps (`sqlite3_step`,
# when libsqlite3 is linked dynamically), and system calls (all, and the writes, reads,
# fdatasyncs and futex waits among them) and context switches. Counts do not depend on how
# busy the machine is, so two builds can be compared while other work runs (a req/s figure
# cannot). A GET regression and the cost of a create were found this way
# (docs/bench/history.md).
#
#   HEARTH_BIN=/path/to/hearth scripts/bench/refcounts.sh get
#
# Knobs (env): SECS (10) CONNS (8). Needs root (uprobes), perf (linux-perf); the probes
# are added when missing and left in place. No files in the repo.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
SCEN=${1:?usage: refcounts.sh SCENARIO (see targets/hearth.json)}
bench_init "refcounts-$SCEN"
command -v perf >/dev/null || { echo "needs perf (apt-get install -y linux-perf)" >&2; exit 1; }
SECS=${SECS:-10}; CONNS=${CONNS:-8}
build_hearth
CORE=$(ldd "$HEARTH_BIN" | awk '/libswiftCore.so/ {print $3}')
LIBC=$(ldd "$HEARTH_BIN" | awk '/libc.so.6/ {print $3}')
SQLITE=$(ldd "$HEARTH_BIN" | awk '/libsqlite3.so/ {print $3}')
[ -n "$CORE" ] || { echo "$HEARTH_BIN does not load libswiftCore.so dynamically" >&2; exit 1; }
# the slow paths are internal symbols: probe them by address
slow() { nm -C "$CORE" | grep -F "$1" | awk '{print "0x"$1}' | head -1; }
add_probe() {  # add_probe LIB EVENT SPEC
  local have
  have=$(perf probe -l 2>/dev/null | awk '{print $1}')
  grep -qx "probe_[A-Za-z0-9_]*:$2" <<<"$have" || perf probe -q -x "$1" -a "$2=$3" >/dev/null
}
for f in swift_allocObject swift_retain swift_release; do add_probe "$CORE" "$f" "$f"; done
add_probe "$CORE" incrementSlow "$(slow 'RefCountInlinedness)1> >::incrementSlow(')"
add_probe "$CORE" decrementSlowDeinit "$(slow 'RefCountInlinedness)1> >::doDecrementSlow<(swift::PerformDeinit)1>')"
add_probe "$LIBC" malloc malloc
GROUP_CORE=probe_$(basename "$CORE" | sed 's/\..*//; s/[^A-Za-z0-9_]/_/g')
GROUP_LIBC=probe_libc
if [ -n "$SQLITE" ]; then
  add_probe "$SQLITE" sqlite3_step sqlite3_step
  GROUP_SQLITE=probe_$(basename "$SQLITE" | sed 's/\..*//; s/[^A-Za-z0-9_]/_/g')
fi

start_hearth_with_plan "$SCEN"
wrk -t1 -c"$CONNS" -d3s -s "$BENCH_DIR/wrk/replay.lua" "$HEARTH_URL/" -- "$WORK/plan.bin" >/dev/null 2>&1  # warm-up
events=$GROUP_CORE:swift_allocObject,$GROUP_CORE:swift_retain,$GROUP_CORE:swift_release,$GROUP_CORE:incrementSlow,$GROUP_CORE:decrementSlowDeinit,$GROUP_LIBC:malloc
[ -z "$SQLITE" ] || events+=,$GROUP_SQLITE:sqlite3_step
events+=,raw_syscalls:sys_enter,syscalls:sys_enter_write,syscalls:sys_enter_pwrite64,syscalls:sys_enter_read
events+=,syscalls:sys_enter_fdatasync,syscalls:sys_enter_futex,syscalls:sys_enter_epoll_wait,context-switches
perf stat -x, -e "$events" -p "$HEARTH_PID" -o "$WORK/stat.csv" &
STAT=$!; _PIDS+=("$STAT")
# perf stat prints nothing when it is attached: give it a moment (the counts are per
# request, so requests before or after the window only blur the division by a few)
sleep 0.5
# the load before and both CPUs over the measured run (reported before perf stat is
# stopped, so that its own CPU is not counted as the load generator's)
cpu_meter_start "$HEARTH_PID"
wrk -t1 -c"$CONNS" -d"${SECS}s" -s "$BENCH_DIR/wrk/replay.lua" "$HEARTH_URL/" -- "$WORK/plan.bin" >"$WORK/wrk.out" 2>&1
cpu_meter_report wrk >"$WORK/meter.txt"   # in this shell: `times` in a $(…) would see no children
kill -INT "$STAT"; wait "$STAT" || true
requests=$(grep -oE '^ *[0-9]+ requests in' "$WORK/wrk.out" | grep -oE '[0-9]+')
log "$SCEN: $requests requests, $(basename "$HEARTH_BIN") (${HEARTH_REV:-unknown rev}); $(cat "$WORK/meter.txt"); per request:"
grep -v '^#' "$WORK/stat.csv" | awk -F, -v r="$requests" 'NF > 3 { sub(/.*:/, "", $3); printf "  %-22s %8.1f\n", $3, $1 / r }'
stop_hearth
