#!/usr/bin/env python3
"""Driver and receiver for scripts/bench/triggers.sh (database triggers). Stdlib only.

  triggers.py receiver --port P [--tls CERT KEY] an HTTP (with --tls: HTTPS) receiver of Hearth's CloudEvents: answers
        204 to every POST and records (arrival time, ce-time, ce-ref); GET /__stats?prefix=R
        answers {"count", "cpu_s"} for the events whose ce-ref starts with R (a prefix ending
        in "/", or empty), and with &full=1 also "first_ms", "last_ms", "p50_ms", "p99_ms",
        "max_ms" (latency = arrival - ce-time, the write's commit time, both from this
        machine's clock; ce-time has millisecond resolution; cpu_s is read first)
  triggers.py rate --base URL --rate R --seconds S --prefix bench/r100 [--conns K]
        open-loop writer: PUT <prefix>/<i>.json at R writes/s for S seconds over K keep-alive
        connections; prints {"sent", "ok", "errors", "late_p99_ms"} (late: how far behind its
        schedule a write left, i.e. whether the writer kept up)
  triggers.py bulk --base URL --count N --batch B --prefix bulk
        N children under <prefix> in PATCHes of B children each (one event per child)
  triggers.py wait --receiver URL --prefix R --count N [--timeout S] [--stable S]
        waits until the receiver has N events under R (N=0: until none came for --stable
        seconds); prints its /__stats with "complete"
  triggers.py cpu PID                            user+system CPU seconds of a process so far
"""
import argparse
import asyncio
import bisect
import http.client
import json
import os
import socket
import ssl
import sys
import time
import urllib.parse
import urllib.request
from datetime import datetime, timezone


# ---- receiver -------------------------------------------------------------------------

