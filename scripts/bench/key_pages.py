#!/usr/bin/env python3
"""Paging a large location in key order over REST: each page's time and CPU, and what the
paging takes from small writes beside it. Not a test: numbers for docs/bench/history.md.

A page in key order (`orderBy="$key"` with `startAfter` + `limitToFirst`, or `endBefore` +
`limitToLast`) needs no `.indexOn`, so it had no index and read every child of the
location: paging through N children cost N²/PAGE rows. Such pages are now answered from the
location's rows, a probe per child. For each binary given (e.g. the commit before the
change and the current one), a fresh server on 127.0.0.1 (port 0, temp data dir, open
rules, no access log):

1. N children of ~100 bytes are written to `/chat` (7 MB at 64,000) in PATCHes of 900;
2. one client PUTs small values in a loop (huge_writes.small_loop) throughout;
3. PAGES pages of PAGE children are read forward from the first (`limitToFirst`, then
   `startAfter` the last key), then PAGES pages back from the last (`limitToLast`, then
   `endBefore` the first key); each page is checked against the keys it should hold.

4. SHALLOW reads of the location's keys (`shallow=true`), each checked to hold N keys: a
   probe per child, which PostgreSQL reads ahead, a window of rows per round trip.

Reported per direction (and for the shallow reads): the median and max ms of a page (a
read), server CPU per page, and the small PUTs' max ms meanwhile.

With ENGINE=postgres each server is one node on a fresh database of a throwaway PostgreSQL
cluster (pgcluster.py), which the script starts and stops.

Usage: scripts/bench/key_pages.py BINARY [BINARY...]   (LABELS=before,after to name them)
Knobs (env): N (64000) PAGE (50) PAGES (20) SHALLOW (3; 0 skips) ENGINE (sqlite, or postgres).
Everything on 127.0.0.1; every server is stopped and its temp dir removed at the end.
"""
import json
import os
import sys
import threading
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the repo
import pgcluster  # noqa: E402
import runcpu  # noqa: E402
from huge_writes import Server, pct, request, small_loop  # noqa: E402
from wide_updates import binaries_and_labels, print_table  # noqa: E402

N = int(os.environ.get("N", "64000"))
PAGE = int(os.environ.get("PAGE", "50"))
PAGES = int(os.environ.get("PAGES", "20"))
SHALLOW = int(os.environ.get("SHALLOW", "3"))
CHUNK = 900


def key(i):
    return f"-Nk{i:07d}"  # push-ID-like: after the integer keys, in byte order


def page_path(bound, key_, limit):
    query = f'orderBy="$key"&{limit}={PAGE}'
    if bound:
        query += f"&{bound}={urllib.parse.quote(json.dumps(key_))}"
    return "/chat.json?" + query.replace('"', "%22").replace("$", "%24")


def page_through(server, conn, direction):
    """PAGES pages in one direction (SHALLOW reads for "shallow"); each page's keys
    checked; (ms per page, CPU)."""
    meter = runcpu.Meter(server.proc.pid)
    times, cursor = [], None
    for p in range(pages(direction)):
        if direction == "shallow":
            path, expected = "/chat.json?shallow=true", [key(i) for i in range(N)]
        elif direction == "forward":
            path = page_path("startAfter" if cursor else None, cursor, "limitToFirst")
            expected = [key(i) for i in range(p * PAGE, (p + 1) * PAGE)]
        else:
            path = page_path("endBefore" if cursor else None, cursor, "limitToLast")
            expected = [key(i) for i in range(N - (p + 1) * PAGE, N - p * PAGE)]
        status, ms, data = request(conn, "GET", path)
        keys = sorted(json.loads(data)) if status == 200 else []
        if keys != expected:
            raise SystemExit(f"{direction} page {p}: {status} {data[:200]!r}")
        times.append(ms)
        cursor = keys[-1] if direction == "forward" else keys[0]
    return times, meter.read()


def pages(direction):
    return SHALLOW if direction == "shallow" else PAGES


def run(binary, label, cluster):
    server = Server(binary, store=cluster.new_database() if cluster else None)
    rows = []
    try:
        conn = server.conn()
        conn.timeout = 600
        for start in range(0, N, CHUNK):
            body = json.dumps({key(i): {"v": i, "note": "x" * 80} for i in range(start, min(N, start + CHUNK))})
            status, _, data = request(conn, "PATCH", "/chat.json?print=silent", body)
            if status != 204:
                raise SystemExit(f"{label}: seeding got {status} {data[:200]!r}")
        for direction in ("forward", "back") + (("shallow",) if SHALLOW else ()):
            stop, beside = threading.Event(), []
            small = threading.Thread(target=small_loop, args=(server, stop, beside))
            small.start()
            times, cpu = page_through(server, conn, direction)
            stop.set()
            small.join()
            row = {"label": label, "engine": "postgres" if cluster else "sqlite", "direction": direction, "n": N, "page": N if direction == "shallow" else PAGE, "pages": pages(direction),
                   "page_ms_median": round(pct(times, 50), 1), "page_ms_max": round(max(times), 1),
                   "server_cpu_ms_per_page": round(1000 * cpu["server_cpu_s"] / pages(direction), 2),
                   "small_puts": len(beside), "small_put_max_ms": round(max(ms for ms, _ in beside), 1), **cpu}
            print(json.dumps(row), flush=True)
            rows.append(row)
        return rows
    finally:
        server.stop()


def cells(r):
    return [r["direction"], r["label"], f"{r['page_ms_median']:,}", f"{r['page_ms_max']:,}",
            f"{r['server_cpu_ms_per_page']:,}", f"{r['small_put_max_ms']:,} ({r['small_puts']:,})", r["load_before"]]


def main():
    cluster = pgcluster.Cluster() if os.environ.get("ENGINE") == "postgres" else None
    try:
        rows = [row for binary, label in binaries_and_labels(__doc__) for row in run(binary, label, cluster)]
    finally:
        if cluster:
            cluster.stop()
    print_table(["direction", "binary", f"a page of {PAGE} (shallow: every key): median ms", "max ms", "server CPU ms per page",
                 "small PUTs beside: max ms (count)", "load before"], cells, rows)


if __name__ == "__main__":
    main()
