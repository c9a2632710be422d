#!/usr/bin/env python3
"""A wide multi-location update under many listened children: what it costs the
namespace's fan-out. Not a test: numbers for docs/bench/history.md.

The fan-out computes one event per listened location a change reaches. For a multi-path
update that once meant a scan of all its N entries for each of the L locations below
it, N × L on the queue every other push waits behind. For each binary given (e.g. the
commit before the change and the current one), a fresh server on 127.0.0.1 (port 0, temp
data dir, open rules, synchronous=full, no access log) and, per N:

1. /wideN seeded with N children (PATCHes of 900);
2. L SSE streams, one on each of the children /wideN/k000000 …, and one on /tickN, each
   past its first event;
3. one PATCH rewriting all N children; when it is answered, a PUT of /tickN.

Reported: the PATCH's time, when the last of the L streams got its child's event (from
the PATCH's answer), how late the tick's event arrived (from its PUT's answer: it waits
behind the update's fan-out), and the server's CPU from the PATCH to the last event.

Usage: scripts/bench/wide_fanout.py BINARY [BINARY...]   (LABELS=before,after to name them)
Knobs (env): SIZES (4000,16000) LISTENERS (900). The streams come
from 127.0.0.2, 127.0.0.3, … (900 each; one address may hold 1,000 by default), the tick's
from 127.0.0.1. Every server is stopped at the end.
"""
import asyncio
import json
import os
import time

import runcpu
from huge_writes import Server, request
from wide_updates import CHUNK, binaries_and_labels, children

SIZES = [int(n) for n in os.environ.get("SIZES", "4000,16000").split(",")]
LISTENERS = int(os.environ.get("LISTENERS", "900"))
PER_ADDRESS = 900


async def stream(port, path, ready, got, source="127.0.0.1"):
    """An SSE stream on `path` from address `source`: sets `ready` after its first event,
    then stamps `got` with the arrival time of the next one."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(f"GET {path}.json HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
    events = 0
    while True:
        line = await reader.readline()
        if not line:
            return
        if line.startswith(b"event: put") or line.startswith(b"event: patch"):
            events += 1
            if events == 1:
                ready.set()
            elif events == 2:
                got.append(time.monotonic())
                writer.close()
                return


async def one_size(server, label, n):
    conn = server.conn()
    conn.timeout = 3600
    for start in range(0, n, CHUNK):
        status, _, data = request(conn, "PATCH", f"/wide{n}.json?print=silent", children(start, min(n, start + CHUNK), 1))
        assert status == 204, (status, data[:200])
    got, tick = [], []
    readies, tasks = [], []
    for i in range(min(LISTENERS, n)):
        ready = asyncio.Event()
        readies.append(ready)
        source = f"127.0.0.{2 + i // PER_ADDRESS}"
        tasks.append(asyncio.create_task(stream(server.port, f"/wide{n}/k{i:06d}", ready, got, source)))
    tick_ready = asyncio.Event()
    tick_task = asyncio.create_task(stream(server.port, f"/tick{n}", tick_ready, tick))
    await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies + [tick_ready])), 300)
    meter = runcpu.Meter(server.proc.pid)
    loop = asyncio.get_running_loop()
    status, patch_ms, _ = await loop.run_in_executor(None, request, conn, "PATCH", f"/wide{n}.json?print=silent", children(0, n, -1))
    answered = time.monotonic()
    _, _, _ = await loop.run_in_executor(None, request, conn, "PUT", f"/tick{n}.json?print=silent", "1")
    ticked = time.monotonic()
    await asyncio.wait_for(asyncio.gather(tick_task, *tasks), 600)
    cpu = meter.read()
    return {"label": label, "n": n, "listeners": len(readies), "status": status, "patch_ms": round(patch_ms, 1),
            "events": len(got), "last_event_after_answer_ms": round((max(got) - answered) * 1000, 1),
            "tick_after_its_answer_ms": round((tick[0] - ticked) * 1000, 1), **cpu}


def run(binary, label):
    server = Server(binary)
    rows = []
    try:
        for n in SIZES:
            rows.append(asyncio.run(one_size(server, label, n)))
            print(json.dumps(rows[-1]), flush=True)
    finally:
        server.stop()
    return rows


def main():
    rows = [row for binary, label in binaries_and_labels(__doc__) for row in run(binary, label)]
    print()
    print("| N | listened children | binary | PATCH ms | last child's event, ms after the answer | the tick's event, ms after its answer | server CPU s | load before |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']:,} | {r['listeners']} ({r['events']} events) | {r['label']} | {r['patch_ms']:,.0f} | "
              f"{int(round(r['last_event_after_answer_ms'])):,} | {int(round(r['tick_after_its_answer_ms'])):,} | {r['server_cpu_s']:.2f} | {r['load_before']} |")


if __name__ == "__main__":
    main()
