#!/usr/bin/env python3
"""Helper of create_gaps.sh: what one Hearth create run cost, from snapshots taken just
before and just after it.

  create_gaps.py snap PID URL OUT.json
      the server's per-thread CPU ticks and context switches (/proc/PID/task), its writer's
      figures from URL/metrics (writes per group commit, WAL syncs) and the machine's
      /proc/stat line (steal is the host running other guests on our vCPUs)
  create_gaps.py row BEFORE.json AFTER.json RESULT_LINE GAP
      one markdown row: the gap before the run, creates/s, server CPU % of a core, server
      CPU per create (user and system), context switches per create, writes per commit,
      ms per WAL sync, CPU the host stole (% of the machine over the run), other
      processes' CPU; RESULT_LINE is harness.py wrk's JSON line for the run
"""
import json
import os
import re
import sys
import urllib.request

METRICS = re.compile(r'^(hearth_(?:write_batch_size|wal_sync_seconds)_(?:sum|count))[{ ].* ([0-9.e+-]+)$')


def snap(pid, url, out):
    ticks = [0, 0]
    switches = 0
    for tid in os.listdir("/proc/%s/task" % pid):
        try:
            with open("/proc/%s/task/%s/stat" % (pid, tid)) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open("/proc/%s/task/%s/status" % (pid, tid)) as f:
                status = f.read()
        except OSError:   # a thread that ended between the listing and the read
            continue
        ticks[0] += int(fields[11])
        ticks[1] += int(fields[12])
        switches += sum(int(n) for n in re.findall(r"ctxt_switches:\s+(\d+)", status))
    metrics = {}
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            m = METRICS.match(line)
            if m:    # one series per namespace label; summed
                metrics[m.group(1)] = metrics.get(m.group(1), 0.0) + float(m.group(2))
    with open("/proc/stat") as f:
        machine = [int(x) for x in f.readline().split()[1:]]
    with open(out, "w") as f:
        json.dump({"ticks": ticks, "switches": switches, "metrics": metrics, "machine": machine}, f)


def row(before, after, result, gap):
    with open(before) as f:
        a = json.load(f)
    with open(after) as f:
        b = json.load(f)
    res = json.loads(result)
    creates = res["requests"]
    hz = os.sysconf("SC_CLK_TCK")
    per = lambda i: 1e6 * (b["ticks"][i] - a["ticks"][i]) / hz / creates
    d = lambda k: b["metrics"].get(k, 0.0) - a["metrics"].get(k, 0.0)
    commits, syncs = d("hearth_write_batch_size_count"), d("hearth_wal_sync_seconds_count")
    machine = [y - x for x, y in zip(a["machine"], b["machine"])]
    steal = 100.0 * machine[7] / max(1, sum(machine))
    print("| %s | %s | %.0f | %.0f + %.0f | %.2f | %s | %s | %.1f | %.1f |" % (
        gap, "{:,.0f}".format(res["rps"]), res.get("server_cpu_pct", 0), per(0), per(1),
        (b["switches"] - a["switches"]) / creates,
        "%.1f" % (d("hearth_write_batch_size_sum") / commits) if commits else "-",
        "%.2f" % (1e3 * d("hearth_wal_sync_seconds_sum") / syncs) if syncs else "-",
        steal, res.get("foreign_cpu_pct", 0)))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "snap":
        snap(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == "row":
        row(*sys.argv[2:])
    else:
        sys.exit(__doc__)
