#!/usr/bin/env python3
"""A query index's first build: what it costs the other writers. Not a test: numbers for
docs/bench/history.md.

The first `orderBy` query with a limit on a location with `.indexOn` is answered from the
data and asks the writer to build the location's index; the writer builds it between
write batches. Built in one transaction, it held every write of the database for the
whole location; built a slice of children at a time (`StoreOptions.
queryIndexChildrenPerSlice`), the writes wait for one slice. For each binary given (e.g.
the commit before the change and the current one) and each size N, a fresh server on
127.0.0.1 (port 0, temp data dir, synchronous=full, no access log, `.indexOn: ["v"]` on
`/big`):

1. N children of ~100 bytes are written to `/big` in PATCHes of 900;
2. one client PUTs a small value in a closed loop (`/small`), and another GETs one;
3. the first query, `orderBy="v"&limitToLast=10`, then the same query again until one
   answers in under a tenth of the first's time (the index is built) or 60 s passed;
4. the small PUTs' and GETs' latency max and count over that window, the first query's
   time, the time until the index answered, and the server's CPU.

With ENGINE=postgres each server is one node on a fresh database of a throwaway PostgreSQL
cluster (pgcluster.py), which the script starts and stops. There the build held the
ordering lock, every write of every node, for the whole location; it now reads a slice of
children per snapshot without it and catches up from the change log
(`PostgresEngine.maxIndexChildrenPerSlice`).

Usage: scripts/bench/index_build.py BINARY [BINARY...]   (LABELS=before,after to name them)
Knobs (env): SIZES (16000,64000,256000) ENGINE (sqlite, or postgres).
Everything on 127.0.0.1; every server is stopped and its temp dir removed at the end.
"""
import json
import os
import threading
import time

import pgcluster
import runcpu
from huge_writes import Server, request
from wide_updates import binaries_and_labels, print_table

SIZES = [int(n) for n in os.environ.get("SIZES", "16000,64000,256000").split(",")]
RULES = json.dumps({"rules": {".read": True, ".write": True, "big": {".indexOn": ["v"]}}})
QUERY = '/big.json?orderBy="v"&limitToLast=10'
CHUNK = 900


def loop(server, stop, out, method, path, body=None):
    c = server.conn()
    while not stop.is_set():
        status, ms, _ = request(c, method, path, body)
        out.append((ms, status))


def run(binary, label, n, cluster):
    server = Server(binary, rules=RULES, store=cluster.new_database() if cluster else None)
    try:
        conn = server.conn()
        conn.timeout = 600
        for start in range(0, n, CHUNK):
            body = json.dumps({f"k{i:07d}": {"v": (i * 7919) % n, "note": "x" * 80} for i in range(start, min(n, start + CHUNK))})
            status, _, data = request(conn, "PATCH", "/big.json?print=silent", body)
            if status != 204:
                raise SystemExit(f"{label} {n}: seeding got {status} {data[:200]!r}")
        stop, puts, gets = threading.Event(), [], []
        threads = [threading.Thread(target=loop, args=(server, stop, puts, "PUT", "/small/a.json?print=silent", '{"v": 1}')),
                   threading.Thread(target=loop, args=(server, stop, gets, "GET", "/small/a.json"))]
        for t in threads:
            t.start()
        while not puts or not gets:
            time.sleep(0.01)
        meter = runcpu.Meter(server.proc.pid)
        began = time.perf_counter()
        status, first_ms, data = request(conn, "GET", QUERY)
        expected = data
        built_ms, queries = None, 1
        while time.perf_counter() - began < 60:
            status, ms, data = request(conn, "GET", QUERY)
            queries += 1
            if data != expected:
                raise SystemExit(f"{label} {n}: the query's answer changed: {data[:200]!r}")
            if ms < first_ms / 10:
                built_ms = (time.perf_counter() - began) * 1000
                break
        cpu = meter.read()
        stop.set()
        for t in threads:
            t.join()
        window = [(m, s) for m, s in puts]
        row = {"label": label, "engine": "postgres" if cluster else "sqlite", "n": n, "first_query_ms": round(first_ms, 1),
               "index_answers_after_ms": round(built_ms, 1) if built_ms is not None else None, "queries": queries,
               "puts_max_ms": round(max(m for m, _ in window), 1), "puts": len(window),
               "put_errors": sum(1 for _, s in window if s != 204),
               "gets_max_ms": round(max(m for m, _ in gets), 1), "gets": len(gets), **cpu}
        print(json.dumps(row), flush=True)
        return row
    finally:
        server.stop()


def cells(r):
    after = f"{r['index_answers_after_ms']:,.0f}" if r["index_answers_after_ms"] is not None else "not within 60 s"
    return [f"{r['n']:,}", r["label"], f"{r['first_query_ms']:,.0f}", after, f"{r['puts_max_ms']:,.0f} ({r['puts']})",
            f"{r['gets_max_ms']:,.0f} ({r['gets']})", f"{r['server_cpu_s']:.2f}", r["load_before"]]


def main():
    cluster = pgcluster.Cluster() if os.environ.get("ENGINE") == "postgres" else None
    try:
        rows = [run(binary, label, n, cluster) for n in SIZES for binary, label in binaries_and_labels(__doc__)]
    finally:
        if cluster:
            cluster.stop()
    print_table(["N", "binary", "first query ms", "the index answers after, ms", "small PUTs beside: max ms (count)",
                 "small GETs: max ms (count)", "server CPU s", "load before"], cells, rows)


if __name__ == "__main__":
    main()
