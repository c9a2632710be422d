#!/usr/bin/env bash
# What one push costs the server in a fan-out, in counts that do not depend on how busy
# the machine is (as refcounts.sh does for a request): swift_retain/release/allocObject,
# malloc and the send syscalls (uprobes and the syscall tracepoint through `perf stat`),
# plus the server's CPU time (utime+stime), per push delivered.
#
# For each transport (wire, sse): a fresh server with N subscribers on ONE location (the
# SSE user's favourites, as wire.sh's fan-out), once with RATE writes/s for SECS seconds
# and once with no writes (same N, same setup), counted over each whole client run; the
# difference divided by the pushes (N x writes) is the cost per push, the setup cancels.
# The writes' own cost (a REST create each, ~1/N of a push per subscriber) is included.
#
#   HEARTH_BIN=/path/to/hearth scripts/bench/fanout_counts.sh
#
# Knobs (env): N (1000) RATE (10) SECS (10) TRANSPORTS (wire,sse) RECORD (a directory:
#   also `perf record` the retain/release probes with call graphs, <transport>.perf.data). Needs root (uprobes,
# tracepoints) and perf (linux-perf). Probes are added when missing and left in place.
set -euo pipefail
export BENCH_QUIET_WAIT=${BENCH_QUIET_WAIT:-0}  # counts, not times: a busy machine does not change them
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
bench_init fanout-counts
command -v perf >/dev/null || { echo "needs perf (apt-get install -y linux-perf)" >&2; exit 1; }
N=${N:-1000}; RATE=${RATE:-10}; SECS=${SECS:-10}; TRANSPORTS=${TRANSPORTS:-wire,sse}
build_hearth
CORE=$(ldd "$HEARTH_BIN" | awk '/libswiftCore.so/ {print $3}')
LIBC=$(ldd "$HEARTH_BIN" | awk '/libc.so.6/ {print $3}')
[ -n "$CORE" ] || { echo "$HEARTH_BIN does not load libswiftCore.so dynamically" >&2; exit 1; }
add_probe() {  # add_probe LIB EVENT SPEC
  perf probe -l 2>/dev/null | awk '{print $1}' | grep -qx "probe_[A-Za-z0-9_]*:$2" \
    || perf probe -q -x "$1" -a "$2=$3" >/dev/null
}
for f in swift_allocObject swift_retain swift_release; do add_probe "$CORE" "$f" "$f"; done
add_probe "$LIBC" malloc malloc
GROUP_CORE=probe_$(basename "$CORE" | sed 's/\..*//; s/[^A-Za-z0-9_]/_/g')
EVENTS=$GROUP_CORE:swift_allocObject,$GROUP_CORE:swift_retain,$GROUP_CORE:swift_release,probe_libc:malloc,syscalls:sys_enter_sendto,syscalls:sys_enter_writev
ulimit -n "$(ulimit -Hn)"
export HEARTH_MAX_STREAMS=$((N + 200)) HEARTH_MAX_STREAMS_PER_ADDRESS=$((N + 200))
export HEARTH_MAX_CONNECTIONS=$(( $(ulimit -n) - 100 )) HEARTH_MAX_CONNECTIONS_PER_ADDRESS=$(( $(ulimit -n) - 100 ))

start_hearth "$WORK/hearth-data"
retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth.json" auth
python3 "$BENCH_DIR/hearth_setup.py" --base "$HEARTH_URL" --target "$WORK/hearth.json" \
  --out "$WORK/fixtures.json" --readers 50 --auth >&2
stop_hearth


# one TRANSPORT RATE: prints "<counts csv line> cpu_ticks=<n> writes=<n>" for one client run
one() {
  local transport=$1 rate=$2 out=$WORK/run.jsonl stat ticks
  start_hearth "$WORK/hearth-data"
  retarget "$BENCH_DIR/targets/hearth.json" "$HEARTH_URL" "$WORK/hearth.json" auth
  hearth_reset_sse_user "$HEARTH_URL" "$WORK/fixtures.json"
  rm -f "$out"
  if [ -n "${RECORD:-}" ] && [ "$rate" != 0 ]; then
    # RECORD=DIR: where the retains and releases come from (perf record of the probes, by caller)
    perf record -q -e "$GROUP_CORE:swift_retain,$GROUP_CORE:swift_release" --call-graph fp -p "$HEARTH_PID" \
      -o "$RECORD/$transport.perf.data" 2>/dev/null &
    _PIDS+=("$!"); local record=$!
  fi
  perf stat -x, -e "$EVENTS" -p "$HEARTH_PID" -o "$WORK/stat.csv" &
  stat=$!; _PIDS+=("$stat")
  sleep 0.5  # perf stat prints nothing once attached; the setup it misses cancels out
  if [ "$transport" = wire ]; then
    python3 "$BENCH_DIR/wire.py" fanout --target "$WORK/hearth.json" --fixtures "$WORK/fixtures.json" \
      --subscribers "$N" --stage listen --path '/users/${uid}/favorites' --paths one --rate "$rate" \
      --duration "$SECS" --procs 1 --server-pid "$HEARTH_PID" --run 1 --out "$out" >&2
  else
    "${HARNESS[@]}" sse --target "$WORK/hearth.json" --fixtures "$WORK/fixtures.json" --subscribers "$N" \
      --runs 1 --retries 0 --rate "$rate" --duration "$SECS" --procs 1 --server-pid "$HEARTH_PID" --out "$out" >&2
  fi
  kill -INT "$stat"; wait "$stat" || true
  if [ -n "${record:-}" ]; then kill -INT "$record"; wait "$record" || true; fi
  ticks=$(awk '{print $14 + $15}' "/proc/$HEARTH_PID/stat")
  stop_hearth
  python3 - "$WORK/stat.csv" "$out" "$ticks" "$rate" <<'EOF'
import json, sys
counts = {}
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if len(f) > 3 and not line.startswith("#"):
        counts[f[2].split(":")[-1]] = float(f[0]) if f[0].replace(".", "").isdigit() else 0.0
r = json.loads(open(sys.argv[2]).readline()) if float(sys.argv[4]) > 0 else {}
counts["cpu_ticks"] = float(sys.argv[3])
counts["events"] = float(r.get("events_delivered") or 0)
counts["writes"] = float(r.get("writes_ok") or 0)
counts["delivered"] = "%s of %s" % (r.get("events_delivered"), r.get("events_expected"))
print(json.dumps(counts))
EOF
}

HZ=$(getconf CLK_TCK)
for transport in ${TRANSPORTS//,/ }; do
  log "$transport: N=$N with $RATE writes/s for ${SECS}s, then without writes"
  busy=$(one "$transport" "$RATE"); idle=$(one "$transport" 0)
  echo "$transport raw counts, with writes: $busy; without: $idle" >&2
  python3 - "$busy" "$idle" "$N" "$HZ" "$transport" "$(basename "$HEARTH_BIN")" <<'EOF'
import json, sys
busy, idle, n, hz = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
pushes = busy["events"]
print("%s (%s): %d writes, %d pushes delivered (%s); per push:" % (
    sys.argv[5], sys.argv[6], busy["writes"], pushes, busy["delivered"]))
for k in ["swift_retain", "swift_release", "swift_allocObject", "malloc", "sys_enter_sendto", "sys_enter_writev"]:
    print("  %-18s %8.2f" % (k, (busy.get(k, 0) - idle.get(k, 0)) / pushes))
print("  %-18s %8.2f" % ("server CPU us", (busy["cpu_ticks"] - idle["cpu_ticks"]) / hz * 1e6 / pushes))
EOF
done
