#!/usr/bin/env python3
"""Wide multi-location updates: one PATCH of N children, each already stored, and what it
costs the other writers. Not a test: numbers for docs/bench/history.md.

A PATCH's entries are checked by the rules on an overlay of the data (one node per
written key) and, with triggers, matched location by location; both once took time
quadratic in N, on the one writer every other write waits for. For each binary given
(e.g. the commit before the change and the current one) and each case, a fresh server on
127.0.0.1 (port 0, temp data dir, synchronous=full, no access log):

- `open`: open rules, no trigger;
- `validate`: rules that check every child (`$id` with `.write` and `.validate`);
- `triggers`: open rules and two triggers, `created` on `/{b}/{id}` (a location per
  child, none created) and `written` on `/{b}` (one location above them all), both
  delivering to a port nobody listens on (their events stay pending).

Per N: the N children are written first in PATCHes of 900 (under the triggers' 1,000
events a write), then one PATCH rewrites all N; its status and time, the server's CPU
over it, and the latency of small PUTs another client makes in a closed loop meanwhile
(max and count). A size is skipped for a binary once a PATCH took longer than
SKIP_AFTER_SECONDS (default 60): the quadratic one grows fourfold per doubling.

Usage: scripts/bench/wide_updates.py BINARY [BINARY...]   (LABELS=before,after to name them)
Knobs (env): SIZES (4000,16000,64000) CASES (open,validate,triggers) SKIP_AFTER_SECONDS.
Everything on 127.0.0.1; every server is stopped and its temp dir removed at the end.
"""
import json
import os
import sys
import threading
import time

import runcpu
from huge_writes import Server, request

SIZES = [int(n) for n in os.environ.get("SIZES", "4000,16000,64000").split(",")]
CASES = os.environ.get("CASES", "open,validate,triggers").split(",")
SKIP_AFTER = float(os.environ.get("SKIP_AFTER_SECONDS", "60"))
VALIDATE_RULES = json.dumps({"rules": {"$b": {".read": True, "$id": {
    ".write": "newData.exists() || data.exists()",
    ".validate": "newData.hasChildren(['v']) && newData.child('v').isNumber()"}}}})
TRIGGERS = json.dumps({"triggers": [
    {"name": "children", "event": "created", "ref": "/{b}/{id}", "url": "http://127.0.0.1:9/",
     "retry": True, "maxEventsPerSecond": 100000},
    {"name": "parent", "event": "written", "ref": "/{b}", "url": "http://127.0.0.1:9/",
     "retry": True, "maxEventsPerSecond": 100000}]})
CHUNK = 900


def children(start, stop, sign):
    return json.dumps({f"k{i:06d}": {"v": sign * (i + 1)} for i in range(start, stop)})


def small_loop(server, stop, out):
    """Small PUTs in a closed loop, (ms, status) each, at a path every case's rules allow."""
    c = server.conn()
    i = 0
    while not stop.is_set():
        status, ms, _ = request(c, "PUT", f"/small/k{i % 500}.json?print=silent", '{"v": 1}')
        out.append((ms, status))
        i += 1


def run(binary, label, case):
    rules = VALIDATE_RULES if case == "validate" else '{"rules": {".read": true, ".write": true}}'
    server = Server(binary, rules=rules, triggers=TRIGGERS if case == "triggers" else None)
    rows = []
    try:
        conn = server.conn()
        conn.timeout = 3600
        for n in SIZES:
            if rows and rows[-1]["patch_ms"] > SKIP_AFTER * 1000:
                rows.append({"label": label, "case": case, "n": n, "skipped": True})
                continue
            location = f"/wide{n}.json?print=silent"
            for start in range(0, n, CHUNK):
                status, _, data = request(conn, "PATCH", location, children(start, min(n, start + CHUNK), 1))
                if status != 204:
                    raise SystemExit(f"{label} {case} {n}: seeding got {status} {data[:200]!r}")
            body = children(0, n, -1)
            stop, beside = threading.Event(), []
            thread = threading.Thread(target=small_loop, args=(server, stop, beside))
            thread.start()
            meter = runcpu.Meter(server.proc.pid)
            status, ms, data = request(conn, "PATCH", location, body)
            cpu = meter.read()
            stop.set()
            thread.join()
            lat = [m for m, st in beside if st == 204]
            rows.append({"label": label, "case": case, "n": n, "bytes": len(body), "status": status,
                         "patch_ms": round(ms, 1), "beside_max_ms": round(max(lat), 1) if lat else None,
                         "beside_n": len(lat), "beside_errors": sum(1 for _, st in beside if st != 204), **cpu})
            print(json.dumps(rows[-1]), flush=True)
    finally:
        server.stop()
    return rows


def binaries_and_labels(usage):
    """The binaries on the command line, each with its label from LABELS (wide_fanout.py too)."""
    binaries = sys.argv[1:]
    if not binaries:
        raise SystemExit(usage)
    return list(zip(binaries, os.environ.get("LABELS", ",".join(binaries)).split(",")))


def print_table(columns, cells, rows):
    """A Markdown table of `rows` after a blank line: `cells(row)` gives each row's cells
    (wide_fanout.py, index_build.py and large_listens.py too)."""
    print()
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for r in rows:
        print("| " + " | ".join(cells(r)) + " |")


def main():
    rows = [row for case in CASES for binary, label in binaries_and_labels(__doc__) for row in run(binary, label, case)]
    print()
    print("| case | N | binary | PATCH status, ms | server CPU s | small PUTs beside it: max ms (count) | load before |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if r.get("skipped"):
            print(f"| {r['case']} | {r['n']:,} | {r['label']} | skipped (the size before took over {SKIP_AFTER:.0f} s) | | | |")
            continue
        beside = f"{r['beside_max_ms']:.0f} ({r['beside_n']})" if r["beside_max_ms"] is not None else f"none answered ({r['beside_errors']} errors)"
        print(f"| {r['case']} | {r['n']:,} | {r['label']} | {r['status']}, {r['patch_ms']:,.0f} | {r['server_cpu_s']:.2f} | {beside} | {r['load_before']} |")


if __name__ == "__main__":
    main()