class Store:
    def __init__(self):
        self.events = []  # (ref, arrival_ms float, ce_time str), in arrival order
        self.counts = {}  # every prefix of a ref that ends at a "/" -> events under it

    def add(self, ref, arrival, ce_time):
        self.events.append((ref, arrival, ce_time))
        end = ref.find("/")
        while end != -1:
            prefix = ref[:end + 1]
            self.counts[prefix] = self.counts.get(prefix, 0) + 1
            end = ref.find("/", end + 1)

    def stats(self, prefix, full):
        """Cheap (a counter) unless `full`: then the latencies too (parses every ce-time)."""
        count = len(self.events) if not prefix else self.counts.get(prefix, 0)
        out = {"count": count, "cpu_s": cpu_seconds(os.getpid())}
        if not full or not count:
            return out
        chosen = [e for e in self.events if e[0].startswith(prefix)]
        lat = []
        for _, arrival, ce_time in chosen:
            committed = datetime.strptime(ce_time, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp() * 1000
            lat.append(arrival - committed)
        lat.sort()
        out.update({"first_ms": chosen[0][1], "last_ms": chosen[-1][1], "p50_ms": lat[len(lat) // 2],
                    "p99_ms": lat[min(len(lat) - 1, int(len(lat) * 0.99))], "max_ms": lat[-1]})
        return out


async def handle(store, reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target = lines[0].split(" ")[:2]
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    k, v = line.split(":", 1)
                    headers[k.strip().lower()] = v.strip()
            length = int(headers.get("content-length", "0"))
            if length:
                await reader.readexactly(length)
            if method == "GET" and target.startswith("/__stats"):
                query = urllib.parse.parse_qs(urllib.parse.urlparse(target).query)
                body = json.dumps(store.stats(query.get("prefix", [""])[0], query.get("full") == ["1"])).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            else:
                store.add(headers.get("ce-ref", ""), time.time() * 1000, headers.get("ce-time", ""))
                writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
            if headers.get("connection", "").lower() == "close":
                break
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


def cmd_receiver(a):
    store = Store()

    async def main():
        context = None
        if a.tls:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(a.tls[0], a.tls[1])
        server = await asyncio.start_server(lambda r, w: handle(store, r, w), "127.0.0.1", a.port, backlog=1024, ssl=context)
        print("receiver listening on 127.0.0.1:%d" % a.port, flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


# ---- writers --------------------------------------------------------------------------

def split_base(base):
    u = urllib.parse.urlparse(base)
    return u.hostname, u.port


async def read_response(reader):
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    if length:
        await reader.readexactly(length)
    return status


def cmd_rate(a):
    host, port = split_base(a.base)
    total = int(a.rate * a.seconds)
    result = {"sent": 0, "ok": 0, "errors": 0}
    late = []

    async def worker(queue, t0):
        reader, writer = await asyncio.open_connection(host, port)
        while True:
            i = await queue.get()
            if i is None:
                break
            late.append((time.perf_counter() - (t0 + i / a.rate)) * 1000)
            body = b'{"n": %d}' % i
            writer.write(b"PUT /%s/%d.json HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                         % (a.prefix.encode(), i, host.encode(), len(body), body))
            await writer.drain()
            status = await read_response(reader)
            result["sent"] += 1
            result["ok" if 200 <= status < 300 else "errors"] += 1
        writer.close()

    async def main():
        queue = asyncio.Queue()
        t0 = time.perf_counter() + 0.1
        workers = [asyncio.create_task(worker(queue, t0)) for _ in range(a.conns)]
        for i in range(total):
            delay = t0 + i / a.rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            queue.put_nowait(i)
        for _ in workers:
            queue.put_nowait(None)
        await asyncio.gather(*workers)

    asyncio.run(main())
    late.sort()
    result["late_p99_ms"] = round(late[int(len(late) * 0.99)], 2) if late else None
    print(json.dumps(result))


def cmd_bulk(a):
    host, port = split_base(a.base)
    conn = http.client.HTTPConnection(host, port, timeout=120)
    for start in range(0, a.count, a.batch):
        body = json.dumps({"k%07d" % i: i for i in range(start, min(a.count, start + a.batch))})
        conn.request("PATCH", "/%s.json?print=silent" % a.prefix, body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        response.read()
        if response.status // 100 != 2:
            sys.exit("PATCH answered %d" % response.status)
    print(json.dumps({"written": a.count, "writes": (a.count + a.batch - 1) // a.batch}))


def receiver_stats(url, prefix, full=False):
    # An https receiver is this script's own, with a certificate made for the run: not verified.
    context = ssl._create_unverified_context() if url.startswith("https:") else None
    with urllib.request.urlopen("%s/__stats?prefix=%s%s" % (url, urllib.parse.quote(prefix), "&full=1" if full else ""),
                                timeout=60, context=context) as r:
        return json.load(r)


def cmd_wait(a):
    """Until --count events arrived (or, with --count 0, none arrived for --stable seconds)."""
    deadline = time.monotonic() + a.timeout
    last, since = -1, time.monotonic()
    while True:
        stats = receiver_stats(a.receiver, a.prefix)
        if stats["count"] != last:
            last, since = stats["count"], time.monotonic()
        done = stats["count"] >= a.count if a.count else time.monotonic() - since >= a.stable
        if done or time.monotonic() > deadline:
            stats = receiver_stats(a.receiver, a.prefix, full=True)
            stats["complete"] = done
            print(json.dumps(stats))
            return
        time.sleep(0.1)


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    p = argparse.ArgumentParser()
    sp = p.add_subparsers(dest="cmd", required=True)
    r = sp.add_parser("receiver"); r.add_argument("--port", type=int, required=True)
    r.add_argument("--tls", nargs=2, metavar=("CERT", "KEY")); r.set_defaults(f=cmd_receiver)
    r = sp.add_parser("rate"); r.add_argument("--base", required=True); r.add_argument("--rate", type=float, required=True)
    r.add_argument("--seconds", type=float, required=True); r.add_argument("--prefix", required=True)
    r.add_argument("--conns", type=int, default=8); r.set_defaults(f=cmd_rate)
    r = sp.add_parser("bulk"); r.add_argument("--base", required=True); r.add_argument("--count", type=int, required=True)
    r.add_argument("--batch", type=int, default=1000); r.add_argument("--prefix", required=True); r.set_defaults(f=cmd_bulk)
    r = sp.add_parser("wait"); r.add_argument("--receiver", required=True); r.add_argument("--prefix", required=True)
    r.add_argument("--count", type=int, required=True); r.add_argument("--timeout", type=float, default=600)
    r.add_argument("--stable", type=float, default=2); r.set_defaults(f=cmd_wait)
    r = sp.add_parser("cpu"); r.add_argument("pid", type=int)
    r.set_defaults(f=lambda a: print(cpu_seconds(a.pid)))
    a = p.parse_args()
    a.f(a)


if __name__ == "__main__":
    main()
