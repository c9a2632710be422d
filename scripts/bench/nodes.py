#!/usr/bin/env python3
"""Load for several Hearth nodes: writes spread over the nodes, and fan-out
from one node's writes to subscribers on every node. Used by scripts/bench/nodes.sh.

  nodes.py writes  --ports 9001,9002 --connections 64 --seconds 10
      Closed-loop REST PUTs (HTTP/1.1 keep-alive, one request in flight per connection),
      connections spread round-robin over the ports, each writing its own key. Prints one
      JSON line: acknowledged writes/s, latency p50/p99 (ms), errors. With --namespaces N
      connection i writes to namespace bench-<i % N> (`?ns=`), N busy namespaces.

  nodes.py fanout --ports 9001,9002 --subscribers 300 --rate 10 --seconds 10
      SSE subscribers on /bench/fan, spread round-robin over the ports; a writer PUTs to the
      first port at a fixed rate (open loop) a value carrying its send time. Each event's
      latency is its arrival time minus that send time (same clock: one process). Prints
      p50/p99 for subscribers on the writer's node and on the others, and events delivered.
"""
import argparse
import asyncio
import json
import statistics
import sys
import time

try:
    import uvloop  # optional: a faster event loop for the client
    uvloop.install()
except ImportError:
    pass


def percentile(values, p):
    if not values:
        return None
    values = sorted(values)
    k = min(len(values) - 1, max(0, int(round(p / 100 * (len(values) - 1)))))
    return values[k]


async def http_request(reader, writer, method, path, body):
    data = body.encode()
    writer.write(f"{method} {path} HTTP/1.1\r\nHost: bench\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data)
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    if length:
        await reader.readexactly(length)
    return status


async def cmd_writes(a):
    ports = [int(p) for p in a.ports.split(",")]
    latencies, errors = [], 0
    deadline = time.monotonic() + a.seconds
    start_gate = asyncio.Event()

    async def worker(i):
        nonlocal errors
        namespace = f"?ns=bench-{i % a.namespaces}" if a.namespaces else ""
        reader, writer = await asyncio.open_connection("127.0.0.1", ports[i % len(ports)])
        await start_gate.wait()
        n = 0
        while time.monotonic() < deadline:
            t0 = time.monotonic()
            try:
                status = await http_request(reader, writer, "PUT", f"/bench/w{i}/{n % 100}.json{namespace}", str(n))
            except Exception:
                errors += 1
                break
            if status == 200:
                latencies.append(time.monotonic() - t0)
            else:
                errors += 1
            n += 1
        writer.close()

    tasks = [asyncio.create_task(worker(i)) for i in range(a.connections)]
    await asyncio.sleep(0.2)
    began = time.monotonic()
    deadline = began + a.seconds
    cpu_began = time.process_time()
    start_gate.set()
    await asyncio.gather(*tasks)
    elapsed = time.monotonic() - began
    print(json.dumps({
        "mode": "writes", "nodes": len(ports), "connections": a.connections, "namespaces": a.namespaces, "seconds": round(elapsed, 2),
        "writes": len(latencies), "writes_per_s": round(len(latencies) / elapsed, 1),
        # This load generator's own CPU (user + system) over the run, % of one core.
        "client_cpu_pct": round(100 * (time.process_time() - cpu_began) / elapsed, 1),
        "p50_ms": round(percentile(latencies, 50) * 1000, 2) if latencies else None,
        "p99_ms": round(percentile(latencies, 99) * 1000, 2) if latencies else None,
        "errors": errors,
    }))


async def cmd_fanout(a):
    ports = [int(p) for p in a.ports.split(",")]
    local, remote = [], []
    ready = 0
    all_ready = asyncio.Event()
    sent = {}

    async def subscriber(i):
        nonlocal ready
        port = ports[i % len(ports)]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /bench/fan.json HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n")
        await reader.readuntil(b"\r\n\r\n")
        first = True
        buffer = b""
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                return
            now = time.monotonic()
            buffer += chunk
            while b"\n\n" in buffer:
                event, buffer = buffer.split(b"\n\n", 1)
                if first and b"event: put" in event:
                    first = False
                    ready += 1
                    if ready == a.subscribers:
                        all_ready.set()
                    continue
                for line in event.split(b"\n"):
                    if line.startswith(b"data: ") and b'"n":' in line:
                        try:
                            n = json.loads(line[6:])["data"]["n"]
                        except Exception:
                            continue
                        if n in sent:
                            (local if port == ports[0] else remote).append(now - sent[n])

    subs = [asyncio.create_task(subscriber(i)) for i in range(a.subscribers)]
    await asyncio.wait_for(all_ready.wait(), timeout=60)
    reader, writer = await asyncio.open_connection("127.0.0.1", ports[0])
    interval = 1.0 / a.rate
    total = int(a.seconds * a.rate)
    began = time.monotonic()
    cpu_began = time.process_time()
    for n in range(total):
        target = began + n * interval
        delay = target - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        sent[n] = time.monotonic()
        await http_request(reader, writer, "PUT", "/bench/fan.json", json.dumps({"n": n}))
    await asyncio.sleep(1.0)  # let the last events arrive (the report counts what did)
    elapsed = time.monotonic() - began
    for task in subs:
        task.cancel()
    expected = total * a.subscribers
    got = len(local) + len(remote)
    out = {"mode": "fanout", "nodes": len(ports), "subscribers": a.subscribers, "rate": a.rate,
           "delivered_pct": round(100 * got / expected, 2) if expected else None, "seconds": round(elapsed, 2),
           "client_cpu_pct": round(100 * (time.process_time() - cpu_began) / elapsed, 1)}
    for name, values in (("local", local), ("remote", remote)):
        if values:
            out[name + "_p50_ms"] = round(percentile(values, 50) * 1000, 2)
            out[name + "_p99_ms"] = round(percentile(values, 99) * 1000, 2)
    print(json.dumps(out))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("writes")
    w.add_argument("--ports", required=True)
    w.add_argument("--connections", type=int, default=64)
    w.add_argument("--seconds", type=float, default=10)
    w.add_argument("--namespaces", type=int, default=0)
    f = sub.add_parser("fanout")
    f.add_argument("--ports", required=True)
    f.add_argument("--subscribers", type=int, default=300)
    f.add_argument("--rate", type=float, default=10)
    f.add_argument("--seconds", type=float, default=10)
    a = parser.parse_args()
    asyncio.run(cmd_writes(a) if a.cmd == "writes" else cmd_fanout(a))


if __name__ == "__main__":
    main()
