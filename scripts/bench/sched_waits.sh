#!/usr/bin/env bash
# Where the server's threads wait to run: one wrk scenario (default create) against a fresh
# seeded Hearth, the whole machine's scheduler recorded for SECS seconds (`perf sched
# record -a`), then each time a thread ran after waiting runnable (its scheduling delay,
# from `perf sched timehist`) set against the other vCPUs' idle periods. It prints, for the
# server's threads, wrk's and everything else: the runs that waited, the waiting in all and
# per run, and the share of it that fell while another vCPU was idle, with each vCPU's idle
# time. Waiting while another vCPU idles is the scheduler's placement (or a VM's); waiting
# while all are busy is more runnable threads than vCPUs (docs/bench/history.md, "seven
# variants of the create path").
#
#   HEARTH_BIN=/path/to/hearth scripts/bench/sched_waits.sh [create|update|...]
#
# Knobs (env): SECS (2) CONNS (64) THREADS (2) HEARTH_SYNC (full). Needs root and perf
# (linux-perf). No files in the repo.
set -euo pipefail
source "$(cd "$(dirname "$0")" && pwd)/lib.sh"
SCEN=${1:-create}
bench_init "sched-waits-$SCEN"
command -v perf >/dev/null || { echo "needs perf (apt-get install -y linux-perf)" >&2; exit 1; }
SECS=${SECS:-2}; CONNS=${CONNS:-64}; THREADS=${THREADS:-2}
build_hearth
start_hearth_with_plan "$SCEN"
wrk -t1 -c"$CONNS" -d3s -s "$BENCH_DIR/wrk/replay.lua" "$HEARTH_URL/" -- "$WORK/plan.bin" >/dev/null 2>&1  # warm-up
# wrk runs a second before and after the recording, so the window holds only steady load
wrk -t"$THREADS" -c"$CONNS" -d$((SECS + 2))s -s "$BENCH_DIR/wrk/replay.lua" "$HEARTH_URL/" -- "$WORK/plan.bin" \
  >"$WORK/wrk.out" 2>&1 &
WRK_PID=$!; _PIDS+=("$WRK_PID")
sleep 1
perf sched record -a -o "$WORK/sched.data" -- sleep "$SECS" 2>&1 | tail -1 >&2
wait "$WRK_PID" || true
grep -E 'Requests/sec' "$WORK/wrk.out" >&2 || cat "$WORK/wrk.out" >&2
server_pid=$HEARTH_PID
stop_hearth
perf sched timehist -i "$WORK/sched.data" >"$WORK/timehist.txt" 2>/dev/null
python3 - "$WORK/timehist.txt" "$server_pid" "$(nproc)" <<'EOF'
import bisect, collections, re, sys
path, server, cpus = sys.argv[1], sys.argv[2], int(sys.argv[3])
# timehist: "time [cpu] task[tid/pid] wait sch-delay run" (ms), one line per switch-out
line_re = re.compile(r'\s*([\d.]+)\s+\[(\d+)\]\s+(.+?)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$')
runs = []
for line in open(path):
    m = line_re.match(line)
    if m:
        t, cpu, task, _, delay, run = m.groups()
        runs.append((float(t), int(cpu), task, float(delay) / 1e3, float(run) / 1e3))
if not runs:
    sys.exit("no scheduler events recorded")
idle = collections.defaultdict(list)  # cpu -> [(start, end)] of its idle periods
for t, cpu, task, _, run in runs:
    if task.startswith('<idle>'):
        idle[cpu].append((t - run, t))

def merged(periods):
    """`periods` sorted and joined where they overlap: disjoint, in order."""
    out = []
    for a, b in sorted(periods):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out

# per vCPU, when at least one *other* vCPU was idle, and where each such period starts
# (a bisection finds a run's first period: one pass per run, not one over every period)
others = {cpu: merged(p for c, periods in idle.items() if c != cpu for p in periods) for cpu in range(cpus)}
starts = {cpu: [a for a, _ in spans] for cpu, spans in others.items()}

def others_idle(cpu, start, end):
    """Seconds within [start, end] during which at least one other vCPU was idle."""
    spans = others.get(cpu, [])
    total = 0.0
    i = max(0, bisect.bisect_right(starts.get(cpu, []), start) - 1)
    while i < len(spans) and spans[i][0] < end:
        total += max(0.0, min(spans[i][1], end) - max(spans[i][0], start))
        i += 1
    return total

def kind(task):
    m = re.search(r'\[(\d+)(?:/(\d+))?\]$', task)
    pid = m and (m.group(2) or m.group(1))
    if pid == server: return 'server'
    return 'wrk' if task.startswith('wrk') else 'other'

count, waited, overlap = collections.Counter(), collections.Counter(), collections.Counter()
for t, cpu, task, delay, run in runs:
    if task.startswith('<idle>') or delay <= 0:
        continue
    k = kind(task)
    count[k] += 1
    waited[k] += delay
    overlap[k] += others_idle(cpu, t - run - delay, t - run)
span = runs[-1][0] - runs[0][0]
print(f"over {span:.2f} s on {cpus} vCPUs:")
for k in ('server', 'wrk', 'other'):
    if count[k]:
        print(f"  {k:6} {count[k]:6} runs waited, {waited[k] * 1e3:8.1f} ms in all, "
              f"{waited[k] / count[k] * 1e6:5.0f} us per run; "
              f"{100 * overlap[k] / waited[k]:3.0f} % of it while another vCPU was idle")
for cpu in sorted(idle):
    print(f"  vCPU {cpu} idle {sum(b - a for a, b in idle[cpu]):.2f} s")
EOF
